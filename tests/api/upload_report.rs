//! A refused upload's whole report (issue 37): every problem, as CSV behind a signed link, while
//! the 422 keeps its first 100 messages and a count.

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::UInt64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, TestServer};
use crate::uploads::details;

const PATH: &str = "/api/datasets/default/shop/orders";

fn server() -> TestServer {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "shop",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false},
            {"name": "id", "data_type": "int", "allow_null": false, "unique": true},
            {"name": "amount", "data_type": "int", "allow_null": true, "checks": {
                "small": {"check_type": "in_range", "parameters": {"min_value": 0, "max_value": 100}}}}
        ]),
    ));
    s
}

#[test]
fn every_problem_is_in_the_report_and_the_answer_keeps_the_first_100() {
    let s = server();
    let t = s.admin_token();
    // 3,000 rows: every 10th amount is not a number, every 25th is over the check's range.
    let mut csv = String::from("region,id,amount\n");
    let (mut bad_type, mut bad_check) = (0, 0);
    for row in 1..=3000u32 {
        let amount = if row % 10 == 0 {
            bad_type += 1;
            "many".to_string()
        } else if row % 25 == 0 {
            bad_check += 1;
            "500".to_string()
        } else {
            (row % 50).to_string()
        };
        csv.push_str(&format!("north,{},{amount}\n", 1000 + row));
    }
    let (status, body) = s.upload(&t, PATH, "orders.csv", csv.into_bytes());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let total = bad_type + bad_check;
    let messages = details(&body);
    assert_eq!(messages.len(), 101, "{body}");
    assert_eq!(
        messages[100],
        format!("... and {} more errors", total - 100)
    );
    let url = body["report_url"].as_str().expect("a report link");
    assert!(
        url.starts_with(&format!("{}/api/results/", s.base)),
        "{url}"
    );

    // The link needs no token: it is signed.
    let report = reqwest::blocking::get(url).unwrap();
    assert_eq!(report.status(), StatusCode::OK);
    let text = report.text().unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        reader.headers().unwrap(),
        vec!["row", "column", "rule", "value", "key", "message"]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), total, "every problem, no more");
    let types: Vec<_> = rows.iter().filter(|r| &r[2] == "type").collect();
    let checks: Vec<_> = rows.iter().filter(|r| &r[2] == "check").collect();
    assert_eq!((types.len(), checks.len()), (bad_type, bad_check));
    // Row 10: the value as received, and the row's key (its unique id).
    let first = types.iter().find(|r| &r[0] == "10").unwrap();
    assert_eq!(
        (&first[1], &first[3], &first[4]),
        ("amount", "many", "1010")
    );
    assert_eq!(first[5], messages[0]);
    let over = checks.iter().find(|r| &r[0] == "25").unwrap();
    assert_eq!((&over[3], &over[4]), ("500", "1025"));

    // The same rows as Parquet, `row` a number.
    let parquet_url = body["report_parquet_url"].as_str().expect("a Parquet link");
    let res = reqwest::blocking::get(parquet_url).unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.headers()["content-type"],
        "application/vnd.apache.parquet"
    );
    let bytes = res.bytes().unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), total);
    let rows = batches[0].column(0).as_primitive::<UInt64Type>();
    assert_eq!(rows.value(0), 10);
    assert_eq!(batches[0].column(4).as_string::<i32>().value(0), "1010");

    // The job says the same and links the same report.
    let jobs = s.call("GET", "/api/jobs", Some(&t), None).1;
    let job = &jobs.as_array().unwrap()[0];
    assert_eq!(job["status"], "FAILED", "{job}");
    assert_eq!(job["report_url"], url, "{job}");
    assert_eq!(job["rows_rejected"], total, "{job}");
    assert_eq!(job["result_url"], json!(null), "{job}");
    // Nothing was stored.
    assert_eq!(
        s.call("GET", &format!("{PATH}/info"), Some(&t), None).0,
        StatusCode::NOT_FOUND
    );
}

#[test]
fn a_file_that_cannot_be_read_has_no_report() {
    let s = server();
    let t = s.admin_token();
    let (status, body) = s.upload(&t, PATH, "junk.parquet", b"PAR1 not really".to_vec());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.get("report_url").is_none(), "{body}");
    assert!(body.get("report_parquet_url").is_none(), "{body}");
    let (status, body) = s.upload(&t, PATH, "cols.csv", b"a,b\n1,2\n".to_vec());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.get("report_url").is_none(), "{body}");
}
