//! The dataset page's files: the raw files whose rows are in the current commit, each with its
//! rows there and a delete button for a writer, and apart those a rollback left out; and the
//! rows per upload for the chart. Figures of the current commit, also right after a rollback.

use std::collections::BTreeMap;

use maud::{html, Markup};
use rapid_actors::engine::RawFile;

use crate::web::format::count;
use crate::web::layout::csrf_field;
use crate::web::session::Viewer;

/// Rows per upload in the current commit, labelled by when (to the second), oldest first.
pub(super) fn uploads_over_time(
    files: &[RawFile],
    live: &BTreeMap<String, i64>,
) -> Vec<(String, i64)> {
    files
        .iter()
        .filter_map(|f| {
            let rows = *live.get(&f.raw_filename)?;
            let when: String = f.uploaded_at.chars().take(19).collect();
            Some((when.replace('T', " "), rows))
        })
        .collect()
}

/// The version's raw files whose rows are in the current commit, each with its rows there and
/// its delete button for a writer; then those a rollback left out (their rows are in the
/// history, nothing to delete from the current rows).
pub(super) fn files_table(
    viewer: &Viewer,
    (url, version): (&str, i64),
    (files, live): (&[RawFile], &BTreeMap<String, i64>),
    can_write: bool,
) -> Markup {
    let (current, left): (Vec<&RawFile>, Vec<&RawFile>) = files
        .iter()
        .partition(|f| live.contains_key(&f.raw_filename));
    html! {
    @if current.is_empty() { p.empty { "No files in the current rows of this version." } }
    @else {
        div.table-wrap {
            table.files.blocks {
                thead { tr { th scope="col" { "File" } th scope="col" { "Uploaded as" } th scope="col" { "Rows" } th scope="col" { "Bytes" } th scope="col" { "Uploaded" } @if can_write { th scope="col" { span.hidden { "Actions" } } } } }
                tbody {
                    @for f in &current {
                        tr {
                            td data-label="File" { code { (f.raw_filename) } }
                            td data-label="Uploaded as" { (f.original_filename) }
                            td.num data-label="Rows" { (count(live.get(&f.raw_filename).copied().unwrap_or(0).max(0) as u64)) }
                            td.num data-label="Bytes" { (count(f.bytes.max(0) as u64)) }
                            td data-label="Uploaded" { (crate::web::format::when(&f.uploaded_at)) }
                            @if can_write {
                                td {
                                    form.inline method="post" action={ (url) "/files/" (version) "/" (f.raw_filename) "/delete" } {
                                        (csrf_field(viewer))
                                        button.danger type="submit" aria-label={ "Delete " (f.raw_filename) } { "Delete…" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    @if !left.is_empty() {
        p #files-not-current {
            "Not in the current rows (a rollback left them out; the history still has them): "
            @for (i, f) in left.iter().enumerate() { @if i > 0 { ", " } code { (f.raw_filename) } " (" (f.original_filename) ", " (count(f.rows.max(0) as u64)) " rows)" }
            "."
        }
    }
    }
}

/// Rows per partition labelled as people read them: `region=North%20East/year=2024` is
/// `region=North East/year=2024` (each value decoded as the store encoded it).
pub(super) fn partition_labels(parts: &[(String, i64)]) -> Vec<(String, i64)> {
    let label = |path: &str| {
        let segments = path.split('/').map(|s| match s.split_once('=') {
            Some((k, v)) => format!("{k}={}", rapid_actors::storage::decode_partition_value(v)),
            None => s.to_string(),
        });
        segments.collect::<Vec<_>>().join("/")
    };
    parts.iter().map(|(p, n)| (label(p), *n)).collect()
}
