//! Quarantine on the sequential and the parallel CSV paths: the same rows kept apart in the same
//! order, the kept and quarantined rows add up to the file, and uniqueness is judged among kept
//! rows only.

use serde_json::json;

use super::super::{ingest_csv_with, messages, test_schema, CsvOptions, IngestPlan, OnError};
use super::quarantine_path;

/// Staged rows kept, the quarantine file's text (when there is one), or the refusal.
fn run(csv: &str, rows_per_batch: usize, workers: usize) -> Result<(u64, String), Vec<String>> {
    let schema = test_schema(
        "q",
        json!([
            {"name": "id", "data_type": "int", "allow_null": false, "unique": true},
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "amount", "data_type": "int", "allow_null": true, "checks": {
                "small": {"check_type": "in_range", "parameters": {"min_value": 0, "max_value": 9}}}}
        ]),
    );
    let dir = tempfile::tempdir().unwrap();
    let progress = |_: u64| {};
    let plan = IngestPlan {
        schema: &schema,
        staging: dir.path(),
        progress: &progress,
        max_value_bytes: 1 << 20,
        on_error: OnError::Quarantine,
        profile: true,
    };
    let options = CsvOptions {
        batch_rows: rows_per_batch,
        batch_bytes: usize::MAX,
        workers,
        max_chunk_bytes: 64,
        share_cores: false,
    };
    match ingest_csv_with(csv.as_bytes(), &plan, options) {
        Ok(out) => {
            let staged: u64 = out.files.iter().map(|f| f.rows).sum();
            assert_eq!(staged, out.rows, "the staged files hold the kept rows");
            let q = std::fs::read_to_string(quarantine_path(dir.path())).unwrap_or_default();
            let listed = q.lines().count().saturating_sub(1) as u64;
            let rejected = out.quarantined.map_or(0, |q| q.rows_rejected);
            assert_eq!(listed, rejected, "{q}");
            Ok((out.rows, q))
        }
        Err(e) => Err(messages(&e)),
    }
}

fn file() -> (String, u64) {
    let mut csv = String::from("id,region,amount\n");
    let mut bad = 0;
    for row in 1..=200u64 {
        // Row 5 is bad (amount); row 9 repeats its id, but row 5 is not kept: row 9 is fine.
        // Row 16 repeats row 15's id: row 16 is the duplicate.
        let id = match row {
            9 => 5,
            16 => 15,
            _ => row,
        };
        let amount = if row % 7 == 5 { "x" } else { "3" };
        let region = if row % 13 == 0 { "" } else { "north" };
        if row % 7 == 5 || row % 13 == 0 || row == 16 {
            bad += 1;
        }
        csv.push_str(&format!("{id},{region},{amount}\n"));
    }
    (csv, bad)
}

#[test]
fn every_path_keeps_apart_the_same_rows() {
    let (csv, bad) = file();
    let expected = run(&csv, 1000, 1).unwrap();
    assert_eq!(expected.0, 200 - bad);
    let first_rows: Vec<&str> = expected.1.lines().skip(1).take(4).collect();
    assert!(first_rows[0].starts_with("5,north,x,5,"), "{first_rows:?}");
    assert!(
        first_rows[1].starts_with("12,north,x,12,"),
        "{first_rows:?}"
    );
    assert!(first_rows[2].starts_with("13,,3,13,"), "{first_rows:?}");
    assert!(
        first_rows[3].starts_with("15,north,3,16,"),
        "{first_rows:?}"
    );
    assert!(first_rows[3].contains("must be unique"), "{first_rows:?}");
    for (rows, workers) in [(1, 1), (3, 2), (7, 2), (64, 2)] {
        assert_eq!(
            run(&csv, rows, workers).unwrap(),
            expected,
            "{rows} rows, {workers} workers"
        );
    }
}

#[test]
fn a_file_of_bad_rows_only_is_refused() {
    let refused = run("id,region,amount\n1,north,x\n", 10, 1).unwrap_err();
    assert!(
        refused.iter().any(|m| m.contains("Every row")),
        "{refused:?}"
    );
    let clean = run("id,region,amount\n1,north,2\n", 10, 1).unwrap();
    assert_eq!(clean, (1, String::new()));
}

/// The stored rows' profile of a valid file, by the sequential path or the parallel one.
fn profile_of(csv: &str, rows_per_batch: usize, workers: usize) -> crate::profile::StoredProfile {
    let schema = test_schema(
        "p",
        json!([
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "region", "data_type": "string", "allow_null": true},
            {"name": "amount", "data_type": "double", "allow_null": true}
        ]),
    );
    let dir = tempfile::tempdir().unwrap();
    let progress = |_: u64| {};
    let plan = IngestPlan {
        schema: &schema,
        staging: dir.path(),
        progress: &progress,
        max_value_bytes: 1 << 20,
        on_error: OnError::Reject,
        profile: true,
    };
    let options = CsvOptions {
        batch_rows: rows_per_batch,
        batch_bytes: usize::MAX,
        workers,
        max_chunk_bytes: 1 << 20,
        share_cores: false,
    };
    let out = ingest_csv_with(csv.as_bytes(), &plan, options).unwrap();
    out.profile.expect("rows were stored")
}

#[test]
fn parsing_threads_profile_every_row_once() {
    let mut csv = String::from("id,region,amount\n");
    for row in 1..=5000u64 {
        let region = ["north", "south", ""][row as usize % 3];
        csv.push_str(&format!("{row},{region},{}\n", row as f64 / 8.0));
    }
    let one = profile_of(&csv, 1000, 1);
    assert_eq!(one.rows, 5000);
    for (rows, workers) in [(7, 2), (100, 2), (999, 2)] {
        let many = profile_of(&csv, rows, workers);
        assert_eq!(many.rows, 5000, "{rows} rows, {workers} workers");
        for (a, b) in many.columns.iter().zip(&one.columns) {
            assert_eq!(
                (a.rows, a.nulls, &a.min, &a.max),
                (b.rows, b.nulls, &b.min, &b.max)
            );
            assert_eq!(a.frequent, b.frequent, "{}", a.name);
            let total = |c: &crate::profile::StoredColumn| {
                c.bins.as_ref().map(|b| b.counts.iter().sum::<u64>())
            };
            assert_eq!(total(a), total(b), "{}", a.name);
        }
    }
}
