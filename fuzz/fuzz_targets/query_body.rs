//! The query body of POST .../query, through the same steps as the service: the JSON depth limit
//! and parse (`parse_request`), the expression limits (`check_request`), every part checked (the
//! SQL expression parser and checker, rAPId's JSON filter groups, order by, limit) and rendered to
//! the SQL text DataFusion would get. Must end in Ok or an error, never a panic or a stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rapid_actors::query::{check_request, parse_request, QueryLimits, QueryRequest};

const COLUMNS: [&str; 5] = ["region", "qty", "price", "day", "ok"];

/// A body, or (for denser coverage of the expression parser) a bare filter/select string.
fn request(data: &[u8], limits: &QueryLimits) -> Option<QueryRequest> {
    if let Ok(r) = parse_request(data, limits) {
        return Some(r);
    }
    let text = std::str::from_utf8(data).ok()?;
    let body = serde_json::json!({"filter": text, "select_columns": [text]});
    parse_request(&serde_json::to_vec(&body).ok()?, limits).ok()
}

fuzz_target!(|data: &[u8]| {
    let limits = QueryLimits::default();
    let columns: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let Some(request) = request(data, &limits) else {
        return;
    };
    if check_request(&request, &limits).is_err() {
        return;
    }
    if let Ok(checked) = request.check(&columns) {
        let _ = checked.to_sql("t", Some(100_001));
    }
});
