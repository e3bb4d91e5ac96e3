//! The MCP endpoint's settings (docs/configuration.md): answers capped by rows and bytes with a
//! flag, write tools only with `RAPID_MCP_WRITE_TOOLS` and DATA_ADMIN, and the endpoint alone on
//! its own listener (`RAPID_MCP_LISTEN`).

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::mcp::{datasets, rpc, tool, tool_names};
use crate::sql::server_with_data;
use crate::support::{Options, TestServer};

#[test]
fn answers_are_capped_by_rows_and_bytes_with_a_flag() {
    let options = Options {
        env: vec![
            ("RAPID_MCP_MAX_ROWS".into(), "3".into()),
            ("RAPID_MCP_MAX_BYTES".into(), "1024".into()),
        ],
        ..Default::default()
    };
    let s = server_with_data(options);
    let token = s.token_with("mcp-caps", &["READ_PUBLIC"]);
    let rows = tool(
        &s,
        &token,
        "sql",
        json!({"sql": "SELECT * FROM generate_series(1, 10) AS t(n)"}),
    )
    .unwrap();
    assert_eq!(
        (rows["row_count"].clone(), rows["truncated"].clone()),
        (json!(3), json!(true)),
        "{rows}"
    );
    let trips = json!({"layer": "default", "domain": "travel", "dataset": "trips"});
    let rows = tool(&s, &token, "query", trips.clone()).unwrap();
    assert_eq!(rows["row_count"], 3, "{rows}");
    assert_eq!(rows["truncated"], true, "{rows}");
    // A query's own limit within the cap: whole.
    let mut limited = trips.clone();
    limited["query"] = json!({"limit": 2});
    let rows = tool(&s, &token, "query", limited).unwrap();
    assert_eq!(
        (rows["row_count"].clone(), rows["truncated"].clone()),
        (json!(2), json!(false)),
        "{rows}"
    );
    // Wide rows: the byte cap cuts first.
    let wide = "SELECT repeat('x', 400) AS pad FROM generate_series(1, 3)";
    let rows = tool(&s, &token, "sql", json!({"sql": wide})).unwrap();
    assert_eq!(rows["row_count"], 2, "{rows}");
    assert_eq!(rows["truncated"], true, "{rows}");
}

#[test]
fn write_tools_exist_only_with_the_setting_and_data_admin() {
    let reads = [
        "list_datasets",
        "describe_dataset",
        "query",
        "sql",
        "job_status",
    ];
    let s = server_with_data(Options::default());
    assert_eq!(
        tool_names(&s, &s.admin_token()),
        reads,
        "off by default, even for the admin"
    );
    drop(s);

    let options = Options {
        env: vec![("RAPID_MCP_WRITE_TOOLS".into(), "true".into())],
        ..Default::default()
    };
    let s = server_with_data(options);
    let admin = s.admin_token();
    let reader = s.token_with("mcp-reader", &["READ_ALL", "WRITE_ALL"]);
    assert_eq!(tool_names(&s, &reader), reads);
    let names = tool_names(&s, &admin);
    assert_eq!(
        names.last().map(String::as_str),
        Some("create_schema"),
        "{names:?}"
    );
    let (_, listed) = rpc(
        &s,
        &admin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let create = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(create["annotations"]["readOnlyHint"], false, "{create}");
    let schema = crate::support::schema_json(
        "travel",
        "stops",
        "PUBLIC",
        "APPEND",
        json!([{"name": "name", "data_type": "string", "allow_null": false}]),
    );
    // Not offered to the reader, so not callable by it either.
    let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "create_schema", "arguments": {"schema": schema}}});
    let (_, body) = rpc(&s, &reader, message);
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let created = tool(&s, &admin, "create_schema", json!({"schema": schema})).unwrap();
    assert_eq!(created["created"], "default/travel/stops", "{created}");
    let listed = tool(&s, &reader, "list_datasets", json!({})).unwrap();
    assert!(
        datasets(&listed).contains(&"travel/stops".to_string()),
        "{listed}"
    );
    // A dataset without data yet is described all the same: no rows, no commit.
    let stops = json!({"layer": "default", "domain": "travel", "dataset": "stops"});
    let described = tool(&s, &reader, "describe_dataset", stops).unwrap();
    assert_eq!(described["rows"], 0, "{described}");
    assert_eq!(described["freshness"], Value::Null, "{described}");
    assert_eq!(described["history"], json!([]), "{described}");
}

#[test]
fn its_own_listener_serves_the_endpoint_alone() {
    let options = Options {
        env: vec![("RAPID_MCP_LISTEN".into(), "127.0.0.1:0".into())],
        ..Default::default()
    };
    let s = TestServer::start_with(options);
    let url = s.mcp_url().expect("an `mcp listening on` line");
    let token = s.admin_token();
    let http = reqwest::blocking::Client::new();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let res = http
        .post(&url)
        .bearer_auth(&token)
        .json(&ping)
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().unwrap()["result"], json!({}));
    let res = http.post(&url).json(&ping).send().unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let other = url.replace("/api/mcp", "/api/datasets");
    let res = http.post(&other).bearer_auth(&token).send().unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
}
