//! After a schema generated from a sample is saved: the confirmation, which offers to upload that
//! same sample as the dataset's first data (through the upload page's path: validation, job,
//! durability), or, when only part of it was read, the upload page. Only the subject who
//! generated the sample may see or use it; the form is CSRF-checked like every other.

use actix_web::http::StatusCode;
use actix_web::web;
use maud::{html, Markup};

use crate::auth::DataAdmin;
use crate::state::AppState;
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, errors, notice, page, refused_to};
use crate::web::page::{html as render, see_other, PageResult};
use crate::web::sample_store::{self, Gone, Kept};
use crate::web::samples;
use crate::web::session::Viewer;

/// The saved schema's confirmation with its sample's upload button.
fn saved_page(viewer: &Viewer, token: &str, kept: &Kept, messages: &[String]) -> Markup {
    let (layer, domain, dataset, version) = kept.saved.clone().unwrap_or_default();
    let name = format!("{layer}/{domain}/{dataset}");
    page(
        viewer,
        "Schema saved",
        html! {
            (errors(messages))
            (notice(&format!("The schema of {name} has been stored as version {version}.")))
            @if kept.whole {
                form.narrow method="post" action=(format!("/schema/saved/{token}/upload")) {
                    (csrf_field(viewer))
                    p { "The sample " strong { (kept.filename) } " can be this dataset's first data: it is checked against the schema you saved and stored by a job, as an upload from the upload page is." }
                    button #upload-sample type="submit" { "Upload this sample" }
                }
            } @else {
                p #sample-partial { "Only the first 50 MB of " strong { (kept.filename) } " was read to generate the schema, so the sample was not kept whole. "
                    a href=(format!("/upload?dataset={name}")) { "Upload the whole file from the upload page" } "." }
            }
            p { a href=(format!("/datasets/{name}?version={version}")) { "Open the dataset" } " (it has no data until a file is uploaded)." }
        },
    )
}

/// A sample that cannot be used, in words, with the way on.
fn gone_page(viewer: &Viewer, gone: Gone) -> actix_web::HttpResponse {
    let status = match gone {
        Gone::Missing => StatusCode::GONE,
        Gone::NotYours => StatusCode::FORBIDDEN,
    };
    let messages = [gone.message().to_string()];
    if gone == Gone::NotYours {
        return render(status, refused_to(viewer, status, &messages));
    }
    let body = html! {
        (errors(&messages))
        p { a href="/upload" { "The upload page" } " · " a href="/schema/new" { "Generate a schema from a new sample" } " · " a href="/" { "The catalogue" } }
    };
    render(status, page(viewer, "The sample is no longer kept", body))
}

/// The viewer's sample `token`, saved into a dataset.
fn saved_sample(state: &AppState, viewer: &Viewer, token: &str) -> Result<Kept, Gone> {
    let root = samples::samples_root(state);
    let kept = sample_store::load(&root, token, &viewer.subject.id)?;
    kept.saved.is_some().then_some(kept).ok_or(Gone::Missing)
}

pub(super) async fn get_saved(
    state: web::Data<AppState>,
    token: web::Path<String>,
    Page { viewer, .. }: Page<DataAdmin>,
) -> PageResult {
    Ok(match saved_sample(&state, &viewer, &token) {
        Ok(kept) => render(StatusCode::OK, saved_page(&viewer, &token, &kept, &[])),
        Err(gone) => gone_page(&viewer, gone),
    })
}

/// Uploads the kept sample; on to its job's page, as after an upload from the upload page.
pub(super) async fn post_upload(
    state: web::Data<AppState>,
    token: web::Path<String>,
    Posted { viewer, .. }: Posted<DataAdmin>,
) -> PageResult {
    let kept = match saved_sample(&state, &viewer, &token) {
        Ok(kept) if kept.whole => kept,
        Ok(_) => return Ok(gone_page(&viewer, Gone::Missing)),
        Err(gone) => return Ok(gone_page(&viewer, gone)),
    };
    match samples::upload_kept(&state, &viewer.subject, &token, &kept).await {
        Ok(accepted) => Ok(see_other(&format!("/jobs/{}", accepted.job_id))),
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let m = crate::web::page::PageError::from(e).messages();
            Ok(render(status, saved_page(&viewer, &token, &kept, &m)))
        }
    }
}
