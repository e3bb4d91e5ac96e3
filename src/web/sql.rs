//! The SQL page: one SELECT over every dataset the viewer may read, run as `POST /api/sql` runs
//! it (the same read-only gate, query slot, time limit and 100,000-row guard); the answer shown
//! as a table of its first rows, or downloaded whole as CSV. Every dataset's query page links
//! here with that dataset's table filled in.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use rapid_actors::engine::{Cell, OutputFormat, Table};

use crate::auth::AnySubject;
use crate::state::AppState;
use crate::web::format::{count, utc_stamp, words};
use crate::web::guard::Page;
use crate::web::layout::{errors, page};
use crate::web::page::{ok, secure, FormData, PageError, PageResult};

/// Rows of an answer shown on the page; the CSV download has them all.
const SHOWN_ROWS: usize = 500;

/// The link to this page with `sql` filled in.
pub(super) fn sql_link(sql: &str) -> String {
    format!(
        "/sql?{}",
        serde_urlencoded::to_string([("sql", sql)]).unwrap_or_default()
    )
}

fn cell(v: &Cell) -> Markup {
    html! { td.num[v.is_number()] { (words(v)) } }
}

/// The answer's first rows.
fn answer_table(answer: &Table) -> Markup {
    let (total, shown) = (answer.rows.len(), answer.rows.len().min(SHOWN_ROWS));
    html! {
        p #sql-shown {
            @if total == 0 { "No rows." }
            @else if shown < total { "The first " (count(shown as u64)) " of " (count(total as u64)) " rows; the CSV download has them all." }
            @else { (count(total as u64)) @if total == 1 { " row" } @else { " rows" } }
        }
        @if total > 0 {
            div.table-wrap { table #sql-rows {
                thead { tr { @for c in &answer.columns { th scope="col" { (c) } } } }
                tbody { @for row in answer.rows.iter().take(SHOWN_ROWS) { tr { @for v in row { (cell(v)) } } } }
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

/// The engine's refusal in this page's words (the API's speak of a request body).
fn in_page_words(e: rapid_actors::Error) -> Vec<String> {
    let messages = PageError::from(e).messages();
    let body = "The body's sql must be exactly one SELECT (or EXPLAIN) statement";
    let said =
        "Type exactly one SELECT (or an EXPLAIN of one): this page only reads. SHOW, SET and \
                transactions run over the PostgreSQL protocol only (docs/guide.md).";
    let reworded = |m: String| match m.starts_with(body) {
        true => said.to_string(),
        false => m,
    };
    messages.into_iter().map(reworded).collect()
}

/// `GET /sql?sql=...&action=run|csv`: the form, and the answer when a statement is given.
pub(super) async fn get_sql(
    req: HttpRequest,
    state: web::Data<AppState>,
    Page { viewer, pass }: Page<AnySubject>,
) -> PageResult {
    let f = FormData::parse(req.query_string().as_bytes())?;
    let sql = f.get("sql").unwrap_or("").trim().to_string();
    let csv = f.get("action") == Some("csv");
    let shown = match (sql.is_empty(), csv) {
        (true, _) => html! {},
        (false, true) => match state
            .engine
            .sql(&pass, sql.clone(), OutputFormat::Csv)
            .await
        {
            Ok((_, bytes)) => return Ok(csv_file(bytes)),
            Err(e) => errors(&in_page_words(e)),
        },
        (false, false) => match state.engine.sql_table(&pass, sql.clone()).await {
            Ok(answer) => answer_table(&answer),
            Err(e) => errors(&in_page_words(e)),
        },
    };
    Ok(ok(page(&viewer, "SQL", html! { (sql_form(&sql)) (shown) })))
}
