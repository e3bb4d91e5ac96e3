//! Many uploads at once: to one dataset (commits serialised, every row stored exactly once) and
//! to many datasets (in parallel).

use std::collections::HashSet;

use serde_json::json;

use crate::stored::stored_rows;
use crate::support::{schema_json, TestServer};

const UPLOADS: i64 = 20;
const ROWS_EACH: i64 = 500;

fn csv_for(upload: i64) -> Vec<u8> {
    let mut csv = String::from("part,id,label\n");
    for r in 0..ROWS_EACH {
        let id = upload * ROWS_EACH + r;
        csv.push_str(&format!("p{},{id},row {id}\n", id % 3));
    }
    csv.into_bytes()
}

fn columns() -> serde_json::Value {
    json!([
        {"name": "part", "data_type": "string", "allow_null": false, "partition_index": 0},
        {"name": "id", "data_type": "int", "allow_null": false, "unique": true},
        {"name": "label", "data_type": "string", "allow_null": true}
    ])
}

fn upload_all(s: &TestServer, paths: Vec<String>) {
    let token = s.admin_token();
    std::thread::scope(|scope| {
        let handles: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let token = token.clone();
                scope.spawn(move || {
                    s.upload_and_wait(&token, path, "c.csv", csv_for(i as i64))
                        .1
                })
            })
            .collect();
        for h in handles {
            let job = h.join().unwrap();
            assert_eq!(job["status"], "SUCCESS", "{job}");
        }
    });
}

#[test]
fn twenty_concurrent_uploads_to_one_dataset_store_every_row_once() {
    let s = TestServer::start();
    s.create_schema(&schema_json("load", "one", "PUBLIC", "APPEND", columns()));
    upload_all(
        &s,
        vec!["/api/datasets/default/load/one".to_string(); UPLOADS as usize],
    );
    let rows = stored_rows(&s.data_dir(), "default", "load", "one", 1);
    assert_eq!(rows.len() as i64, UPLOADS * ROWS_EACH);
    let ids: HashSet<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(
        ids.len() as i64,
        UPLOADS * ROWS_EACH,
        "every id exactly once"
    );
    let (_, files) = s.call(
        "GET",
        "/api/datasets/default/load/one/1/files",
        Some(&s.admin_token()),
        None,
    );
    assert_eq!(files.as_array().unwrap().len() as i64, UPLOADS);
}

#[test]
fn twenty_concurrent_uploads_to_twenty_datasets() {
    let s = TestServer::start();
    let mut paths = Vec::new();
    for i in 0..UPLOADS {
        s.create_schema(&schema_json(
            "load",
            &format!("ds{i}"),
            "PUBLIC",
            "APPEND",
            columns(),
        ));
        paths.push(format!("/api/datasets/default/load/ds{i}"));
    }
    upload_all(&s, paths);
    for i in 0..UPLOADS {
        let rows = stored_rows(&s.data_dir(), "default", "load", &format!("ds{i}"), 1);
        assert_eq!(rows.len() as i64, ROWS_EACH, "ds{i}");
        let first = rows
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .min()
            .unwrap();
        assert_eq!(first, i * ROWS_EACH, "ds{i} holds its own upload");
    }
}
