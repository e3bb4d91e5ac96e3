//! The log subscriber: text or one JSON object a line (`RAPID_LOG_FORMAT`), on stderr. Request
//! lines and everything logged while a request is handled carry its `request_id` (a span field).
//! The lines for whoever started the process (`listening on http://…`, on stdout) follow the same
//! format ([`announce`]).

use std::io::IsTerminal;

use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::EnvFilter;

use crate::config_ops::LogFormat;

pub fn init(filter: &str, format: LogFormat) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder
            .json()
            // The innermost span's fields in `span`; every enclosing span's in `spans`, so a
            // line logged inside an upload's job span still carries its request's id.
            .with_current_span(true)
            .with_span_list(true)
            .flatten_event(true)
            .init(),
    }
}

/// A line on stdout that scripts wait for (`listening on http://…`): as is in text mode; in JSON
/// mode one object shaped like the log lines, the address in `url`.
pub fn announce(format: LogFormat, message: &str, url: &str) {
    match format {
        LogFormat::Text => println!("{message}"),
        LogFormat::Json => println!("{}", announcement(message, url)),
    }
}

fn announcement(message: &str, url: &str) -> serde_json::Value {
    let mut timestamp = String::new();
    // The log lines' own clock and format; writing into a String cannot fail.
    let _ = SystemTime.format_time(&mut Writer::new(&mut timestamp));
    serde_json::json!({
        "timestamp": timestamp,
        "level": "INFO",
        "message": message,
        "url": url,
        "target": module_path!(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_json_announcement_is_a_log_shaped_object() {
        let line = super::announcement("listening on http://127.0.0.1:1", "http://127.0.0.1:1");
        assert_eq!(line["message"], "listening on http://127.0.0.1:1");
        assert_eq!(line["url"], "http://127.0.0.1:1");
        assert_eq!(line["level"], "INFO");
        let ts = line["timestamp"].as_str().unwrap();
        assert!(ts.ends_with('Z') && ts.contains('T'), "{ts}");
    }
}
