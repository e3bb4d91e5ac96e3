//! The SQL page: one SELECT over every dataset the viewer may read, run as `POST /api/sql` runs
//! it (the same read-only gate, query slot, time limit and 100,000-row guard); the answer shown
//! as a table of its first rows, or downloaded whole as CSV. Every dataset's query page links
//! here with that dataset's table filled in.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use rapid_actors::engine::OutputFormat;
use serde_json::{Map, Value};

use crate::auth::AnySubject;
use crate::state::AppState;
use crate::web::backend_reads;
use crate::web::format::{count, number, utc_stamp, words};
use crate::web::guard::Page;
use crate::web::layout::{errors, page};
use crate::web::page::{ok, secure, FormData, PageError, PageResult};

/// Rows of an answer shown on the page; the CSV download has them all.
const SHOWN_ROWS: usize = 500;

/// The link to this page with `sql` filled in.
pub fn sql_link(sql: &str) -> String {
    format!(
        "/sql?{}",
        serde_urlencoded::to_string([("sql", sql)]).unwrap_or_default()
    )
}

fn cell(v: &Value) -> Markup {
    match v {
        Value::Number(n) => html! { td.num { (number(n)) } },
        other => html! { td { (words(other)) } },
    }
}

/// The rows of a JSON answer (`{"0": {column: value, ...}, ...}`, columns in order).
fn answer_table(rows: &Map<String, Value>) -> Markup {
    let columns: Vec<&String> = rows
        .values()
        .next()
        .and_then(Value::as_object)
        .map(|r| r.keys().collect())
        .unwrap_or_default();
    let (total, shown) = (rows.len(), rows.len().min(SHOWN_ROWS));
    html! {
        p #sql-shown {
            @if total == 0 { "No rows." }
            @else if shown < total { "The first " (count(shown as u64)) " of " (count(total as u64)) " rows; the CSV download has them all." }
            @else { (count(total as u64)) @if total == 1 { " row" } @else { " rows" } }
        }
        @if total > 0 {
            div.table-wrap { table #sql-rows {
                thead { tr { @for c in &columns { th scope="col" { (c) } } } }
                tbody { @for row in rows.values().take(SHOWN_ROWS) { tr { @for c in &columns { (cell(row.get(c.as_str()).unwrap_or(&Value::Null))) } } } }
            } }
        }
    }
}

fn sql_form(sql: &str) -> Markup {
    html! {
        p { "Tables are named " code { "\"layer\".\"domain\".\"dataset\"" } " (an older schema version " code { "\"dataset@v1\"" } "); only the datasets you may read exist here. The statement only reads." }
        form method="get" action="/sql" {
            label for="sql" { "One SELECT" }
            textarea #sql name="sql" rows="6" spellcheck="false" required { (sql) }
            div.actions {
                button #sql-run type="submit" name="action" value="run" { "Run" }
                button #sql-csv type="submit" name="action" value="csv" { "Download as CSV" }
            }
        }
    }
}

fn csv_file(bytes: Vec<u8>) -> HttpResponse {
    let name = format!("sql-{}.csv", utc_stamp(rapid_actors::auth::now_seconds()));
    secure(
        HttpResponse::Ok()
            .content_type("text/csv; charset=utf-8")
            .insert_header((
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ))
            .body(crate::web::query_form::without_index(&bytes)),
    )
}

/// `GET /sql?sql=...&action=run|csv`: the form, and the answer when a statement is given.
pub async fn get_sql(
    req: HttpRequest,
    state: web::Data<AppState>,
    Page { viewer, pass }: Page<AnySubject>,
) -> PageResult {
    let f = FormData::parse(req.query_string().as_bytes())?;
    let sql = f.get("sql").unwrap_or("").trim().to_string();
    let csv = f.get("action") == Some("csv");
    let format = if csv {
        OutputFormat::Csv
    } else {
        OutputFormat::Json
    };
    let answer = match sql.is_empty() {
        true => None,
        false => Some(backend_reads::run_sql(&state, &pass, sql.clone(), format).await),
    };
    let shown = match answer {
        None => html! {},
        Some(Ok(bytes)) if csv => return Ok(csv_file(bytes)),
        Some(Ok(bytes)) => match serde_json::from_slice::<Map<String, Value>>(&bytes) {
            Ok(rows) => answer_table(&rows),
            Err(e) => errors(&[format!("The answer could not be read: {e}")]),
        },
        Some(Err(e)) => errors(&PageError::from(e).messages()),
    };
    Ok(ok(page(&viewer, "SQL", html! { (sql_form(&sql)) (shown) })))
}
