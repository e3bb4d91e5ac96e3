//! Upload: pick a dataset the viewer may write and a version; the script sends the file with a
//! progress bar (XHR upload events), then follows the job until it ends. A 422 shows its problems
//! by column and rule (counted in its whole report) and lists every validation error it carries.
//! The post carries the session's CSRF token in `X-CSRF-Token`.

use actix_multipart::Multipart;
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use maud::{html, Markup};
use rapid_actors::engine::DatasetFilter;
use rapid_actors::key::DatasetKey;
use serde_json::json;

use crate::auth::Write;
use crate::state::AppState;
use crate::web::guard::{OnDataset, Page, WritesSomewhere};
use crate::web::layout::page;
use crate::web::page::{ok, PageError, PageResult};
use crate::web::posts::{json_answer, ScriptPost};
use crate::web::problems::{groups_table, REPORT_BUDGET};
use crate::web::session::Viewer;

#[derive(serde::Deserialize)]
pub(super) struct Pick {
    #[serde(default)]
    dataset: String,
}

pub(super) async fn get_upload(
    state: web::Data<AppState>,
    pick: web::Query<Pick>,
    Page { viewer, .. }: Page<WritesSomewhere>,
) -> PageResult {
    let writable = writable(&state, &viewer)?;
    Ok(ok(page(
        &viewer,
        "Upload",
        upload_body(&viewer, &pick, &writable),
    )))
}

/// The datasets the viewer may write (`layer/domain/dataset`), each with its latest version.
fn writable(state: &AppState, viewer: &Viewer) -> Result<Vec<(String, i64)>, PageError> {
    let listed = state.engine.list(
        &state.engine.subject_pass(viewer.subject.clone()),
        &DatasetFilter::default(),
        true,
    )?;
    let mut writable = vec![];
    for d in &listed {
        let (l, dm, ds) = (&d.layer, &d.domain, &d.dataset);
        let key = DatasetKey::new(l, dm, ds);
        if let Ok(pass) = state
            .engine
            .dataset_pass::<Write>(viewer.subject.clone(), &key)
        {
            writable.push((format!("{l}/{dm}/{ds}"), pass.record().latest_version()));
        }
    }
    Ok(writable)
}

fn upload_body(viewer: &Viewer, pick: &Pick, writable: &[(String, i64)]) -> Markup {
    html! {
        @if writable.is_empty() { p.empty { "There is no dataset you may write to yet." } }
        @else {
            form #upload-form.narrow method="post" enctype="multipart/form-data" data-csrf=(viewer.csrf) {
                label for="dataset" { "Dataset" }
                select #dataset name="dataset" required {
                    @for (name, latest) in writable {
                        option value=(name) data-latest=(latest) selected[*name == pick.dataset] { (name) " (latest version " (latest) ")" }
                    }
                }
                label for="version" { "Schema version" }
                input #version name="version" type="number" min="1" placeholder="latest" aria-describedby="version-help";
                small #version-help { "Empty: the latest version. Whether rows are appended or replaced is the schema's update behaviour (APPEND or OVERWRITE)." }
                label for="file" { "File (CSV or Parquet)" }
                input #file name="file" type="file" accept=".csv,.parquet" required;
                div.check {
                    input #quarantine name="on_error" type="checkbox" value="quarantine" aria-describedby="quarantine-help";
                    label for="quarantine" { "Store the valid rows, keep the others apart" }
                }
                small #quarantine-help { "Unticked, a file with one bad row is refused whole. Ticked, the valid rows are stored and the rejected ones kept as a file you can fix and upload again." }
                button #upload-button type="submit" { "Upload" }
            }
            div #upload-status.hidden aria-live="polite" {
                label #upload-stage for="upload-progress" { "Sending the file" }
                progress #upload-progress max="100" value="0" {}
                p #upload-message {}
                p #job-link {}
                p #upload-quarantine.hidden {
                    span #quarantine-summary {}
                    span #quarantine-files {
                        " The rejected rows, to fix and upload again: "
                        a #quarantine-csv href="#" download { "CSV" }
                        " · every problem: "
                        a #quarantine-report href="#" download { "CSV" }
                    }
                }
            }
            div #upload-errors.hidden role="alert" {
                h2 { "The file was refused" }
                p #upload-error-summary {}
                p #upload-report.hidden {
                    "Every problem, with its row, column, value and the row's key: "
                    a #report-csv href="#" download { "CSV" }
                    " · "
                    a #report-parquet href="#" download { "Parquet" }
                }
                h3 { "By column and rule" }
                div #upload-groups {}
                details {
                    summary { "Every listed problem" }
                    div.table-wrap { table { thead { tr { th scope="col" { "#" } th scope="col" { "Problem" } } } tbody #upload-error-rows {} } }
                }
            }
            noscript { p.warning { "Uploading from this page needs JavaScript (for the progress bar)." } }
        }
    }
}

/// The script's upload (the viewer may write the dataset of the path): JSON answers, 202 with the
/// job, or the errors in words with the refused file's whole report.
pub(super) async fn post_upload(
    state: web::Data<AppState>,
    query: web::Query<crate::params::UploadQuery>,
    ScriptPost { pass }: ScriptPost<OnDataset<Write>>,
    mut payload: Multipart,
) -> HttpResponse {
    let on_error = query.on_error.into();
    match receive(&state, pass, query.version, on_error, &mut payload).await {
        Ok(a) => json_answer(
            StatusCode::ACCEPTED,
            json!({ "job_id": a.job_id, "raw_filename": a.raw_filename,
                    "version": a.dataset_version, "quarantine": a.quarantine }),
        ),
        Err(e) => refused(&state, e).await,
    }
}

/// A refused upload in JSON: the errors in words, the whole report's count and links, and the
/// problems by column and rule (counted in the report when it is kept).
async fn refused(state: &AppState, e: rapid_actors::Error) -> HttpResponse {
    // A refused upload's whole report: how many rows, and its downloads.
    let report = e.report.as_deref().map(|r| {
        json!({
            "rows_rejected": r.rows_rejected,
            "csv": r.links.as_ref().map(|l| &l.csv),
            "parquet": r.links.as_ref().map(|l| &l.parquet),
        })
    });
    let whole = match e.report.as_deref().and_then(|r| r.links.as_ref()) {
        Some(links) => crate::web::problems::problem_report(state, &links.csv, REPORT_BUDGET).await,
        None => None,
    };
    let status = crate::error::status_of(e.kind);
    let messages = PageError::from(e).messages();
    let groups = groups_table("upload-groups-table", &messages, whole.as_ref());
    json_answer(
        status,
        json!({ "errors": messages, "report": report, "groups_html": groups.into_string() }),
    )
}

/// An upload from the page: the API's own target check, validation and commit job.
async fn receive(
    state: &AppState,
    pass: rapid_actors::auth::pass::DatasetPass<Write>,
    version: Option<i64>,
    on_error: rapid_actors::ingest::OnError,
    payload: &mut actix_multipart::Multipart,
) -> rapid_actors::Result<rapid_actors::engine::UploadAccepted> {
    let target = state
        .engine
        .upload_target(pass, version)?
        .on_error(on_error);
    crate::upload::receive_upload(target, payload).await
}
