//! The query body of POST .../query: JSON parsed into the query object, every part checked (the SQL
//! expression parser and checker, rAPId's JSON filter groups, order by, limit) and rendered to the
//! SQL text DataFusion would get. Must end in Ok or an error, never a panic or a stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rapid_actors::query::QueryRequest;

const COLUMNS: [&str; 5] = ["region", "qty", "price", "day", "ok"];

fuzz_target!(|data: &[u8]| {
    let columns: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    // A body, or (for denser coverage of the expression parser) a bare filter string.
    let request = match serde_json::from_slice::<QueryRequest>(data) {
        Ok(r) => r,
        Err(_) => match std::str::from_utf8(data) {
            Ok(text) => {
                let body = serde_json::json!({"filter": text, "select_columns": [text]});
                match serde_json::from_value::<QueryRequest>(body) {
                    Ok(r) => r,
                    Err(_) => return,
                }
            }
            Err(_) => return,
        },
    };
    if let Ok(checked) = request.check(&columns) {
        let _ = checked.to_sql("t", Some(100_001));
    }
});
