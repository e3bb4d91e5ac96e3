//! The dataset page: schema per version, info (rows, date ranges), charts of rows per partition
//! and of uploads over time, raw files with delete (`file_delete`), delete the dataset
//! (DATA_ADMIN). Reading it needs the API's READ access to the dataset.

use std::collections::BTreeMap;

use actix_web::web;
use maud::{html, Markup};
use rapid_actors::auth::pass::DatasetPass;
use rapid_actors::engine::{DatasetInfo, Overview, RawFile};
use rapid_actors::key::{DatasetKey, DatasetRecord};
use rapid_actors::schema::{Column, Metadata, Schema};

use crate::auth::{DataAdmin, Read, Write};
use crate::state::AppState;
use crate::web::chart::bars;
use crate::web::files::{files_table, partition_labels, uploads_over_time};
use crate::web::format::count;
use crate::web::guard::{OnDataset, Page, Posted};
use crate::web::layout::{csrf_field, notice, page};
use crate::web::page::{ok, see_other, PageError, PageResult};
use crate::web::session::Viewer;

#[derive(serde::Deserialize)]
pub(super) struct Params {
    version: Option<i64>,
    #[serde(default)]
    done: String,
    #[serde(default)]
    done_sig: String,
}

pub(super) fn base(record: &DatasetRecord) -> String {
    let k = record.key();
    format!("/datasets/{}/{}/{}", k.layer, k.domain, k.dataset)
}

fn dash() -> String {
    "—".into()
}

/// Items comma separated; none as a dash.
fn listed(items: Vec<String>) -> String {
    match items.is_empty() {
        true => dash(),
        false => items.join(", "),
    }
}

/// The schema's metadata in words, in the order the API sends it.
fn metadata_facts(m: &Metadata) -> [(&'static str, String); 10] {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(dash);
    let tags = m.key_value_tags.iter().map(|(k, v)| format!("{k}={v}"));
    let owners = m.owners.iter().flatten();
    let owners = owners.map(|o| format!("{} <{}>", o.name, o.email));
    [
        ("layer", or_dash(&m.layer)),
        ("domain", m.domain.clone()),
        ("dataset", m.dataset.clone()),
        ("sensitivity", m.sensitivity.clone()),
        ("description", or_dash(&m.description)),
        ("version", m.version.map_or_else(dash, |v| v.to_string())),
        ("key value tags", listed(tags.collect())),
        ("key only tags", listed(m.key_only_tags.clone())),
        ("owners", listed(owners.collect())),
        ("update behaviour", m.update_behaviour.clone()),
    ]
}

/// A column's properties, as [`COLUMN_PROPERTIES`] names them.
fn column_words(c: &Column) -> [String; 7] {
    let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
    let checks = c.checks.values().map(|spec| spec.sentence());
    [
        c.name.clone(),
        c.data_type.clone(),
        yes(c.allow_null),
        c.partition_index.map_or_else(dash, |p| p.to_string()),
        c.format.clone().unwrap_or_else(dash),
        yes(c.unique),
        listed(checks.collect()),
    ]
}

const COLUMN_PROPERTIES: [&str; 7] = [
    "name",
    "data type",
    "allow null",
    "partition index",
    "format",
    "unique",
    "checks",
];

/// Every column with every property the schema gives it.
fn columns_table(columns: &[Column]) -> Markup {
    let properties: &[&str] = match columns.is_empty() {
        true => &[],
        false => &COLUMN_PROPERTIES,
    };
    html! {
        div.table-wrap {
            table.columns {
                thead { tr { @for p in properties { th scope="col" { (p) } } } }
                tbody { @for c in columns { tr { @for w in column_words(c) { td { (w) } } } } }
            }
        }
    }
}

fn info_section(info: &Result<DatasetInfo, rapid_actors::Error>) -> Markup {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    match info {
        Err(e) => html! { p.empty { (PageError::from(e.clone()).messages().join(" ")) } },
        Ok(info) => {
            let m = &info.metadata;
            let ranges = info
                .columns
                .iter()
                .filter_map(|c| Some((&c.column.name, c.statistics.as_ref()?)));
            html! {
                dl.facts {
                    dt { "Rows" } dd id="row-count" { (count(m.number_of_rows.max(0) as u64)) }
                    dt { "Columns" } dd { (m.number_of_columns) }
                    dt { "Last updated" } dd { (crate::web::format::when(&m.last_updated)) }
                    @if let Some(by) = &m.last_uploaded_by { dt { "Last uploaded by" } dd { (by) } }
                    @for (name, s) in ranges {
                        dt { (name) " range" } dd { (or_dash(&s.min)) " to " (or_dash(&s.max)) }
                    }
                }
            }
        }
    }
}

/// What the dataset page shows of one version.
struct Shown {
    record: DatasetRecord,
    version: i64,
    schema: Schema,
    info: Result<DatasetInfo, rapid_actors::Error>,
    files: Vec<RawFile>,
    /// Each raw file's rows in the current commit.
    live: BTreeMap<String, i64>,
    partitions: Vec<(String, i64)>,
    can_write: bool,
    /// `None` under a policy (with the files and their rows: they count hidden rows).
    profile: Option<rapid_actors::profile::ProfileView>,
    /// Each version's stored rows, newest first.
    versions: Vec<(i64, i64)>,
    policy: rapid_actors::engine::PolicyNotice,
}

pub(super) async fn get_dataset(
    state: web::Data<AppState>,
    params: web::Query<Params>,
    Page { viewer, pass }: Page<OnDataset<Read>>,
) -> PageResult {
    let shown = read_version(&state, &viewer, &pass, params.version).await?;
    let title = format!(
        "{} / {} / {}",
        shown.record.key().layer,
        shown.record.key().domain,
        shown.record.name()
    );
    Ok(ok(page(
        &viewer,
        &title,
        dataset_body(&viewer, &params, &shown),
    )))
}

/// The version's schema, figures and files: one engine call.
async fn read_version(
    state: &AppState,
    viewer: &Viewer,
    pass: &DatasetPass<Read>,
    asked: Option<i64>,
) -> Result<Shown, PageError> {
    let record = pass.record().clone();
    let Overview {
        version,
        schema,
        info,
        files,
        profile,
        versions,
        policy,
    } = state.engine.overview(pass, asked).await?;
    let can_write = state
        .engine
        .dataset_pass::<Write>(viewer.subject.clone(), record.key())
        .is_ok();
    Ok(Shown {
        versions,
        record,
        version,
        schema,
        info,
        files: files.raw,
        live: files.live,
        partitions: files.partitions,
        can_write,
        profile,
        policy,
    })
}

fn dataset_body(viewer: &Viewer, params: &Params, shown: &Shown) -> Markup {
    let Shown {
        record,
        version,
        schema,
        info,
        files,
        live,
        partitions,
        can_write,
        profile,
        versions,
        policy,
    } = shown;
    let (version, can_write) = (*version, *can_write);
    let uploads = uploads_over_time(files, live);
    let url = base(record);
    html! {
        @let done = crate::web::done::verified(viewer, &params.done, &params.done_sig);
        @if !done.is_empty() { (notice(done)) }
        p.actions {
            @if can_write { a.button href={ "/upload?dataset=" (record.key().layer) "/" (record.key().domain) "/" (record.key().dataset) } { "Upload data" } " · " }
            a.button href={ (url) "/query?version=" (version) } { "Browse the rows" } " · " a href={ (url) "/query?version=" (version) "&action=preview" } { "Query this dataset" } " · " a #history-link href={ (url) "/history?version=" (version) } { "History" }
            @if viewer.is_data_admin() {
                " · " a href={ "/schema/edit/" (record.key().layer) "/" (record.key().domain) "/" (record.key().dataset) } { "Edit the schema" }
            }
        }
        (versions_nav(&url, version, versions))
        h2 { "Information" }
        (info_section(info))
        h2 { "Schema (version " (version) ")" }
        dl.facts { @for (k, v) in metadata_facts(&schema.metadata) { dt { (k) } dd { (v) } } }
        (columns_table(&schema.columns))
        @if !partitions.is_empty() {
            h2 { "Charts" }
            div #charts {
                (bars("Rows per partition", &partition_labels(partitions)))
                (bars("Rows per upload, oldest first", &uploads))
            }
        }
        (crate::web::dataset_policy::section(policy))
        @if let Some(profile) = profile {
            (crate::web::profile::section(profile))
            h2 { "Files" }
            (files_table(viewer, (&url, version), (files, live), can_write))
        }
        @if viewer.is_data_admin() {
            h2 { "Delete the dataset" }
            form method="post" action={ (url) "/delete" } {
                (csrf_field(viewer))
                button.danger type="submit" { "Delete " (record.name()) "…" }
            }
        }
    }
}

/// Which version the page reads, a switch to every other with its rows, and, when the version
/// read holds no data while another does, where the data is.
fn versions_nav(url: &str, version: i64, versions: &[(i64, i64)]) -> Markup {
    let latest = versions.first().map_or(version, |(v, _)| *v);
    let rows_here = versions
        .iter()
        .find(|(v, _)| *v == version)
        .map_or(0, |(_, r)| *r);
    let with_data = versions.iter().find(|(_, r)| *r > 0).map(|(v, _)| *v);
    let rows = |r: i64| match r {
        0 => "no data".to_string(),
        r => format!("{} rows", count(r as u64)),
    };
    html! {
        nav.versions aria-label="Versions" {
            "Reading schema version " strong #version-read { (version) } @if version == latest { " (the latest)" } ". Versions: "
            @for (v, r) in versions {
                @if *v == version { strong aria-current="page" { (v) } } @else { a href={ (url) "?version=" (v) } { (v) } }
                " (" (rows(*r)) ") "
            }
        }
        @let latest_rows = versions.first().map_or(0, |(_, r)| *r);
        @if version != latest && latest_rows == 0 && rows_here > 0 {
            div.alert #latest-empty role="status" {
                p { "Version " (latest) " (the latest) has no data yet: a new schema version starts empty, so this page reads version " (version) ", the newest with rows. Uploads go to version " (latest) " unless you choose another." }
            }
        }
        @if rows_here == 0 {
            @if let Some(v) = with_data.filter(|v| *v != version) {
                div.alert.warn #version-empty role="status" {
                    p { "Version " (version) " has no data yet: a new schema version starts empty. The data is in " a href={ (url) "?version=" (v) } { "version " (v) } " (" (rows(versions.iter().find(|x| x.0 == v).map_or(0, |x| x.1))) "). Uploads go to the latest version unless you choose another." }
                }
            }
        }
    }
}

fn confirm(viewer: &Viewer, title: &str, question: Markup, action: &str, back: &str) -> PageResult {
    let yes = html! { button.danger type="submit" { "Yes, delete" } };
    Ok(ok(confirmation(
        viewer,
        title,
        question,
        action,
        html! {},
        yes,
        back,
    )))
}

/// A page asking `question`, its "yes" a form posting `fields` with `confirm=yes` to `action`.
pub(super) fn confirmation(
    viewer: &Viewer,
    title: &str,
    question: Markup,
    action: &str,
    fields: Markup,
    yes: Markup,
    back: &str,
) -> Markup {
    let body = html! {
        p { (question) }
        form.inline method="post" action=(action) {
            (csrf_field(viewer))
            (fields)
            input type="hidden" name="confirm" value="yes";
            (yes)
        }
        " " a href=(back) { "Cancel" }
    };
    page(viewer, title, body)
}

pub(super) async fn post_delete_dataset(
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    Posted {
        viewer,
        pass: admin,
        form,
    }: Posted<DataAdmin>,
) -> PageResult {
    // As the API: DATA_ADMIN deletes any dataset, readable by it or not.
    let (layer, domain, dataset) = path.into_inner();
    let key = DatasetKey::new(&layer, &domain, &dataset);
    let record = state.engine.dataset(&admin, &key)?;
    let url = base(&record);
    if form.get("confirm") != Some("yes") {
        let q = html! { "Delete " strong { (record.name()) } " with every version, file and schema? This cannot be undone." };
        return confirm(
            &viewer,
            "Delete the dataset?",
            q,
            &format!("{url}/delete"),
            &url,
        );
    }
    state.engine.delete_dataset(&admin, record.key()).await?;
    let done = crate::web::done::query(&viewer, &format!("{} has been deleted.", record.name()));
    Ok(see_other(&format!("/?{done}")))
}
