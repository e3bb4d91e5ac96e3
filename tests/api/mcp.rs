//! The MCP endpoint (docs/API.md, "MCP"; issue 59): the official Python client lists and calls
//! every tool as a PUBLIC reader and as the reader of a PROTECTED domain, each seeing only what it
//! may read; the protocol's edges; audit rows with `front = mcp`. Its settings are tested in
//! `mcp_settings.rs`, policies through it in `mcp_policies.rs`, the bypass corpus in
//! `mcp_bypass.rs`.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::pyarrow_readback::python;
use crate::sql::server_with_data;
use crate::support::{Options, TestServer};

/// One JSON-RPC message to `/api/mcp` (or `url`'s own listener) as `token`.
pub(crate) fn rpc(s: &TestServer, token: &str, message: Value) -> (StatusCode, Value) {
    s.call("POST", "/api/mcp", Some(token), Some(&message))
}

/// A tool's answer: `Ok(structured content)` or `Err(the refusal's text)`.
pub(crate) fn tool(s: &TestServer, token: &str, name: &str, args: Value) -> Result<Value, String> {
    let message = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": name, "arguments": args}});
    let (status, body) = rpc(s, token, message);
    assert_eq!(status, StatusCode::OK, "{body}");
    let result = &body["result"];
    assert!(result.is_object(), "{body}");
    match result["isError"].as_bool() {
        Some(true) => Err(result["content"][0]["text"].as_str().unwrap().to_string()),
        _ => Ok(result["structuredContent"].clone()),
    }
}

pub(crate) fn tool_names(s: &TestServer, token: &str) -> Vec<String> {
    let (status, body) = rpc(
        s,
        token,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let tools = body["result"]["tools"].as_array().unwrap();
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// A finished QUERY job of `token`'s subject (for `job_status`).
fn a_job(s: &TestServer, token: &str) -> String {
    let (status, body) = s.call(
        "POST",
        "/api/sql/large",
        Some(token),
        Some(&json!({"sql": "SELECT 1 AS one"})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let id = body["details"]["job_id"]
        .as_str()
        .or(body["job_id"].as_str())
        .unwrap_or_else(|| panic!("no job id in {body}"))
        .to_string();
    let job = s.wait_job(token, &id);
    assert_eq!(job["status"], "SUCCESS", "{job}");
    id
}

/// What tests/python/mcp_client.py prints after calling every tool as `token`'s subject, the
/// client connecting in `mode` (`auto`: the 2026 revision; `legacy`: the `initialize` handshake).
fn python_client(s: &TestServer, token: &str, job: &str, mode: &str) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/mcp_client.py");
    let out = Command::new(python())
        .args([script, &s.url("/api/mcp"), token, job, mode])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

pub(crate) fn datasets(listed: &Value) -> Vec<String> {
    let all = listed["datasets"].as_array().unwrap();
    all.iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["domain"].as_str().unwrap(),
                d["dataset"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn the_official_python_client_lists_and_calls_every_tool_as_each_reader() {
    let s = server_with_data(Options::default());
    let public = s.token_with("mcp-public", &["READ_PUBLIC"]);
    let secret = s.token_with("mcp-secret", &["READ_PROTECTED_SECRET"]);

    // The client's default: the 2026 revision, found by `server/discover`.
    let seen = python_client(&s, &public, &a_job(&s, &public), "auto");
    assert_eq!(seen["server"], "rapid-rs", "{seen}");
    assert_eq!(seen["protocol_version"], "2026-07-28", "{seen}");
    let tools = seen["tools"].as_object().unwrap();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "list_datasets",
            "describe_dataset",
            "query",
            "sql",
            "job_status"
        ],
        "{seen}"
    );
    for (name, t) in tools {
        assert_eq!(t["read_only"], true, "{name}: {t}");
    }
    assert_eq!(tools["sql"]["required"], json!(["sql"]));
    // The PUBLIC reader: trips in every answer, payroll in none.
    assert_eq!(datasets(&seen["list_datasets"]), ["travel/trips"], "{seen}");
    let trips = &seen["list_datasets"]["datasets"][0];
    assert_eq!(trips["rows"], 4, "{trips}");
    assert_eq!(trips["tags"]["sensitivity"], "PUBLIC", "{trips}");
    let described = &seen["describe_trips"];
    assert_eq!(described["rows"], 4, "{described}");
    assert_eq!(described["schema"]["columns"].as_array().unwrap().len(), 3);
    assert_eq!(described["freshness"]["operation"], "APPEND", "{described}");
    assert_eq!(described["history"].as_array().unwrap().len(), 1);
    assert!(described["profile"].is_object(), "{described}");
    // Two rows asked of four: cut, and said so.
    let queried = &seen["query_trips"];
    assert_eq!(queried["columns"], json!(["region", "year"]), "{queried}");
    assert_eq!(queried["rows"], json!([["north", 2017], ["north", 2018]]));
    assert_eq!(queried["truncated"], true, "{queried}");
    assert_eq!(
        seen["sql_trips"]["rows"],
        json!([["north", 2], ["south", 1], ["west", 1]])
    );
    assert_eq!(seen["sql_trips"]["truncated"], false);
    for refused in [
        "describe_payroll",
        "query_payroll",
        "sql_payroll",
        "sql_write",
    ] {
        let text = seen[refused]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{refused}: {seen}"));
        // The refusal names nothing the subject may not read.
        assert!(!text.contains("salary"), "{refused}: {text}");
    }
    assert!(seen["describe_payroll"]["error"]
        .as_str()
        .unwrap()
        .contains("that you may read"));
    assert_eq!(seen["job_status"]["status"], "SUCCESS", "{seen}");
    assert!(!seen.to_string().contains("\"salary\""), "{seen}");

    // The PROTECTED domain's reader, over the `initialize` handshake: payroll, and nothing of
    // the PUBLIC trips it may not read.
    let seen = python_client(&s, &secret, &a_job(&s, &secret), "legacy");
    assert_eq!(seen["protocol_version"], "2025-11-25", "{seen}");
    assert_eq!(seen["tools"].as_object().unwrap().len(), 5, "{seen}");
    assert_eq!(
        datasets(&seen["list_datasets"]),
        ["secret/payroll"],
        "{seen}"
    );
    assert_eq!(seen["describe_payroll"]["rows"], 1, "{seen}");
    assert_eq!(seen["sql_payroll"]["rows"], json!([[100]]), "{seen}");
    assert_eq!(seen["query_payroll"]["rows"], json!([[100]]), "{seen}");
    for refused in ["describe_trips", "query_trips", "sql_trips", "sql_write"] {
        assert!(seen[refused]["error"].is_string(), "{refused}: {seen}");
    }
    assert_eq!(seen["job_status"]["status"], "SUCCESS", "{seen}");
}

#[test]
fn the_protocol_edges_answer_as_the_transport_says() {
    let s = server_with_data(Options::default());
    let token = s.token_with("mcp-edges", &["READ_PUBLIC"]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    // No token: 401 before the body is read.
    let (status, _) = s.call("POST", "/api/mcp", None, Some(&init));
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The client's revision when spoken; the newest otherwise.
    let (status, body) = rpc(&s, &token, init.clone());
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18", "{body}");
    assert_eq!(body["result"]["capabilities"]["tools"], json!({}), "{body}");
    let mut newer = init.clone();
    newer["params"]["protocolVersion"] = json!("2099-01-01");
    assert_eq!(
        rpc(&s, &token, newer).1["result"]["protocolVersion"],
        "2025-11-25"
    );
    // A notification is taken without an answer.
    let (status, body) = rpc(
        &s,
        &token,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!((status, body), (StatusCode::ACCEPTED, Value::Null));
    let (_, body) = rpc(
        &s,
        &token,
        json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
    );
    assert_eq!(body, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    // The 2026 revision's probe: every revision spoken, and the server's description.
    let discover = json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {}});
    let (_, body) = rpc(&s, &token, discover);
    let versions = &body["result"]["supportedVersions"];
    assert_eq!(
        versions,
        &json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]),
        "{body}"
    );
    assert_eq!(body["result"]["capabilities"]["tools"], json!({}), "{body}");
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    // Results of the 2026 revision carry their type and caching hints; older ones neither.
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}});
    let modern = s
        .request("POST", "/api/mcp")
        .bearer_auth(&token)
        .header("mcp-protocol-version", "2026-07-28")
        .json(&list)
        .send()
        .unwrap();
    let (_, body) = crate::support::into_parts(modern);
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    assert_eq!(body["result"]["ttlMs"], 0, "{body}");
    let (_, body) = rpc(&s, &token, list);
    assert!(body["result"].get("resultType").is_none(), "{body}");
    assert!(body["result"]["tools"].is_array(), "{body}");
    let (_, body) = rpc(
        &s,
        &token,
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}),
    );
    assert_eq!(body["error"]["code"], -32601, "{body}");
    let (_, body) = rpc(
        &s,
        &token,
        json!([{"jsonrpc": "2.0", "id": 4, "method": "ping"}]),
    );
    assert_eq!(body["error"]["code"], -32600, "{body}");
    let (_, body) = rpc(
        &s,
        &token,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "drop_everything"}}),
    );
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["id"], 5, "{body}");
    let (_, body) = rpc(
        &s,
        &token,
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {}}),
    );
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let raw = s
        .request("POST", "/api/mcp")
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .unwrap();
    let (status, body) = crate::support::into_parts(raw);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["code"], -32700, "{body}");
    let wrong_version = s
        .request("POST", "/api/mcp")
        .bearer_auth(&token)
        .header("mcp-protocol-version", "1999-01-01")
        .json(&json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}))
        .send()
        .unwrap();
    let (status, body) = crate::support::into_parts(wrong_version);
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], -32022, "{body}");
    assert_eq!(body["id"], 8, "{body}");
    assert_eq!(
        body["error"]["data"]["supported"][0], "2026-07-28",
        "{body}"
    );
    // The 2026 revision removed `ping`.
    let modern_ping = s
        .request("POST", "/api/mcp")
        .bearer_auth(&token)
        .header("mcp-protocol-version", "2026-07-28")
        .json(&json!({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
        .send()
        .unwrap();
    let (_, body) = crate::support::into_parts(modern_ping);
    assert_eq!(body["error"]["code"], -32601, "{body}");
    // No event stream and no session to end.
    let (status, _) = s.call("GET", "/api/mcp", Some(&token), None);
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, _) = s.call("DELETE", "/api/mcp", Some(&token), None);
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    // Bad arguments are the tool's answer, named.
    let err = tool(&s, &token, "describe_dataset", json!({"layer": "default"})).unwrap_err();
    assert!(err.contains("`domain` is required"), "{err}");
    let err = tool(
        &s,
        &token,
        "query",
        json!({"layer": "default", "domain": "travel", "dataset": "trips", "max_rows": 0}),
    )
    .unwrap_err();
    assert!(err.contains("max_rows"), "{err}");
}

#[test]
fn every_message_has_one_audit_row_with_the_mcp_front_and_its_tool() {
    let s = server_with_data(Options::default());
    let (reader_id, secret) = s.create_client("mcp-audited", &["READ_PUBLIC"]);
    let token = s.token(&reader_id, &secret);
    let trips = json!({"layer": "default", "domain": "travel", "dataset": "trips"});
    tool(&s, &token, "query", json!({"layer": "default", "domain": "travel", "dataset": "trips", "query": {"select_columns": ["region"]}})).unwrap();
    tool(&s, &token, "describe_dataset", trips).unwrap();
    tool(
        &s,
        &token,
        "sql",
        json!({"sql": "SELECT sum(salary) FROM \"default\".\"secret\".\"payroll\""}),
    )
    .unwrap_err();
    tool(
        &s,
        &token,
        "describe_dataset",
        json!({"layer": "default", "domain": "secret", "dataset": "payroll"}),
    )
    .unwrap_err();
    let path = format!("/api/audit?subject_id={reader_id}&front=mcp");
    let (status, body) = s.call("GET", &path, Some(&s.admin_token()), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    let rows = body
        .as_array()
        .unwrap_or_else(|| body["entries"].as_array().unwrap());
    let seen: Vec<(String, Option<String>, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["action"].as_str().unwrap().to_string(),
                r["dataset"].as_str().map(str::to_string),
                r["status"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("mcp.query".into(), Some("trips".into()), 200),
            ("mcp.describe_dataset".into(), Some("trips".into()), 200),
            ("mcp.sql".into(), None, 400),
            ("mcp.describe_dataset".into(), None, 404),
        ],
        "{body}"
    );
    let query = &rows[0];
    assert_eq!(query["front"], "mcp");
    assert_eq!(query["columns"], json!(["region"]), "{query}");
    assert_eq!(query["rows"], 4, "{query}");
    assert!(
        rows[2]["statement"].as_str().unwrap().contains("payroll"),
        "{body}"
    );
}
