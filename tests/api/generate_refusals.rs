//! Schema generation refusing what it cannot use: malformed samples, missing parts or tokens,
//! samples past the size limits (the first 50 MiB is used, a larger upload is 413).

use std::time::Instant;

use reqwest::blocking::multipart::{Form, Part};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::generate::{assert_400, assert_staging_empty, column_types, generate, FULL};
use crate::support::{into_parts, Options, TestServer};

/// Deterministic noise, for a file that is not Parquet at all.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn malformed_samples_are_400_with_a_clear_message() {
    let s = TestServer::start();
    let cases: [(&str, Vec<u8>, &str); 10] = [
        (
            "notes.txt",
            b"a,b\n1,2\n".to_vec(),
            "[txt] is not supported",
        ),
        ("noext", b"a,b\n1,2\n".to_vec(), "has no extension"),
        ("empty.csv", Vec::new(), "The file is empty"),
        ("blank.csv", b"\n \n".to_vec(), "The file is empty"),
        ("header.csv", b"a,b\n".to_vec(), "no data rows"),
        (
            "ragged.csv",
            b"a,b\n1,2\n3,4,5\n".to_vec(),
            "line 3 has 3 fields, the header has 2",
        ),
        (
            "latin1.csv",
            b"name,city\nJos\xe9,M\xe1laga\n".to_vec(),
            "not valid UTF-8",
        ),
        ("random.parquet", noise(4096), "not a readable Parquet file"),
        (
            "text.parquet",
            b"a,b\n1,2\n".to_vec(),
            "not a readable Parquet file",
        ),
        ("nothing.parquet", Vec::new(), "not a readable Parquet file"),
    ];
    for (filename, bytes, fragment) in cases {
        assert_400(generate(&s, FULL, filename, bytes), fragment);
    }
}

#[test]
fn generate_needs_a_file_part_a_multipart_body_and_a_token() {
    let s = TestServer::start();
    let token = s.admin_token();
    let form = Form::new()
        .text("name", "orders")
        .part("data", Part::bytes(b"a\n1\n".to_vec()).file_name("a.csv"));
    let res = s
        .request("POST", FULL)
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .unwrap();
    assert_400(
        into_parts(res),
        "The multipart form field [file] is required",
    );

    // A JSON body instead of a multipart form.
    let (status, body) = s.call("POST", FULL, Some(&token), Some(&json!({"file": "a,b"})));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["details"]
            .as_str()
            .is_some_and(|m| m.contains("multipart")),
        "{body}"
    );

    // Any valid token will do; none is 401.
    let reader = s.token_with("reader", &["READ_PUBLIC"]);
    let form = Form::new().part("file", Part::bytes(b"a\n1\n".to_vec()).file_name("a.csv"));
    let res = s
        .request("POST", FULL)
        .bearer_auth(&reader)
        .multipart(form)
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    for path in [FULL, "/api/schema/sales/orders/generate"] {
        let form = Form::new().part("file", Part::bytes(b"a\n1\n".to_vec()).file_name("a.csv"));
        let (status, body) = into_parts(s.request("POST", path).multipart(form).send().unwrap());
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert!(body["details"].is_string(), "{body}");
    }
}

/// docs/SPEC.md: only the first 50 MB are used. The sample is cut at 50 MiB, inside a line.
const SAMPLE_BYTES: usize = 50 * 1024 * 1024;

#[test]
fn a_60_mb_csv_is_inferred_from_its_first_50_mib_without_the_cut_line() {
    const HEADER: &str = "Order ID,Dates\n";
    const LINE_LEN: usize = "0000000,2024-01-31\n".len();
    // The cut leaves `0000000,2024-0` of a line: as a value, `2024-0` is no date in any format,
    // so the column is a date only if that partial line was dropped.
    assert_eq!((SAMPLE_BYTES - HEADER.len()) % LINE_LEN, 14);
    let lines = 60_000_000 / LINE_LEN;
    let mut csv = Vec::with_capacity(HEADER.len() + lines * LINE_LEN);
    csv.extend_from_slice(HEADER.as_bytes());
    for i in 0..lines {
        csv.extend_from_slice(format!("{i:07},2024-01-31\n").as_bytes());
    }
    assert!(csv.len() > 59_000_000);

    let s = TestServer::start();
    let started = Instant::now();
    let (status, draft) = generate(&s, FULL, "big.csv", csv);
    eprintln!(
        "60 MB CSV schema generation: {:.2?} (status {status})",
        started.elapsed()
    );
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert_eq!(
        column_types(&draft),
        [
            ("order_id".to_string(), "int".to_string(), Value::Null),
            ("dates".to_string(), "date".to_string(), json!("%Y-%m-%d")),
        ]
    );
}

#[test]
fn an_upload_over_the_configured_limit_is_413() {
    let s = TestServer::start_with(Options {
        args: vec!["--max-upload-bytes".into(), "1000000".into()],
        ..Default::default()
    });
    let mut csv = b"id,name\n".to_vec();
    while csv.len() < 2_000_000 {
        csv.extend_from_slice(b"12345,abcdefghij\n");
    }
    for filename in ["big.csv", "big.parquet"] {
        let (status, body) = generate(&s, FULL, filename, csv.clone());
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{filename}: {body}");
        assert_eq!(
            body["details"], "The file is larger than the upload limit of 1000000 bytes",
            "{filename}"
        );
    }
    assert_staging_empty(&s);
    // Under the limit, the same server answers.
    let (status, body) = generate(&s, FULL, "small.csv", b"id\n1\n".to_vec());
    assert_eq!(status, StatusCode::OK, "{body}");
}
