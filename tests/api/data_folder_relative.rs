//! The default data folder is relative (`./data`): everything works on it as on an absolute one.
//! Queries used to fail with 500 there, since DataFusion's object store takes absolute paths only.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, Options, TestServer};

#[test]
fn a_relative_data_folder_serves_uploads_queries_and_downloads() {
    let s = TestServer::start_with(Options {
        data_dir: Some("data".into()),
        ..Options::default()
    });
    s.create_schema(&schema_json(
        "tourism",
        "visits",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "visitors", "data_type": "int", "allow_null": true}
        ]),
    ));
    let t = s.admin_token();
    let path = "/api/datasets/default/tourism/visits";
    let csv = "region,visitors\nnorth,120\nsouth,80\nnorth,5\n";
    let (_, job) = s.upload_and_wait(&t, path, "visits.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert!(
        s.dir
            .path()
            .join("data/data/default/tourism/visits/1")
            .is_dir(),
        "the data went under the server's current folder"
    );

    let body = json!({"select_columns": ["region", "sum(visitors) AS n"],
                      "group_by_columns": ["region"],
                      "order_by_columns": [{"column": "region"}]});
    let (status, answer) = s.call("POST", &format!("{path}/query"), Some(&t), Some(&body));
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer,
        json!({"0": {"region": "north", "n": 125}, "1": {"region": "south", "n": 80}})
    );

    let (status, info) = s.call("GET", &format!("{path}/info"), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["metadata"]["number_of_rows"], 3, "{info}");
}
