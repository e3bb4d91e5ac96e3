//! `POST /api/schema/{layer}/{sensitivity}/{domain}/{dataset}/generate` and its short form: draft
//! schemas inferred from CSV and Parquet samples, and the answers to inputs they cannot use.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, Int64Array, ListArray, NullArray,
    RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::Int32Type;
use parquet::arrow::ArrowWriter;
use reqwest::blocking::multipart::{Form, Part};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{into_parts, Options, TestServer};

pub(crate) const FULL: &str = "/api/schema/default/PRIVATE/sales/orders/generate";

/// Sends `bytes` as the multipart `file` part named `filename`.
pub(crate) fn generate(
    s: &TestServer,
    path: &str,
    filename: &str,
    bytes: Vec<u8>,
) -> (StatusCode, Value) {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(filename.to_string()));
    let res = s
        .request("POST", path)
        .bearer_auth(s.admin_token())
        .multipart(form)
        .send()
        .unwrap();
    into_parts(res)
}

/// The draft's columns in order: (name, data_type, format).
pub(crate) fn column_types(draft: &Value) -> Vec<(String, String, Value)> {
    draft["columns"]
        .as_array()
        .unwrap_or_else(|| panic!("no columns: {draft}"))
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["data_type"].as_str().unwrap().to_string(),
                c["format"].clone(),
            )
        })
        .collect()
}

/// What every generated column has: nullable, no partition (an explicit null), no checks.
fn assert_draft_columns(draft: &Value) {
    for c in draft["columns"].as_array().unwrap() {
        assert_eq!(c["allow_null"], true, "{c}");
        assert_eq!(c.get("partition_index"), Some(&Value::Null), "{c}");
        assert_eq!(c["unique"], false, "{c}");
        assert_eq!(c["checks"], json!({}), "{c}");
    }
}

fn assert_placeholder_metadata(draft: &Value) {
    let m = &draft["metadata"];
    assert_eq!(
        m["owners"],
        json!([{"name": "change_me", "email": "change_me@email.com"}]),
        "{m}"
    );
    assert_eq!(m["update_behaviour"], "APPEND");
    assert_eq!(m["key_value_tags"], json!({}));
    assert_eq!(m["key_only_tags"], json!([]));
}

/// Samples are staged only while a request runs.
pub(crate) fn assert_staging_empty(s: &TestServer) {
    let left: Vec<_> = std::fs::read_dir(s.data_dir().join("staging"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in staging: {left:?}");
}

/// The draft with a real owner, ready to be stored.
fn with_owner(mut draft: Value) -> Value {
    draft["metadata"]["owners"] = json!([{"name": "Jane Owner", "email": "jane@example.com"}]);
    draft
}

/// A CSV column of the fixture: header, the name it must get, its type and format, three values.
struct CsvColumn {
    header: &'static str,
    name: &'static str,
    data_type: &'static str,
    format: Option<&'static str>,
    values: [&'static str; 3],
}

const fn col(
    header: &'static str,
    name: &'static str,
    data_type: &'static str,
    format: Option<&'static str>,
    values: [&'static str; 3],
) -> CsvColumn {
    CsvColumn {
        header,
        name,
        data_type,
        format,
        values,
    }
}

/// Every type, and one date column per format. Each date column's values parse with its format
/// and with no format earlier in docs/SPEC.md's list (day 31 and month 12 rule out the others).
#[rustfmt::skip]
const CSV_COLUMNS: [CsvColumn; 15] = [
    col("Order ID", "order_id", "int", None, ["1", "-2", "30"]),
    col("Unit Price", "unit_price", "double", None, ["1.5", "2", "3.25"]),
    col("Is Active", "is_active", "boolean", None, ["True", "false", "NA"]),
    col("Empty Col", "empty_col", "string", None, ["", "NA", "null"]),
    col("Note", "note", "string", None, ["\"Smith, Jane\"", "\"a, b, c\"", "plain"]),
    col("Created On", "created_on", "date", Some("%Y/%m/%d"), ["2024/12/31", "2023/01/02", ""]),
    col("Paid On", "paid_on", "date", Some("%d/%m/%Y"), ["31/12/2024", "01/02/2023", "15/06/2022"]),
    col("Packed On", "packed_on", "date", Some("%m/%d/%Y"), ["12/31/2024", "01/02/2023", "06/15/2022"]),
    col("Order Date", "order_date", "date", Some("%Y-%m-%d"), ["2024-12-31", "2023-01-02", "NA"]),
    col("Shipped On", "shipped_on", "date", Some("%d-%m-%Y"), ["31-12-2024", "01-02-2023", "15-06-2022"]),
    col("Delivered On", "delivered_on", "date", Some("%m-%d-%Y"), ["12-31-2024", "01-02-2023", "06-15-2022"]),
    col("Billing Month", "billing_month", "date", Some("%Y/%m"), ["2024/12", "2023/01", "2022/6"]),
    col("Report Month", "report_month", "date", Some("%m/%Y"), ["12/2024", "01/2023", "06/2022"]),
    col("TAX Month", "tax_month", "date", Some("%Y-%m"), ["2024-12", "2023-01", "2022-06"]),
    col("Audit  Month ", "audit_month", "date", Some("%m-%Y"), ["12-2024", "01-2023", "06-2022"]),
];

fn csv_fixture() -> Vec<u8> {
    let header: Vec<&str> = CSV_COLUMNS.iter().map(|c| c.header).collect();
    let mut text = header.join(",") + "\n";
    for row in 0..3 {
        let values: Vec<&str> = CSV_COLUMNS.iter().map(|c| c.values[row]).collect();
        text += &values.join(",");
        text += "\n";
    }
    text.into_bytes()
}

#[test]
fn csv_draft_infers_every_type_and_date_format_and_can_be_stored() {
    let s = TestServer::start();
    let (status, draft) = generate(&s, FULL, "orders.csv", csv_fixture());
    assert_eq!(status, StatusCode::OK, "{draft}");

    let expected: Vec<(String, String, Value)> = CSV_COLUMNS
        .iter()
        .map(|c| (c.name.to_string(), c.data_type.to_string(), json!(c.format)))
        .collect();
    assert_eq!(column_types(&draft), expected, "{draft}");
    assert_draft_columns(&draft);
    assert_placeholder_metadata(&draft);
    let m = &draft["metadata"];
    assert_eq!(
        (&m["layer"], &m["sensitivity"], &m["domain"], &m["dataset"]),
        (
            &json!("default"),
            &json!("PRIVATE"),
            &json!("sales"),
            &json!("orders")
        ),
        "{m}"
    );

    // The draft as it is, with its placeholder owner, is refused ...
    let admin = s.admin_token();
    let (status, answer) = s.call("POST", "/api/schema", Some(&admin), Some(&draft));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["details"], "You must change the default owner");
    // ... and with a real owner, and nothing else changed, stored.
    let (status, answer) = s.call(
        "POST",
        "/api/schema",
        Some(&admin),
        Some(&with_owner(draft)),
    );
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["version"], 1);

    // The sample the draft came from passes the stored schema's validation.
    let (_, job) = s.upload_and_wait(
        &admin,
        "/api/datasets/default/sales/orders",
        "orders.csv",
        csv_fixture(),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

#[test]
fn csv_draft_takes_domain_and_dataset_from_the_path() {
    let s = TestServer::start();
    let (status, draft) = generate(
        &s,
        "/api/schema/default/PUBLIC/Retail/DailySales/generate",
        "daily.CSV",
        b"a,b\n1,x\n".to_vec(),
    );
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert_eq!(draft["metadata"]["domain"], "retail");
    assert_eq!(draft["metadata"]["dataset"], "DailySales");
    assert_eq!(draft["metadata"]["sensitivity"], "PUBLIC");

    // A draft may be for a protected domain not created yet; storing it then needs the domain.
    let (status, draft) = generate(
        &s,
        "/api/schema/default/PROTECTED/land/parcels/generate",
        "parcels.csv",
        b"a,b\n1,x\n".to_vec(),
    );
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert_eq!(draft["metadata"]["sensitivity"], "PROTECTED");
    let admin = s.admin_token();
    let draft = with_owner(draft);
    let (status, answer) = s.call("POST", "/api/schema", Some(&admin), Some(&draft));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["details"],
        "The protected domain 'land' does not exist."
    );
    let (status, answer) = s.call("POST", "/api/protected_domains/land", Some(&admin), None);
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (status, answer) = s.call("POST", "/api/schema", Some(&admin), Some(&draft));
    assert_eq!(status, StatusCode::CREATED, "{answer}");

    // A path the schema rules refuse is refused with their message.
    let (status, answer) = generate(
        &s,
        "/api/schema/default/SECRET/retail/daily/generate",
        "daily.csv",
        b"a,b\n1,x\n".to_vec(),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["details"]
            .as_str()
            .is_some_and(|m| m.contains("valid sensitivity level")),
        "{answer}"
    );
}

fn parquet_fixture() -> Vec<u8> {
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("Order ID", Arc::new(Int64Array::from(vec![1, 2, 3]))),
        (
            "Unit Price",
            Arc::new(Float64Array::from(vec![1.5, 2.0, 3.25])),
        ),
        (
            "In Stock",
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
        ),
        (
            "Customer Name",
            Arc::new(StringArray::from(vec!["Smith, Jane", "Lee", "Ng"])),
        ),
        (
            "Ordered On",
            Arc::new(Date32Array::from(vec![19_000, 19_001, 19_002])),
        ),
        (
            "Updated At",
            Arc::new(TimestampMicrosecondArray::from(vec![
                1_700_000_000_000_000,
                1_700_000_001_000_000,
                1_700_000_002_000_000,
            ])),
        ),
        (
            "Shipped At",
            Arc::new(
                // An offset zone: a named one ("UTC") is refused at upload (see the report).
                TimestampMicrosecondArray::from(vec![Some(1_700_000_000_000_000), None, None])
                    .with_timezone("+00:00"),
            ),
        ),
        (
            "Missing Count",
            Arc::new(Int64Array::from(vec![None, None, None])),
        ),
        ("Nothing", Arc::new(NullArray::new(3))),
    ];
    write_parquet(&RecordBatch::try_from_iter(columns).unwrap())
}

#[test]
fn parquet_draft_takes_types_from_the_file_and_can_be_stored() {
    let s = TestServer::start();
    let (status, draft) = generate(&s, FULL, "orders.parquet", parquet_fixture());
    assert_eq!(status, StatusCode::OK, "{draft}");
    let iso = json!("%Y-%m-%d");
    let expected: Vec<(String, String, Value)> = [
        ("order_id", "int", Value::Null),
        ("unit_price", "double", Value::Null),
        ("in_stock", "boolean", Value::Null),
        ("customer_name", "string", Value::Null),
        ("ordered_on", "date", iso.clone()),
        ("updated_at", "date", iso.clone()),
        ("shipped_at", "date", iso),
        // All null, but the file says what type it is.
        ("missing_count", "int", Value::Null),
        // All null with no type at all: a nullable string.
        ("nothing", "string", Value::Null),
    ]
    .into_iter()
    .map(|(n, t, f)| (n.to_string(), t.to_string(), f))
    .collect();
    assert_eq!(column_types(&draft), expected, "{draft}");
    assert_draft_columns(&draft);
    assert_placeholder_metadata(&draft);

    assert_staging_empty(&s);

    let admin = s.admin_token();
    let (status, answer) = s.call(
        "POST",
        "/api/schema",
        Some(&admin),
        Some(&with_owner(draft)),
    );
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (_, job) = s.upload_and_wait(
        &admin,
        "/api/datasets/default/sales/orders",
        "orders.parquet",
        parquet_fixture(),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

fn write_parquet(batch: &RecordBatch) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    bytes
}

#[test]
fn parquet_without_rows_or_with_unsupported_types_is_400() {
    let s = TestServer::start();
    let empty = RecordBatch::try_from_iter([(
        "id",
        Arc::new(Int64Array::from(Vec::<i64>::new())) as ArrayRef,
    )])
    .unwrap();
    assert_400(
        generate(&s, FULL, "empty.parquet", write_parquet(&empty)),
        "The Parquet file has no rows",
    );

    let nested = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        (
            "Scores",
            Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
                Some(vec![Some(1), Some(2)]),
                None,
            ])) as ArrayRef,
        ),
    ])
    .unwrap();
    assert_400(
        generate(&s, FULL, "nested.parquet", write_parquet(&nested)),
        "Column [Scores] has the Parquet type List",
    );
    assert_staging_empty(&s);
}

#[test]
fn short_form_uses_the_default_layer_public_and_a_placeholder_description() {
    let s = TestServer::start();
    let (status, draft) = generate(
        &s,
        "/api/schema/sales/orders/generate",
        "orders.csv",
        b"Order ID,Customer\n1,Jane\n2,Lee\n".to_vec(),
    );
    assert_eq!(status, StatusCode::OK, "{draft}");
    let m = &draft["metadata"];
    assert_eq!(m["layer"], "default", "{m}");
    assert_eq!(m["sensitivity"], "PUBLIC", "{m}");
    assert_eq!(m["domain"], "sales");
    assert_eq!(m["dataset"], "orders");
    let description = m["description"].as_str().unwrap_or_default();
    assert!(!description.trim().is_empty(), "{m}");
    assert_placeholder_metadata(&draft);
    assert_eq!(
        column_types(&draft),
        [
            ("order_id".to_string(), "int".to_string(), Value::Null),
            ("customer".to_string(), "string".to_string(), Value::Null),
        ]
    );

    // `default` is the default layer wherever the instance has it; an instance without it gets
    // its first layer, so the draft can still be stored.
    for (layers, expected) in [("raw,default", "default"), ("raw,curated", "raw")] {
        let s = TestServer::start_with(Options {
            args: vec!["--layers".into(), layers.into()],
            ..Default::default()
        });
        let (status, draft) = generate(
            &s,
            "/api/schema/sales/orders/generate",
            "orders.csv",
            b"a\n1\n".to_vec(),
        );
        assert_eq!(status, StatusCode::OK, "{layers}: {draft}");
        assert_eq!(draft["metadata"]["layer"], expected, "{layers}");
        let (status, answer) = s.call(
            "POST",
            "/api/schema",
            Some(&s.admin_token()),
            Some(&with_owner(draft)),
        );
        assert_eq!(status, StatusCode::CREATED, "{layers}: {answer}");
    }
}

pub(crate) fn assert_400(answer: (StatusCode, Value), fragment: &str) {
    let (status, body) = answer;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{fragment}: {body}");
    let message = body["details"]
        .as_str()
        .unwrap_or_else(|| panic!("one message expected: {body}"));
    assert!(
        message.contains(fragment),
        "{fragment:?} not in {message:?}"
    );
}
