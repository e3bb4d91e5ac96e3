//! Uploads: every validation rule with its message, the checks done before the body is read,
//! size limits, and Parquet type handling.

use reqwest::StatusCode;
use serde_json::json;

use crate::stored::{parquet_files, stored_rows};
use crate::support::{schema_json, Options, TestServer};
use crate::uploads::{details, ids, orders_schema, ORDERS};

fn assert_has(messages: &[String], expected: &str) {
    assert!(
        messages.iter().any(|m| m == expected),
        "missing [{expected}] in {messages:#?}"
    );
}

#[test]
fn every_type_and_null_rule_is_reported_with_row_and_column() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let csv = "region,id,day,amount,paid,note\n\
               north,abc,2024-01-31,x1,yes,ok\n\
               ,9223372036854775808,31/01/2024,1,None,ok\n\
               north,2.5,,inf,TRUE,ok\n\
               south,NA,31/02/2024,1,false,ok\n";
    let (status, body) = s.upload(&t, ORDERS, "bad.csv", csv.into());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let m = details(&body);
    assert_has(
        &m,
        "Column [id] has an incorrect data type. Expected int, received \"abc\" in row 1",
    );
    assert_has(&m, "Column [day] has an incorrect data type. Expected date in format %d/%m/%Y, received \"2024-01-31\" in row 1");
    assert_has(
        &m,
        "Column [amount] has an incorrect data type. Expected double, received \"x1\" in row 1",
    );
    assert_has(
        &m,
        "Column [paid] has an incorrect data type. Expected boolean, received \"yes\" in row 1",
    );
    assert_has(
        &m,
        "Column [region] does not allow null values: row 2 has \"\"",
    );
    assert_has(&m, "Column [id] has an incorrect data type. Expected int, received \"9223372036854775808\" in row 2");
    assert_has(
        &m,
        "Column [paid] has an incorrect data type. Expected boolean, received \"None\" in row 2",
    );
    assert_has(
        &m,
        "Column [id] has an incorrect data type. Expected int, received \"2.5\" in row 3",
    );
    assert_has(
        &m,
        "Column [amount] has an incorrect data type. Expected double, received \"inf\" in row 3",
    );
    assert_has(
        &m,
        "Column [id] does not allow null values: row 4 has \"NA\"",
    );
    assert_has(&m, "Column [day] has an incorrect data type. Expected date in format %d/%m/%Y, received \"31/02/2024\" in row 4");
    assert_eq!(m.len(), 11, "{m:#?}");
    // Nothing stored, and the job says why.
    assert!(parquet_files(&s.data_dir().join("data")).is_empty());
    assert_eq!(
        s.call(
            "GET",
            "/api/datasets/default/shop/orders/1/files",
            Some(&t),
            None
        )
        .0,
        StatusCode::NOT_FOUND
    );
    let (_, jobs) = s.call("GET", "/api/jobs", Some(&t), None);
    assert_eq!(jobs[0]["status"], "FAILED");
    assert_eq!(jobs[0]["step"], "VALIDATION");
    assert_eq!(jobs[0]["errors"].as_array().unwrap().len(), 11);
}

#[test]
fn every_check_type_is_enforced() {
    let s = TestServer::start();
    let schema = schema_json(
        "shop",
        "checked",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "age", "data_type": "int", "allow_null": true, "checks": {
                "adult": {"check_type": "greater_than", "parameters": {"min_value": 17}},
                "sane": {"check_type": "in_range", "parameters": {"min_value": 18, "max_value": 120}}}},
            {"name": "score", "data_type": "double", "allow_null": true, "checks": {
                "cap": {"check_type": "less_than", "parameters": {"max_value": 10.5}}}},
            {"name": "name", "data_type": "string", "allow_null": true, "checks": {
                "len": {"check_type": "str_length", "parameters": {"min_value": 2, "max_value": 5}},
                "shape": {"check_type": "str_matches", "parameters": {"pattern": "[a-z]+\\d"}}}},
            {"name": "team", "data_type": "string", "allow_null": true, "checks": {
                "known": {"check_type": "isin", "parameters": {"allowed_values": ["red", "blue"]}}}}
        ]),
    );
    s.create_schema(&schema);
    let t = s.admin_token();
    let path = "/api/datasets/default/shop/checked";
    let (status, body) = s.upload_and_wait(
        &t,
        path,
        "ok.csv",
        "age,score,name,team\n18,10.4,ab1,red\n,,,\n".into(),
    );
    assert_eq!(body["status"], "SUCCESS", "{status} {body}");
    let (status, body) = s.upload(
        &t,
        path,
        "bad.csv",
        "age,score,name,team\n17,10.5,a,green\n121,1,toolong9,blue\n50,1,1ab,red\n".into(),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let m = details(&body);
    assert_has(
        &m,
        "Column [age] failed check [adult] greater_than(17): value 17 in row 1",
    );
    assert_has(
        &m,
        "Column [age] failed check [sane] in_range(18, 120): value 17 in row 1",
    );
    assert_has(
        &m,
        "Column [age] failed check [sane] in_range(18, 120): value 121 in row 2",
    );
    assert_has(
        &m,
        "Column [score] failed check [cap] less_than(10.5): value 10.5 in row 1",
    );
    assert!(
        m.iter().any(|x| x.starts_with(
            "Column [name] failed check [len] str_length(2, 5): value \"a\" in row 1"
        )),
        "{m:#?}"
    );
    assert!(
        m.iter()
            .any(|x| x.starts_with("Column [name] failed check [len]")
                && x.ends_with("value \"toolong9\" in row 2")),
        "{m:#?}"
    );
    assert!(
        m.iter()
            .any(|x| x.starts_with("Column [name] failed check [shape]")
                && x.ends_with("value \"1ab\" in row 3")),
        "{m:#?}"
    );
    assert!(
        m.iter()
            .any(|x| x.starts_with("Column [team] failed check [known]")
                && x.ends_with("value \"green\" in row 1")),
        "{m:#?}"
    );
}

#[test]
fn header_must_name_the_schema_columns_in_any_order() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let (_, job) = s.upload_and_wait(
        &t,
        ORDERS,
        "o.csv",
        "note,paid,amount,day,id,region\nx,true,1,01/01/2024,1,north\n".into(),
    );
    assert_eq!(job["status"], "SUCCESS");
    for header in [
        "region,id,day,amount,paid",
        "region,id,day,amount,paid,note,extra",
        "region,id,day,amount,paid,paid",
    ] {
        let (status, body) = s.upload(&t, ORDERS, "h.csv", format!("{header}\n").into_bytes());
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let m = details(&body);
        assert!(
            m[0].starts_with(
                "Expected columns: [amount, day, id, note, paid, region], received: ["
            ),
            "{m:?}"
        );
    }
}

#[test]
fn ragged_rows_empty_files_and_bad_bytes_are_refused() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let (status, body) = s.upload(
        &t,
        ORDERS,
        "r.csv",
        "region,id,day,amount,paid,note\nnorth,1,,,,\nnorth,2\n".into(),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(details(&body), ["Row 2 has 2 fields, but the header has 6"]);
    let (status, body) = s.upload(&t, ORDERS, "e.csv", Vec::new());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = s.upload(
        &t,
        ORDERS,
        "h.csv",
        "region,id,day,amount,paid,note\n".into(),
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        details(&body),
        ["The file has no data rows, it cannot be processed"]
    );
    let mut bytes = b"region,id,day,amount,paid,note\nnorth,1,,,,".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, b'\n']);
    let (status, body) = s.upload(&t, ORDERS, "u.csv", bytes);
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        details(&body),
        [
            "Column [note] has text that is not UTF-8 in row 1: \"\\xFF\\xFE\"; the file may be \
          Latin-1 or Windows-1252: save it as CSV UTF-8 and upload it again"
        ],
        "{body}"
    );
    let (status, body) = s.upload(&t, ORDERS, "notes.txt", b"hello".to_vec());
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["details"]
        .as_str()
        .unwrap()
        .contains("[txt] is not supported"));
    let (status, _) = s.upload(&t, ORDERS, "junk.parquet", b"PAR1 not really".to_vec());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    // The server is still up and nothing was stored.
    assert_eq!(s.call("GET", "/api/status", None, None).0, StatusCode::OK);
    assert!(parquet_files(&s.data_dir().join("data")).is_empty());
}

#[test]
fn upload_routes_check_dataset_version_and_permission_first() {
    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let csv = || b"region,id,day,amount,paid,note\nnorth,1,,,,\n".to_vec();
    let (status, body) = s.upload(&t, "/api/datasets/default/shop/nothing", "a.csv", csv());
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["details"]
        .as_str()
        .unwrap()
        .contains("Could not find the schema"));
    let (status, body) = s.upload(&t, &format!("{ORDERS}?version=3"), "a.csv", csv());
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let reader = s.token_with("reader", &["READ_ALL"]);
    assert_eq!(
        s.upload(&reader, ORDERS, "a.csv", csv()).0,
        StatusCode::FORBIDDEN
    );
    let private_writer = s.token_with("private_writer", &["WRITE_PRIVATE"]);
    assert_eq!(
        s.upload(&private_writer, ORDERS, "a.csv", csv()).0,
        StatusCode::ACCEPTED
    );
    let form = reqwest::blocking::multipart::Form::new().text("other", "x");
    let res = s
        .request("POST", ORDERS)
        .bearer_auth(&t)
        .multipart(form)
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
}

#[test]
fn protected_datasets_need_their_domain_permission() {
    let s = TestServer::start();
    let t = s.admin_token();
    assert_eq!(
        s.call("POST", "/api/protected_domains/vault", Some(&t), None)
            .0,
        StatusCode::CREATED
    );
    s.create_schema(&schema_json(
        "vault",
        "gold",
        "PROTECTED",
        "APPEND",
        json!([{"name": "bars", "data_type": "int", "allow_null": false}]),
    ));
    let path = "/api/datasets/default/vault/gold";
    let csv = || b"bars\n1\n".to_vec();
    let other = s.token_with("other", &["WRITE_PRIVATE", "WRITE_PROTECTED_VAULT"]);
    assert_eq!(
        s.upload(&other, path, "g.csv", csv()).0,
        StatusCode::ACCEPTED
    );
    let private = s.token_with("private", &["WRITE_PRIVATE"]);
    let (status, body) = s.upload(&private, path, "g.csv", csv());
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body["details"]
        .as_str()
        .unwrap()
        .contains("does not have enough permissions"));
}

#[test]
fn upload_over_the_size_limit_is_413_and_stores_nothing() {
    let s = TestServer::start_with(Options {
        args: vec!["--max-upload-bytes".into(), "100000".into()],
        ..Default::default()
    });
    s.create_schema(&orders_schema("APPEND"));
    let mut csv = String::from("region,id,day,amount,paid,note\n");
    for i in 0..10_000 {
        csv.push_str(&format!("north,{i},,1.5,true,some text\n"));
    }
    let (status, body) = s.upload(&s.admin_token(), ORDERS, "big.csv", csv.into());
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(body["details"]
        .as_str()
        .unwrap()
        .contains("upload limit of 100000 bytes"));
    assert!(parquet_files(&s.data_dir().join("data")).is_empty());
    assert_eq!(
        std::fs::read_dir(s.data_dir().join("staging"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn parquet_uploads_are_cast_to_the_schema_or_refused_by_type() {
    use std::sync::Arc;

    use arrow::array::{
        ArrayRef, BooleanArray, DictionaryArray, Float32Array, Int32Array, RecordBatch,
        StringArray, TimestampMillisecondArray,
    };
    use arrow::datatypes::Int32Type;
    use parquet::arrow::ArrowWriter;

    let s = TestServer::start();
    s.create_schema(&orders_schema("APPEND"));
    let t = s.admin_token();
    let write = |cols: Vec<(&str, ArrayRef)>| {
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let mut buf = Vec::new();
        let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        buf
    };
    let good = write(vec![
        (
            "region",
            Arc::new(StringArray::from(vec!["north", "east"])) as ArrayRef,
        ),
        ("id", Arc::new(Int32Array::from(vec![7, 8]))),
        (
            "day",
            // pandas writes tz-aware datetimes with a named zone, categoricals as dictionaries.
            Arc::new(
                TimestampMillisecondArray::from(vec![Some(1_706_659_200_000), None])
                    .with_timezone("UTC"),
            ),
        ),
        ("amount", Arc::new(Float32Array::from(vec![1.5, 2.0]))),
        ("paid", Arc::new(BooleanArray::from(vec![Some(true), None]))),
        (
            "note",
            Arc::new(
                vec![Some("x"), None]
                    .into_iter()
                    .collect::<DictionaryArray<Int32Type>>(),
            ),
        ),
    ]);
    let (_, job) = s.upload_and_wait(&t, ORDERS, "frame.parquet", good);
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let rows = stored_rows(&s.data_dir(), "default", "shop", "orders", 1);
    assert_eq!(ids(&rows), [7, 8]);
    assert!(rows.iter().any(|r| r["day"] == json!({"date": 19753})));
    assert!(rows.iter().any(|r| r["note"] == "x"));
    let (_, files) = s.call(
        "GET",
        "/api/datasets/default/shop/orders/1/files",
        Some(&t),
        None,
    );
    assert!(files[0].as_str().unwrap().ends_with("-frame.parquet"));

    let bad = write(vec![
        (
            "region",
            Arc::new(StringArray::from(vec!["north"])) as ArrayRef,
        ),
        ("id", Arc::new(StringArray::from(vec!["seven"]))),
        ("day", Arc::new(StringArray::from(vec!["31/01/2024"]))),
        ("amount", Arc::new(Float32Array::from(vec![1.5]))),
        ("paid", Arc::new(Int32Array::from(vec![1]))),
        ("note", Arc::new(StringArray::from(vec!["x"]))),
    ]);
    let (status, body) = s.upload(&t, ORDERS, "bad.parquet", bad);
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let m = details(&body);
    assert_has(
        &m,
        "Column [id] has an incorrect data type. Expected int, received Parquet type Utf8",
    );
    assert_has(
        &m,
        "Column [paid] has an incorrect data type. Expected boolean, received Parquet type Int32",
    );
    assert_eq!(
        m.len(),
        2,
        "text dates in the column's format are accepted: {m:?}"
    );
}
