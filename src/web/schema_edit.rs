//! New schema from a sample file (DATA_ADMIN): upload a sample, see the generated schema, edit
//! every field (types, nullability, unique, date formats, checks, partition order, sensitivity,
//! tags, owners, description) and save; or edit an existing schema: its metadata in place, its
//! columns into a new version ([`schema_in_place`]). The
//! sample is kept ([`sample_store`]): the editor shows each column's examples and null count, and
//! once saved the sample can be uploaded as the dataset's first data ([`sample_upload`]). The
//! editor's page is in [`schema_editor`].
//!
//! [`sample_store`]: crate::web::sample_store
//! [`sample_upload`]: crate::web::sample_upload
//! [`schema_editor`]: crate::web::schema_editor
//! [`schema_in_place`]: crate::web::schema_in_place

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::web;
use maud::{html, Markup};
use rapid_actors::schema::{Column, HistoryRetention, Metadata, Owner, Schema};

use crate::auth::DataAdmin;
use crate::state::AppState;
use crate::web::checks_edit::{specs_of, typed_rows};
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, errors, page};
use crate::web::page::{html as render, ok, see_other, FormData, PageError, PageResult};
use crate::web::posts::Sampled;
use crate::web::schema_editor::{editor, Edited, Typed};
use crate::web::schema_in_place::{self, Saved};
use crate::web::session::Viewer;
use crate::web::{sample_store, samples};

/// The sample form; after a refusal, `sent` holds what was typed (the file must be chosen again).
fn sample_form(
    state: &AppState,
    viewer: &Viewer,
    messages: &[String],
    sent: Option<&FormData>,
) -> Markup {
    let layers = state.engine.layers().to_vec();
    let typed = |k: &str| sent.and_then(|f| f.get(k)).unwrap_or("").to_string();
    page(
        viewer,
        "New schema",
        html! {
            (errors(messages))
            p { "Upload a sample of the data (CSV or Parquet): the service proposes a schema you can then edit and save." }
            form.narrow method="post" action="/schema/generate" enctype="multipart/form-data" {
                (csrf_field(viewer))
                label for="layer" { "Layer" }
                select id="layer" name="layer" { @for l in &layers { option value=(l) selected[typed("layer") == *l] { (l) } } }
                label for="sensitivity" { "Sensitivity" }
                select id="sensitivity" name="sensitivity" { @for s in ["PUBLIC", "PRIVATE", "PROTECTED"] { option value=(s) selected[typed("sensitivity") == s] { (s) } } }
                label for="domain" { "Domain" }
                input id="domain" name="domain" required value=(typed("domain"));
                label for="dataset" { "Dataset" }
                input id="dataset" name="dataset" required value=(typed("dataset"));
                label for="file" { "Sample file" }
                input id="file" name="file" type="file" accept=".csv,.parquet" required;
                button type="submit" { "Generate the schema" }
            }
        },
    )
}

pub(super) async fn get_new(
    state: web::Data<AppState>,
    Page { viewer, .. }: Page<DataAdmin>,
) -> PageResult {
    Ok(ok(sample_form(&state, &viewer, &[], None)))
}

/// The sample form's text fields (the CSRF token first) and its file, the viewer a DATA_ADMIN:
/// a draft schema from the sample, shown in the editor.
pub(super) async fn post_generate(
    state: web::Data<AppState>,
    post: Sampled<DataAdmin>,
) -> PageResult {
    let Sampled {
        viewer,
        pass,
        fields,
        file,
        ..
    } = post;
    let Some((field, filename)) = file else {
        let why = (StatusCode::BAD_REQUEST, vec![NO_FILE.into()]);
        return Ok(refused(&state, &viewer, why, &fields));
    };
    let target = target_of(&fields)?;
    let _permit = state.generations.acquire().await?;
    match samples::generate(&state, &pass, target, field, &filename).await {
        Ok(g) => {
            let edited = Edited::sampled(g.schema, (g.token, g.kept)).checked(&state, &pass);
            Ok(ok(editor(&viewer, &edited, false, &[])))
        }
        Err(e) => Ok(refused(&state, &viewer, why(e), &fields)),
    }
}

const NO_FILE: &str = "Please choose a sample file.";

/// An engine refusal's status and messages in words.
fn why(e: rapid_actors::Error) -> (StatusCode, Vec<String>) {
    (
        crate::error::status_of(e.kind),
        PageError::from(e).messages(),
    )
}

/// The sample form again, with what was typed and why it was refused.
fn refused(
    state: &AppState,
    viewer: &Viewer,
    (status, messages): (StatusCode, Vec<String>),
    fields: &FormData,
) -> actix_web::HttpResponse {
    render(status, sample_form(state, viewer, &messages, Some(fields)))
}

/// Layer, sensitivity, domain and dataset of the sample form.
fn target_of(fields: &FormData) -> Result<[String; 4], PageError> {
    Ok([
        fields.get("layer").unwrap_or_default().to_string(),
        fields.get("sensitivity").unwrap_or("PUBLIC").to_string(),
        fields.required("domain", "the domain")?,
        fields.required("dataset", "the dataset")?,
    ])
}

/// Column `i` from the editor's fields; what could not be read goes to `problems`, kept as typed.
fn column_of(f: &FormData, i: usize, problems: &mut Vec<String>) -> (Column, Typed) {
    let c = |k: &str| f.get(&format!("c{i}_{k}")).unwrap_or("").trim().to_string();
    let name = c("name");
    let mut typed = Typed::default();
    let partition_index = match c("partition_index") {
        p if p.is_empty() => None,
        p => p.parse::<i64>().ok().or_else(|| {
            problems.push(format!(
                "The partition order of column {name} is not a whole number."
            ));
            typed.partition_index = Some(p);
            None
        }),
    };
    let rows = typed_rows(f, i);
    let checks = specs_of(&name, &c("data_type"), &rows, problems);
    typed.checks = Some(rows);
    let format = Some(c("format")).filter(|s| !s.is_empty());
    let column = Column {
        data_type: c("data_type"),
        allow_null: f.get(&format!("c{i}_allow_null")).is_some(),
        partition_index,
        format,
        unique: f.get(&format!("c{i}_unique")).is_some(),
        checks,
        name,
    };
    (column, typed)
}

/// Lines of `text` that are not blank, trimmed.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty())
}

/// The metadata from the editor's fields (the API validates it when it is stored); what could
/// not be read goes to `problems`.
fn metadata_of(f: &FormData, problems: &mut Vec<String>) -> Metadata {
    let get = |k: &str| f.get(k).unwrap_or("").trim().to_string();
    let mut tags = BTreeMap::new();
    for line in lines(&get("m_tags")) {
        match line.split_once('=') {
            Some((k, v)) => drop(tags.insert(k.trim().to_string(), v.trim().to_string())),
            None => problems.push(format!("The tag [{line}] needs the form key=value.")),
        }
    }
    let key_only = get("m_key_only_tags");
    let key_only = key_only.split(',').map(str::trim).filter(|t| !t.is_empty());
    let mut owners = vec![];
    for line in lines(&get("m_owners")) {
        match line.trim_end_matches('>').split_once('<') {
            Some((name, email)) => owners.push(Owner {
                name: name.trim().to_string(),
                email: email.trim().to_string(),
            }),
            None => problems.push(format!("The owner [{line}] needs the form Name <email>.")),
        }
    }
    Metadata {
        layer: Some(get("m_layer")),
        domain: get("m_domain"),
        dataset: get("m_dataset"),
        sensitivity: get("m_sensitivity"),
        description: Some(get("m_description")),
        // The version edited (shown; the service assigns versions itself).
        version: get("m_version").parse().ok(),
        key_value_tags: tags,
        key_only_tags: key_only.map(String::from).collect(),
        owners: Some(owners),
        update_behaviour: get("m_update_behaviour"),
        history: history_of(&get("m_keep_commits"), &get("m_keep_seconds"), problems),
    }
}

/// The history retention fields; blank is the service's setting (`RAPID_HISTORY_KEEP_*`).
fn history_of(
    commits: &str,
    seconds: &str,
    problems: &mut Vec<String>,
) -> Option<HistoryRetention> {
    let mut number = |text: &str, what: &str| -> Option<i64> {
        if text.is_empty() {
            return None;
        }
        let n = text.parse().map_err(|_| {
            problems.push(format!(
                "The history {what} [{text}] must be a whole number."
            ))
        });
        n.ok()
    };
    let h = HistoryRetention {
        keep_commits: number(commits, "keep_commits"),
        keep_seconds: number(seconds, "keep_seconds"),
    };
    (h != HistoryRetention::default()).then_some(h)
}

/// The schema from the editor's fields (the API validates it when it is stored), and what could
/// not be read; unreadable values are kept as typed, so the editor shows them again.
fn schema_of(f: &FormData) -> Result<(Edited, Vec<String>), PageError> {
    let mut problems = vec![];
    let metadata = metadata_of(f, &mut problems);
    let n: usize = (f.get("columns").unwrap_or("").trim())
        .parse()
        .map_err(|_| PageError::invalid("The number of columns is missing."))?;
    let (columns, typed) = (0..n.min(10_000))
        .map(|i| column_of(f, i, &mut problems))
        .unzip();
    let schema = Schema { metadata, columns };
    let edited = Edited {
        typed,
        ..Edited::from(schema)
    };
    Ok((edited, problems))
}

pub(super) async fn post_save(
    state: web::Data<AppState>,
    Posted {
        viewer,
        pass,
        form: f,
    }: Posted<DataAdmin>,
) -> PageResult {
    let update = f.get("mode") == Some("update");
    let (mut edited, problems) = schema_of(&f)?;
    if f.get("action") == Some("add_column") {
        // One more row to fill in; nothing saved (a new column then needs a new version).
        edited.schema.columns.push(Column {
            name: String::new(),
            data_type: "string".into(),
            allow_null: true,
            partition_index: None,
            format: None,
            unique: false,
            checks: BTreeMap::new(),
        });
        let edited = edited.checked(&state, &pass);
        return Ok(render(
            StatusCode::OK,
            editor(&viewer, &edited, update, &problems),
        ));
    }
    edited.asked = f.get("action") == Some("check");
    edited.sample = kept_sample(&state, &viewer, &f);
    let edited = edited.checked(&state, &pass);
    if edited.asked || !problems.is_empty() {
        let status = match problems.is_empty() {
            true => StatusCode::OK,
            false => StatusCode::BAD_REQUEST,
        };
        return Ok(render(status, editor(&viewer, &edited, update, &problems)));
    }
    if update {
        let confirmed = f.get("confirm") == Some("new_version");
        return Ok(
            match schema_in_place::save(&state, &pass, &edited.schema, confirmed).await {
                Ok(Saved::InPlace(v)) => {
                    let said = format!(
                        "The metadata of version {v} has been saved; its rows are unchanged."
                    );
                    see_other(&dataset_saying(&viewer, &edited.schema.metadata, v, &said))
                }
                Ok(Saved::NewVersion(v)) => see_other(&saved(&state, &viewer, &edited, v)),
                Ok(Saved::NeedsNewVersion(next, changes)) => {
                    let edited = Edited {
                        new_version: Some((next, changes)),
                        ..edited
                    };
                    render(StatusCode::OK, editor(&viewer, &edited, update, &[]))
                }
                Err(e) => {
                    let status = crate::error::status_of(e.kind);
                    let m = PageError::from(e).messages();
                    render(status, editor(&viewer, &edited, update, &m))
                }
            },
        );
    }
    let stored = match update {
        true => state.engine.update_schema(&pass, &edited.schema).await,
        false => state.engine.create_schema(&pass, &edited.schema).await,
    };
    match stored.map(|s| s.version().unwrap_or(1)) {
        Ok(version) => Ok(see_other(&saved(&state, &viewer, &edited, version))),
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let m = PageError::from(e).messages();
            Ok(render(status, editor(&viewer, &edited, update, &m)))
        }
    }
}

/// The viewer's kept sample the editor's hidden `sample` field names, if it is still kept.
fn kept_sample(
    state: &AppState,
    viewer: &Viewer,
    f: &FormData,
) -> Option<(String, sample_store::Kept)> {
    let token = f.get("sample")?;
    let root = samples::samples_root(state);
    let kept = sample_store::load(&root, token, &viewer.subject.id).ok()?;
    Some((token.to_string(), kept))
}

/// Where a saved schema leads: the page offering to upload its kept sample, or the dataset page.
fn saved(state: &AppState, viewer: &Viewer, edited: &Edited, version: i64) -> String {
    let m = &edited.schema.metadata;
    if let Some((token, mut kept)) = edited.sample.clone() {
        let layer = m.layer.clone().unwrap_or_default();
        kept.saved = Some((layer, m.domain.clone(), m.dataset.clone(), version));
        let root = samples::samples_root(state);
        if sample_store::write(&root, &token, &kept).is_ok() {
            return format!("/schema/saved/{token}");
        }
    }
    let said = format!("The schema has been stored as version {version}.");
    dataset_saying(viewer, m, version, &said)
}

/// The dataset page of `version`, saying `message` (a schema just stored or edited).
fn dataset_saying(viewer: &Viewer, m: &Metadata, version: i64, message: &str) -> String {
    format!(
        "/datasets/{}/{}/{}?version={version}&{}",
        m.layer.as_deref().unwrap_or_default(),
        m.domain,
        m.dataset,
        crate::web::done::query(viewer, message)
    )
}

/// The latest schema of a dataset in the editor, to store as its next version.
pub(super) async fn get_edit(
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    Page { viewer, pass }: Page<DataAdmin>,
) -> PageResult {
    let (layer, domain, dataset) = path.into_inner();
    let key = rapid_actors::key::DatasetKey::new(&layer, &domain, &dataset);
    let schema = state.engine.latest_schema(&pass, &key)?.into_schema();
    let edited = Edited::from(schema).checked(&state, &pass);
    Ok(ok(editor(&viewer, &edited, true, &[])))
}
