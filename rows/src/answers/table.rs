//! An answer as a typed read model, for front doors that render it themselves (the web pages):
//! column names and rows of [`Cell`]s, each cell converted as the JSON answer converts it (the
//! same `cells::cell`), so a page shows what `/query` answers by construction, without JSON
//! written and parsed back.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use serde_json::Value;

use super::cells::cell;

/// One cell of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Null, or a float that is not finite (the JSON answer's `null`).
    Null,
    Int(i64),
    /// A whole number above `i64::MAX`.
    UInt(u64),
    Float(f64),
    Bool(bool),
    /// Text, and dates as `YYYY-MM-DD`.
    Text(String),
}

impl Cell {
    /// The cell a JSON value of the API stands for (a profile's bound, a top value).
    pub fn of_json(v: &Value) -> Cell {
        match v {
            Value::Null => Cell::Null,
            Value::Bool(b) => Cell::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Cell::Int(i),
                (_, Some(u), _) => Cell::UInt(u),
                (_, _, Some(f)) => Cell::Float(f),
                _ => Cell::Text(n.to_string()),
            },
            Value::String(s) => Cell::Text(s.clone()),
            other => Cell::Text(other.to_string()),
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::UInt(_) | Cell::Float(_))
    }

    /// A whole number of 0 or more (a count), if the cell is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Cell::Int(i) => u64::try_from(*i).ok(),
            Cell::UInt(u) => Some(*u),
            _ => None,
        }
    }
}

/// An answer: its columns (in the answer's order, a repeated name kept) and its rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// The batches' rows, each cell as the JSON answer converts it.
    pub fn of(schema: &SchemaRef, batches: &[RecordBatch]) -> Table {
        let columns = schema.fields().iter().map(|f| f.name().clone()).collect();
        let mut rows = Vec::with_capacity(batches.iter().map(|b| b.num_rows()).sum());
        for batch in batches {
            for i in 0..batch.num_rows() {
                let row = batch.columns().iter().map(|a| match cell(a.as_ref(), i) {
                    Some(v) => Cell::of_json(&v),
                    None => Cell::Null,
                });
                rows.push(row.collect());
            }
        }
        Table { columns, rows }
    }

    /// The cell of `column` in row `row`.
    pub fn get(&self, row: usize, column: &str) -> Option<&Cell> {
        let at = self.columns.iter().position(|c| c == column)?;
        self.rows.get(row)?.get(at)
    }
}
