//! New schema from a sample file (DATA_ADMIN): upload a sample, see the generated schema, edit
//! every field (types, nullability, unique, date formats, checks, partition order, sensitivity,
//! tags, owners, description) and save; or edit an existing schema into a new version.

use actix_web::http::StatusCode;
use actix_web::web;
use maud::{html, Markup};
use serde_json::{json, Map, Value};

use crate::auth::DataAdmin;
use crate::state::AppState;
use crate::web::backend;
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, errors, page};
use crate::web::page::{html as render, ok, see_other, FormData, PageError, PageResult};
use crate::web::posts::Sampled;
use crate::web::session::Viewer;

/// The data types the service stores, offered as suggestions.
const TYPES: [&str; 5] = ["int", "double", "boolean", "string", "date"];
/// The date formats of SPEC.md.
const DATE_FORMATS: [&str; 10] = [
    "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%Y-%m-%d", "%d-%m-%Y", "%m-%d-%Y", "%Y/%m", "%m/%Y",
    "%Y-%m", "%m-%Y",
];

fn sample_form(state: &AppState, viewer: &Viewer, messages: &[String]) -> Markup {
    let layers = backend::layers(state);
    page(
        viewer,
        "New schema",
        html! {
            (errors(messages))
            p { "Upload a sample of the data (CSV or Parquet): the service proposes a schema you can then edit and save." }
            form.narrow method="post" action="/schema/generate" enctype="multipart/form-data" {
                (csrf_field(viewer))
                label for="layer" { "Layer" }
                select id="layer" name="layer" { @for l in &layers { option value=(l) { (l) } } }
                label for="sensitivity" { "Sensitivity" }
                select id="sensitivity" name="sensitivity" { @for s in ["PUBLIC", "PRIVATE", "PROTECTED"] { option value=(s) { (s) } } }
                label for="domain" { "Domain" }
                input id="domain" name="domain" required;
                label for="dataset" { "Dataset" }
                input id="dataset" name="dataset" required;
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
    Ok(ok(sample_form(&state, &viewer, &[])))
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
            sample_form(&state, &viewer, &m),
        ));
    };
    let target = [
        fields.get("layer").unwrap_or_default().to_string(),
        fields.get("sensitivity").unwrap_or("PUBLIC").to_string(),
        fields.required("domain", "the domain")?,
        fields.required("dataset", "the dataset")?,
    ];
    let _permit = backend::generation_permit(&state).await?;
    match backend::draft_schema(&state, &pass, target, field, &filename).await {
        Ok(draft) => Ok(ok(editor(&viewer, &draft, false, &[]))),
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let m = PageError::from(e).messages();
            Ok(render(status, sample_form(&state, &viewer, &m)))
        }
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A column's checks as typed: JSON, or the text that was not JSON; nothing for no checks.
fn checks_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if !o.is_empty() => v.to_string(),
        _ => String::new(),
    }
}

/// The editor's table of columns, one row of inputs each.
fn columns_editor(columns: &[Value]) -> Markup {
    html! {
    div.table-wrap {
        table.editor {
            thead { tr { th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Nullable" } th scope="col" { "Unique" } th scope="col" { "Date format" } th scope="col" { "Partition order" } th scope="col" { "Checks (JSON)" } } }
            tbody {
                @for (i, c) in columns.iter().enumerate() {
                    @let f = |k: &str| format!("c{i}_{k}");
                    tr {
                        td { input name=(f("name")) value=(text(&c["name"])) aria-label={ "Column " (i + 1) " name" }; }
                        td { input name=(f("data_type")) list="types" value=(text(&c["data_type"])) aria-label={ "Column " (i + 1) " type" }; }
                        td { input type="checkbox" name=(f("allow_null")) checked[c["allow_null"] == true] aria-label={ "Column " (i + 1) " nullable" }; }
                        td { input type="checkbox" name=(f("unique")) checked[c["unique"] == true] aria-label={ "Column " (i + 1) " unique" }; }
                        td { input name=(f("format")) list="date-formats" value=(text(&c["format"])) aria-label={ "Column " (i + 1) " date format" }; }
                        td { input name=(f("partition_index")) type="number" min="0" value=(text(&c["partition_index"])) aria-label={ "Column " (i + 1) " partition order" }; }
                        td { input name=(f("checks")) value=(checks_text(&c["checks"])) aria-label={ "Column " (i + 1) " checks" }; }
                    }
                }
            }
        }
    }
    }
}

/// The editor of every field of `schema`; `update` stores it as a new version.
fn editor(viewer: &Viewer, schema: &Value, update: bool, messages: &[String]) -> Markup {
    let m = &schema["metadata"];
    let columns = schema["columns"].as_array().cloned().unwrap_or_default();
    let tags: Vec<String> = m["key_value_tags"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| format!("{k}={}", text(v))).collect())
        .unwrap_or_default();
    let key_only: Vec<String> = m["key_only_tags"]
        .as_array()
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default();
    let owners: Vec<String> = m["owners"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| format!("{} <{}>", text(&o["name"]), text(&o["email"])))
                .collect()
        })
        .unwrap_or_default();
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
            form.schema method="post" action="/schema/save" {
                (csrf_field(viewer))
                input type="hidden" name="mode" value=(if update { "update" } else { "create" });
                input type="hidden" name="columns" value=(columns.len());
                div.row {
                    div { label for="m_layer" { "Layer" } input id="m_layer" name="m_layer" value=(text(&m["layer"])) readonly[update]; }
                    div { label for="m_domain" { "Domain" } input id="m_domain" name="m_domain" value=(text(&m["domain"])) readonly[update]; }
                    div { label for="m_dataset" { "Dataset" } input id="m_dataset" name="m_dataset" value=(text(&m["dataset"])) readonly[update]; }
                    div {
                        label for="m_sensitivity" { "Sensitivity" }
                        select id="m_sensitivity" name="m_sensitivity" {
                            @for s in ["PUBLIC", "PRIVATE", "PROTECTED"] { option value=(s) selected[m["sensitivity"] == s] { (s) } }
                        }
                    }
                    div {
                        label for="m_update_behaviour" { "Update behaviour" }
                        select id="m_update_behaviour" name="m_update_behaviour" {
                            @for b in ["APPEND", "OVERWRITE"] { option value=(b) selected[m["update_behaviour"] == b] { (b) } }
                        }
                    }
                }
                label for="m_description" { "Description" }
                textarea id="m_description" name="m_description" rows="2" { (text(&m["description"])) }
                div.row {
                    div { label for="m_tags" { "Key-value tags (one key=value a line)" } textarea id="m_tags" name="m_tags" rows="3" { (tags.join("\n")) } }
                    div { label for="m_key_only_tags" { "Key-only tags (comma separated)" } input id="m_key_only_tags" name="m_key_only_tags" value=(key_only.join(", ")); }
                    div { label for="m_owners" { "Owners (one Name <email> a line)" } textarea id="m_owners" name="m_owners" rows="3" { (owners.join("\n")) } }
                }
                h2 { "Columns" }
                datalist id="types" { @for t in TYPES { option value=(t) {} } }
                datalist id="date-formats" { @for f in DATE_FORMATS { option value=(f) {} } }
                (columns_editor(&columns))
                button type="submit" { @if update { "Save as a new version" } @else { "Save the schema" } }
            }
        },
    )
}

/// Column `i` from the editor's fields; what could not be read goes to `problems`, kept as typed.
fn column_of(f: &FormData, i: usize, problems: &mut Vec<String>) -> Value {
    let c = |k: &str| f.get(&format!("c{i}_{k}")).unwrap_or("").trim().to_string();
    let mut col = json!({
        "name": c("name"), "data_type": c("data_type"),
        "allow_null": f.get(&format!("c{i}_allow_null")).is_some(),
        "unique": f.get(&format!("c{i}_unique")).is_some(),
    });
    if !c("format").is_empty() {
        col["format"] = json!(c("format"));
    }
    if !c("partition_index").is_empty() {
        col["partition_index"] = match c("partition_index").parse::<i64>() {
            Ok(p) => json!(p),
            Err(_) => {
                problems.push(format!(
                    "The partition order of column {} is not a whole number.",
                    c("name")
                ));
                json!(c("partition_index"))
            }
        };
    }
    if !c("checks").is_empty() {
        col["checks"] = match serde_json::from_str::<Value>(&c("checks")) {
            Ok(checks) => checks,
            Err(e) => {
                problems.push(format!(
                    "The checks of column {} are not valid JSON: {e}",
                    c("name")
                ));
                json!(c("checks"))
            }
        };
    }
    col
}

/// The schema JSON from the editor's fields (the API validates it when it is stored), and what
/// could not be read; unreadable values are kept as typed, so the editor shows them again.
fn schema_of(f: &FormData) -> Result<(Value, Vec<String>), PageError> {
    let mut problems = vec![];
    let get = |k: &str| f.get(k).unwrap_or("").trim().to_string();
    let mut tags = Map::new();
    for line in get("m_tags")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        match line.split_once('=') {
            Some((k, v)) => drop(tags.insert(k.trim().to_string(), json!(v.trim()))),
            None => problems.push(format!("The tag [{line}] needs the form key=value.")),
        }
    }
    let key_only: Vec<String> = get("m_key_only_tags")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from)
        .collect();
    let mut owners = vec![];
    for line in get("m_owners")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        match line.trim_end_matches('>').split_once('<') {
            Some((name, email)) => {
                owners.push(json!({ "name": name.trim(), "email": email.trim() }))
            }
            None => problems.push(format!("The owner [{line}] needs the form Name <email>.")),
        }
    }
    let n: usize = get("columns")
        .parse()
        .map_err(|_| PageError::invalid("The number of columns is missing."))?;
    let mut columns = vec![];
    for i in 0..n.min(10_000) {
        columns.push(column_of(f, i, &mut problems));
    }
    let schema = json!({
        "metadata": {
            "layer": get("m_layer"), "domain": get("m_domain"), "dataset": get("m_dataset"),
            "sensitivity": get("m_sensitivity"), "update_behaviour": get("m_update_behaviour"),
            "description": get("m_description"), "key_value_tags": tags, "key_only_tags": key_only,
            "owners": owners,
        },
        "columns": columns,
    });
    Ok((schema, problems))
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
    let (schema, problems) = schema_of(&f)?;
    if !problems.is_empty() {
        return Ok(render(
            StatusCode::BAD_REQUEST,
            editor(&viewer, &schema, update, &problems),
        ));
    }
    match backend::save_schema(&state, &pass, schema.clone(), update).await {
        Ok(version) => {
            let m = &schema["metadata"];
            let done = crate::web::subjects::url_word(&format!(
                "The schema has been stored as version {version}."
            ));
            Ok(see_other(&format!(
                "/datasets/{}/{}/{}?version={version}&done={done}",
                text(&m["layer"]),
                text(&m["domain"]),
                text(&m["dataset"])
            )))
        }
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            Ok(render(
                status,
                editor(&viewer, &schema, update, &PageError::from(e).messages()),
            ))
        }
    }
}

/// The latest schema of a dataset in the editor, to store as its next version.
pub async fn get_edit(
    state: web::Data<AppState>,
    path: web::Path<(String, String, String)>,
    Page { viewer, pass }: Page<DataAdmin>,
) -> PageResult {
    let (layer, domain, dataset) = path.into_inner();
    let key = rapid_actors::key::DatasetKey::new(&layer, &domain, &dataset);
    let schema = backend::latest_schema_json(&state, &pass, &key)?;
    Ok(ok(editor(&viewer, &schema, true, &[])))
}
