//! Facets: for the few columns with few values (text and booleans with at most
//! [`FACET_DISTINCT`] values in the version's profile), the commonest values among the rows the
//! filter keeps, with their counts; each a link adding it to the filter. One grouped count query
//! per column through the API's query path, bounded like every synchronous query.

use maud::{html, Markup};
use rapid_actors::engine::{Cell, Condition, Limit, OrderBy, QueryRequest, Table};
use rapid_actors::profile::ProfileView;

use crate::web::format::{count, words};
use crate::web::page::FormData;
use crate::web::query_links::filtered_by;

/// Columns with at most this many distinct values get a facet.
pub(super) const FACET_DISTINCT: u64 = 30;
/// Facets shown at most.
const FACET_COLUMNS: usize = 3;
/// Values listed per facet.
const FACET_VALUES: i64 = 8;
/// The count's name in a facet's answer.
const COUNTED: &str = "facet_rows";

/// The facet columns of a version (none when the form groups: its rows are groups).
pub(super) fn columns(profile: &ProfileView, f: &FormData) -> Vec<String> {
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
pub(super) fn body(f: &FormData, column: &str) -> QueryRequest {
    let filter = f.get("filter").map(str::trim).filter(|s| !s.is_empty());
    let order = |column: &str, direction: &str| OrderBy {
        column: column.to_string(),
        direction: Some(direction.to_string()),
    };
    QueryRequest {
        select_columns: Some(vec![column.to_string(), format!("count(*) AS {COUNTED}")]),
        filter: filter.map(|c| Condition::Sql(c.to_string())),
        group_by_columns: Some(vec![column.to_string()]),
        aggregation_conditions: None,
        order_by_columns: Some(vec![order(COUNTED, "DESC"), order(column, "ASC")]),
        limit: Some(Limit::Number(FACET_VALUES)),
    }
}

/// The facets answered (a facet whose query failed is left out).
pub(super) fn section(f: &FormData, url: &str, answers: &[(String, Table)]) -> Markup {
    let facets: Vec<(&String, Vec<(Cell, u64)>)> = answers
        .iter()
        .map(|(column, table)| {
            let values = (0..table.rows.len()).filter_map(|i| {
                let n = table.get(i, COUNTED)?.as_u64()?;
                Some((table.get(i, column)?.clone(), n))
            });
            (column, values.collect())
        })
        .filter(|(_, v): &(&String, Vec<(Cell, u64)>)| !v.is_empty())
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
