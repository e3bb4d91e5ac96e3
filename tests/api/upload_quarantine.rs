//! Quarantine (`on_error=quarantine`, issue 37): the valid rows are stored, the others kept apart
//! as a CSV the uploader can fix and upload again; the 202 and the job count both.

use reqwest::StatusCode;
use serde_json::{json, Value};

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
            {"name": "id", "data_type": "int", "allow_null": false, "unique": true},
            {"name": "day", "data_type": "date", "format": "%d/%m/%Y", "allow_null": false},
            {"name": "amount", "data_type": "double", "allow_null": true, "checks": {
                "positive": {"check_type": "in_range", "parameters": {"min_value": 0, "max_value": 1000}}}}
        ]),
    ));
    s
}

fn count(s: &TestServer, t: &str) -> i64 {
    let body = json!({"select_columns": ["count(id) AS n"]});
    let (status, rows) = s.call("POST", &format!("{PATH}/query"), Some(t), Some(&body));
    assert_eq!(status, StatusCode::OK, "{rows}");
    rows["0"]["n"].as_i64().unwrap()
}

fn fetch_csv(url: &str) -> Vec<csv::StringRecord> {
    let res = reqwest::blocking::get(url).unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let text = res.text().unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, ["id", "day", "amount", "_row", "_problems"]);
    reader.records().map(Result::unwrap).collect()
}

/// 1,000 rows: every 10th has an unreadable date, every 50th a negative amount (a row can be
/// both), row 7 repeats row 3's id.
fn mixed_file() -> (String, u64) {
    let mut csv = String::from("id,day,amount\n");
    let mut bad = 0;
    for row in 1..=1000u64 {
        let id = if row == 7 { 3 } else { row };
        let day = if row % 10 == 0 {
            "31/02/2024".to_string()
        } else {
            "05/03/2024".into()
        };
        let amount = if row % 50 == 0 { "-1.5" } else { "2.25" };
        if row % 10 == 0 || row % 50 == 0 || row == 7 {
            bad += 1;
        }
        csv.push_str(&format!("{id},{day},{amount}\n"));
    }
    (csv, bad)
}

#[test]
fn valid_rows_are_stored_and_the_others_kept_apart() {
    let s = server();
    let t = s.admin_token();
    let (csv, bad) = mixed_file();
    let path = format!("{PATH}?on_error=quarantine");
    let (status, body) = s.upload(&t, &path, "sales.csv", csv.into_bytes());
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let d = &body["details"];
    assert_eq!(
        (d["rows_accepted"].as_u64(), d["rows_rejected"].as_u64()),
        (Some(1000 - bad), Some(bad)),
        "{body}"
    );
    let job = s.wait_job(&t, d["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert_eq!(job["rows_rejected"], bad, "{job}");
    assert_eq!(job["quarantine_url"], d["quarantine_url"], "{job}");
    assert_eq!(job["report_url"], d["report_url"], "{job}");
    assert_eq!(
        count(&s, &t),
        (1000 - bad) as i64,
        "only the valid rows are stored"
    );

    // The quarantine: the rejected rows in order, values as received, with row and reasons.
    let rows = fetch_csv(d["quarantine_url"].as_str().unwrap());
    assert_eq!(rows.len() as u64, bad);
    assert_eq!(&rows[0][0], "3", "row 7 repeats id 3: {:?}", rows[0]);
    assert_eq!((&rows[0][1], &rows[0][3]), ("05/03/2024", "7"));
    assert!(rows[0][4].contains("must be unique"), "{:?}", rows[0]);
    let tenth = &rows[1];
    assert_eq!((&tenth[1], &tenth[3]), ("31/02/2024", "10"), "{tenth:?}");
    assert!(tenth[4].contains("incorrect data type"), "{tenth:?}");
    let fiftieth = rows.iter().find(|r| &r[3] == "50").unwrap();
    assert_eq!((&fiftieth[1], &fiftieth[2]), ("31/02/2024", "-1.5"));
    assert!(fiftieth[4].contains("; "), "both problems: {fiftieth:?}");

    // The report lists every problem (row 50 has two).
    let report = reqwest::blocking::get(d["report_url"].as_str().unwrap())
        .unwrap()
        .text()
        .unwrap();
    let problems = report.lines().count() - 1;
    assert_eq!(problems, 100 + 20 + 1, "{report}");

    // Fixed, the quarantine file uploads as it is (`_row` and `_problems` are ignored).
    let mut fixed = String::from("id,day,amount,_row,_problems\n");
    for r in &rows {
        let id: u64 = r[0].parse().unwrap();
        let id = if &r[3] == "7" { 7 } else { id };
        fixed.push_str(&format!(
            "{id},05/03/2024,1.0,{},\"{}\"\n",
            &r[3],
            &r[4].replace('"', "\"\"")
        ));
    }
    let (d, job) = s.upload_and_wait(&t, PATH, "fixed.csv", fixed.into_bytes());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert!(
        d.get("rows_accepted").is_none(),
        "reject mode answers as rAPId: {d}"
    );
    assert_eq!(count(&s, &t), 1000);
}

#[test]
fn reject_stays_the_default_and_bad_modes_are_refused() {
    let s = server();
    let t = s.admin_token();
    let (csv, _) = mixed_file();
    let (status, body) = s.upload(&t, PATH, "sales.csv", csv.clone().into_bytes());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let reject = format!("{PATH}?on_error=reject");
    let (status, body) = s.upload(&t, &reject, "sales.csv", csv.clone().into_bytes());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let wrong = format!("{PATH}?on_error=skip");
    let (status, body) = s.upload(&t, &wrong, "sales.csv", csv.into_bytes());
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["details"].as_str().unwrap_or_default();
    assert!(message.contains("unknown variant `skip`"), "{body}");
    assert!(message.contains("quarantine"), "{body}");
    let jobs: Value = s.call("GET", "/api/jobs", Some(&t), None).1;
    assert!(
        jobs.as_array()
            .unwrap()
            .iter()
            .all(|j| j["status"] == "FAILED"),
        "{jobs}"
    );
}

#[test]
fn a_file_with_no_valid_row_or_a_wrong_header_is_refused_whole() {
    let s = server();
    let t = s.admin_token();
    let path = format!("{PATH}?on_error=quarantine");
    let all_bad = "id,day,amount\n1,nope,1\n2,32/01/2024,2\n";
    let (status, body) = s.upload(&t, &path, "bad.csv", all_bad.as_bytes().to_vec());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let messages = details(&body);
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Every row of the file has problems")),
        "{body}"
    );
    assert!(
        body["report_url"].is_string(),
        "the report is linked: {body}"
    );
    let (status, body) = s.upload(&t, &path, "cols.csv", b"id,when\n1,2\n".to_vec());
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // A clean file in quarantine mode: stored whole, nothing kept apart.
    let clean = "id,day,amount\n1,01/01/2024,1\n";
    let (status, body) = s.upload(&t, &path, "clean.csv", clean.as_bytes().to_vec());
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let d = &body["details"];
    assert_eq!(
        (d["rows_accepted"].as_u64(), d["rows_rejected"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(d["quarantine_url"], Value::Null);
    let job = s.wait_job(&t, d["job_id"].as_str().unwrap());
    assert_eq!(
        (&job["status"], &job["quarantine_url"]),
        (&json!("SUCCESS"), &Value::Null)
    );
    assert_eq!(count(&s, &t), 1);
}
