//! What the bench prints after the work: DuckDB's sanity checks, and the summary table (one line
//! per dataset, Markdown, to paste into benches/README.md).

use crate::client::Timed;
use crate::duckdb::Peer;

/// One dataset's figures.
pub(crate) struct Line {
    pub dataset: String,
    pub files: usize,
    /// Median to SUCCESS of the first appends (the one upload's time for the one-upload dataset).
    pub first_ms: f64,
    /// Median to SUCCESS of the last appends (none for the one-upload dataset).
    pub last_ms: Option<f64>,
    pub q1: Timed,
    pub q2: Timed,
    pub peer: Option<Peer>,
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}", a / b)
}

/// q1 and q2 on the appended dataset against the one upload (`lines`: once, appended).
pub(crate) fn ours(lines: &[Line; 2]) {
    let [once, appended] = lines;
    for (what, a, b) in [
        ("q1 filter + limit", once.q1, appended.q1),
        ("q2 group by + having", once.q2, appended.q2),
    ] {
        println!(
            "  {what}: one upload {} ms, appended {} ms (x{})",
            ms(a.ms),
            ms(b.ms),
            ratio(b.ms, a.ms)
        );
    }
}

/// DuckDB's answers against ours: the same row counts, and every row stored read once.
pub(crate) fn check_peer(line: &Line, rows: u64) {
    let Some(peer) = &line.peer else {
        return;
    };
    println!(
        "  DuckDB {} on {}: {} files, {} rows; q1 {} ms ({} rows, ours {}), q2 {} ms ({} rows, ours {})",
        peer.version,
        line.dataset,
        peer.files,
        peer.rows,
        ms(peer.q1.ms),
        peer.q1.rows,
        line.q1.rows,
        ms(peer.q2.ms),
        peer.q2.rows,
        line.q2.rows
    );
    if peer.rows != rows || peer.q1.rows != line.q1.rows || peer.q2.rows != line.q2.rows {
        println!(
            "  WARNING: DuckDB's answers differ from ours on {} (expected {rows} rows stored): \
             the glob may read files the catalog no longer lists",
            line.dataset
        );
    }
}

const HEADER: &str = "| case | dataset | files | first 25 ms | last 25 ms | last / first \
    | q1 ours ms | q1 DuckDB ms | q1 ours / DuckDB | q2 ours ms | q2 DuckDB ms | q2 ours / DuckDB |";

/// The summary table: `case` names the run's settings.
pub(crate) fn summary(case: &str, lines: &[Line]) {
    println!("\nsummary (medians; files counted after settling):\n");
    println!("{HEADER}");
    println!("|{}", "---|".repeat(HEADER.matches('|').count() - 1));
    for l in lines {
        let (last, growth) = match l.last_ms {
            Some(last) => (ms(last), ratio(last, l.first_ms)),
            None => ("-".into(), "-".into()),
        };
        let peer = |f: fn(&Peer) -> Timed, ours: Timed| match &l.peer {
            Some(p) => (ms(f(p).ms), ratio(ours.ms, f(p).ms)),
            None => ("-".into(), "-".into()),
        };
        let (d1, r1) = peer(|p| p.q1, l.q1);
        let (d2, r2) = peer(|p| p.q2, l.q2);
        println!(
            "| {case} | {} | {} | {} | {last} | {growth} | {} | {d1} | {r1} | {} | {d2} | {r2} |",
            l.dataset,
            l.files,
            ms(l.first_ms),
            ms(l.q1.ms),
            ms(l.q2.ms)
        );
    }
}
