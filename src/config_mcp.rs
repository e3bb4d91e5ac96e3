//! The MCP endpoint's settings (docs/guide.md, "Pointing an assistant at it"): how much one tool
//! answer may carry, whether write tools exist at all, and its own listener. Part of
//! [`ServeArgs`](crate::config::ServeArgs).

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// Rows one MCP tool answer carries at most (`query`, `sql`); more are cut and the answer
    /// says `"truncated": true`. A call may ask for fewer with `max_rows`.
    #[arg(long, env = "RAPID_MCP_MAX_ROWS", default_value_t = 500,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub mcp_max_rows: u64,

    /// Bytes of JSON rows one MCP tool answer carries at most; rows past it are cut
    /// (`"truncated": true`). An assistant's context is small: the default is 256 KiB.
    #[arg(long, env = "RAPID_MCP_MAX_BYTES", default_value_t = 256 * 1024,
          value_parser = clap::value_parser!(u64).range(1024..=64 * 1024 * 1024))]
    pub mcp_max_bytes: u64,

    /// Offer the MCP write tools (`create_schema`) to subjects holding DATA_ADMIN. Off (the
    /// default): every tool reads, whoever asks.
    #[arg(long, env = "RAPID_MCP_WRITE_TOOLS", default_value_t = false,
          action = clap::ArgAction::Set)]
    pub mcp_write_tools: bool,

    /// Also serve the MCP endpoint (`/api/mcp` only, same bearer tokens) on this address;
    /// unset or empty: only on the main address.
    #[arg(long, env = "RAPID_MCP_LISTEN", default_value = "")]
    pub mcp_listen: String,
}

/// What the MCP front needs of its settings at run time.
#[derive(Debug, Clone, Copy)]
pub struct McpSettings {
    pub max_rows: u64,
    pub max_bytes: u64,
    pub write_tools: bool,
}

impl McpArgs {
    pub fn settings(&self) -> McpSettings {
        McpSettings {
            max_rows: self.mcp_max_rows,
            max_bytes: self.mcp_max_bytes,
            write_tools: self.mcp_write_tools,
        }
    }
}
