//! The audit log (docs/API.md, "Policies, audit, events, MCP"): exactly one row per request on
//! every front, naming the subject, what was read (dataset, version, commit, columns, policies,
//! rows) and the statement without its literals; readable by USER_ADMIN and DATA_ADMIN over
//! HTTP and SQL, nobody else; kept across a restart and a kill; the hash chain verifies until a
//! row is changed.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::ops_admin::admin;
use crate::sql_wire::{pg_options, psql, psql_binary};
use crate::support::{into_parts, schema_json, Options, TestServer};

const STAFF: &str = "/api/datasets/default/hr/staff";
const CSV: &str = "region,name,salary\nnorth,ann,100\nnorth,bob,200\nsouth,cid,300\n";

fn server(options: Options) -> TestServer {
    let s = TestServer::start_with(options);
    s.create_schema(&schema_json(
        "hr",
        "staff",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "name", "data_type": "string", "allow_null": false},
            {"name": "salary", "data_type": "int", "allow_null": false}
        ]),
    ));
    let (_, job) = s.upload_and_wait(&s.admin_token(), STAFF, "staff.csv", CSV.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    s
}

/// `method path` with `token` and `body`, sent with the request id `id`.
fn send(
    s: &TestServer,
    (method, path): (&str, &str),
    token: Option<&str>,
    body: Option<&Value>,
    id: &str,
) -> (StatusCode, Value) {
    let mut req = s.request(method, path).header("x-request-id", id);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    into_parts(req.send().unwrap())
}

/// Every row of the log, read page by page as a client would (until a page that is not full:
/// each page read adds a row of its own, so "until empty" would never end).
fn all_rows(s: &TestServer, token: &str) -> Vec<Value> {
    let (mut rows, mut after) = (Vec::new(), 0);
    loop {
        let path = format!("/api/audit?after={after}&limit=50");
        let (status, page) = s.call("GET", &path, Some(token), None);
        assert_eq!(status, StatusCode::OK, "{page}");
        let page = page.as_array().unwrap().clone();
        let full = page.len() == 50;
        if let Some(last) = page.last() {
            after = last["id"].as_i64().unwrap();
        }
        rows.extend(page);
        if !full {
            return rows;
        }
    }
}

/// The one row of request `id` (fails on none or several).
fn row_of<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    let found: Vec<&Value> = rows.iter().filter(|r| r["request_id"] == id).collect();
    assert_eq!(found.len(), 1, "rows of {id}: {found:?}");
    found[0]
}

fn texts(v: &Value) -> Vec<String> {
    let mut t: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    t.sort();
    t
}

#[test]
fn every_request_has_one_row_naming_what_it_read() {
    let s = server(Options::default());
    let (reader_id, secret) = s.create_client("reader", &["READ_ALL"]);
    let reader = s.token(&reader_id, &secret);
    let admin = s.admin_token();
    let (status, body) = s.call(
        "PUT",
        &format!("{STAFF}/policy"),
        Some(&admin),
        Some(&json!({"column_masks": [{"column": "name", "mask": "redact", "applies_to": ["reader"]}]})),
    );
    assert_eq!(status, StatusCode::OK, "{body}");

    let query = json!({"select_columns": ["name"], "filter": "salary > 150"});
    let (status, answer) = send(
        &s,
        ("POST", &format!("{STAFF}/query")),
        Some(&reader),
        Some(&query),
        "q-1",
    );
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sql = json!({"sql": "SELECT region FROM \"default\".\"hr\".\"staff\" WHERE name <> 'zed'"});
    let (status, answer) = send(&s, ("POST", "/api/sql"), Some(&reader), Some(&sql), "s-1");
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, _) = send(&s, ("GET", "/api/audit"), Some(&reader), None, "a-1");
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = send(
        &s,
        ("POST", &format!("{STAFF}/query")),
        None,
        Some(&query),
        "n-1",
    );
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Twice with one id: two requests, two rows.
    for _ in 0..2 {
        send(
            &s,
            ("GET", "/api/datasets/default/hr/staff/info"),
            Some(&reader),
            None,
            "twice",
        );
    }

    let rows = all_rows(&s, &admin);
    let q = row_of(&rows, "q-1");
    assert_eq!(
        (
            &q["front"],
            &q["action"],
            &q["subject_id"],
            &q["subject_name"]
        ),
        (
            &json!("http"),
            &json!("POST /api/datasets/{layer}/{domain}/{dataset}/query"),
            &json!(reader_id),
            &json!("reader")
        )
    );
    assert_eq!(
        (&q["layer"], &q["domain"], &q["dataset"], &q["version"]),
        (&json!("default"), &json!("hr"), &json!("staff"), &json!(1))
    );
    assert!(q["commit"].as_i64().unwrap() >= 1, "{q}");
    assert_eq!(texts(&q["columns"]), ["name", "salary"]);
    assert_eq!(texts(&q["policies"]), ["mask:name"]);
    assert_eq!(
        (&q["rows"], &q["status"], &q["client_addr"]),
        (&json!(2), &json!(200), &json!("127.0.0.1"))
    );
    assert!(q["bytes"].as_u64().unwrap() > 0, "{q}");
    let statement = q["statement"].as_str().unwrap();
    assert!(
        statement.contains('?') && !statement.contains("150"),
        "{statement}"
    );

    let q = row_of(&rows, "s-1");
    assert_eq!(
        (&q["front"], &q["action"]),
        (&json!("sql"), &json!("POST /api/sql"))
    );
    assert_eq!((&q["dataset"], &q["rows"]), (&json!("staff"), &json!(3)));
    assert_eq!(texts(&q["columns"]), ["name", "region"]);
    assert_eq!(texts(&q["policies"]), ["mask:name"]);
    let statement = q["statement"].as_str().unwrap();
    assert!(
        statement.contains("<> ?") && !statement.contains("zed"),
        "{statement}"
    );

    let q = row_of(&rows, "a-1");
    assert_eq!(
        (&q["status"], &q["subject_id"]),
        (&json!(403), &json!(reader_id))
    );
    let q = row_of(&rows, "n-1");
    assert_eq!(
        (&q["status"], &q["subject_id"], &q["dataset"]),
        (&json!(401), &Value::Null, &json!("staff"))
    );
    let twice: Vec<_> = rows.iter().filter(|r| r["request_id"] == "twice").collect();
    assert_eq!(twice.len(), 2, "{twice:?}");
    // Ids grow by one; the log holds the admin's own reads of it too.
    let ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");

    // Filters: the reader's SQL requests; a time window ending before everything.
    let path = format!("/api/audit?subject_id={reader_id}&front=sql");
    let (status, only) = s.call("GET", &path, Some(&admin), None);
    assert_eq!(status, StatusCode::OK, "{only}");
    let ids: Vec<&Value> = only
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["request_id"])
        .collect();
    assert_eq!(ids, [&json!("s-1")]);
    let (status, none) = s.call("GET", "/api/audit?until=2000-01-01", Some(&admin), None);
    assert_eq!((status, none), (StatusCode::OK, json!([])));
    for bad in [
        "front=ftp",
        "limit=0",
        "limit=1001",
        "since=yesterday",
        "colour=red",
    ] {
        let (status, body) = s.call("GET", &format!("/api/audit?{bad}"), Some(&admin), None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    // USER_ADMIN reads it too.
    let user_admin = s.token_with("keeper", &["USER_ADMIN"]);
    let (status, _) = s.call("GET", "/api/audit?limit=1", Some(&user_admin), None);
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn the_log_is_a_sql_table_for_its_readers_only() {
    let s = server(Options::default());
    let reader = s.token_with("reader", &["READ_ALL"]);
    let admin = s.admin_token();
    let (status, _) = s.call(
        "POST",
        &format!("{STAFF}/query"),
        Some(&reader),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::OK);
    let question = "SELECT subject_name, count(*) AS n, max(rows) AS most \
        FROM \"_system\".\"audit\".\"events\" WHERE dataset = 'staff' AND front = 'http' \
        AND action LIKE '%/query' AND at > now() - INTERVAL '1 day' GROUP BY subject_name";
    let (status, answer) = s.call(
        "POST",
        "/api/sql",
        Some(&admin),
        Some(&json!({ "sql": question })),
    );
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer,
        json!({"0": {"subject_name": "reader", "n": 1, "most": 3}})
    );
    let (status, answer) = s.call(
        "POST",
        "/api/sql",
        Some(&reader),
        Some(&json!({"sql": "SELECT count(*) FROM \"_system\".\"audit\".\"events\""})),
    );
    assert!(status.is_client_error(), "{status} {answer}");
    assert!(!answer.to_string().contains("subject_name"), "{answer}");
}

#[test]
fn statements_over_the_postgresql_listener_have_their_rows() {
    if psql_binary().is_none() {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    }
    let s = server(pg_options());
    let (id, secret) = s.create_client("wire", &["READ_ALL"]);
    let (ok, out) = psql(
        &s,
        &id,
        &secret,
        &[
            "SELECT name FROM \"default\".hr.staff WHERE salary > 150",
            "SELECT 1/0",
        ],
    );
    assert!(out.contains("bob"), "{ok} {out}");
    let rows = all_rows(&s, &s.admin_token());
    let wire: Vec<&Value> = rows
        .iter()
        .filter(|r| r["front"] == "pg" && r["subject_id"] == id.as_str())
        .collect();
    let read = wire
        .iter()
        .find(|r| r["dataset"] == "staff")
        .unwrap_or_else(|| panic!("{wire:?}"));
    assert_eq!(
        (&read["action"], &read["rows"], &read["status"]),
        (&json!("SELECT"), &json!(2), &json!(200))
    );
    assert_eq!(texts(&read["columns"]), ["name", "salary"]);
    assert_eq!(
        read["statement"],
        "SELECT name FROM \"default\".hr.staff WHERE salary > ?"
    );
    let failed = wire
        .iter()
        .find(|r| r["statement"] == "SELECT ?/?")
        .unwrap_or_else(|| panic!("{wire:?}"));
    assert!(failed["status"].as_u64().unwrap() >= 400, "{failed}");
}

#[test]
fn pages_have_their_rows_and_static_files_none() {
    let s = server(Options::default());
    let res = s
        .request("GET", "/")
        .header("x-request-id", "page-1")
        .send()
        .unwrap();
    // Not signed in: redirected to the sign-in page (followed), each request its own row.
    assert!(
        res.status().is_success(),
        "{} at {}",
        res.status(),
        res.url()
    );
    s.request("GET", "/static/app.css")
        .header("x-request-id", "css-1")
        .send()
        .unwrap();
    let rows = all_rows(&s, &s.admin_token());
    let page: Vec<(&Value, &Value, &Value)> = rows
        .iter()
        .filter(|r| r["request_id"] == "page-1")
        .map(|r| (&r["front"], &r["action"], &r["status"]))
        .collect();
    assert_eq!(
        page,
        [
            (&json!("web"), &json!("GET /"), &json!(303)),
            (&json!("web"), &json!("GET /signin"), &json!(200))
        ]
    );
    assert!(rows.iter().all(|r| r["request_id"] != "css-1"));
}

#[test]
fn answered_requests_keep_their_rows_through_a_kill_and_the_chain_verifies_until_changed() {
    let s = server(Options::default());
    let reader = s.token_with("reader", &["READ_ALL"]);
    for n in 0..20 {
        let (status, _) = send(
            &s,
            ("POST", &format!("{STAFF}/query")),
            Some(&reader),
            Some(&json!({})),
            &format!("k-{n}"),
        );
        assert_eq!(status, StatusCode::OK);
    }
    let dir = s.kill();
    let data = dir.path().join("data");
    let out = admin(&data, &["audit", "verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verified: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verified["verified"], true, "{verified}");

    let s = TestServer::start_in(dir, Options::default());
    let rows = all_rows(&s, &s.admin_token());
    // A read's answer waits for its opened row, not for the full one: the last request's full
    // row may not be written when the process dies, its opening then stands for it (status 0).
    // Each earlier one was written before the next request's opening (one writer, in order).
    for n in 0..20 {
        let row = row_of(&rows, &format!("k-{n}"));
        assert_eq!(row["dataset"], "staff", "{row}");
        assert!(
            row["columns"].as_array().is_some_and(|c| !c.is_empty()),
            "{row}"
        );
        match (n, &row["status"]) {
            (19, s) if *s == 0 => assert_eq!(row["rows"], Value::Null, "{row}"),
            _ => assert_eq!((&row["status"], &row["rows"]), (&json!(200), &json!(3))),
        }
    }
    let dir = s.stop();
    let data = dir.path().join("data");
    let file = data.join("audit.sqlite");
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute(
        "UPDATE audit_events SET subject_name = 'someone else' WHERE request_id = 'k-7'",
        [],
    )
    .unwrap();
    drop(db);
    let out = admin(&data, &["audit", "verify"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        found["problem"]
            .as_str()
            .unwrap()
            .contains("does not match its hash"),
        "{found}"
    );
}
