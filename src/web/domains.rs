//! Protected domains (DATA_ADMIN): list, create, delete with a confirmation step.

use actix_web::web;
use maud::{html, Markup};

use crate::auth::DataAdmin;
use crate::state::AppState;
use crate::web::backend;
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, notice, page};
use crate::web::page::{ok, see_other, PageResult};
use crate::web::session::Viewer;

#[derive(serde::Deserialize)]
pub struct Done {
    #[serde(default)]
    done: String,
}

pub async fn get_domains(
    state: web::Data<AppState>,
    done: web::Query<Done>,
    Page { viewer, pass }: Page<DataAdmin>,
) -> PageResult {
    let domains = backend::protected_domains(&state, &pass);
    let body = domains_body(&viewer, &done.done, &domains);
    Ok(ok(page(&viewer, "Protected domains", body)))
}

fn domains_body(viewer: &Viewer, done: &str, domains: &[String]) -> Markup {
    html! {
        @if !done.is_empty() { (notice(done)) }
        p { "Datasets in a protected domain are readable only with that domain's READ_*_PROTECTED_* permission." }
        @if domains.is_empty() { p.empty { "No protected domains." } }
        ul.plain {
            @for d in domains {
                li {
                    code { (d) } " "
                    form.inline method="post" action={ "/protected-domains/" (d) "/delete" } {
                        (csrf_field(viewer))
                        button.danger type="submit" { "Delete " (d) "…" }
                    }
                }
            }
        }
        h2 { "Add a protected domain" }
        form.narrow method="post" action="/protected-domains" {
            (csrf_field(viewer))
            label for="domain" { "Domain" }
            input id="domain" name="domain" required;
            button type="submit" { "Add" }
        }
    }
}

pub async fn post_domain(
    state: web::Data<AppState>,
    Posted { pass, form, .. }: Posted<DataAdmin>,
) -> PageResult {
    let domain = form.required("domain", "the domain")?;
    let d = backend::create_protected_domain(&state, &pass, &domain).await?;
    Ok(see_other(&format!(
        "/protected-domains?done=Protected+domain+{d}+created"
    )))
}

pub async fn post_delete(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Posted { viewer, pass, form }: Posted<DataAdmin>,
) -> PageResult {
    if form.get("confirm") != Some("yes") {
        let body = html! {
            p { "Delete the protected domain " strong { (path) } "? Its permissions are removed from every subject." }
            form.inline method="post" action={ "/protected-domains/" (path) "/delete" } {
                (csrf_field(&viewer))
                input type="hidden" name="confirm" value="yes";
                button.danger type="submit" { "Yes, delete " (path) }
            }
            " " a href="/protected-domains" { "Cancel" }
        };
        return Ok(ok(page(&viewer, "Delete a protected domain?", body)));
    }
    let d = backend::delete_protected_domain(&state, &pass, &path).await?;
    Ok(see_other(&format!(
        "/protected-domains?done=Protected+domain+{d}+deleted"
    )))
}
