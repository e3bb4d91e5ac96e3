//! The query builder: pick columns, filter, group, order, limit; a preview of the answer, one
//! page at a time with its total; CSV, Parquet or Arrow download; the query as a job with
//! progress and a download link. Every output runs the form as it stands (one query object,
//! `query_form.rs`), and facets count the few-valued columns. Runs the API's own query path
//! with the API's READ check. Reading needs no token: the form is a GET; the job changes
//! something, so "Run as a job" first shows the query with a confirming POST form carrying the
//! CSRF token.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};

use rapid_actors::auth::pass::DatasetPass;
use rapid_actors::engine::OutputFormat;
use rapid_actors::history::AsOf;

use crate::auth::Read;
use crate::state::AppState;
use crate::web::dataset::base;
use crate::web::facets;
use crate::web::guard::{OnDataset, Page, Posted};
use crate::web::layout::{csrf_field, errors, page};
use crate::web::page::{ok, see_other, FormData, PageError, PageResult};
use crate::web::preview::{table, total_of};
use crate::web::query_form::{
    answer_name, count_body, expressions, ordered_whole_query, page_body, query_in_words,
    without_index, Window, QUERY_FIELDS,
};
use crate::web::query_links::query_string;
use crate::web::session::{sessions, Viewer};
use crate::web::view_sql::{table_name, view_sql};

/// The builder's form as sent (a GET), and what it is about: the version and its columns.
struct Asked {
    f: FormData,
    version: i64,
    latest: i64,
    columns: Vec<String>,
    url: String,
    title: String,
    /// `layer-domain-dataset-vN`, the start of a download's name.
    stem: String,
    /// The view as one SQL statement (the SQL page's link opens it).
    sql: String,
    /// The commit read (`as_of_commit`; absent: the current rows).
    at: AsOf,
    /// This version has no rows while another has: that one and its rows.
    rows_elsewhere: Option<(i64, i64)>,
}

/// The commit the form asks to read (`as_of_commit`, blank: the current rows).
fn as_of(f: &FormData) -> Result<AsOf, PageError> {
    match f
        .get("as_of_commit")
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        None => Ok(AsOf::Latest),
        Some(c) => match c.parse::<i64>() {
            Ok(n) if n > 0 => Ok(AsOf::Commit(n)),
            _ => Err(PageError::invalid(format!(
                "The commit [{c}] is not a commit number: the history lists them (1, 2, ...)."
            ))),
        },
    }
}

/// The columns the answer can be ordered by: stored ones, the expressions' names, and the
/// order asked for (kept even when it is none of these, so a preview never drops it).
fn order_choices(asked: &Asked) -> Vec<String> {
    let mut choices = asked.columns.clone();
    let named = expressions(&asked.f).into_iter().map(|e| answer_name(&e));
    let kept = asked
        .f
        .get("order")
        .filter(|o| !o.is_empty())
        .map(String::from);
    for name in named.chain(kept) {
        if !choices.contains(&name) {
            choices.push(name);
        }
    }
    choices
}

fn columns_fieldset(legend: &str, prefix: &str, name: &str, asked: &Asked) -> Markup {
    let picked = asked.f.all(name);
    html! {
        fieldset.perms {
            legend { (legend) }
            @for c in &asked.columns {
                div.check { input type="checkbox" id={ (prefix) (c) } name=(name) value=(c) checked[picked.contains(c)]; label for={ (prefix) (c) } { (c) } }
            }
        }
    }
}

/// An example filter over this dataset's own columns (a hint must name columns it has).
fn filter_hint(columns: &[String]) -> String {
    match columns {
        [] => String::new(),
        [one] => format!("{one} IS NOT NULL"),
        [a, b, ..] => format!("{a} IS NOT NULL AND {b} IS NOT NULL"),
    }
}

fn builder(asked: &Asked) -> Markup {
    let value = |k: &str| asked.f.get(k).unwrap_or("").to_string();
    html! {
        form.query method="get" action={ (asked.url) "/query" } {
            label for="version" { "Schema version" }
            select id="version" name="version" aria-describedby="version-help" {
                @for v in (1..=asked.latest).rev() { option value=(v) selected[v == asked.version] { "Version " (v) @if v == asked.latest { " (latest)" } } }
            }
            small #version-help { "Each schema version holds its own data; a new version starts empty." }
            (columns_fieldset("Columns (none ticked: all)", "col-", "columns", asked))
            label for="expressions" { "Also select (expressions, separated by ;)" }
            input id="expressions" name="expressions" value=(value("expressions")) placeholder="count(*) AS n";
            label for="filter" { "Filter (SQL condition)" }
            input id="filter" name="filter" value=(value("filter")) placeholder=(filter_hint(&asked.columns));
            (columns_fieldset("Group by (the grouped columns are shown beside the results)", "grp-", "group", asked))
            label for="having" { "Aggregation condition" }
            input id="having" name="having" value=(value("having")) placeholder="count(*) > 1";
            div.row {
                div {
                    label for="order" { "Order by" }
                    select id="order" name="order" {
                        option value="" { "—" }
                        @for c in order_choices(asked) { option value=(c) selected[value("order") == c] { (c) } }
                    }
                }
                div {
                    label for="direction" { "Direction" }
                    select id="direction" name="direction" {
                        option value="ASC" selected[value("direction") != "DESC"] { "Ascending" }
                        option value="DESC" selected[value("direction") == "DESC"] { "Descending" }
                    }
                }
                div { label for="limit" { "Limit (rows)" } input id="limit" name="limit" type="number" min="1" value=(value("limit")) aria-describedby="limit-help"; small #limit-help { "A preview page shows up to 1,000 rows; downloads and jobs give every row up to the limit." } }
            }
            label for="as_of_commit" { "As of commit (blank: the current rows)" }
            input id="as_of_commit" name="as_of_commit" type="number" min="1" value=(value("as_of_commit")) aria-describedby="as-of-help";
            small #as-of-help { "The rows as an earlier commit of this version had them: the version's history lists its commits." }
            div.check { input type="checkbox" id="index" name="index" value="yes" checked[asked.f.get("index").is_some()]; label for="index" { "CSV download: start each row with its number (as the API's CSV)" } }
            div.buttons {
                button type="submit" name="action" value="preview" { "Preview" }
                button.secondary type="submit" name="action" value="csv" { "Download CSV" }
                button.secondary type="submit" name="action" value="parquet" { "Download Parquet" }
                button.secondary type="submit" name="action" value="arrow" { "Download Arrow" }
                button.secondary type="submit" name="action" value="job" { "Run this query as a job…" }
            }
        }
    }
}

/// A POST form running `f`'s query as a job, with the CSRF token; `label` on its button.
fn job_form(viewer: &Viewer, url: &str, f: &FormData, label: &str) -> Markup {
    let kept =
        f.0.iter()
            .filter(|(k, _)| QUERY_FIELDS.contains(&k.as_str()) && k != "page");
    html! {
        form.job method="post" action={ (url) "/query/job" } {
            (csrf_field(viewer))
            @for (k, v) in kept { input type="hidden" name=(k) value=(v); }
            button type="submit" { (label) }
        }
    }
}

/// The query of `f` in words, part by part (what the job or a download runs).
pub(super) fn query_shown(f: &FormData) -> Markup {
    match query_in_words(f) {
        Ok(parts) => html! {
            dl.facts #query-object { @for (k, v) in parts { dt { (k) } dd { code { (v) } } } }
        },
        Err(e) => html! { p #query-object { (e.messages().join(" ")) } },
    }
}

pub(super) async fn get_query(
    req: HttpRequest,
    state: web::Data<AppState>,
    Page { viewer, pass }: Page<OnDataset<Read>>,
) -> PageResult {
    let asked = read_form(&state, &pass, &req)?;
    let format = match asked.f.get("action").unwrap_or("preview") {
        "csv" => (OutputFormat::Csv, "csv"),
        "parquet" => (OutputFormat::Parquet, "parquet"),
        "arrow" => (OutputFormat::Arrow, "arrows"),
        "job" => return Ok(ok(confirm_job(&viewer, &asked))),
        _ => {
            let shown = preview(&state, pass, &asked).await?;
            return Ok(ok(builder_page(&viewer, &asked, shown)));
        }
    };
    download(&state, &viewer, pass, &asked, format).await
}

/// "Run this query as a job": the query the form holds, and the POST that starts it.
fn confirm_job(viewer: &Viewer, asked: &Asked) -> Markup {
    let back = format!("{}/query?{}", asked.url, query_string(&asked.f, None));
    let body = html! {
        p { "This job runs the query below over version " (asked.version) " and writes every row of its answer to a CSV file you can download from the job's page." }
        (query_shown(&asked.f))
        (job_form(viewer, &asked.url, &asked.f, "Run the job"))
        p { a href=(back) { "Back to the query (change it)" } }
    };
    page(viewer, "Run this query as a job", body)
}

/// The page of the answer the form asks for, and its total, or why the query was refused.
async fn preview(
    state: &AppState,
    pass: DatasetPass<Read>,
    asked: &Asked,
) -> Result<Result<Markup, Vec<String>>, PageError> {
    let window = Window::of(&asked.f)?;
    let grouped = !asked.f.all("group").is_empty();
    // Facets are picked from the version's profile, which is refused (403) to a subject under a
    // policy (it is over every row): then the page has no facets.
    let facet_columns = match state.engine.profile(&pass, Some(asked.version)) {
        Ok(profile) => facets::columns(&profile, &asked.f),
        Err(e) if e.kind == rapid_actors::error::ErrorKind::Forbidden => vec![],
        Err(e) => return Err(e.into()),
    };
    let mut queries = vec![
        page_body(&asked.f, &window, &asked.columns),
        count_body(&asked.f),
    ];
    queries.extend(facet_columns.iter().map(|c| facets::body(&asked.f, c)));
    let read = (Some(asked.version), asked.at.clone());
    // One call, one commit: the page, its count and the facets all read the same rows.
    let (answers, _commit) = state
        .engine
        .query_tables(pass, read.0, read.1, queries)
        .await;
    let mut answers = answers.into_iter();
    let rows = answers.next().unwrap_or_else(|| Ok(Default::default()));
    let counted = answers.next().and_then(Result::ok);
    let facets: Vec<(String, rapid_actors::engine::Table)> = facet_columns
        .into_iter()
        .zip(answers)
        .filter_map(|(c, a)| Some((c, a.ok()?)))
        .collect();
    let total = total_of(grouped, counted.as_ref(), window.limit);
    let (f, shown) = (&asked.f, (asked.url.as_str(), asked.columns.as_slice()));
    Ok(match rows {
        Ok(rows) => Ok(html! {
            (facets::section(f, &asked.url, &facets))
            (table(f, shown, &window, &rows, total))
        }),
        Err(e) => Err(PageError::from(e).messages()),
    })
}

fn read_form(
    state: &AppState,
    pass: &DatasetPass<Read>,
    req: &HttpRequest,
) -> Result<Asked, PageError> {
    let record = pass.record();
    let f = FormData::parse(req.query_string().as_bytes())?;
    let asked = f.get("version").and_then(|v| v.parse::<i64>().ok());
    let version = state.engine.page_version(pass, asked)?;
    let schema = state.engine.schema(pass, Some(version))?.into_schema();
    let columns: Vec<String> = schema.columns.into_iter().map(|c| c.name).collect();
    let key = record.key();
    let at = as_of(&f)?;
    let commit = match at {
        AsOf::Commit(n) => Some(n),
        _ => None,
    };
    let table = table_name(
        [&key.layer, &key.domain, &key.dataset],
        version,
        record.latest_version(),
        commit,
    );
    let rows_elsewhere = state.engine.rows_elsewhere(pass, version)?;
    let sql = view_sql(&f, &table, &columns);
    Ok(Asked {
        sql,
        rows_elsewhere,
        version,
        latest: record.latest_version(),
        columns,
        url: base(record),
        title: format!("Query {}", record.name()),
        stem: format!("{}-{}-{}-v{version}", key.layer, key.domain, key.dataset),
        at,
        f,
    })
}

/// The whole answer as a file named after the dataset and the time; a refused query shows the
/// builder with the reasons and, the answer being too large or slow, a one-click job.
async fn download(
    state: &AppState,
    viewer: &Viewer,
    pass: DatasetPass<Read>,
    asked: &Asked,
    (format, ext): (OutputFormat, &str),
) -> PageResult {
    let body = ordered_whole_query(&asked.f, &asked.columns)?;
    let when = crate::web::format::utc_stamp(rapid_actors::auth::now_seconds());
    let name = format!("{}-{when}.{ext}", asked.stem);
    let index = asked.f.get("index").is_some() || format != OutputFormat::Csv;
    let (version, at) = (Some(asked.version), asked.at.clone());
    match state
        .engine
        .query_request(pass, version, at, body, format)
        .await
    {
        Ok((content_type, bytes, _commit)) => Ok(crate::web::page::secure(
            HttpResponse::Ok()
                .content_type(content_type)
                .insert_header((
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{name}\""),
                ))
                .body(match index {
                    true => bytes,
                    false => without_index(&bytes),
                }),
        )),
        Err(e) => Ok(ok(builder_page(
            viewer,
            asked,
            Err(PageError::from(e).messages()),
        ))),
    }
}

fn builder_page(viewer: &Viewer, asked: &Asked, shown: Result<Markup, Vec<String>>) -> Markup {
    let body = html! {
        p { a href={ (asked.url) "?version=" (asked.version) } { "Back to the dataset" } " · " a #sql-link href=(crate::web::sql::sql_link(&asked.sql)) { "Ask in SQL" } " · reading schema version " strong { (asked.version) } " of " (asked.latest) @if let AsOf::Commit(n) = asked.at { " as of " strong #as-of { "commit " (n) } " (" a href={ (asked.url) "/query?version=" (asked.version) "&action=preview" } { "the current rows" } ")" } @if shown.is_ok() { " · " a href="#preview-heading" { "Skip to the rows" } } }
        @if let Some((v, rows)) = asked.rows_elsewhere {
            div.alert.warn #version-empty role="status" {
                p { "Version " (asked.version) " has no rows: a new schema version starts empty. The rows are in " a href={ (asked.url) "/query?version=" (v) "&action=preview" } { "version " (v) } " (" (crate::web::format::count(rows.max(0) as u64)) " rows)." }
            }
        }
        details #view-sql-box { summary { "This view in SQL" } pre.query #view-sql { (asked.sql) } }
        @if let Err(m) = &shown {
            (errors(m))
            @if m.iter().any(|m| m.contains("as a job")) { div.card.offer {
                p { "Too large or too slow to answer here? A job writes the whole answer to a file." }
                (job_form(viewer, &asked.url, &asked.f, "Run this query as a job"))
            } }
        }
        details.builder open {
            summary { "The query (columns, filter, groups, order, limit)" }
            (builder(asked))
        }
        @if let Ok(table) = &shown { (table) }
    };
    page(viewer, &asked.title, body)
}

/// The query as a job: then its page, which follows it to the download link and shows the
/// query it runs.
pub(super) async fn post_query_job(
    req: HttpRequest,
    state: web::Data<AppState>,
    Posted { pass, form: f, .. }: Posted<OnDataset<Read>>,
) -> PageResult {
    let asked = f.get("version").and_then(|v| v.parse::<i64>().ok());
    let version = state.engine.page_version(&pass, asked)?;
    let stored = state.engine.schema(&pass, Some(version))?.into_schema();
    let stored: Vec<String> = stored.columns.into_iter().map(|c| c.name).collect();
    let query = ordered_whole_query(&f, &stored)?;
    let origin = state.link_origin(&req);
    let (job_id, _commit) = state
        .engine
        .start_large_query_request(pass, Some(version), as_of(&f)?, query, &origin)
        .await?;
    sessions(&req).remember_job_query(&job_id, query_string(&f, None));
    Ok(see_other(&format!("/jobs/{job_id}")))
}
