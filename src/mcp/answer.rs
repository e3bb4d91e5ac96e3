//! Rows as a tool answers them: at most so many rows and so many bytes of JSON (an assistant's
//! context is small and a table is not), with `truncated` saying whether any were cut.

use rapid_actors::engine::{Cell, Table};
use serde_json::{json, Number, Value};

/// A cell as the JSON answer of `/query` writes it.
fn cell(c: Cell) -> Value {
    match c {
        Cell::Null => Value::Null,
        Cell::Int(i) => i.into(),
        Cell::UInt(u) => u.into(),
        Cell::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        Cell::Bool(b) => b.into(),
        Cell::Text(s) => s.into(),
    }
}

/// `{"columns", "rows", "row_count", "truncated"}`: the first rows of `table` that fit in
/// `max_rows` and `max_bytes` (each row counted as its JSON text); `more` says the table was
/// itself cut short before it got here (a query run with a limit one past the cap).
pub(super) fn capped(table: Table, max_rows: u64, max_bytes: u64, more: bool) -> Value {
    let total = table.rows.len();
    let (mut rows, mut bytes) = (Vec::new(), 0u64);
    for row in table.rows {
        if rows.len() as u64 >= max_rows {
            break;
        }
        let row = Value::Array(row.into_iter().map(cell).collect());
        let size = row.to_string().len() as u64 + 1;
        if bytes + size > max_bytes {
            break;
        }
        bytes += size;
        rows.push(row);
    }
    let truncated = more || rows.len() < total;
    json!({
        "columns": table.columns,
        "row_count": rows.len(),
        "truncated": truncated,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(n: usize) -> Table {
        Table {
            columns: vec!["id".into(), "name".into()],
            rows: (0..n)
                .map(|i| vec![Cell::Int(i as i64), Cell::Text(format!("row {i}"))])
                .collect(),
        }
    }

    #[test]
    fn rows_past_the_row_cap_are_cut_and_flagged() {
        let answer = capped(table(10), 3, 1 << 20, false);
        assert_eq!(answer["row_count"], 3);
        assert_eq!(answer["truncated"], true);
        assert_eq!(answer["rows"][2], json!([2, "row 2"]));
    }

    #[test]
    fn rows_past_the_byte_cap_are_cut_and_flagged() {
        // Each row is `[i,"row i"]` plus one: 12 bytes for one digit.
        let answer = capped(table(10), 100, 30, false);
        assert_eq!(answer["row_count"], 2);
        assert_eq!(answer["truncated"], true);
    }

    #[test]
    fn a_table_within_both_caps_is_whole() {
        let answer = capped(table(4), 4, 1 << 20, false);
        assert_eq!(answer["row_count"], 4);
        assert_eq!(answer["truncated"], false);
        assert_eq!(answer["columns"], json!(["id", "name"]));
        assert_eq!(capped(table(4), 4, 1 << 20, true)["truncated"], true);
    }

    #[test]
    fn floats_that_json_cannot_hold_are_null() {
        let t = Table {
            columns: vec!["x".into()],
            rows: vec![vec![Cell::Float(f64::NAN)], vec![Cell::Float(1.5)]],
        };
        assert_eq!(
            capped(t, 10, 1 << 20, false)["rows"],
            json!([[null], [1.5]])
        );
    }
}
