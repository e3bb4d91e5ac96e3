//! `unique` against stored rows is decided before the upload is answered (422, not 202), and
//! follows what the commit will keep: an OVERWRITE replacing the partition that holds a value
//! may reuse it.

use reqwest::StatusCode;
use serde_json::json;

use crate::stored::stored_rows;
use crate::support::TestServer;
use crate::uploads::{ids, orders_schema, ORDERS};

#[test]
fn overwrite_may_reuse_values_of_the_partitions_it_replaces_but_not_of_others() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("OVERWRITE"));
    let t = s.admin_token();
    let header = "region,id,day,amount,paid,note\n";
    let csv = |rows: &str| format!("{header}{rows}").into_bytes();
    let (_, job) = s.upload_and_wait(&t, ORDERS, "a.csv", csv("north,1,,,,\nsouth,2,,,,\n"));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    // Replaces north (which holds 1): 1 is free again.
    let (_, job) = s.upload_and_wait(&t, ORDERS, "b.csv", csv("north,1,,,,\nnorth,3,,,,\n"));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    // Replaces east only: 2 is still stored in south.
    let (status, body) = s.upload(&t, ORDERS, "c.csv", csv("east,2,,,,\neast,4,,,,\n"));
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"],
        json!(["Column [id] must be unique: value 2 is already stored in this dataset version"])
    );
    let (_, jobs) = s.call("GET", "/api/jobs", Some(&t), None);
    let failed: Vec<_> = jobs
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["status"] == "FAILED")
        .collect();
    assert_eq!(
        failed.len(),
        1,
        "the refused upload is recorded as a failed job: {jobs}"
    );
    assert_eq!(
        ids(&stored_rows(&s.data_dir(), "default", "shop", "orders", 1)),
        [1, 2, 3]
    );
}

/// The unique index keeps every value an append stored: after many appends a value of the
/// first is still refused (422); deleting that first raw file frees exactly its values.
#[test]
fn a_value_of_the_first_append_is_refused_after_many_appends() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let header = "region,id,day,amount,paid,note\n";
    let csv = |rows: String| format!("{header}{rows}").into_bytes();
    let (first, job) = s.upload_and_wait(
        &t,
        ORDERS,
        "a.csv",
        csv("north,1,,,,\nsouth,2,,,,\n".into()),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
    for i in 0..40 {
        let region = ["north", "south", "east", "west"][i % 4];
        let rows = format!("{region},{},,,,\n{region},{},,,,\n", 10 + 2 * i, 11 + 2 * i);
        let (_, job) = s.upload_and_wait(&t, ORDERS, "n.csv", csv(rows));
        assert_eq!(job["status"], "SUCCESS", "append {i}: {job}");
    }
    let (status, body) = s.upload(
        &t,
        ORDERS,
        "late.csv",
        csv("west,2,,,,\nwest,99,,,,\n".into()),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"],
        json!(["Column [id] must be unique: value 2 is already stored in this dataset version"])
    );

    let name = first["raw_filename"].as_str().unwrap();
    let (status, body) = s.call("DELETE", &format!("{ORDERS}/1/{name}"), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, job) = s.upload_and_wait(&t, ORDERS, "again.csv", csv("east,2,,,,\n".into()));
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let (status, _) = s.upload(&t, ORDERS, "twice.csv", csv("east,11,,,,\n".into()));
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let stored = ids(&stored_rows(&s.data_dir(), "default", "shop", "orders", 1));
    assert_eq!(stored.len(), 81);
    assert!(stored.contains(&2) && !stored.contains(&1) && !stored.contains(&99));
}
