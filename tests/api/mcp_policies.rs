//! Policies through the MCP endpoint (docs/API.md, "Policies"): a row filter and a column mask on
//! a dataset apply to every tool as to `/query` and `/api/sql`, figures over every row are hidden,
//! and the audit row names the policies applied.

use reqwest::StatusCode;
use serde_json::json;

use crate::mcp::tool;
use crate::sql::server_with_data;
use crate::support::Options;

#[test]
fn row_filters_and_column_masks_apply_to_every_tool() {
    let s = server_with_data(Options::default());
    let admin = s.admin_token();
    let (reader_id, secret) = s.create_client("mcp-filtered", &["READ_PUBLIC"]);
    let reader = s.token(&reader_id, &secret);
    let policy = json!({
        "row_filters": [{"name": "north_only", "filter": "region = 'north'",
            "applies_to": ["*"], "except": ["DATA_ADMIN"]}],
        "column_masks": [{"column": "price", "mask": "null", "applies_to": ["*"],
            "except": ["DATA_ADMIN"]}]});
    let path = "/api/datasets/default/travel/trips/policy";
    let (status, body) = s.call("PUT", path, Some(&admin), Some(&policy));
    assert_eq!(status, StatusCode::OK, "{body}");
    let trips = json!({"layer": "default", "domain": "travel", "dataset": "trips"});

    let mut asked = trips.clone();
    asked["query"] = json!({"select_columns": ["region", "price"],
        "order_by_columns": [{"column": "year"}]});
    let rows = tool(&s, &reader, "query", asked.clone()).unwrap();
    assert_eq!(
        rows["rows"],
        json!([["north", null], ["north", null]]),
        "{rows}"
    );
    let statement = "SELECT region, price FROM \"default\".\"travel\".\"trips\" ORDER BY year";
    let rows = tool(&s, &reader, "sql", json!({"sql": statement})).unwrap();
    assert_eq!(
        rows["rows"],
        json!([["north", null], ["north", null]]),
        "{rows}"
    );
    // The admin is excepted: every row, every price.
    let rows = tool(&s, &admin, "query", asked).unwrap();
    assert_eq!(rows["row_count"], 4, "{rows}");
    assert_eq!(rows["rows"][0], json!(["north", 10.5]), "{rows}");

    // Totals over every row are hidden from the filtered subject, shown to the admin.
    let listed = tool(&s, &reader, "list_datasets", json!({})).unwrap();
    assert_eq!(listed["datasets"][0]["rows"], json!(null), "{listed}");
    let described = tool(&s, &reader, "describe_dataset", trips.clone()).unwrap();
    assert_eq!(described["rows"], json!(null), "{described}");
    assert!(described["profile"]["hidden"].is_string(), "{described}");
    assert_eq!(
        described["history"],
        json!(null),
        "history counts hidden rows: {described}"
    );
    let described = tool(&s, &admin, "describe_dataset", trips).unwrap();
    assert_eq!(described["rows"], 4, "{described}");

    let audit = format!("/api/audit?subject_id={reader_id}&front=mcp&action=mcp.query");
    let (status, body) = s.call("GET", &audit, Some(&admin), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    let row = &body.as_array().unwrap()[0];
    assert_eq!(
        row["policies"],
        json!(["north_only", "mask:price"]),
        "{row}"
    );
    assert_eq!(row["rows"], 2, "{row}");
}
