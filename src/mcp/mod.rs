//! The MCP endpoint (docs/API.md, "Policies, audit, events, MCP"; docs/DESIGN.md, "The MCP
//! front"): `POST /api/mcp`, the Model Context Protocol's Streamable HTTP transport in its
//! stateless form, each POST one JSON-RPC message answered with one JSON body (no session, no
//! event stream: `GET` is 405, which the transport allows). Both eras of the protocol: the
//! `initialize` handshake (2025-03-26 to 2025-11-25) and the 2026-07-28 revision's per-request
//! envelope (`server/discover`, the revision named on every request). The message types are the
//! `rmcp` crate's; this module is only the transport's few lines and the dispatch.
//!
//! It is a third front beside the API and the pages, over the same engine use cases and passes:
//! the caller is the bearer token's subject (authenticated by the same middleware, before the
//! body is read), every tool call mints its pass as the matching API route does, so permissions,
//! row filters and column masks apply unchanged, and the audit middleware writes one row per
//! message with `front = mcp` and the action `mcp.{tool}` (or `mcp.{method}`).

mod answer;
mod args;
mod tools;

use actix_web::{web, HttpRequest, HttpResponse};
use rapid_actors::audit::Note;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, DiscoverResult, ErrorCode, ErrorData, Implementation,
    InitializeResult, JsonRpcMessage, ListToolsResult, ProtocolVersion, RequestId,
    ServerCapabilities, ServerJsonRpcMessage, ServerResult, ToolsCapability,
};
use serde_json::Value;

use crate::auth::{note_of, AnySubject, Authorized};
use crate::state::AppState;

/// The path of the endpoint.
pub const PATH: &str = "/api/mcp";

/// The largest message accepted (a statement is at most 100 kB; a schema a few).
const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// The protocol revisions of the `initialize` handshake this endpoint speaks, newest first.
const VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

/// Every revision spoken, for `server/discover` and refusals: the 2026 one (no handshake; each
/// request names it in its `MCP-Protocol-Version` header), then the handshake's.
const SPOKEN: &[ProtocolVersion] = &[
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

/// The requests answered here.
const SERVED: &[&str] = &[
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
];

/// Registers `POST /api/mcp`. Before the API's `/api` scope, which would otherwise take the path.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource(PATH)
            .app_data(web::PayloadConfig::new(MAX_MESSAGE_BYTES))
            .route(web::post().to(post_message)),
    );
}

/// One JSON-RPC message: a request is answered (200, JSON), a notification or a client's
/// response is taken (202, no body).
async fn post_message(
    caller: Authorized<AnySubject>,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let note = note_of(&req);
    let modern = match revision(&req) {
        Ok(named) => named.is_some_and(|v| v == ProtocolVersion::V_2026_07_28),
        Err(asked) => return unspoken(asked, &body),
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return refused(&note, None, ErrorData::parse_error(e.to_string(), None)),
    };
    if !value.is_object() {
        let message = "One JSON-RPC message (an object) per POST: batches are not accepted";
        return refused(&note, None, ErrorData::invalid_request(message, None));
    }
    let id: Option<RequestId> = value
        .get("id")
        .and_then(|i| serde_json::from_value(i.clone()).ok());
    let method = value.get("method").and_then(Value::as_str).unwrap_or("");
    note.action(format!("mcp.{method}"));
    let message: ClientJsonRpcMessage = match serde_json::from_value(value.clone()) {
        Ok(m) => m,
        Err(e) => {
            let error = match id.is_some() && !method.is_empty() {
                true => ErrorData::invalid_params(format!("Invalid params of {method}: {e}"), None),
                false => {
                    ErrorData::invalid_request(format!("Not a JSON-RPC 2.0 message: {e}"), None)
                }
            };
            return refused(&note, id, error);
        }
    };
    let JsonRpcMessage::Request(request) = message else {
        // Notifications (`notifications/initialized`, cancellations) and responses: nothing to do.
        return HttpResponse::Accepted().finish();
    };
    match answer(&state, &caller, &note, request.request, modern).await {
        Ok(mut result) => {
            // The 2026 revision's results carry their type and caching hints; older revisions'
            // have neither (rmcp's own rules for each era).
            match modern {
                true => result.fill_missing_cache_hints(),
                false => result.strip_result_type_for_legacy_peer(),
            }
            json(&ServerJsonRpcMessage::response(result, request.id))
        }
        Err(error) => refused(&note, Some(request.id), error),
    }
}

/// The revision the request names in its `MCP-Protocol-Version` header (none: before or during
/// the handshake), or the name it gave when this endpoint does not speak it.
fn revision(req: &HttpRequest) -> Result<Option<ProtocolVersion>, String> {
    let Some(header) = req.headers().get("mcp-protocol-version") else {
        return Ok(None);
    };
    let asked = String::from_utf8_lossy(header.as_bytes());
    match SPOKEN.iter().find(|k| k.as_str() == asked) {
        Some(spoken) => Ok(Some(spoken.clone())),
        None => Err(asked.to_string()),
    }
}

/// A revision not spoken: 400, the transport's rule, the body naming the revisions spoken so the
/// client can pick one.
fn unspoken(asked: String, body: &[u8]) -> HttpResponse {
    let error = ErrorData::unsupported_protocol_version(
        serde_json::from_value(Value::String(asked)).unwrap_or_default(),
        SPOKEN,
    );
    let id = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| serde_json::from_value(v.get("id")?.clone()).ok());
    HttpResponse::BadRequest().json(ServerJsonRpcMessage::error(error, id))
}

/// The result of one request, or the JSON-RPC error answering it.
async fn answer(
    state: &AppState,
    caller: &Authorized<AnySubject>,
    note: &Note,
    request: ClientRequest,
    modern: bool,
) -> Result<ServerResult, ErrorData> {
    match request {
        ClientRequest::InitializeRequest(r) => Ok(ServerResult::InitializeResult(initialized(
            &r.params.protocol_version,
        ))),
        ClientRequest::DiscoverRequest(_) => Ok(ServerResult::DiscoverResult(
            DiscoverResult::from_server_info(SPOKEN.to_vec(), initialized(&VERSIONS[0])),
        )),
        // The 2026 revision removed `ping`.
        ClientRequest::PingRequest(_) if !modern => Ok(ServerResult::empty(())),
        ClientRequest::ListToolsRequest(_) => {
            let tools = tools::listed(state, &caller.subject);
            Ok(ServerResult::ListToolsResult(
                ListToolsResult::with_all_items(tools),
            ))
        }
        ClientRequest::CallToolRequest(r) => {
            note.action(format!("mcp.{}", r.params.name));
            let called = tools::call(state, caller, note, &r.params).await;
            called.map(ServerResult::CallToolResult)
        }
        // A method served here that reached this arm did not parse as itself: its params.
        other
            if SERVED.contains(&other.method())
                && !matches!(other, ClientRequest::PingRequest(_)) =>
        {
            Err(ErrorData::invalid_params(
                format!("Invalid params of {}", other.method()),
                None,
            ))
        }
        other => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", other.method()),
            None,
        )),
    }
}

/// The answer to `initialize` (and the server's description in `server/discover`'s): the client's
/// revision when this endpoint speaks it, else the newest it speaks (the client then decides
/// whether to go on).
fn initialized(asked: &ProtocolVersion) -> InitializeResult {
    let version = VERSIONS
        .iter()
        .find(|v| *v == asked)
        .unwrap_or(&VERSIONS[0])
        .clone();
    let mut capabilities = ServerCapabilities::default();
    capabilities.tools = Some(ToolsCapability::default());
    let info =
        Implementation::new("rapid-rs", env!("CARGO_PKG_VERSION")).with_title("rAPId datasets");
    InitializeResult::new(capabilities)
        .with_protocol_version(version)
        .with_server_info(info)
        .with_instructions(
            "Datasets of a rAPId service, as the token's subject may read them. Start with \
                 list_datasets, then describe_dataset; read rows with query (rAPId's JSON query) \
                 or sql (one SELECT, tables named \"layer\".\"domain\".\"dataset\"). Answers are \
                 capped: \"truncated\": true means there were more rows.",
        )
}

/// A JSON-RPC error answer (200: the transport carried it); the audit row gets the refusal's
/// status (404 for an unknown method, 400 otherwise).
fn refused(note: &Note, id: Option<RequestId>, error: ErrorData) -> HttpResponse {
    let status = match error.code {
        ErrorCode::METHOD_NOT_FOUND => 404,
        ErrorCode::INTERNAL_ERROR => 500,
        _ => 400,
    };
    note.status(status);
    json(&ServerJsonRpcMessage::error(error, id))
}

fn json(message: &ServerJsonRpcMessage) -> HttpResponse {
    HttpResponse::Ok().json(message)
}
