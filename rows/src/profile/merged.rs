//! The same column of several uploads' stored profiles merged into one (the version's view).

use std::cmp::Ordering;
use std::collections::HashMap;

use base64::Engine as _;
use datasketches::hll::{HllSketch, HllUnion};
use serde_json::Value;

use super::bins::Bins;
use super::column::{by_count, StoredColumn, B64, LG_K};
use super::distinct::Distinct;
use super::MAX_FREQUENT;

/// Two JSON bounds of a column of type `data_type`, compared in the column's order.
fn json_cmp(data_type: &str, a: &Value, b: &Value) -> Ordering {
    match data_type {
        "int" | "double" => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.total_cmp(&y)
        }
        "boolean" => a.as_bool().cmp(&b.as_bool()),
        _ => a.as_str().cmp(&b.as_str()),
    }
}

/// The merged sketches of a column over several uploads.
pub(super) struct MergedColumn {
    pub stored: StoredColumn,
    pub distinct: f64,
}

/// Merges the same column of several uploads' profiles (at least one).
pub(super) fn merge(columns: &[&StoredColumn]) -> Option<MergedColumn> {
    let first = columns.first()?;
    // Profiles kept before `Distinct` hold DataSketches' sketch: those merge among themselves.
    let mut older = HllUnion::new(LG_K).ok()?;
    let mut union = Distinct::default();
    let mut frequent: Option<HashMap<String, (Value, u64)>> = Some(HashMap::new());
    let mut out = StoredColumn {
        name: first.name.clone(),
        data_type: first.data_type.clone(),
        rows: 0,
        nulls: 0,
        min: None,
        max: None,
        distinct: String::new(),
        hll: String::new(),
        frequent: None,
        bins: None,
    };
    let pick = |current: &mut Option<Value>, new: &Option<Value>, want: Ordering| {
        if let Some(n) = new {
            let better = current
                .as_ref()
                .is_none_or(|c| json_cmp(&first.data_type, n, c) == want);
            if better {
                *current = Some(n.clone());
            }
        }
    };
    for c in columns {
        out.rows += c.rows;
        out.nulls += c.nulls;
        pick(&mut out.min, &c.min, Ordering::Less);
        pick(&mut out.max, &c.max, Ordering::Greater);
        if let Some(sketch) = Distinct::decode(&c.hll) {
            union.union(&sketch);
        }
        let sketch = B64.decode(&c.distinct).ok();
        if let Some(sketch) = sketch.and_then(|b| HllSketch::deserialize(&b).ok()) {
            older.update(&sketch);
        }
        if let Some(b) = &c.bins {
            out.bins.get_or_insert_with(Bins::default).merge(b);
        }
        frequent = match (frequent, &c.frequent) {
            (Some(mut counts), Some(list)) => {
                for (value, n) in list {
                    counts
                        .entry(value.to_string())
                        .or_insert((value.clone(), 0))
                        .1 += n;
                }
                (counts.len() <= MAX_FREQUENT).then_some(counts)
            }
            _ => None,
        };
    }
    out.frequent = frequent.map(|counts| by_count(counts.into_values().collect()));
    // With every value counted, the distinct count is exact.
    let distinct = match &out.frequent {
        Some(list) => list.len() as f64,
        // Sketches of the two kinds cannot merge: their counts are added, capped at the values
        // there are. Uploads of a column that has many values mostly bring new ones (ids,
        // amounts, text), which the sum counts right.
        None => (union.estimate() + older.estimate()).min((out.rows - out.nulls) as f64),
    };
    Some(MergedColumn {
        distinct,
        stored: out,
    })
}
