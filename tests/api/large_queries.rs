//! Large queries as jobs with signed download links, and queries racing OVERWRITE commits.

use std::sync::atomic::{AtomicBool, Ordering};

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, Options, TestServer};

fn numbers(s: &TestServer, t: &str, rows: usize) {
    s.create_schema(&schema_json(
        "big",
        "numbers",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "n", "data_type": "int", "allow_null": false},
            {"name": "label", "data_type": "string", "allow_null": true}
        ]),
    ));
    let mut csv = String::from("n,label\n");
    for i in 0..rows {
        csv.push_str(&format!("{i},\"row, {i}\"\n"));
    }
    assert_eq!(
        s.upload_and_wait(t, "/api/datasets/default/big/numbers", "n.csv", csv.into())
            .1["status"],
        "SUCCESS"
    );
}

#[test]
fn a_large_query_job_ends_with_a_signed_download_link() {
    let s = TestServer::start();
    let t = s.admin_token();
    numbers(&s, &t, 1000);
    let (status, body) = s.call(
        "POST",
        "/api/datasets/default/big/numbers/query/large",
        Some(&t),
        Some(&json!({"filter": "n >= 995", "order_by_columns": [{"column": "n"}]})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    assert_eq!(job["type"], "QUERY");
    assert_eq!(job["rows_processed"], 5);
    let url = job["result_url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with(&s.base) && url.contains("/api/results/") && url.contains("signature="),
        "{url}"
    );

    // No token needed while the link is valid.
    let res = reqwest::blocking::get(&url).unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.text().unwrap(),
        ",n,label\n0,995,\"row, 995\"\n1,996,\"row, 996\"\n2,997,\"row, 997\"\n3,998,\"row, 998\"\n4,999,\"row, 999\"\n"
    );
    let tampered = url.replace("expires=", "expires=9");
    assert_eq!(
        reqwest::blocking::get(&tampered).unwrap().status(),
        StatusCode::FORBIDDEN
    );
    let mut other_sig = url.clone();
    let last = other_sig.pop().unwrap();
    other_sig.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(
        reqwest::blocking::get(&other_sig).unwrap().status(),
        StatusCode::FORBIDDEN
    );
    let no_sig = url.split('?').next().unwrap().to_string();
    assert_eq!(
        reqwest::blocking::get(&no_sig).unwrap().status(),
        StatusCode::BAD_REQUEST
    );

    // A query the checker refuses never becomes a job.
    let (status, _) = s.call(
        "POST",
        "/api/datasets/default/big/numbers/query/large",
        Some(&t),
        Some(&json!({"filter": "1; DROP"})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[test]
fn expired_download_links_are_refused() {
    let s = TestServer::start_with(Options {
        args: vec!["--result-ttl-seconds".into(), "1".into()],
        ..Default::default()
    });
    let t = s.admin_token();
    numbers(&s, &t, 10);
    let (_, body) = s.call(
        "POST",
        "/api/datasets/default/big/numbers/query/large",
        Some(&t),
        Some(&json!({})),
    );
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    let url = job["result_url"].as_str().unwrap().to_string();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let res = reqwest::blocking::get(&url).unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert!(res.text().unwrap().contains("expired"));
}

#[test]
fn queries_during_overwrites_see_one_upload_never_a_mix() {
    let s = TestServer::start();
    let t = s.admin_token();
    s.create_schema(&schema_json(
        "race",
        "state",
        "PUBLIC",
        "OVERWRITE",
        json!([
            {"name": "part", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "generation", "data_type": "int", "allow_null": false}
        ]),
    ));
    let path = "/api/datasets/default/race/state";
    let upload = |generation: usize| {
        let mut csv = String::from("part,generation\n");
        for i in 0..100 {
            csv.push_str(&format!("p{},{generation}\n", i % 2));
        }
        assert_eq!(
            s.upload_and_wait(&t, path, "g.csv", csv.into()).1["status"],
            "SUCCESS"
        );
    };
    upload(0);
    let done = AtomicBool::new(false);
    let checked = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            for g in 1..=15 {
                upload(g);
            }
            done.store(true, Ordering::SeqCst);
        });
        let mut checked = 0;
        while !done.load(Ordering::SeqCst) {
            let (status, answer) = s.call(
                "POST",
                &format!("{path}/query"),
                Some(&t),
                Some(&json!({"select_columns": ["generation"]})),
            );
            assert_eq!(status, StatusCode::OK, "{answer}");
            let generations: std::collections::BTreeSet<i64> = answer
                .as_object()
                .unwrap()
                .values()
                .map(|r| r["generation"].as_i64().unwrap())
                .collect();
            assert_eq!(
                answer.as_object().unwrap().len(),
                100,
                "a whole upload: {generations:?}"
            );
            assert_eq!(
                generations.len(),
                1,
                "one upload's rows only: {generations:?}"
            );
            checked += 1;
        }
        writer.join().unwrap();
        checked
    });
    assert!(checked > 0);
    // Replaced files were deleted once no query held them: only the last upload's files remain.
    let files = crate::stored::parquet_files(&s.data_dir().join("data/default/race/state/1"));
    assert_eq!(files.len(), 2, "{files:?}");
}

/// Rows of every partition, formatted on several query threads: each row once, and the index
/// column runs 0, 1, 2... down the file.
#[test]
fn an_unordered_large_query_over_many_files_holds_every_row_once_in_index_order() {
    let s = TestServer::start();
    let t = s.admin_token();
    s.create_schema(&schema_json(
        "big",
        "parts",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "part", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "n", "data_type": "int", "allow_null": false},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true},
            {"name": "label", "data_type": "string", "allow_null": true}
        ]),
    ));
    let (files, per_file) = (3, 12_000);
    // Row n's date, empty (null) for every seventh row.
    let day_of = |n: usize| {
        if n.is_multiple_of(7) {
            String::new()
        } else {
            format!("20{:02}-0{}-1{}", n % 100, n % 9 + 1, n % 10)
        }
    };
    for f in 0..files {
        let mut csv = String::from("part,n,day,label\n");
        for i in 0..per_file {
            let n = f * per_file + i;
            let day = day_of(n);
            csv.push_str(&format!(
                "p{},{n},{day},\"say \"\"{n}\"\", then\nstop\"\n",
                n % 5
            ));
        }
        let (_, job) =
            s.upload_and_wait(&t, "/api/datasets/default/big/parts", "p.csv", csv.into());
        assert_eq!(job["status"], "SUCCESS", "{job}");
    }
    let (status, body) = s.call(
        "POST",
        "/api/datasets/default/big/parts/query/large",
        Some(&t),
        Some(&json!({})),
    );
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let job = s.wait_job(&t, body["details"]["job_id"].as_str().unwrap());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    let text = reqwest::blocking::get(job["result_url"].as_str().unwrap())
        .unwrap()
        .text()
        .unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        ["", "part", "n", "day", "label"]
    );
    let mut seen = vec![false; files * per_file];
    for (i, record) in reader.records().enumerate() {
        let record = record.unwrap();
        assert_eq!(record[0], i.to_string(), "the index runs down the file");
        let n: usize = record[2].parse().unwrap();
        assert!(!seen[n], "row {n} twice");
        seen[n] = true;
        assert_eq!(record[4], format!("say \"{n}\", then\nstop"));
        assert_eq!(record[1], format!("p{}", n % 5));
        assert_eq!(record[3], day_of(n), "row {n}");
    }
    assert!(seen.iter().all(|s| *s), "every row is in the result");
    assert_eq!(job["rows_processed"], files * per_file);
}
