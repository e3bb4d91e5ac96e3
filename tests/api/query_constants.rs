//! Constant expressions in a query: selected, compared and sorted on, over a dataset stored as
//! several files (so the sort ends in a merge that must keep its ordering).

use serde_json::{json, Value};

use crate::query_semantics::{rows, server_with_facts};

/// An ORDER BY on a comparison of literals, beside one of those literals selected, failed
/// DataFusion's plan sanity check (400 "Error during planning"): the planner rewrote the `0.0`
/// inside the sort key into the selected column, which the signed-zero rule then wrapped. An
/// ORDER BY on a selected expression now sorts by its output column. Found by the differential
/// test (seed 404).
#[test]
fn a_sort_on_a_comparison_of_literals_beside_a_selected_literal_answers() {
    let (s, t) = server_with_facts();
    let key = "(854.375 BETWEEN 2.0 AND 0.0)";
    for direction in ["DESC", "ASC"] {
        let body = json!({"select_columns": ["0.0", key, "qty"],
                          "order_by_columns": [{"column": key, "direction": direction}]});
        let answer = rows(&s, &t, body);
        assert_eq!(answer.len(), 7, "{answer:?}");
        for row in &answer {
            assert_eq!(row[key], Value::Bool(false), "{row}");
            assert_eq!(row["0.0"], json!(0.0), "{row}");
        }
    }
}
