//! Small files that decode into huge ones are refused (422 naming column, row and limit) before
//! the huge value is materialised; schema generation is bounded the same way and by its pool.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{into_parts, schema_json, Options, TestServer};

const LIMIT: usize = 1024 * 1024;
const UPLOAD: &str = "/api/datasets/default/bombs/notes";

fn server() -> TestServer {
    let s = TestServer::start_with(Options {
        args: vec!["--max-value-bytes".into(), LIMIT.to_string()],
        ..Options::default()
    });
    s.create_schema(&schema_json(
        "bombs",
        "notes",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "notes", "data_type": "string", "allow_null": true},
        ]),
    ));
    s
}

fn details(body: &Value) -> String {
    body["details"].to_string()
}

/// 16 rows whose `notes` all point at one dictionary value of `value_len` bytes, zstd-compressed:
/// a few kilobytes on disk.
fn dictionary_bomb(value_len: usize) -> Vec<u8> {
    let big = "a".repeat(value_len);
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(1..=16));
    let notes: ArrayRef = Arc::new(StringArray::from(vec![big.as_str(); 16]));
    let batch = RecordBatch::try_from_iter([("id", ids), ("notes", notes)]).unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap()))
        .set_dictionary_enabled(true)
        .set_dictionary_page_size_limit(512 << 20)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

#[test]
fn a_parquet_dictionary_value_over_the_limit_is_refused_naming_column_row_and_limit() {
    let s = server();
    let token = s.token_with("writer", &["WRITE_ALL", "READ_ALL"]);
    // Over the value limit, within the page budget (twice the limit): found in its row.
    let file = dictionary_bomb(LIMIT + LIMIT / 2);
    assert!(file.len() < 64 * 1024, "{} bytes", file.len());
    let (status, body) = s.upload(&token, UPLOAD, "bomb.parquet", file);
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"],
        json!(["Column [notes] has a value longer than the limit of 1048576 bytes in row 1"])
    );
}

#[test]
fn a_parquet_page_decoding_past_the_budget_is_refused_before_it_is_decoded() {
    let s = server();
    let token = s.token_with("writer", &["WRITE_ALL", "READ_ALL"]);
    // The bomb, scaled to the test's limit: a 20 MB dictionary value in a tiny file.
    let file = dictionary_bomb(20 * 1024 * 1024);
    assert!(file.len() < 64 * 1024, "{} bytes", file.len());
    let (status, body) = s.upload(&token, UPLOAD, "bomb.parquet", file);
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = details(&body);
    assert!(message.contains("Column [notes]"), "{message}");
    assert!(
        message.contains("over the limit of 2097152 bytes"),
        "{message}"
    );
    assert!(message.contains("in rows 1 to 16"), "{message}");
    // The server is fine and a normal file of the same shape is accepted.
    let (status, body) = s.upload(&token, UPLOAD, "ok.parquet", dictionary_bomb(100));
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

#[test]
fn a_csv_field_over_the_limit_is_refused_naming_column_row_and_limit() {
    let s = server();
    let token = s.token_with("writer", &["WRITE_ALL", "READ_ALL"]);
    let mut csv = b"id,notes\n1,short\n2,\"".to_vec();
    csv.extend(std::iter::repeat_n(b'x', 3 * LIMIT));
    csv.extend(b"\"\n3,after\n");
    let (status, body) = s.upload(&token, UPLOAD, "bomb.csv", csv);
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"],
        json!(["Column [notes] has a value longer than the limit of 1048576 bytes in row 2"])
    );
    // Exactly at the limit is accepted.
    let ok = format!("id,notes\n1,{}\n", "y".repeat(LIMIT));
    let (status, body) = s.upload(&token, UPLOAD, "ok.csv", ok.into_bytes());
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

#[test]
fn schema_generation_refuses_a_value_over_the_limit() {
    let s = server();
    let mut csv = b"id,notes\n1,short\n".to_vec();
    csv.extend(b"2,");
    csv.extend(std::iter::repeat_n(b'z', 2 * LIMIT));
    csv.extend(b"\n");
    let (status, body) = s.upload(
        &s.admin_token(),
        "/api/schema/bombs/generated/generate",
        "sample.csv",
        csv,
    );
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"],
        json!(["Column [notes] has a value longer than the limit of 1048576 bytes in row 2"])
    );
}

/// A request body that sends a little, then waits, holding its generation's place meanwhile.
struct SlowBody {
    sent: usize,
    delay: Option<Duration>,
}

impl Read for SlowBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.sent == 0 {
            let head = b"id,notes\n1,a\n";
            buf[..head.len()].copy_from_slice(head);
            self.sent = head.len();
            return Ok(head.len());
        }
        if let Some(d) = self.delay.take() {
            std::thread::sleep(d);
        }
        Ok(0)
    }
}

#[test]
fn schema_generations_beyond_the_pool_get_503_with_retry_after() {
    let s = TestServer::start_with(Options {
        args: ["--generate-workers", "1", "--generate-wait-ms", "100"]
            .iter()
            .map(|a| a.to_string())
            .collect(),
        ..Options::default()
    });
    let token = s.admin_token();
    let url = s.url("/api/schema/bombs/slow/generate");
    let slow = {
        let (url, token) = (url.clone(), token.clone());
        std::thread::spawn(move || {
            let body = SlowBody {
                sent: 0,
                delay: Some(Duration::from_secs(10)),
            };
            let part = reqwest::blocking::multipart::Part::reader(body).file_name("slow.csv");
            let form = reqwest::blocking::multipart::Form::new().part("file", part);
            let res = reqwest::blocking::Client::new()
                .post(url)
                .bearer_auth(token)
                .multipart(form)
                .send()
                .unwrap();
            into_parts(res).0
        })
    };
    // While the slow one holds the only place, another is told to come back. Until the slow
    // one has its place (its thread may start late on a busy machine), the other is served:
    // ask again until the place is seen taken.
    let deadline = std::time::Instant::now() + Duration::from_secs(8);
    let res = loop {
        let part =
            reqwest::blocking::multipart::Part::bytes(b"id\n1\n".to_vec()).file_name("b.csv");
        let res = s
            .request("POST", "/api/schema/bombs/other/generate")
            .bearer_auth(&token)
            .multipart(reqwest::blocking::multipart::Form::new().part("file", part))
            .send()
            .unwrap();
        if res.status() != StatusCode::OK || std::time::Instant::now() > deadline {
            break res;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(res.headers().get("retry-after").unwrap(), "1");
    let (status, body) = into_parts(res);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(slow.join().unwrap(), StatusCode::OK);
    // With the place free again, generation works.
    let part = reqwest::blocking::multipart::Part::bytes(b"id\n1\n".to_vec()).file_name("c.csv");
    let res = s
        .request("POST", "/api/schema/bombs/other/generate")
        .bearer_auth(&token)
        .multipart(reqwest::blocking::multipart::Form::new().part("file", part))
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}
