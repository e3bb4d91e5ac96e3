//! The dataset page's column profiles: what changed between the last two uploads first (a
//! warning list), then each column's figures and a chart (its values when few, else the
//! histogram of numbers and dates).

use maud::{html, Markup};
use rapid_actors::engine::Cell;
use rapid_actors::profile::{ColumnView, ProfileView};

use crate::web::chart::bars;

/// A bound as a reader writes it: text unquoted, numbers at most 12 significant digits (a bin
/// edge of 499.46500000000003 is 499.465).
fn shown(v: Option<Cell>) -> String {
    match v {
        Some(v) => crate::web::format::words(&v),
        None => "–".into(),
    }
}

fn figures(c: &ColumnView) -> Markup {
    html! {
        p.figures {
            (format!("{:.1}% null", c.null_share * 100.0))
            " · about " (crate::web::format::count(c.distinct_estimate)) " distinct"
            " · from " (shown(c.min.as_ref().map(Cell::of_json))) " to " (shown(c.max.as_ref().map(Cell::of_json)))
        }
    }
}

fn chart(c: &ColumnView) -> Option<Markup> {
    if let Some(top) = &c.top_values {
        let values: Vec<(String, i64)> = top
            .iter()
            .map(|v| (shown(Some(Cell::of_json(&v.value))), v.count as i64))
            .collect();
        return Some(bars(&format!("Values of {}", c.name), &values));
    }
    let bins = c.histogram.as_ref()?;
    // Each bin holds its lower end, not its upper one (the next bin's lower end), but the last,
    // which holds both: "0 up to 300", ..., "2699 to 2999", so no value reads as in two bins.
    let last = bins.len().saturating_sub(1);
    let values: Vec<(String, i64)> = bins
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let (from, to) = (Cell::of_json(&b.from), Cell::of_json(&b.to));
            let joint = if i == last { "to" } else { "up to" };
            let label = format!("{} {joint} {}", shown(Some(from)), shown(Some(to)));
            (label, b.count as i64)
        })
        .collect();
    Some(bars(&format!("Distribution of {}", c.name), &values))
}

/// The profile section, or a line saying there is none yet.
pub(super) fn section(p: &ProfileView) -> Markup {
    html! {
        h2 { "Column profiles" }
        @if p.uploads == 0 {
            p.empty { "No profiled upload in this version yet: profiles are taken as data is uploaded." }
        } @else {
            p { "Over " (crate::web::format::count(p.rows)) " rows of " (p.uploads) (if p.uploads == 1 { " upload" } else { " uploads" }) "." }
            @if !p.changes.is_empty() {
                div #profile-changes role="status" {
                    p.warning { "Changed in the last upload:" }
                    ul { @for change in &p.changes { li { (change.message) } } }
                }
            }
            div #profiles {
                @for c in &p.columns {
                    section.profile aria-label={ "Profile of " (c.name) } {
                        h3 { code { (c.name) } " " small { (c.data_type) } }
                        (figures(c))
                        @if let Some(chart) = chart(c) { (chart) }
                    }
                }
            }
        }
    }
}
