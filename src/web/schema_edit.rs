//! New schema from a sample file (DATA_ADMIN): upload a sample, see the generated schema, edit
//! every field (types, nullability, unique, date formats, checks, partition order, sensitivity,
//! tags, owners, description) and save; or edit an existing schema into a new version.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::web;
use maud::{html, Markup};
use rapid_actors::schema::{Column, Metadata, Owner, Schema};

use rapid_actors::auth::pass::AdminPass;

use crate::auth::DataAdmin;
use crate::state::AppState;
use crate::web::backend;
use crate::web::checks_edit::{cell, help, rows_of, specs_of, typed_rows, CheckRow};
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, errors, page};
use crate::web::page::{html as render, ok, see_other, FormData, PageError, PageResult};
use crate::web::posts::Sampled;
use crate::web::session::Viewer;

/// The data types the service stores: the editor's type list.
const TYPES: [&str; 5] = ["int", "double", "boolean", "string", "date"];
/// The date formats of SPEC.md.
const DATE_FORMATS: [&str; 10] = [
    "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%Y-%m-%d", "%d-%m-%Y", "%m-%d-%Y", "%Y/%m", "%m/%Y",
    "%Y-%m", "%m-%Y",
];

/// The sample form; after a refusal, `sent` holds what was typed (the file must be chosen again).
fn sample_form(
    state: &AppState,
    viewer: &Viewer,
    messages: &[String],
    sent: Option<&FormData>,
) -> Markup {
    let layers = backend::layers(state);
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

pub async fn get_new(
    state: web::Data<AppState>,
    Page { viewer, .. }: Page<DataAdmin>,
) -> PageResult {
    Ok(ok(sample_form(&state, &viewer, &[], None)))
}

/// The sample form's text fields (the CSRF token first) and its file, the viewer a DATA_ADMIN:
/// a draft schema from the sample, shown in the editor.
pub async fn post_generate(state: web::Data<AppState>, post: Sampled<DataAdmin>) -> PageResult {
    let Sampled {
        viewer,
        pass,
        fields,
        file,
        ..
    } = post;
    let Some((field, filename)) = file else {
        let m = ["Please choose a sample file.".to_string()];
        return Ok(render(
            StatusCode::BAD_REQUEST,
            sample_form(&state, &viewer, &m, Some(&fields)),
        ));
    };
    let target = target_of(&fields)?;
    let _permit = backend::generation_permit(&state).await?;
    match backend::draft_schema(&state, &pass, target, field, &filename).await {
        Ok(draft) => {
            let edited = Edited::from(draft).checked(&state, &pass);
            Ok(ok(editor(&viewer, &edited, false, &[])))
        }
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let m = PageError::from(e).messages();
            Ok(render(
                status,
                sample_form(&state, &viewer, &m, Some(&fields)),
            ))
        }
    }
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

/// What the editor shows: a schema, and per column the text typed where it could not be read
/// (shown again as typed, with the problem).
struct Edited {
    schema: Schema,
    typed: Vec<Typed>,
    /// The rules the schema breaks as it stands (what saving it would refuse).
    rules: Vec<String>,
    /// Whether the viewer asked for the check (then a schema breaking none says so).
    asked: bool,
}

impl From<Schema> for Edited {
    fn from(schema: Schema) -> Edited {
        Edited {
            schema,
            typed: vec![],
            rules: vec![],
            asked: false,
        }
    }
}

impl Edited {
    /// With the rules it breaks, checked now by the API's own validation.
    fn checked(mut self, state: &AppState, pass: &AdminPass) -> Edited {
        self.rules = backend::schema_problems(state, pass, &self.schema);
        self
    }
}

/// The rules the edited schema breaks, before it is saved; or, asked, that it breaks none.
fn rules_box(edited: &Edited) -> Markup {
    html! {
        @if !edited.rules.is_empty() {
            div.alert.warn #schema-rules role="status" {
                p { strong { "Before this schema can be saved:" } }
                ul { @for r in &edited.rules { li { (r) } } }
            }
        } @else if edited.asked {
            div.alert.ok #schema-rules role="status" { p { "The schema follows every rule: it can be saved." } }
        }
    }
}

/// A column's fields as typed, where they could not be read (its checks always as typed).
#[derive(Default)]
struct Typed {
    partition_index: Option<String>,
    checks: Option<Vec<CheckRow>>,
}

/// The editor's table of columns, one row of inputs each.
fn columns_editor(edited: &Edited) -> Markup {
    let none = Typed::default();
    html! {
    div.table-wrap {
        table.editor {
            thead { tr { th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Nullable" } th scope="col" { "Unique" } th scope="col" { "Date format" } th scope="col" { "Partition order" } th scope="col" { "Checks" } } }
            tbody {
                @for (i, c) in edited.schema.columns.iter().enumerate() {
                    @let f = |k: &str| format!("c{i}_{k}");
                    @let typed = edited.typed.get(i).unwrap_or(&none);
                    @let partition = typed.partition_index.clone().or(c.partition_index.map(|p| p.to_string()));
                    @let checks = typed.checks.clone().unwrap_or_else(|| rows_of(&c.checks));
                    tr {
                        td data-label="Name" { input name=(f("name")) value=(c.name) aria-label={ "Column " (i + 1) " name" }; }
                        td data-label="Type" {
                            select name=(f("data_type")) aria-label={ "Column " (i + 1) " type" } {
                                @if !TYPES.contains(&c.data_type.as_str()) { option value=(c.data_type) selected { (c.data_type) } }
                                @for t in TYPES { option value=(t) selected[c.data_type == t] { (t) } }
                            }
                        }
                        td data-label="Nullable" { input type="checkbox" name=(f("allow_null")) checked[c.allow_null] aria-label={ "Column " (i + 1) " nullable" }; }
                        td data-label="Unique" { input type="checkbox" name=(f("unique")) checked[c.unique] aria-label={ "Column " (i + 1) " unique" }; }
                        td data-label="Date format" { input name=(f("format")) list="date-formats" value=(c.format.as_deref().unwrap_or_default()) aria-label={ "Column " (i + 1) " date format" }; }
                        td data-label="Partition order" { input name=(f("partition_index")) type="number" min="0" value=(partition.unwrap_or_default()) aria-label={ "Column " (i + 1) " partition order" }; }
                        td.checks data-label="Checks" { (cell(i, &checks)) }
                    }
                }
            }
        }
    }
    }
}

/// The metadata's tags and owners as the editor's text fields show them.
fn metadata_text(m: &Metadata) -> [String; 3] {
    let tags = m.key_value_tags.iter().map(|(k, v)| format!("{k}={v}"));
    let owners = m.owners.iter().flatten();
    let owners = owners.map(|o| format!("{} <{}>", o.name, o.email));
    [
        tags.collect::<Vec<_>>().join("\n"),
        m.key_only_tags.join(", "),
        owners.collect::<Vec<_>>().join("\n"),
    ]
}

/// What saving an edit does: the service keeps no in-place edit of a schema (each `PUT /schema`
/// is a new version), so the new version, its data apart, starts empty.
fn new_version_warning(current: Option<i64>) -> Markup {
    let next = current.map(|v| v + 1);
    html! {
        div.alert.warn #new-version-warning role="note" {
            p {
                strong { "Saving starts a new schema version" @if let Some(n) = next { " (" (n) ")" } ", with no data. " }
                "Every change, even to the description, tags or owners, is stored as a new version. Pages and uploads then use the new version; the data already stored stays in "
                @if let Some(v) = current { "version " (v) } @else { "the earlier versions" }
                ", where the dataset page can still show and query it."
            }
        }
    }
}

/// The editor of every field of the schema; `update` stores it as a new version.
fn editor(viewer: &Viewer, edited: &Edited, update: bool, messages: &[String]) -> Markup {
    let m = &edited.schema.metadata;
    let [tags, key_only, owners] = metadata_text(m);
    let or_empty = |v: &Option<String>| v.clone().unwrap_or_default();
    let title = if update {
        "Edit the schema (new version)"
    } else {
        "Edit and save the schema"
    };
    page(
        viewer,
        title,
        html! {
            (errors(messages))
            @if update { (new_version_warning(m.version)) }
            (rules_box(edited))
            form.schema method="post" action="/schema/save" {
                (csrf_field(viewer))
                input type="hidden" name="mode" value=(if update { "update" } else { "create" });
                input type="hidden" name="columns" value=(edited.schema.columns.len());
                div.row {
                    div { label for="m_layer" { "Layer" } input id="m_layer" name="m_layer" value=(or_empty(&m.layer)) readonly[update]; }
                    div { label for="m_domain" { "Domain" } input id="m_domain" name="m_domain" value=(m.domain) readonly[update]; }
                    div { label for="m_dataset" { "Dataset" } input id="m_dataset" name="m_dataset" value=(m.dataset) readonly[update]; }
                    div {
                        label for="m_sensitivity" { "Sensitivity" }
                        select id="m_sensitivity" name="m_sensitivity" {
                            @for s in ["PUBLIC", "PRIVATE", "PROTECTED"] { option value=(s) selected[m.sensitivity == s] { (s) } }
                        }
                    }
                    div {
                        label for="m_update_behaviour" { "Update behaviour" }
                        select id="m_update_behaviour" name="m_update_behaviour" {
                            @for b in ["APPEND", "OVERWRITE"] { option value=(b) selected[m.update_behaviour == b] { (b) } }
                        }
                    }
                }
                label for="m_description" { "Description" }
                textarea id="m_description" name="m_description" rows="2" { (or_empty(&m.description)) }
                div.row {
                    div { label for="m_tags" { "Key-value tags (one key=value a line)" } textarea id="m_tags" name="m_tags" rows="3" { (tags) } }
                    div { label for="m_key_only_tags" { "Key-only tags (comma separated)" } input id="m_key_only_tags" name="m_key_only_tags" value=(key_only); }
                    div { label for="m_owners" { "Owners (one Name <email> a line)" } textarea id="m_owners" name="m_owners" rows="3" { (owners) } }
                }
                h2 { "Columns" }
                datalist id="date-formats" { @for f in DATE_FORMATS { option value=(f) {} } }
                (columns_editor(edited))
                (help())
                div.buttons {
                    button type="submit" { @if update { "Save as a new version (it starts empty)" } @else { "Save the schema" } }
                    button.secondary type="submit" name="action" value="check" { "Check the rules (without saving)" }
                }
            }
        },
    )
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
        version: None,
        key_value_tags: tags,
        key_only_tags: key_only.map(String::from).collect(),
        owners: Some(owners),
        update_behaviour: get("m_update_behaviour"),
    }
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
        schema,
        typed,
        rules: vec![],
        asked: false,
    };
    Ok((edited, problems))
}

pub async fn post_save(
    state: web::Data<AppState>,
    Posted {
        viewer,
        pass,
        form: f,
    }: Posted<DataAdmin>,
) -> PageResult {
    let update = f.get("mode") == Some("update");
    let (mut edited, problems) = schema_of(&f)?;
    edited.asked = f.get("action") == Some("check");
    let edited = edited.checked(&state, &pass);
    if edited.asked || !problems.is_empty() {
        let status = match problems.is_empty() {
            true => StatusCode::OK,
            false => StatusCode::BAD_REQUEST,
        };
        return Ok(render(status, editor(&viewer, &edited, update, &problems)));
    }
    match backend::save_schema(&state, &pass, &edited.schema, update).await {
        Ok(version) => Ok(see_other(&stored_at(&edited.schema.metadata, version))),
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let m = PageError::from(e).messages();
            Ok(render(status, editor(&viewer, &edited, update, &m)))
        }
    }
}

/// The dataset page of a schema just stored, saying so.
fn stored_at(m: &Metadata, version: i64) -> String {
    let done = crate::web::subjects::url_word(&format!(
        "The schema has been stored as version {version}."
    ));
    format!(
        "/datasets/{}/{}/{}?version={version}&done={done}",
        m.layer.as_deref().unwrap_or_default(),
        m.domain,
        m.dataset
    )
}

/// The latest schema of a dataset in the editor, to store as its next version.
pub async fn get_edit(
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    Page { viewer, pass }: Page<DataAdmin>,
) -> PageResult {
    let (layer, domain, dataset) = path.into_inner();
    let key = rapid_actors::key::DatasetKey::new(&layer, &domain, &dataset);
    let schema = backend::latest_schema(&state, &pass, &key)?;
    let edited = Edited::from(schema).checked(&state, &pass);
    Ok(ok(editor(&viewer, &edited, true, &[])))
}
