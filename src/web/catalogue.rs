//! The catalogue (`/`): every dataset the viewer may see, searched by name and filtered by layer,
//! domain, sensitivity and tags; one line each with its description, versions and last update.

use std::collections::BTreeMap;

use actix_web::web;
use maud::{html, Markup};
use rapid_actors::engine::{DatasetEntry, DatasetFilter, OneOrMany};
use serde::Deserialize;

use rapid_actors::key::DatasetKey;

use crate::auth::{AnySubject, Read};
use crate::state::AppState;
use crate::web::guard::Page;
use crate::web::layout::{notice, page};
use crate::web::page::{ok, PageError, PageResult};
use crate::web::session::Viewer;

#[derive(Debug, Default, Deserialize)]
pub(super) struct Search {
    #[serde(default)]
    q: String,
    #[serde(default)]
    layer: String,
    #[serde(default)]
    domain: String,
    #[serde(default)]
    sensitivity: String,
    /// `key` or `key=value`, comma separated.
    #[serde(default)]
    tags: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    done: String,
    #[serde(default)]
    done_sig: String,
}

/// What `enriched=true` added to an entry (the pages always ask for it).
fn enriched(d: &DatasetEntry) -> (&str, &str) {
    d.enrichment.as_ref().map_or(("", ""), |e| {
        (e.last_updated_date.as_str(), e.description.as_str())
    })
}

/// The API's own filter (its sensitivity checked by the engine, as the API's).
fn filter_of(search: &Search) -> Result<DatasetFilter, PageError> {
    let mut kv = BTreeMap::new();
    for tag in search
        .tags
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        match tag.split_once('=') {
            Some((k, v)) => kv.insert(k.trim().to_string(), Some(v.trim().to_string())),
            None => kv.insert(tag.to_string(), None),
        };
    }
    let sensitivity = (!search.sensitivity.is_empty()).then(|| search.sensitivity.clone());
    Ok(DatasetFilter {
        sensitivity: sensitivity.map(OneOrMany::One),
        key_value_tags: kv,
        key_only_tags: vec![],
    })
}

pub(super) async fn get_catalogue(
    state: web::Data<AppState>,
    search: web::Query<Search>,
    Page { viewer, pass }: Page<AnySubject>,
) -> PageResult {
    let all = state.engine.list(&pass, &filter_of(&search)?, true)?;
    // "N of M": M every dataset the viewer may see, whatever the filters (the engine's too).
    let filtered = !search.sensitivity.is_empty() || !search.tags.trim().is_empty();
    let every = match filtered {
        true => state
            .engine
            .list(&pass, &DatasetFilter::default(), true)?
            .len(),
        false => all.len(),
    };
    let layers = state.engine.layers().to_vec();
    let body = html! {
        @if search.password == "changed" { (notice("Your password has been changed.")) }
        @let done = crate::web::done::verified(&viewer, &search.done, &search.done_sig);
        @if !done.is_empty() { (notice(done)) }
        (search_form(&search, &layers))
        (datasets_table(&state, &viewer, (&search, every), &all))
    };
    Ok(ok(page(&viewer, "Catalogue", body)))
}

/// What the search box matches: the name and the description, lower-cased (tags have their
/// own field).
fn words_of(d: &DatasetEntry) -> String {
    format!("{} {}", d.dataset, enriched(d).1).to_ascii_lowercase()
}

/// The entries the name, layer and domain fields keep (the engine filtered the rest).
fn matching<'a>(search: &Search, all: &'a [DatasetEntry]) -> Vec<&'a DatasetEntry> {
    let q = search.q.trim().to_ascii_lowercase();
    all.iter()
        .filter(|d| q.is_empty() || words_of(d).contains(&q))
        .filter(|d| search.layer.is_empty() || d.layer == search.layer)
        // Part of a domain's name finds it, in any case (as the name box does).
        .filter(|d| {
            let domain = search.domain.trim().to_ascii_lowercase();
            domain.is_empty() || d.domain.to_ascii_lowercase().contains(&domain)
        })
        .collect()
}

fn search_form(search: &Search, layers: &[String]) -> Markup {
    html! {
        form.filters method="get" action="/" role="search" {
            div { label for="q" { "Search" } input id="q" name="q" type="search" value=(search.q) placeholder="name or description"; }
            div {
                label for="layer" { "Layer" }
                select id="layer" name="layer" {
                    option value="" { "Any" }
                    @for l in layers { option value=(l) selected[*l == search.layer] { (l) } }
                }
            }
            div { label for="domain" { "Domain" } input id="domain" name="domain" value=(search.domain); }
            div {
                label for="sensitivity" { "Sensitivity" }
                select id="sensitivity" name="sensitivity" {
                    option value="" { "Any" }
                    @for s in ["PUBLIC", "PRIVATE", "PROTECTED"] {
                        option value=(s) selected[s == search.sensitivity] { (s) }
                    }
                }
            }
            div {
                label for="tags" { "Tags" }
                input id="tags" name="tags" value=(search.tags) placeholder="owner=ops, draft" aria-describedby="tags-help";
                small id="tags-help" { "key or key=value, comma separated" }
            }
            div.actions { button type="submit" { "Search" } }
        }
    }
}

/// The rows a reader reads by default, for a reader of the dataset: the latest version's in its
/// current commit, or, when that version is new and empty (a column change), the newest version
/// holding rows and its rows (`Some(version)`).
fn rows_of(state: &AppState, viewer: &Viewer, d: &DatasetEntry) -> Option<(i64, Option<i64>)> {
    let key = DatasetKey::new(&d.layer, &d.domain, &d.dataset);
    let pass = state
        .engine
        .dataset_pass::<Read>(viewer.subject.clone(), &key);
    let pass = pass.ok()?;
    let latest: i64 = state
        .engine
        .version_files(&pass, d.version)
        .ok()?
        .live
        .values()
        .sum();
    if latest > 0 || d.version == 1 {
        return Some((latest, None));
    }
    match state.engine.rows_elsewhere(&pass, d.version).ok()? {
        Some((v, rows)) => Some((rows, Some(v))),
        None => Some((0, None)),
    }
}

/// The entry's own tags (`key=value`, or `key`), without the listing's sensitivity and count.
fn own_tags(d: &DatasetEntry) -> Vec<String> {
    let own = d.tags.iter();
    let own = own.filter(|(k, _)| !matches!(*k, "sensitivity" | "no_of_versions"));
    own.map(|(k, v)| match v.is_empty() {
        true => k.to_string(),
        false => format!("{k}={v}"),
    })
    .collect()
}

/// Whether the viewer may read the entry's data (a lock is shown where it may not).
fn readable(state: &AppState, viewer: &Viewer, d: &DatasetEntry) -> bool {
    let key = DatasetKey::new(&d.layer, &d.domain, &d.dataset);
    state
        .engine
        .dataset_pass::<Read>(viewer.subject.clone(), &key)
        .is_ok()
}

fn datasets_table(
    state: &AppState,
    viewer: &Viewer,
    (search, every): (&Search, usize),
    all: &[DatasetEntry],
) -> Markup {
    let rows = matching(search, all);
    html! {
        p.count #catalogue-count aria-live="polite" { (rows.len()) " of " (every) " datasets" }
        @if all.is_empty() {
            p.empty #no-datasets { "No datasets yet." @if viewer.is_data_admin() { " " a href="/schema/new" { "Create one from a sample file" } "." } }
        } @else if rows.is_empty() {
            p.empty { "No dataset matches." }
        } @else {
            div.table-wrap {
                table.datasets.blocks {
                    thead { tr { th scope="col" { "Dataset" } th scope="col" { "Layer / domain" } th scope="col" { "Sensitivity" } th scope="col" { "Versions" } th scope="col" { "Rows" } th scope="col" { "Last update" } th scope="col" { "Description" } } }
                    tbody {
                        @for d in &rows {
                            @let (layer, domain, name) = (&d.layer, &d.domain, &d.dataset);
                            @let (last_update, description) = enriched(d);
                            @let open = readable(state, viewer, d);
                            @let rows = open.then(|| rows_of(state, viewer, d)).flatten();
                            @let elsewhere = rows.and_then(|(r, v)| Some((v?, r)));
                            tr {
                                td data-label="Dataset" {
                                    a href={ "/datasets/" (layer) "/" (domain) "/" (name) } { (name) }
                                    @if open { " · " a.rows href={ "/datasets/" (layer) "/" (domain) "/" (name) "/query" } aria-label={ "Browse the rows of " (name) } { "rows" } }
                                    @if !open { " " span.badge.lock title="Your permissions do not cover this dataset's data" { "no read access" } }
                                }
                                td data-label="Layer / domain" { (layer) " / " (domain) }
                                td data-label="Sensitivity" { span.badge { (d.tags.get("sensitivity").unwrap_or("")) } }
                                td data-label="Versions" { (d.version) }
                                td.num.rows data-label="Rows" { @match rows { Some((r, _)) => (crate::web::format::count(r.max(0) as u64)), None => "—" } }
                                td data-label="Last update" {
                                    @match elsewhere {
                                        Some((v, rows)) => span.elsewhere { "Version " (d.version) " is new and empty; " a href={ "/datasets/" (layer) "/" (domain) "/" (name) "?version=" (v) } { (crate::web::format::count(rows.max(0) as u64)) " rows in version " (v) } },
                                        None => (crate::web::format::when(last_update)),
                                    }
                                }
                                td data-label="Description" {
                                    (description)
                                    @for t in own_tags(d) { " " span.badge.tag { (t) } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
