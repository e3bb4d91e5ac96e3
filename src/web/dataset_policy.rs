//! The dataset page's policy section: to a DATA_ADMIN, the version's row filters and column
//! masks as stored; to a reader a policy applies to, that it applies, the names of its row
//! filters and its masked columns, without the filters' text (it may name other subjects'
//! attributes or values the reader cannot see).

use maud::{html, Markup};
use rapid_actors::engine::PolicyNotice;

fn entries(list: &[String]) -> String {
    match list.is_empty() {
        true => "—".into(),
        false => list.join(", "),
    }
}

pub(super) fn section(notice: &PolicyNotice) -> Markup {
    match notice {
        PolicyNotice::None => html! {},
        PolicyNotice::Rules { policy, applies } => html! {
            section #policy {
                h2 { "Policy" }
                p { "Readers named below see only the rows every row filter naming them keeps, and a column's values through its first mask naming them (" code { "PUT .../policy" } " changes it)." }
                @if !policy.row_filters.is_empty() {
                    div.table-wrap { table #policy-filters {
                        thead { tr { th scope="col" { "row filter" } th scope="col" { "keeps rows where" } th scope="col" { "applies to" } th scope="col" { "except" } } }
                        tbody { @for f in &policy.row_filters { tr { td { (f.name) } td { code { (f.filter) } } td { (entries(&f.applies_to)) } td { (entries(&f.except)) } } } }
                    } }
                }
                @if !policy.column_masks.is_empty() {
                    div.table-wrap { table #policy-masks {
                        thead { tr { th scope="col" { "column" } th scope="col" { "mask" } th scope="col" { "applies to" } th scope="col" { "except" } } }
                        tbody { @for m in &policy.column_masks { tr { td { (m.column) } td { (m.mask) } td { (entries(&m.applies_to)) } td { (entries(&m.except)) } } } }
                    } }
                }
                p #policy-yours { @if applies.is_empty() { "None of it applies to you." } @else { "Applies to you: " (applies.join(", ")) "." } }
            }
        },
        PolicyNotice::AppliesToYou { filters, masks } => html! {
            section #policy {
                h2 { "Policy" }
                div.alert.warn #policy-applies role="status" {
                    p { "A policy applies to you on this version: you see only the rows its row filters keep, and masked values. Row counts, files and profiles of the version are not shown to you: they count every row." }
                    @if !filters.is_empty() { p { "Row filters: " (filters.join(", ")) "." } }
                    @if !masks.is_empty() {
                        p { "Masked columns: " (masks.iter().map(|(c, m)| format!("{c} ({m})")).collect::<Vec<_>>().join(", ")) "." }
                    }
                }
            }
        },
    }
}
