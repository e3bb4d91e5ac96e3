//! The query builder: pick columns, filter, group, order, limit; a preview of the first rows;
//! CSV or Parquet download; a large query as a job with progress and a download link. Runs the
//! API's own query path with the API's READ check. Reading needs no token: the form is a GET,
//! except the job, which changes something and carries the CSRF token.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use serde_json::{json, Map, Value};

use rapid_actors::auth::pass::DatasetPass;
use rapid_actors::engine::{pick_version, OutputFormat};

use crate::auth::Read;
use crate::state::AppState;
use crate::web::backend;
use crate::web::dataset::{base, words};
use crate::web::guard::{OnDataset, Page, Posted};
use crate::web::layout::{csrf_field, errors, page};
use crate::web::page::{ok, see_other, FormData, PageError, PageResult};
use crate::web::session::Viewer;

/// Rows shown in the preview.
const PREVIEW_ROWS: i64 = 50;

/// The API's query object from the form's fields.
fn query_body(f: &FormData, preview: bool) -> Result<Value, PageError> {
    let mut q = Map::new();
    let mut select = f.all("columns");
    for extra in f.get("expressions").unwrap_or("").split(';') {
        if !extra.trim().is_empty() {
            select.push(extra.trim().to_string());
        }
    }
    if !select.is_empty() {
        q.insert("select_columns".into(), json!(select));
    }
    if let Some(filter) = f.get("filter").map(str::trim).filter(|s| !s.is_empty()) {
        q.insert("filter".into(), json!(filter));
    }
    let group = f.all("group");
    if !group.is_empty() {
        q.insert("group_by_columns".into(), json!(group));
    }
    if let Some(having) = f.get("having").map(str::trim).filter(|s| !s.is_empty()) {
        q.insert("aggregation_conditions".into(), json!(having));
    }
    if let Some(order) = f.get("order").filter(|s| !s.is_empty()) {
        let direction = f.get("direction").unwrap_or("ASC");
        q.insert(
            "order_by_columns".into(),
            json!([{ "column": order, "direction": direction }]),
        );
    }
    let limit =
        match f.get("limit").map(str::trim).filter(|s| !s.is_empty()) {
            Some(l) => Some(l.parse::<i64>().map_err(|_| {
                PageError::invalid(format!("The limit [{l}] is not a whole number."))
            })?),
            None => None,
        };
    let limit = if preview {
        Some(limit.unwrap_or(PREVIEW_ROWS).min(PREVIEW_ROWS))
    } else {
        limit
    };
    if let Some(l) = limit {
        q.insert("limit".into(), json!(l));
    }
    Ok(Value::Object(q))
}

fn builder(viewer: &Viewer, url: &str, version: i64, columns: &[String], f: &FormData) -> Markup {
    let picked = f.all("columns");
    let grouped = f.all("group");
    let value = |k: &str| f.get(k).unwrap_or("").to_string();
    html! {
        form.query method="get" action={ (url) "/query" } {
            input type="hidden" name="version" value=(version);
            fieldset.perms {
                legend { "Columns (none ticked: all)" }
                @for c in columns {
                    div.check { input type="checkbox" id={ "col-" (c) } name="columns" value=(c) checked[picked.contains(c)]; label for={ "col-" (c) } { (c) } }
                }
            }
            label for="expressions" { "Also select (expressions, separated by ;)" }
            input id="expressions" name="expressions" value=(value("expressions")) placeholder="sum(visits) AS total";
            label for="filter" { "Filter (SQL condition)" }
            input id="filter" name="filter" value=(value("filter")) placeholder="city = 'Leeds' AND visits > 10";
            fieldset.perms {
                legend { "Group by" }
                @for c in columns {
                    div.check { input type="checkbox" id={ "grp-" (c) } name="group" value=(c) checked[grouped.contains(c)]; label for={ "grp-" (c) } { (c) } }
                }
            }
            label for="having" { "Aggregation condition" }
            input id="having" name="having" value=(value("having")) placeholder="sum(visits) > 100";
            div.row {
                div {
                    label for="order" { "Order by" }
                    select id="order" name="order" {
                        option value="" { "—" }
                        @for c in columns { option value=(c) selected[value("order") == *c] { (c) } }
                    }
                }
                div {
                    label for="direction" { "Direction" }
                    select id="direction" name="direction" {
                        option value="ASC" selected[value("direction") != "DESC"] { "Ascending" }
                        option value="DESC" selected[value("direction") == "DESC"] { "Descending" }
                    }
                }
                div { label for="limit" { "Limit" } input id="limit" name="limit" type="number" min="1" value=(value("limit")); }
            }
            div.buttons {
                button type="submit" name="action" value="preview" { "Preview" }
                button.secondary type="submit" name="action" value="csv" { "Download CSV" }
                button.secondary type="submit" name="action" value="parquet" { "Download Parquet" }
            }
        }
        // The job changes something: its own POST form with the CSRF token and the query as last
        // shown (the GET form above never carries the token into a URL).
        form.job method="post" action={ (url) "/query/job" } {
            (csrf_field(viewer))
            @for (k, v) in f.0.iter().filter(|(k, _)| k != "action" && k != "csrf") {
                input type="hidden" name=(k) value=(v);
            }
            @if !f.0.iter().any(|(k, _)| k == "version") { input type="hidden" name="version" value=(version); }
            button.secondary type="submit" { "Run this query as a job (large results)" }
            small { " Runs the query as last previewed, without a row limit for downloads." }
        }
    }
}

fn preview_table(json_bytes: &[u8]) -> Markup {
    let rows: Map<String, Value> = serde_json::from_slice(json_bytes).unwrap_or_default();
    let header: Vec<String> = rows
        .values()
        .next()
        .and_then(Value::as_object)
        .map(|r| r.keys().cloned().collect())
        .unwrap_or_default();
    html! {
        h2 { "Preview" }
        p.count aria-live="polite" { (rows.len()) " rows shown (at most " (PREVIEW_ROWS) ")" }
        @if !rows.is_empty() {
            div.table-wrap {
                table #preview {
                    thead { tr { @for h in &header { th scope="col" { (h) } } } }
                    tbody { @for r in rows.values() { tr { @for h in &header { td { (words(&r[h.as_str()])) } } } } }
                }
            }
        }
    }
}

/// The builder's form as sent (a GET), and what it is about: the version and its columns.
struct Asked {
    f: FormData,
    version: i64,
    columns: Vec<String>,
    url: String,
    title: String,
}

pub async fn get_query(
    req: HttpRequest,
    state: web::Data<AppState>,
    Page { viewer, pass }: Page<OnDataset<Read>>,
) -> PageResult {
    let asked = read_form(&state, &pass, &req)?;
    let (csv, parquet) = (
        (OutputFormat::Csv, "csv"),
        (OutputFormat::Parquet, "parquet"),
    );
    let file = match asked.f.get("action").unwrap_or("") {
        "csv" => csv,
        "parquet" => parquet,
        action => {
            let preview = match action == "preview" {
                true => Some(preview(&state, pass, &asked).await?),
                false => None,
            };
            return Ok(ok(builder_page(&viewer, &asked, preview)));
        }
    };
    download(&state, &viewer, pass, &asked, file.0, file.1).await
}

/// The first rows of the query (as JSON), or why it was refused.
async fn preview(
    state: &AppState,
    pass: DatasetPass<Read>,
    asked: &Asked,
) -> Result<Result<(&'static str, Vec<u8>), rapid_actors::Error>, PageError> {
    let body = query_body(&asked.f, true)?;
    let version = Some(asked.version);
    Ok(backend::run_query(state, pass, version, body, OutputFormat::Json).await)
}

fn read_form(
    state: &AppState,
    pass: &DatasetPass<Read>,
    req: &HttpRequest,
) -> Result<Asked, PageError> {
    let record = pass.record();
    let f = FormData::parse(req.query_string().as_bytes())?;
    let asked = f.get("version").and_then(|v| v.parse::<i64>().ok());
    let version = pick_version(asked, record.latest_version());
    let schema = backend::schema(state, pass, version)?;
    let columns: Vec<String> = schema.columns.into_iter().map(|c| c.name).collect();
    Ok(Asked {
        f,
        version,
        columns,
        url: base(record),
        title: format!("Query {}", record.name()),
    })
}

/// The whole result as a file; a refused query shows the builder with the reasons.
async fn download(
    state: &AppState,
    viewer: &Viewer,
    pass: DatasetPass<Read>,
    asked: &Asked,
    format: OutputFormat,
    ext: &str,
) -> PageResult {
    let body = query_body(&asked.f, false)?;
    let key = pass.record().key().clone();
    let name = format!(
        "{}-{}-{}-v{}.{ext}",
        key.layer, key.domain, key.dataset, asked.version
    );
    match backend::run_query(state, pass, Some(asked.version), body, format).await {
        Ok((content_type, bytes)) => Ok(crate::web::page::secure(
            HttpResponse::Ok()
                .content_type(content_type)
                .insert_header((
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{name}\""),
                ))
                .body(bytes),
        )),
        Err(e) => {
            let m = PageError::from(e).messages();
            let (url, version, columns) = (&asked.url, asked.version, &asked.columns);
            let body = html! { (errors(&m)) (builder(viewer, url, version, columns, &asked.f)) };
            Ok(ok(page(viewer, &asked.title, body)))
        }
    }
}

type Preview = Option<Result<(&'static str, Vec<u8>), rapid_actors::Error>>;

fn builder_page(viewer: &Viewer, asked: &Asked, preview: Preview) -> Markup {
    let (url, version, columns) = (&asked.url, asked.version, &asked.columns);
    let body = html! {
        p { a href=(url) { "Back to the dataset" } }
        @if let Some(Err(e)) = &preview { (errors(&PageError::from(e.clone()).messages())) }
        (builder(viewer, url, version, columns, &asked.f))
        @if let Some(Ok((_, bytes))) = &preview { (preview_table(bytes)) }
    };
    page(viewer, &asked.title, body)
}

/// The large query as a job: then its page, which follows it to the download link.
pub async fn post_query_job(
    req: HttpRequest,
    state: web::Data<AppState>,
    Posted { pass, form: f, .. }: Posted<OnDataset<Read>>,
) -> PageResult {
    let asked = f.get("version").and_then(|v| v.parse::<i64>().ok());
    let query = query_body(&f, false)?;
    let origin = state.link_origin(&req);
    let job_id = backend::start_large_query(&state, pass, asked, query, &origin).await?;
    Ok(see_other(&format!("/jobs/{job_id}")))
}
