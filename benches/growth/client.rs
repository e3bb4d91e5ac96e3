//! The bench's HTTP client: create the two datasets, upload (time to SUCCESS as the client sees
//! it), and time q1/q2 as `benches/query.rs` does.

use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{json, Value};

pub(crate) struct Bench {
    pub http: Client,
    pub base: String,
    pub token: String,
}

/// A query's median time over the timed runs, and its answer's row count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timed {
    pub ms: f64,
    pub rows: usize,
}

/// q1: partition pruning + limit (3 columns where category = 'c7' limit 1000).
pub(crate) fn q1() -> Value {
    json!({"select_columns": ["id", "price", "qty"], "filter": "category = 'c7'", "limit": 1000})
}

/// q2: a full scan of two columns (group by category, avg, having, order).
pub(crate) fn q2() -> Value {
    json!({"select_columns": ["category", "avg(price) AS mean"], "group_by_columns": ["category"],
           "aggregation_conditions": "avg(price) > 1", "order_by_columns": [{"column": "category"}]})
}

impl Bench {
    pub(crate) fn create(&self, dataset: &str, unique: bool) {
        let schema = json!({
            "metadata": {"domain": "bench", "dataset": dataset, "sensitivity": "PUBLIC",
                         "owners": [{"name": "Bench", "email": "bench@example.com"}]},
            "columns": [
                {"name": "category", "data_type": "string", "allow_null": false, "partition_index": 0},
                {"name": "id", "data_type": "int", "allow_null": false, "unique": unique},
                {"name": "price", "data_type": "double", "allow_null": true},
                {"name": "qty", "data_type": "int", "allow_null": true},
                {"name": "region", "data_type": "string", "allow_null": true}
            ]
        });
        let status = self
            .http
            .post(format!("{}/api/schema", self.base))
            .bearer_auth(&self.token)
            .json(&schema)
            .send()
            .unwrap()
            .status();
        assert_eq!(status, 201);
    }

    /// Uploads `csv` to `dataset`; the time from the POST until its job is SUCCESS (202, then
    /// polling the job every 2 ms).
    pub(crate) fn upload(&self, dataset: &str, csv: Vec<u8>) -> Duration {
        let part = reqwest::blocking::multipart::Part::bytes(csv).file_name("part.csv");
        let form = reqwest::blocking::multipart::Form::new().part("file", part);
        let t = Instant::now();
        let res = self
            .http
            .post(format!(
                "{}/api/datasets/default/bench/{dataset}",
                self.base
            ))
            .bearer_auth(&self.token)
            .multipart(form)
            .send()
            .unwrap();
        let status = res.status();
        let body: Value = res.json().unwrap_or(Value::Null);
        assert_eq!(status, 202, "upload to {dataset}: {body}");
        let job_id = body["details"]["job_id"].as_str().expect("job id");
        let (deadline, poll) = (Duration::from_secs(3600), Duration::from_millis(2));
        let job =
            rapid_testkit::wait_job(&self.http, &self.base, &self.token, job_id, deadline, poll);
        assert_eq!(job["status"], "SUCCESS", "{job}");
        t.elapsed()
    }

    /// One query: its time (the whole answer read) and the answer's row count.
    fn query(&self, dataset: &str, body: &Value) -> (Duration, usize) {
        let t = Instant::now();
        let res = self
            .http
            .post(format!(
                "{}/api/datasets/default/bench/{dataset}/query",
                self.base
            ))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .unwrap();
        assert_eq!(res.status(), 200);
        let bytes = res.bytes().unwrap();
        let elapsed = t.elapsed();
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let rows = match &answer {
            Value::Object(rows) => rows.len(),
            Value::Array(rows) => rows.len(),
            _ => 0,
        };
        (elapsed, rows)
    }

    /// q1 and q2 on `dataset`: medians over `runs` runs after a warm-up.
    pub(crate) fn queries(&self, dataset: &str, runs: usize) -> (Timed, Timed) {
        (
            self.timed(dataset, &q1(), runs),
            self.timed(dataset, &q2(), runs),
        )
    }

    fn timed(&self, dataset: &str, body: &Value, runs: usize) -> Timed {
        let (_, rows) = self.query(dataset, body);
        let times: Vec<Duration> = (0..runs).map(|_| self.query(dataset, body).0).collect();
        Timed {
            ms: median(&times),
            rows,
        }
    }
}

/// The median of `times`, in ms.
pub(crate) fn median(times: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1000.0).collect();
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    ms[ms.len() / 2]
}
