//! The stored tree is plain Hive-partitioned Parquet: pyarrow reads it back with the right types
//! and the partition values from the folder names.

use std::process::Command;

use serde_json::{json, Value};

use crate::support::{schema_json, TestServer};

pub(crate) fn python() -> String {
    if let Ok(p) = std::env::var("RAPID_TEST_PYTHON") {
        return p;
    }
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/.venv/bin/python");
    assert!(
        std::path::Path::new(venv).exists(),
        "no Python test environment: run scripts/setup-python.sh (scripts/test.sh does)"
    );
    venv.to_string()
}

#[test]
fn stored_parquet_reads_back_in_pyarrow_with_types_and_partitions() {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "shop",
        "sales",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true},
            {"name": "price", "data_type": "double", "allow_null": true},
            {"name": "paid", "data_type": "boolean", "allow_null": true}
        ]),
    ));
    let csv = "region,id,day,price,paid\nnorth,1,2024-01-31,9.5,true\nsouth,2,,NA,\nsouth,3,2023-12-01,1,FALSE\n";
    let (_, job) = s.upload_and_wait(
        &s.admin_token(),
        "/api/datasets/default/shop/sales",
        "s.csv",
        csv.into(),
    );
    assert_eq!(job["status"], "SUCCESS");

    let out = Command::new(python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/read_dataset.py"
        ))
        .arg(s.data_dir().join("data/default/shop/sales/1"))
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["rows"], 3);
    assert_eq!(summary["types"]["id"], "int64");
    assert_eq!(summary["types"]["day"], "date32[day]");
    assert_eq!(summary["types"]["price"], "double");
    assert_eq!(summary["types"]["paid"], "bool");
    assert_eq!(summary["types"]["region"], "string");
    assert_eq!(
        summary["records"],
        json!([
            {"id": 1, "day": "2024-01-31", "price": 9.5, "paid": true, "region": "north"},
            {"id": 2, "day": null, "price": null, "paid": null, "region": "south"},
            {"id": 3, "day": "2023-12-01", "price": 1.0, "paid": false, "region": "south"}
        ])
    );
}
