//! Uploads: storage layout and types, APPEND/OVERWRITE, unique, file and dataset deletion,
//! versions, jobs. Validation rules and their messages are in `uploads_validation`.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::stored::{parquet_files, stored_rows, stored_types};
use crate::support::{schema_json, TestServer};

pub(crate) const ORDERS: &str = "/api/datasets/default/shop/orders";

pub(crate) fn orders_schema(behaviour: &str) -> Value {
    schema_json(
        "shop",
        "orders",
        "PUBLIC",
        behaviour,
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "id", "data_type": "int", "allow_null": false, "unique": true},
            {"name": "day", "data_type": "date", "format": "%d/%m/%Y", "allow_null": true},
            {"name": "amount", "data_type": "double", "allow_null": true},
            {"name": "paid", "data_type": "boolean", "allow_null": true},
            {"name": "note", "data_type": "string", "allow_null": true}
        ]),
    )
}

pub(crate) fn ids(rows: &[serde_json::Map<String, Value>]) -> Vec<i64> {
    let mut ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.sort();
    ids
}

#[test]
fn valid_csv_is_stored_typed_and_partitioned() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let csv = "Region,id,day,amount,paid,note\n\
               north,1,31/01/2024,1.5,TRUE,\"a, quoted, note\"\n\
               south,2,01/02/2024,2,false,\n\
               north,3,,NA,null,NA\n\
               \"we/st\",4,29/02/2024,-0.25,True,plain\n";
    let (details, job) = s.upload_and_wait(&t, ORDERS, "orders.csv", csv.into());
    assert_eq!(details["status"], "Data processing");
    assert_eq!(details["dataset_version"], 1);
    assert_eq!(details["original_filename"], "orders.csv");
    let raw = details["raw_filename"].as_str().unwrap();
    assert!(
        raw.starts_with("20") && raw.contains('T') && raw.ends_with("-orders.csv"),
        "{raw}"
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert_eq!(job["type"], "UPLOAD");
    assert_eq!(job["rows_processed"], 4);
    assert_eq!(job["step"], "-");

    let (status, files) = s.call(
        "GET",
        "/api/datasets/default/shop/orders/1/files",
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(files, json!([raw]));

    let rows = stored_rows(&s.data_dir(), "default", "shop", "orders", 1);
    assert_eq!(ids(&rows), [1, 2, 3, 4]);
    let by_id = |id: i64| rows.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(by_id(1)["note"], "a, quoted, note");
    assert_eq!(by_id(1)["paid"], true);
    assert_eq!(by_id(1)["day"], json!({"date": 19753}));
    assert_eq!(by_id(3)["amount"], Value::Null);
    assert_eq!(by_id(3)["paid"], Value::Null);
    assert_eq!(by_id(3)["note"], Value::Null);
    assert_eq!(by_id(4)["region"], "we/st");
    assert_eq!(by_id(4)["amount"], -0.25);

    let dirs: Vec<String> = parquet_files(&s.data_dir().join("data/default/shop/orders/1"))
        .iter()
        .map(|p| {
            p.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for d in ["region=north", "region=south", "region=we%2Fst"] {
        assert!(dirs.contains(&d.to_string()), "{dirs:?}");
    }
    use arrow::datatypes::DataType::*;
    let types = stored_types(&s.data_dir(), "default", "shop", "orders", 1);
    assert_eq!(
        types,
        [
            ("id".to_string(), Int64),
            ("day".to_string(), Date32),
            ("amount".to_string(), Float64),
            ("paid".to_string(), Boolean),
            ("note".to_string(), Utf8)
        ]
    );
    // LZ4_RAW in version 2 data pages, values PLAIN or dictionary (benches/README.md, "peers").
    let file = parquet_files(&s.data_dir().join("data/default/shop/orders/1")).remove(0);
    let reader =
        parquet::file::reader::SerializedFileReader::new(std::fs::File::open(file).unwrap())
            .unwrap();
    use parquet::file::reader::FileReader;
    let group = reader.metadata().row_group(0);
    for column in group.columns() {
        assert_eq!(column.compression(), parquet::basic::Compression::LZ4_RAW);
        assert!(
            !column.encodings().any(|e| matches!(
                e,
                parquet::basic::Encoding::DELTA_BINARY_PACKED
                    | parquet::basic::Encoding::DELTA_BYTE_ARRAY
            )),
            "{:?}",
            column.column_path()
        );
    }
    let mut pages = reader
        .get_row_group(0)
        .unwrap()
        .get_column_page_reader(0)
        .unwrap();
    let page = pages.get_next_page().unwrap().unwrap();
    assert_eq!(page.page_type(), parquet::basic::PageType::DATA_PAGE_V2);
}

pub(crate) fn details(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The rows stored on disk for `dataset` version 1 once they number `expected`, or as they are
/// after 10 s. The files an overwrite replaced leave the folder when retention runs after the
/// commit (test servers keep one commit), which may finish just after the job's SUCCESS.
fn settled_rows(
    s: &TestServer,
    dataset: &str,
    expected: usize,
) -> Vec<serde_json::Map<String, Value>> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let rows = stored_rows(&s.data_dir(), "default", "shop", dataset, 1);
        if rows.len() == expected || std::time::Instant::now() > deadline {
            return rows;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn append_then_overwrite_replaces_only_the_partitions_present() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("OVERWRITE"));
    let t = s.admin_token();
    let up = |csv: &str| {
        s.upload_and_wait(&t, ORDERS, "o.csv", csv.as_bytes().to_vec())
            .1
    };
    assert_eq!(
        up("region,id,day,amount,paid,note\nnorth,1,,,,\nsouth,2,,,,\neast,3,,,,\n")["status"],
        "SUCCESS"
    );
    // Replaces north only; south and east stay.
    assert_eq!(
        up("region,id,day,amount,paid,note\nnorth,10,,,,\nnorth,11,,,,\n")["status"],
        "SUCCESS"
    );
    let rows = settled_rows(&s, "orders", 4);
    assert_eq!(ids(&rows), [2, 3, 10, 11]);
    assert_eq!(
        parquet_files(&s.data_dir().join("data/default/shop/orders/1/region=north")).len(),
        1
    );
}

#[test]
fn overwrite_of_an_unpartitioned_dataset_replaces_everything() {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "shop",
        "flat",
        "PUBLIC",
        "OVERWRITE",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    ));
    let t = s.admin_token();
    let path = "/api/datasets/default/shop/flat";
    s.upload_and_wait(&t, path, "a.csv", b"n\n1\n2\n".to_vec());
    s.upload_and_wait(&t, path, "b.csv", b"n\n3\n".to_vec());
    let rows = settled_rows(&s, "flat", 1);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["n"], 3);
}

#[test]
fn unique_holds_within_the_file_and_across_uploads() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let (status, body) = s.upload(
        &t,
        ORDERS,
        "d.csv",
        b"region,id,day,amount,paid,note\nnorth,1,,,,\nsouth,1,,,,\n".to_vec(),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        details(&body),
        ["Column [id] must be unique: value 1 in row 2 appears more than once in the file"]
    );
    assert_eq!(
        s.upload_and_wait(
            &t,
            ORDERS,
            "a.csv",
            b"region,id,day,amount,paid,note\nnorth,1,,,,\n".to_vec()
        )
        .1["status"],
        "SUCCESS"
    );
    // A clash with stored rows is known before the answer: 422, not 202 and a failed job.
    let (status, body) = s.upload(
        &t,
        ORDERS,
        "b.csv",
        b"region,id,day,amount,paid,note\nsouth,2,,,,\neast,1,,,,\n".to_vec(),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"],
        json!(["Column [id] must be unique: value 1 is already stored in this dataset version"])
    );
    assert_eq!(
        ids(&stored_rows(&s.data_dir(), "default", "shop", "orders", 1)),
        [1]
    );
}

#[test]
fn deleting_a_file_removes_exactly_its_rows() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let (first, _) = s.upload_and_wait(
        &t,
        ORDERS,
        "a.csv",
        b"region,id,day,amount,paid,note\nnorth,1,,,,\nsouth,2,,,,\n".to_vec(),
    );
    let (second, _) = s.upload_and_wait(
        &t,
        ORDERS,
        "b.csv",
        b"region,id,day,amount,paid,note\nnorth,3,,,,\n".to_vec(),
    );
    let name = first["raw_filename"].as_str().unwrap();
    for bad in ["..%2Fx", ".hidden", "a%20b"] {
        let (status, _) = s.call("DELETE", &format!("{ORDERS}/1/{bad}"), Some(&t), None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
    let (status, _) = s.call(
        "DELETE",
        &format!("{ORDERS}/1/20990101T000000000Z-none.csv"),
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = s.call("DELETE", &format!("{ORDERS}/1/{name}"), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["details"], format!("{name} has been deleted."));
    assert_eq!(
        ids(&stored_rows(&s.data_dir(), "default", "shop", "orders", 1)),
        [3]
    );
    let (_, files) = s.call(
        "GET",
        "/api/datasets/default/shop/orders/1/files",
        Some(&t),
        None,
    );
    assert_eq!(files, json!([second["raw_filename"]]));
    assert!(!s
        .data_dir()
        .join("raw/default/shop/orders/1")
        .join(name)
        .exists());
}

#[test]
fn deleting_a_dataset_leaves_similarly_named_ones_intact() {
    let s = TestServer::start();
    let t = s.admin_token();
    for name in ["sales", "sales_2"] {
        s.create_schema(&schema_json(
            "shop",
            name,
            "PUBLIC",
            "APPEND",
            json!([{"name": "n", "data_type": "int", "allow_null": false}]),
        ));
        s.upload_and_wait(
            &t,
            &format!("/api/datasets/default/shop/{name}"),
            "a.csv",
            b"n\n1\n".to_vec(),
        );
    }
    let (status, body) = s.call("DELETE", "/api/datasets/default/shop/sales", Some(&t), None);
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["details"], "sales has been deleted.");
    assert!(!s.data_dir().join("data/default/shop/sales").exists());
    assert!(!s.data_dir().join("raw/default/shop/sales").exists());
    assert_eq!(
        stored_rows(&s.data_dir(), "default", "shop", "sales_2", 1).len(),
        1
    );
    let (status, _) = s.call(
        "GET",
        "/api/datasets/default/shop/sales_2/1/files",
        Some(&t),
        None,
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        s.call("DELETE", "/api/datasets/default/shop/sales", Some(&t), None)
            .0,
        // 400, as rAPId: the SDK's delete_dataset maps it to DatasetNotFoundException.
        StatusCode::BAD_REQUEST
    );
    // The name is free again.
    s.create_schema(&schema_json(
        "shop",
        "sales",
        "PUBLIC",
        "APPEND",
        json!([{"name": "m", "data_type": "string", "allow_null": true}]),
    ));
    assert_eq!(
        s.upload_and_wait(
            &t,
            "/api/datasets/default/shop/sales",
            "a.csv",
            b"m\nx\n".to_vec()
        )
        .1["status"],
        "SUCCESS"
    );
}

#[test]
fn versions_are_kept_apart_even_one_and_ten() {
    let s = TestServer::start();
    let t = s.admin_token();
    let schema = schema_json(
        "shop",
        "ver",
        "PUBLIC",
        "OVERWRITE",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    );
    s.create_schema(&schema);
    for _ in 2..=10 {
        assert_eq!(
            s.call("PUT", "/api/schema", Some(&t), Some(&schema)).0,
            StatusCode::OK
        );
    }
    let path = "/api/datasets/default/shop/ver";
    s.upload_and_wait(
        &t,
        &format!("{path}?version=10"),
        "ten.csv",
        b"n\n10\n".to_vec(),
    );
    s.upload_and_wait(
        &t,
        &format!("{path}?version=1"),
        "one.csv",
        b"n\n1\n".to_vec(),
    );
    s.upload_and_wait(
        &t,
        &format!("{path}?version=1"),
        "one.csv",
        b"n\n11\n".to_vec(),
    );
    assert_eq!(
        stored_rows(&s.data_dir(), "default", "shop", "ver", 10)[0]["n"],
        10
    );
    assert_eq!(
        stored_rows(&s.data_dir(), "default", "shop", "ver", 1)[0]["n"],
        11
    );
    // No version given: the latest.
    let (details, _) = s.upload_and_wait(&t, path, "latest.csv", b"n\n12\n".to_vec());
    assert_eq!(details["dataset_version"], 10);
}

#[test]
fn jobs_belong_to_their_subject() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let writer = s.token_with("writer", &["WRITE_PUBLIC"]);
    let (details, job) = s.upload_and_wait(
        &writer,
        ORDERS,
        "a.csv",
        b"region,id,day,amount,paid,note\nnorth,1,,,,\n".to_vec(),
    );
    assert_eq!(job["filename"], "a.csv");
    assert_eq!(job["raw_filename"], details["raw_filename"]);
    assert_eq!(
        (
            job["layer"].as_str(),
            job["domain"].as_str(),
            job["dataset"].as_str(),
            job["version"].as_i64()
        ),
        (Some("default"), Some("shop"), Some("orders"), Some(1))
    );
    assert!(job["created_at"].is_string() && job["finished_at"].is_string());
    let other = s.token_with("other", &["WRITE_PUBLIC"]);
    let job_id = details["job_id"].as_str().unwrap();
    assert_eq!(
        s.call("GET", &format!("/api/jobs/{job_id}"), Some(&other), None)
            .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(s.call("GET", "/api/jobs", Some(&other), None).1, json!([]));
    assert_eq!(
        s.call("GET", "/api/jobs", Some(&writer), None)
            .1
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        s.call(
            "GET",
            &format!("/api/jobs/{job_id}"),
            Some(&s.admin_token()),
            None
        )
        .0,
        StatusCode::OK
    );
    assert_eq!(
        s.call("GET", "/api/jobs/no-such-job", Some(&writer), None)
            .0,
        StatusCode::NOT_FOUND
    );
}
