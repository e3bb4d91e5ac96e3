//! Facets: for the few columns with few values (text and booleans with at most
//! [`FACET_DISTINCT`] values in the version's profile), the commonest values among the rows the
//! filter keeps, with their counts; each a link adding it to the filter. One grouped count query
//! per column through the API's query path, bounded like every synchronous query.

use maud::{html, Markup};
use rapid_actors::profile::ProfileView;
use serde_json::{json, Map, Value};

use crate::web::format::{count, words};
use crate::web::page::FormData;
use crate::web::query_form::filtered_by;

/// Columns with at most this many distinct values get a facet.
pub const FACET_DISTINCT: u64 = 30;
/// Facets shown at most.
const FACET_COLUMNS: usize = 3;
/// Values listed per facet.
const FACET_VALUES: u64 = 8;
/// The count's name in a facet's answer.
const COUNTED: &str = "facet_rows";

/// The facet columns of a version (none when the form groups: its rows are groups).
pub fn columns(profile: &ProfileView, f: &FormData) -> Vec<String> {
    if !f.all("group").is_empty() {
        return vec![];
    }
    let few = |c: &&rapid_actors::profile::ColumnView| {
        matches!(c.data_type.as_str(), "string" | "boolean")
            && c.top_values.is_some()
            && (2..=FACET_DISTINCT).contains(&c.distinct_estimate)
    };
    let picked = profile.columns.iter().filter(few).take(FACET_COLUMNS);
    picked.map(|c| c.name.clone()).collect()
}

/// The query counting `column`'s commonest values under the form's filter.
pub fn body(f: &FormData, column: &str) -> Value {
    let mut q = Map::new();
    q.insert(
        "select_columns".into(),
        json!([column, format!("count(*) AS {COUNTED}")]),
    );
    if let Some(filter) = f.get("filter").map(str::trim).filter(|s| !s.is_empty()) {
        q.insert("filter".into(), json!(filter));
    }
    q.insert("group_by_columns".into(), json!([column]));
    q.insert(
        "order_by_columns".into(),
        json!([{ "column": COUNTED, "direction": "DESC" }, { "column": column, "direction": "ASC" }]),
    );
    q.insert("limit".into(), json!(FACET_VALUES));
    Value::Object(q)
}

/// The facets answered (a facet whose query failed is left out).
pub fn section(f: &FormData, url: &str, answers: &[(String, Vec<u8>)]) -> Markup {
    let facets: Vec<(&String, Vec<(Value, u64)>)> = answers
        .iter()
        .map(|(column, bytes)| {
            let rows: Map<String, Value> = serde_json::from_slice(bytes).unwrap_or_default();
            let values = rows
                .values()
                .filter_map(|r| Some((r.get(column)?.clone(), r.get(COUNTED)?.as_u64()?)));
            (column, values.collect())
        })
        .filter(|(_, v): &(&String, Vec<(Value, u64)>)| !v.is_empty())
        .collect();
    html! {
        @if !facets.is_empty() {
            section #facets aria-labelledby="facets-heading" {
                h2 #facets-heading { "Values" }
                p.count #facets-note { "Counted over every row the filter keeps, whatever the limit or the page." }
                div.facets {
                    @for (column, values) in &facets {
                        div.facet {
                            h3 { (column) }
                            ul.plain {
                                @for (v, n) in values {
                                    li {
                                        @match filtered_by(f, column, v) {
                                            Some(q) => a href={ (url) "/query?" (q) } { (words(v)) },
                                            None => (words(v)),
                                        }
                                        " " span.count { (count(*n)) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
