//! The query builder's preview: one page of the answer with the total, previous and next pages,
//! headers that sort (expression columns too), and numbers written for people.

use maud::{html, Markup};
use rapid_actors::engine::{Cell, Table};

use crate::web::format::{count, words};
use crate::web::page::FormData;
use crate::web::query_form::{Window, COUNTED_ROWS, PREVIEW_REACH};
use crate::web::query_links::{filtered_by, query_string, sorted_by};

/// How many rows the whole answer has: known, or more than the preview can count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Total {
    Exactly(u64),
    MoreThan(u64),
    Unknown,
}

/// A cell: numbers for people (right-aligned), everything else in words; `filter`, a link
/// keeping only the rows with this value.
fn cell(v: &Cell, filter: Option<String>) -> Markup {
    let text = words(v);
    let numeric = v.is_number();
    html! {
        td.num[numeric] {
            @match filter {
                // Out of the tab order: a page of rows would be hundreds of stops; the keyboard has
                // the facets and the filter field for the same.
                Some(href) => a.value href=(href) tabindex="-1" title="Only the rows with this value" { (text) },
                None => (text),
            }
        }
    }
}

/// Rows a page may have for its values to be links that filter (beyond, plain text).
const LINKED_ROWS: usize = 200;

/// A header that sorts by its column: ascending first, then the other way.
fn header(f: &FormData, url: &str, name: &str) -> Markup {
    let current = f.get("order") == Some(name);
    let descending = current && f.get("direction") == Some("DESC");
    let next = if current && !descending {
        "DESC"
    } else {
        "ASC"
    };
    let sort = match (current, descending) {
        (false, _) => "none",
        (true, false) => "ascending",
        (true, true) => "descending",
    };
    let label = match next {
        "DESC" => format!("{name}, sorted ascending; sort descending"),
        _ => format!("{name}: sort ascending"),
    };
    html! {
        th scope="col" aria-sort=(sort) {
            a href={ (url) "/query?" (sorted_by(f, name, next)) } aria-label=(label) {
                (name)
                span.sort aria-hidden="true" { @match sort { "ascending" => " ▲", "descending" => " ▼", _ => " ↕" } }
            }
        }
    }
}

/// "Rows 51 to 100 of 1,120,000"; with no row, whether a condition left none or there is none.
fn shown_line(window: &Window, shown: usize, total: Total, filtered: bool) -> String {
    let first = window.offset + 1;
    let last = window.offset + shown as u64;
    let of = match total {
        Total::Exactly(n) => format!(" of {}", count(n)),
        Total::MoreThan(n) => format!(" of more than {}", count(n)),
        Total::Unknown => String::new(),
    };
    match shown {
        0 if window.offset == 0 && filtered => "No rows match.".to_string(),
        0 if window.offset == 0 => "No rows: this version holds none (at this commit).".to_string(),
        0 => format!("No rows on page {}{of}.", window.page),
        _ => format!("Rows {} to {}{of}", count(first), count(last)),
    }
}

/// Whether the form has a condition that can leave rows out.
fn filtered(f: &FormData) -> bool {
    let typed = |k: &str| f.get(k).is_some_and(|v| !v.trim().is_empty());
    typed("filter") || typed("having")
}

/// Previous and next pages, as links keeping the whole query.
fn pager(f: &FormData, url: &str, window: &Window, has_next: bool, total: Total) -> Markup {
    let link = |page: u64| format!("{url}/query?{}&action=preview", query_string(f, Some(page)));
    let end = window.offset + window.size;
    let reach_end = end >= PREVIEW_REACH;
    // At the reach's end no row past it is fetched: the total says whether there are more.
    let more = match total {
        Total::Exactly(n) => n > end,
        Total::MoreThan(_) => true,
        Total::Unknown => false,
    };
    let has_next = has_next || (reach_end && more);
    html! {
        nav.pager aria-label="Pages of the answer" {
            @if window.page > 1 { a rel="prev" href=(link(window.page - 1)) { "← Previous " (window.size) } }
            " "
            span { "Page " (window.page) }
            " "
            @if has_next && !reach_end { a rel="next" href=(link(window.page + 1)) { "Next " (window.size) " →" } }
            @if has_next && reach_end { span.count { " Pages stop at row " (count(PREVIEW_REACH)) ": run the query as a job for the rest." } }
        }
    }
}

/// The page of rows `window` asks for, out of the rows fetched up to its end (and one more).
pub(super) fn table(
    f: &FormData,
    (url, stored): (&str, &[String]),
    window: &Window,
    answer: &Table,
    total: Total,
) -> Markup {
    let fetched = &answer.rows;
    let start = (window.offset as usize).min(fetched.len());
    let end = (start + window.size as usize).min(fetched.len());
    let page = &fetched[start..end];
    let has_next = fetched.len() > end;
    let names = &answer.columns;
    let linked = page.len() <= LINKED_ROWS;
    let href = |column: &str, value: &Cell| {
        let filterable = linked && stored.iter().any(|c| c == column);
        let query = filterable.then(|| filtered_by(f, column, value)).flatten();
        query.map(|q| format!("{url}/query?{q}"))
    };
    html! {
        h2 #preview-heading { "Preview" }
        p.count #preview-count aria-live="polite" { (shown_line(window, page.len(), total, filtered(f))) }
        @if !page.is_empty() {
            div.table-wrap {
                table #preview aria-labelledby="preview-heading" {
                    thead { tr { @for n in names { (header(f, url, n)) } } }
                    tbody { @for r in page { tr { @for (n, v) in names.iter().zip(r) { (cell(v, href(n, v))) } } } }
                }
            }
        }
        (pager(f, url, window, has_next, total))
    }
}

/// The total from the count query's answer: `count(*)` alone, or one row per group.
pub(super) fn total_of(grouped: bool, answer: Option<&Table>, limit: Option<u64>) -> Total {
    let Some(table) = answer else {
        // Grouped, the groups are counted by listing them: past the synchronous limit.
        return match (grouped, limit) {
            (true, Some(l)) if l <= PREVIEW_REACH => Total::Exactly(l),
            (true, _) => Total::MoreThan(PREVIEW_REACH),
            (false, _) => Total::Unknown,
        };
    };
    let n = match grouped {
        true => Some(table.rows.len() as u64),
        false => table.get(0, COUNTED_ROWS).and_then(Cell::as_u64),
    };
    match n {
        Some(n) => Total::Exactly(limit.map_or(n, |l| n.min(l))),
        None => Total::Unknown,
    }
}
