//! A query asked again answers from the data as it is now. The engine keeps the plans of
//! repeated queries; every commit (append, overwrite), a dataset made again under its name with
//! another schema, and every new schema version are seen by the very next run of the same query.

use serde_json::{json, Value};

use crate::support::{schema_json, TestServer};

const PATH: &str = "/api/datasets/default/kept/sales";
const QUERY: &str = "/api/datasets/default/kept/sales/query";

fn schema(behaviour: &str, n_type: &str) -> Value {
    schema_json(
        "kept",
        "sales",
        "PUBLIC",
        behaviour,
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "n", "data_type": n_type, "allow_null": true}
        ]),
    )
}

/// Rows of the group-by, asked `times` times: each answer must be the same.
fn totals(s: &TestServer, t: &str, times: usize) -> Vec<Value> {
    let body = json!({"select_columns": ["region", "count(*) AS c", "sum(n) AS total"],
                      "group_by_columns": ["region"],
                      "order_by_columns": [{"column": "region"}]});
    let mut answers = Vec::new();
    for _ in 0..times {
        let (status, answer) = s.call("POST", QUERY, Some(t), Some(&body));
        assert_eq!(status, 200, "{answer}");
        let map = answer.as_object().unwrap();
        answers.push(
            (0..map.len())
                .map(|i| map[&i.to_string()].clone())
                .collect::<Vec<_>>(),
        );
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    answers.pop().unwrap()
}

fn upload(s: &TestServer, t: &str, csv: &str) {
    let (_, job) = s.upload_and_wait(t, PATH, "sales.csv", csv.as_bytes().to_vec());
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

#[test]
fn a_repeated_query_sees_each_append_at_once() {
    let s = TestServer::start();
    let t = s.admin_token();
    s.create_schema(&schema("APPEND", "int"));
    upload(&s, &t, "region,n\nnorth,1\nnorth,2\nsouth,3\n");
    assert_eq!(
        totals(&s, &t, 4),
        [
            json!({"region": "north", "c": 2, "total": 3}),
            json!({"region": "south", "c": 1, "total": 3})
        ]
    );
    upload(&s, &t, "region,n\nnorth,10\neast,5\n");
    assert_eq!(
        totals(&s, &t, 3),
        [
            json!({"region": "east", "c": 1, "total": 5}),
            json!({"region": "north", "c": 3, "total": 13}),
            json!({"region": "south", "c": 1, "total": 3})
        ]
    );
}

#[test]
fn a_repeated_query_sees_an_overwrite_and_a_dataset_made_again() {
    let s = TestServer::start();
    let t = s.admin_token();
    s.create_schema(&schema("OVERWRITE", "int"));
    upload(&s, &t, "region,n\nnorth,1\nsouth,2\n");
    assert_eq!(
        totals(&s, &t, 3),
        [
            json!({"region": "north", "c": 1, "total": 1}),
            json!({"region": "south", "c": 1, "total": 2})
        ]
    );
    // Replaces the partitions it holds (docs/API.md).
    upload(&s, &t, "region,n\nnorth,7\nnorth,8\n");
    assert_eq!(
        totals(&s, &t, 3),
        [
            json!({"region": "north", "c": 2, "total": 15}),
            json!({"region": "south", "c": 1, "total": 2})
        ]
    );

    // Deleted, then made again under the same name with `n` as doubles.
    let (status, body) = s.call("DELETE", PATH, Some(&t), None);
    assert!(status.is_success(), "{status}: {body}");
    s.create_schema(&schema("OVERWRITE", "double"));
    upload(&s, &t, "region,n\nwest,0.5\nwest,0.25\n");
    assert_eq!(
        totals(&s, &t, 3),
        [json!({"region": "west", "c": 2, "total": 0.75})]
    );
}
