//! A file whose problem is the file itself gets one message naming it (issue 37): another
//! encoding, another delimiter, a first row of data, columns that are not the schema's.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, TestServer};
use crate::uploads::details;

const PATH: &str = "/api/datasets/default/shop/sales";

fn server() -> TestServer {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "shop",
        "sales",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "city", "data_type": "string", "allow_null": true},
            {"name": "amount", "data_type": "int", "allow_null": true},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true}
        ]),
    ));
    s
}

fn refused(s: &TestServer, name: &str, bytes: Vec<u8>) -> Vec<String> {
    let (status, body) = s.upload(&s.admin_token(), PATH, name, bytes);
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    details(&body)
}

#[test]
fn latin1_and_utf16_files_are_named_as_encodings() {
    let s = server();
    // Latin-1: "Málaga" with á as the single byte 0xE1.
    let mut latin1 = b"city,amount,day\nLeeds,3,2026-01-02\nM".to_vec();
    latin1.extend_from_slice(&[0xE1]);
    latin1.extend_from_slice(b"laga,4,2026-01-03\n");
    let m = refused(&s, "latin1.csv", latin1);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].starts_with("Column [city] has text that is not UTF-8 in row 2: \"M\\xE1laga\""),
        "{m:?}"
    );
    assert!(!m[0].contains('\u{FFFD}'), "{m:?}");

    let text = "city,amount,day\nLeeds,3,2026-01-02\n";
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let m = refused(&s, "utf16.csv", utf16);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("The file is encoded as UTF-16"), "{m:?}");
    // Without the byte order mark too: the NUL bytes give it away.
    let bare: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    assert!(refused(&s, "utf16.csv", bare)[0].starts_with("The file is encoded as UTF-16"));

    let mut header = b"city,amount,d".to_vec();
    header.extend_from_slice(&[0xE9]);
    header.extend_from_slice(b"a\nLeeds,3,2026-01-02\n");
    let m = refused(&s, "h.csv", header);
    assert!(
        m[0].starts_with("The file is not UTF-8: its header has \"d\\xE9a\""),
        "{m:?}"
    );
}

#[test]
fn other_delimiters_and_missing_headers_are_named() {
    let s = server();
    for (sep, name) in [(";", "';'"), ("\t", "tabs"), ("|", "'|'")] {
        let csv = format!("city{sep}amount{sep}day\nLeeds{sep}3{sep}2026-01-02\n");
        let m = refused(&s, "semi.csv", csv.into_bytes());
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].starts_with("Expected columns: [amount, city, day]"),
            "{m:?}"
        );
        assert!(
            m[1].starts_with(&format!(
                "The file seems to separate its columns with {name}"
            )),
            "{m:?}"
        );
    }
    let m = refused(
        &s,
        "noheader.csv",
        b"Leeds,3,2026-01-02\nYork,4,2026-01-03\n".to_vec(),
    );
    assert!(
        m[1].starts_with("The first row looks like data, not a header"),
        "{m:?}"
    );
    assert!(m[1].ends_with("its columns: city,amount,day"), "{m:?}");

    let m = refused(
        &s,
        "cols.csv",
        b"city,amount,when\nLeeds,3,2026-01-02\n".to_vec(),
    );
    assert_eq!(
        m[1],
        "Missing columns: [day]; columns the schema does not have: [when]"
    );
}

#[test]
fn a_parquet_file_with_other_columns_names_them() {
    let s = server();
    let batch = RecordBatch::try_from_iter([
        (
            "town",
            Arc::new(StringArray::from(vec!["Leeds"])) as ArrayRef,
        ),
        ("amount", Arc::new(Int64Array::from(vec![3])) as ArrayRef),
    ])
    .unwrap();
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let m = refused(&s, "other.parquet", bytes);
    assert_eq!(
        m,
        [
            "Expected columns: [amount, city, day], received: [amount, town]",
            "Missing columns: [city, day]; columns the schema does not have: [town]"
        ]
    );
    // Nothing was stored and the service still answers.
    assert_eq!(s.call("GET", "/api/status", None, None).0, StatusCode::OK);
}
