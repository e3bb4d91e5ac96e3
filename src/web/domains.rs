//! Protected domains (DATA_ADMIN): list, create, delete with a confirmation step.

use actix_web::web;
use maud::{html, Markup};

use crate::auth::DataAdmin;
use crate::state::AppState;
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, errors, notice, page};
use crate::web::page::{html as render, ok, see_other, PageError, PageResult};
use crate::web::session::Viewer;

pub(super) async fn get_domains(
    state: web::Data<AppState>,
    done: web::Query<crate::web::done::Done>,
    Page { viewer, pass }: Page<DataAdmin>,
) -> PageResult {
    let domains = state.auth().protected_domains(&pass);
    let said = done.said(&viewer);
    let body = domains_body(&viewer, said, &domains, None);
    Ok(ok(page(&viewer, "Protected domains", body)))
}

/// A refused domain: its reasons and what was typed, kept in the form.
struct Refused<'a> {
    messages: Vec<String>,
    typed: &'a str,
}

fn domains_body(
    viewer: &Viewer,
    done: &str,
    domains: &[String],
    refused: Option<Refused>,
) -> Markup {
    let typed = refused.as_ref().map_or("", |r| r.typed);
    html! {
        @if !done.is_empty() { (notice(done)) }
        @if let Some(r) = &refused { (errors(&r.messages)) }
        p #protection-rule { "PROTECTED datasets in a protected domain are readable only with that domain's READ_*_PROTECTED_* permission. A PUBLIC or PRIVATE dataset in the same domain is not protected by it: READ_PUBLIC or READ_PRIVATE (and READ_ALL) read it, as in rAPId." }
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
            input id="domain" name="domain" required value=(typed);
            button type="submit" { "Add" }
        }
    }
}

pub(super) async fn post_domain(
    state: web::Data<AppState>,
    Posted { viewer, pass, form }: Posted<DataAdmin>,
) -> PageResult {
    let domain = form.required("domain", "the domain")?;
    match state.auth().create_protected_domain(&pass, &domain).await {
        Ok(d) => Ok(see_other(&format!(
            "/protected-domains?{}",
            crate::web::done::query(&viewer, &format!("Protected domain {d} created"))
        ))),
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let messages = PageError::from(e).messages();
            let domains = state.auth().protected_domains(&pass);
            let refused = Refused {
                messages,
                typed: &domain,
            };
            let body = domains_body(&viewer, "", &domains, Some(refused));
            Ok(render(status, page(&viewer, "Protected domains", body)))
        }
    }
}

pub(super) async fn post_delete(
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
    let d = state.auth().delete_protected_domain(&pass, &path).await?;
    Ok(see_other(&format!(
        "/protected-domains?{}",
        crate::web::done::query(&viewer, &format!("Protected domain {d} deleted"))
    )))
}
