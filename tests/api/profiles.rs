//! Column profiles over HTTP (issue 37): counted from the uploads themselves, merged per
//! version, checked against counts made from the same rows; a change between the last two
//! uploads is flagged; a raw file's profile goes with it.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{schema_json, TestServer};

const PATH: &str = "/api/datasets/default/shop/trips";

fn server() -> TestServer {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "shop",
        "trips",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "mode", "data_type": "string", "allow_null": true},
            {"name": "km", "data_type": "double", "allow_null": true},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true}
        ]),
    ));
    s
}

/// Rows `from..to`: modes bus/train/bike (every 5th empty), km = id / 4, days in January.
fn rows(from: u32, to: u32, modes: &[&str]) -> Vec<u8> {
    let mut csv = String::from("id,mode,km,day\n");
    for i in from..to {
        let mode = if i % 5 == 0 {
            ""
        } else {
            modes[i as usize % modes.len()]
        };
        csv.push_str(&format!(
            "{i},{mode},{},2024-01-{:02}\n",
            i as f64 / 4.0,
            1 + i % 28
        ));
    }
    csv.into_bytes()
}

fn profile(s: &TestServer, t: &str) -> Value {
    let (status, body) = s.call("GET", &format!("{PATH}/profile"), Some(t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn column<'a>(p: &'a Value, name: &str) -> &'a Value {
    p["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()
}

#[test]
fn profiles_count_the_stored_rows_and_flag_what_changed() {
    let s = server();
    let t = s.admin_token();
    let empty = profile(&s, &t);
    assert_eq!(
        (empty["uploads"].clone(), empty["rows"].clone()),
        (json!(0), json!(0))
    );
    let (_, job) = s.upload_and_wait(&t, PATH, "a.csv", rows(0, 3000, &["bus", "train", "bike"]));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let (_, job) = s.upload_and_wait(&t, PATH, "b.csv", rows(3000, 4000, &["bus", "ferry"]));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    // Read once: the commit that made the job SUCCESS kept the profile.
    let p = profile(&s, &t);
    assert_eq!(
        (
            p["version"].clone(),
            p["uploads"].clone(),
            p["rows"].clone()
        ),
        (json!(1), json!(2), json!(4000))
    );

    let id = column(&p, "id");
    assert_eq!(
        (id["min"].clone(), id["max"].clone(), id["nulls"].clone()),
        (json!(0), json!(3999), json!(0))
    );
    let distinct = id["distinct_estimate"].as_f64().unwrap();
    assert!((distinct - 4000.0).abs() < 4000.0 * 0.05, "{distinct}");
    let bins = id["histogram"].as_array().unwrap();
    let total: u64 = bins.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert!(
        total.abs_diff(4000) <= 10,
        "the histogram adds up to the rows: {total}"
    );

    // Exact counts for the low-cardinality column, adding up to its non-null rows.
    let mode = column(&p, "mode");
    assert_eq!(mode["nulls"], 800);
    let top = mode["top_values"].as_array().unwrap();
    let counted: u64 = top.iter().map(|v| v["count"].as_u64().unwrap()).sum();
    assert_eq!(counted, 3200);
    let values: Vec<&str> = top.iter().map(|v| v["value"].as_str().unwrap()).collect();
    assert_eq!(values.len(), 4, "{values:?}");
    assert!(values.contains(&"ferry"));
    let day = column(&p, "day");
    assert_eq!(
        (day["min"].clone(), day["max"].clone()),
        (json!("2024-01-01"), json!("2024-01-28"))
    );

    // The last upload brought a mode the one before did not have.
    let changes = p["changes"].as_array().unwrap();
    let new_mode = changes
        .iter()
        .find(|c| c["column"] == "mode" && c["kind"] == "new_values");
    assert!(
        new_mode.is_some_and(|c| c["message"].as_str().unwrap().contains("ferry")),
        "{changes:?}"
    );

    // A raw file's rows leave the profile with it.
    let (_, files) = s.call("GET", &format!("{PATH}/1/files"), Some(&t), None);
    let first = files
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f.as_str().unwrap().contains("-a.csv"))
        .unwrap();
    let (status, body) = s.call(
        "DELETE",
        &format!("{PATH}/1/{}", first.as_str().unwrap()),
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let p = profile(&s, &t);
    assert_eq!(
        (p["uploads"].clone(), p["rows"].clone()),
        (json!(1), json!(1000))
    );
    assert_eq!(column(&p, "id")["min"], 3000);
    assert_eq!(p["changes"], json!([]));
}

#[test]
fn profiles_of_unknown_versions_are_404_and_quarantined_rows_are_left_out() {
    let s = server();
    let t = s.admin_token();
    let (status, body) = s.call("GET", &format!("{PATH}/profile?version=7"), Some(&t), None);
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let csv = "id,mode,km,day\n1,bus,2.5,2024-01-01\n2,bus,oops,2024-01-02\n3,train,1,2024-01-03\n";
    let path = format!("{PATH}?on_error=quarantine");
    let (status, body) = s.upload(&t, &path, "q.csv", csv.as_bytes().to_vec());
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let p = profile(&s, &t);
    assert_eq!(p["rows"], 2, "only the stored rows: {p}");
    assert_eq!(column(&p, "km")["max"], 2.5);
    let top = column(&p, "mode")["top_values"].clone();
    assert_eq!(
        top,
        json!([{"value": "bus", "count": 1}, {"value": "train", "count": 1}])
    );
}
