//! The parallel CSV path against the sequential one: tiny batches make many chunks, a reader
//! that hands out a few bytes at a time puts every byte at some read's edge, and the stored
//! Parquet files, row counts, problems and errors must be identical.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::json;

use super::super::csv_input::ingest_csv_while;
use super::super::{ingest_csv_with, messages, test_schema as valid, CsvOptions, IngestPlan};
use crate::schema::ValidSchema;
use crate::storage::Durability;

fn schema(partitioned: bool) -> ValidSchema {
    let mut region = json!({"name": "region", "data_type": "string", "allow_null": true});
    if partitioned {
        region["partition_index"] = json!(0);
        region["allow_null"] = json!(false);
    }
    valid(
        "split",
        json!([
            region,
            {"name": "id", "data_type": "int", "allow_null": false, "unique": true},
            {"name": "note", "data_type": "string", "allow_null": true, "checks": {
                "len": {"check_type": "str_length", "parameters": {"min_value": 1, "max_value": 30}}}},
            {"name": "amount", "data_type": "double", "allow_null": true, "checks": {
                "range": {"check_type": "in_range", "parameters": {"min_value": 0, "max_value": 100}}}},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true},
            {"name": "paid", "data_type": "boolean", "allow_null": true}
        ]),
    )
}

/// Gives out 1 to 7 bytes per read.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step % 7 + 1;
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Then the input breaks off, as a client that goes away.
struct Broken<'a>(&'a [u8]);

impl Read for Broken<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Err(std::io::Error::other("the client went away"));
        }
        let n = buf.len().min(self.0.len()).min(5);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[derive(Debug, PartialEq)]
enum Outcome {
    /// Rows, and each partition's Parquet file bytes.
    Stored(u64, BTreeMap<String, Vec<u8>>),
    Refused(Vec<String>),
}

fn run(
    input: impl Read + Send,
    schema: &ValidSchema,
    options: CsvOptions,
    max_value: usize,
) -> Outcome {
    run_switching(input, schema, options, max_value, None)
}

/// [`run`]; with `busy_batches`, the first that many batches are parsed on the calling thread
/// (the cores busy with other uploads), the rest on the parallel path.
fn run_switching(
    input: impl Read + Send,
    schema: &ValidSchema,
    options: CsvOptions,
    max_value: usize,
    busy_batches: Option<usize>,
) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let progress = |_: u64| {};
    let plan = IngestPlan {
        schema,
        staging: dir.path(),
        progress: &progress,
        max_value_bytes: max_value,
        on_error: Default::default(),
        profile: true,
    };
    let result = match busy_batches {
        None => ingest_csv_with(input, &plan, options),
        Some(n) => {
            let mut asked = 0;
            let mut busy = || {
                asked += 1;
                asked <= n
            };
            ingest_csv_while(input, &plan, options, Durability::Full, &mut busy)
        }
    };
    match result {
        Ok(out) => {
            let mut files = BTreeMap::new();
            for f in &out.files {
                let bytes = std::fs::read(&f.staged_path).unwrap();
                assert!(files.insert(f.partition_path.clone(), bytes).is_none());
            }
            Outcome::Stored(out.rows, files)
        }
        Err(e) => Outcome::Refused(messages(&e)),
    }
}

fn options(rows: usize, bytes: usize, workers: usize, max_chunk: usize) -> CsvOptions {
    CsvOptions {
        batch_rows: rows,
        batch_bytes: bytes,
        workers,
        max_chunk_bytes: max_chunk,
        // Other tests upload at the same time: the parallel path must run whatever they do.
        share_cores: false,
    }
}

/// The sequential outcome, checked to be that of every parallel set-up.
fn same_everywhere(csv: &[u8], partitioned: bool, max_value: usize) -> Outcome {
    let schema = schema(partitioned);
    let mut expected = None;
    for (rows, bytes) in [(1, usize::MAX), (3, usize::MAX), (4, 150), (1000, 1 << 30)] {
        let sequential = run(
            Trickle { data: csv, step: 0 },
            &schema,
            options(rows, bytes, 0, 1 << 30),
            max_value,
        );
        for workers in [2, 3] {
            for max_chunk in [1 << 30, 40] {
                let o = options(rows, bytes, workers, max_chunk);
                let whole = run(csv, &schema, o, max_value);
                assert_eq!(whole, sequential, "{o:?}");
                let trickled = run(Trickle { data: csv, step: 0 }, &schema, o, max_value);
                assert_eq!(trickled, sequential, "{o:?} trickled");
            }
            // Parsed here while the cores are busy, then on the parallel path.
            for busy in [1, 2, 5] {
                let o = options(rows, bytes, workers, 1 << 30);
                let switched = run_switching(csv, &schema, o, max_value, Some(busy));
                assert_eq!(switched, sequential, "{o:?} after {busy} busy batches");
                let trickled = run_switching(
                    Trickle { data: csv, step: 0 },
                    &schema,
                    o,
                    max_value,
                    Some(busy),
                );
                assert_eq!(
                    trickled, sequential,
                    "{o:?} after {busy} busy batches, trickled"
                );
            }
        }
        if rows == 1000 {
            expected = Some(sequential);
        }
    }
    // unwrap: the last set-up above sets it.
    expected.unwrap()
}

const HEADER: &str = "region,id,note,amount,day,paid\r\n";

fn rows(n: usize) -> String {
    let mut csv = String::new();
    for i in 0..n {
        let note = match i % 4 {
            0 => format!("\"line {i}\nbreak\""),
            1 => format!("\"say \"\"{i}\"\", ok\""),
            2 => format!("plain {i}"),
            _ => "\"\"".to_string(),
        };
        let end = if i % 3 == 0 { "\r\n" } else { "\n" };
        csv.push_str(&format!(
            "{},{i},{note},{}.5,2024-01-{:02},{}{end}",
            ["north", "south", "east"][i % 3],
            i % 90,
            1 + i % 28,
            ["true", "FALSE", ""][i % 3]
        ));
    }
    csv
}

#[test]
fn many_chunks_store_the_same_files_as_one_pass() {
    for partitioned in [false, true] {
        // Quoted newlines, "" escapes, CRLF and LF, blank lines, a `""` line, no final newline.
        let csv = format!(
            "\u{feff}{HEADER}{}\n\n\"\"\n{}",
            rows(23),
            "east,99,last,1,,true"
        );
        match same_everywhere(csv.as_bytes(), partitioned, 1 << 20) {
            Outcome::Stored(24, files) => assert!(!files.is_empty()),
            other => panic!("{other:?}"),
        }
        // A blank last line, and a file of the header only.
        let csv = format!("{HEADER}{}\r\n", rows(10));
        assert!(matches!(
            same_everywhere(csv.as_bytes(), partitioned, 1 << 20),
            Outcome::Stored(10, _)
        ));
        match same_everywhere(HEADER.as_bytes(), partitioned, 1 << 20) {
            Outcome::Refused(m) => {
                assert_eq!(m, ["The file has no data rows, it cannot be processed"])
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn problems_keep_their_rows_and_order_across_chunks() {
    let mut csv = format!("{HEADER}{}", rows(12));
    // Row 13: too few fields; 14: a bad int, a failed check; 15: a duplicate id; then rows
    // enough to pass the cap of messages.
    csv.push_str("north,13\nsouth,x,\"\",500,2024-02-30,maybe\neast,4,dup,1,,\n");
    for i in 0..120 {
        csv.push_str(&format!("west,{},n,-1,,\n", 1000 + i));
    }
    let Outcome::Refused(messages) = same_everywhere(csv.as_bytes(), true, 1 << 20) else {
        panic!("refused expected")
    };
    assert_eq!(messages.len(), 101);
    assert!(messages
        .iter()
        .any(|m| m.starts_with("Row 13 has 2 fields")));
    assert!(messages
        .iter()
        .any(|m| m.contains("received \"x\" in row 14")));
    assert!(messages
        .iter()
        .any(|m| m.contains("value 4 in row 15 appears")));
    assert_eq!(messages[100], "... and 26 more errors");
}

#[test]
fn fatal_errors_name_the_same_row_from_a_later_chunk() {
    let long = "y".repeat(200);
    let csv = format!("{HEADER}{}east,77,\"{long}\",1,,\n{}", rows(9), rows(5));
    let Outcome::Refused(m) = same_everywhere(csv.as_bytes(), false, 100) else {
        panic!("refused expected")
    };
    assert_eq!(
        m,
        ["Column [note] has a value longer than the limit of 100 bytes in row 10"]
    );
    // Too many bytes in a row of short fields.
    let wide = vec!["abcdefghi"; 500].join(",");
    let csv = format!("{HEADER}{}{wide}\n", rows(7));
    let Outcome::Refused(m) = same_everywhere(csv.as_bytes(), false, 100) else {
        panic!("refused expected")
    };
    assert_eq!(
        m,
        ["Row 8 is longer than the limit of 400 bytes (or has more than 65536 fields)"]
    );
}

#[test]
fn a_broken_input_gives_the_same_error_and_line() {
    let schema = schema(false);
    let csv = format!("{HEADER}{}north,5,\"open", rows(9));
    for cut in [HEADER.len() + 3, csv.len() / 2, csv.len()] {
        let data = &csv.as_bytes()[..cut];
        let sequential = run(
            Broken(data),
            &schema,
            options(2, 1 << 30, 0, 1 << 30),
            1 << 20,
        );
        let Outcome::Refused(m) = &sequential else {
            panic!("refused expected")
        };
        assert!(m[0].contains("the client went away"), "{m:?}");
        for max_chunk in [1 << 30, 40] {
            let o = options(2, 1 << 30, 2, max_chunk);
            assert_eq!(run(Broken(data), &schema, o, 1 << 20), sequential, "{cut}");
        }
    }
}

fn two_strings() -> ValidSchema {
    valid(
        "random",
        json!([
            {"name": "a", "data_type": "string", "allow_null": true},
            {"name": "b", "data_type": "string", "allow_null": false}
        ]),
    )
}

#[test]
fn random_bytes_split_where_the_parser_ends_records() {
    // Quotes, delimiters, both line ends and a UTF-8 character whose bytes may land in two
    // fields: every mix must be cut and read as the sequential parser reads it.
    let alphabet: &[u8] = b"ab,,\"\"\r\n\n\xC3\xA9";
    let schema = two_strings();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..300 {
        let mut csv = b"a,b\n".to_vec();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for _ in 0..(x % 120) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            csv.push(alphabet[(x % alphabet.len() as u64) as usize]);
        }
        let sequential = run(&csv[..], &schema, options(2, 9, 0, 1 << 30), 1 << 20);
        for max_chunk in [1 << 30, 8] {
            let o = options(2, 9, 2, max_chunk);
            let parallel = run(
                Trickle {
                    data: &csv,
                    step: 0,
                },
                &schema,
                o,
                1 << 20,
            );
            assert_eq!(parallel, sequential, "{:?}", String::from_utf8_lossy(&csv));
        }
    }
}

#[test]
fn a_character_split_between_two_fields_is_not_text() {
    let schema = two_strings();
    let Outcome::Refused(m) = run(
        &b"a,b\nx\xC3,\xA9y\n"[..],
        &schema,
        options(2, 9, 0, 1),
        1024,
    ) else {
        panic!("refused expected")
    };
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m[0].starts_with("Column [a] has text that is not UTF-8 in row 1"),
        "{m:?}"
    );
    assert!(
        m[1].starts_with("Column [b] has text that is not UTF-8 in row 1"),
        "{m:?}"
    );
}
