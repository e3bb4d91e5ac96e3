//! The bench summary: throughput, latency percentiles, failures by reason, exactly-once check.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::BenchArgs;

/// One upload's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub dataset: String,
    pub rows: u64,
    pub bytes: u64,
    pub invalid_rows: u64,
    pub accepted_after: Option<Duration>,
    pub done_after: Option<Duration>,
    pub stored: bool,
    pub failure: Option<String>,
}

impl Outcome {
    pub fn new(dataset: &str, rows: u64, bytes: u64, invalid_rows: u64) -> Outcome {
        Outcome {
            dataset: dataset.to_string(),
            rows,
            bytes,
            invalid_rows,
            accepted_after: None,
            done_after: None,
            stored: false,
            failure: None,
        }
    }

    pub fn failed(mut self, reason: String) -> Outcome {
        self.failure = Some(reason);
        self
    }
}

/// A failure reason to group by: the status and the first message, without row numbers and values.
pub(crate) fn reason(status: u16, body: &Value) -> String {
    let first = match &body["details"] {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .first()
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string(),
        other => other.to_string(),
    };
    let general = first
        .split(", received")
        .next()
        .unwrap_or_default()
        .split(" in row")
        .next()
        .unwrap_or_default()
        .to_string();
    format!("{status}: {general}")
}

#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    pub dataset: String,
    pub expected: u64,
    pub stored: u64,
    pub distinct_ids: u64,
    /// Why the count could not be read (the query's answer), if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub uploaders: usize,
    /// The files were generated before the clock started (`--pregenerate`).
    pub pregenerated: bool,
    pub datasets: usize,
    pub files: u64,
    pub files_stored: u64,
    pub files_failed: u64,
    pub rows_stored: u64,
    pub megabytes: f64,
    pub seconds: f64,
    pub mb_per_second: f64,
    pub rows_per_second: f64,
    pub accepted_latency: Option<Latency>,
    pub completed_latency: Option<Latency>,
    pub failures: BTreeMap<String, u64>,
    pub verification: Vec<Verification>,
    pub exactly_once: bool,
    /// Idempotent requests (job polls, counts) sent again after a connection error or a 502-504.
    pub retries: u64,
}

fn latency(mut samples: Vec<Duration>) -> Option<Latency> {
    if samples.is_empty() {
        return None;
    }
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[i].as_secs_f64() * 1000.0
    };
    Some(Latency {
        p50_ms: at(0.50),
        p95_ms: at(0.95),
        p99_ms: at(0.99),
        max_ms: at(1.0),
    })
}

impl Report {
    pub fn new(
        args: &BenchArgs,
        outcomes: Vec<Outcome>,
        elapsed: Duration,
        verification: Vec<Verification>,
        retries: u64,
    ) -> Report {
        let seconds = elapsed.as_secs_f64().max(1e-9);
        let stored: Vec<&Outcome> = outcomes.iter().filter(|o| o.stored).collect();
        let rows_stored: u64 = stored.iter().map(|o| o.rows).sum();
        let megabytes = outcomes.iter().map(|o| o.bytes as f64).sum::<f64>() / 1e6;
        let mut failures = BTreeMap::new();
        for f in outcomes.iter().filter_map(|o| o.failure.clone()) {
            *failures.entry(f).or_insert(0) += 1;
        }
        let exactly_once = verification
            .iter()
            .all(|v| v.stored == v.expected && v.distinct_ids == v.expected);
        Report {
            uploaders: args.uploaders,
            pregenerated: args.pregenerate,
            datasets: verification.len(),
            files: outcomes.len() as u64,
            files_stored: stored.len() as u64,
            files_failed: (outcomes.len() - stored.len()) as u64,
            rows_stored,
            megabytes,
            seconds,
            mb_per_second: megabytes / seconds,
            rows_per_second: rows_stored as f64 / seconds,
            accepted_latency: latency(outcomes.iter().filter_map(|o| o.accepted_after).collect()),
            completed_latency: latency(stored.iter().filter_map(|o| o.done_after).collect()),
            failures,
            verification,
            exactly_once,
            retries,
        }
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "bench: {} uploader(s) -> {} dataset(s){}\n  files       {} ({} stored, {} failed)\n  rows        {} stored\n  data        {:.1} MB in {:.2} s: {:.1} MB/s, {:.0} rows/s\n",
            self.uploaders, self.datasets,
            if self.pregenerated { ", files generated before the clock" } else { "" },
            self.files, self.files_stored, self.files_failed,
            self.rows_stored, self.megabytes, self.seconds, self.mb_per_second, self.rows_per_second
        ));
        for (label, l) in [
            ("until 202", &self.accepted_latency),
            ("until job end", &self.completed_latency),
        ] {
            if let Some(l) = l {
                s.push_str(&format!(
                    "  latency {label:<14} p50 {:.0} ms  p95 {:.0} ms  p99 {:.0} ms  max {:.0} ms\n",
                    l.p50_ms, l.p95_ms, l.p99_ms, l.max_ms
                ));
            }
        }
        if self.retries > 0 {
            s.push_str(&format!(
                "  retried     {} poll(s) or count(s) after a connection error or 502-504\n",
                self.retries
            ));
        }
        for (reason, n) in &self.failures {
            s.push_str(&format!("  failed {n} x {reason}\n"));
        }
        s.push_str(&format!(
            "  exactly once: {}\n",
            if self.exactly_once {
                "yes, every accepted row is stored once"
            } else {
                "NO"
            }
        ));
        for v in self
            .verification
            .iter()
            .filter(|v| v.stored != v.expected || v.distinct_ids != v.expected)
        {
            s.push_str(&format!(
                "    {}: expected {}, stored {}, distinct ids {}\n",
                v.dataset, v.expected, v.stored, v.distinct_ids
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_right_samples() {
        let l = latency((1..=100).map(Duration::from_millis).collect()).unwrap();
        assert_eq!(
            (l.p50_ms, l.p95_ms, l.p99_ms, l.max_ms),
            (50.0, 95.0, 99.0, 100.0)
        );
        assert!(latency(vec![]).is_none());
    }

    #[test]
    fn failure_reasons_group_without_rows_and_values() {
        let body = serde_json::json!({"details": ["Column [id] has an incorrect data type. Expected int, received \"x\" in row 3"]});
        assert_eq!(
            reason(422, &body),
            "422: Column [id] has an incorrect data type. Expected int"
        );
    }
}
