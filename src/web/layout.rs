//! The page shell: head, navigation by permission, messages, the sign-out form.

use actix_web::http::StatusCode;
use maud::{html, Markup, DOCTYPE};

use crate::web::session::Viewer;

/// A hidden field carrying the session's CSRF token; every changing form has one.
pub(super) fn csrf_field(viewer: &Viewer) -> Markup {
    html! { input type="hidden" name="csrf" value=(viewer.csrf); }
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · rapid-rs" }
            link rel="icon" type="image/svg+xml" href="/static/favicon.svg";
            link rel="stylesheet" href="/static/app.css";
            script src="/static/app.js" defer {}
        }
    }
}

/// A page for a signed-in viewer: the navigation shows only what it may do.
pub(super) fn page(viewer: &Viewer, title: &str, body: Markup) -> Markup {
    let v = viewer;
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/" { "rapid-rs" }
                    nav aria-label="Main" {
                        ul {
                            li { a href="/" { "Catalogue" } }
                            @if v.can_write_any() { li { a href="/upload" { "Upload" } } }
                            li { a href="/sql" { "SQL" } }
                            li { a href="/jobs" { "Jobs" } }
                            @if v.is_data_admin() {
                                li { a href="/schema/new" { "New schema" } }
                                li { a href="/protected-domains" { "Protected domains" } }
                                li { a href="/webhooks" { "Webhooks" } }
                            }
                            @if v.is_user_admin() { li { a href="/subjects" { "Subjects" } } }
                        }
                    }
                    form.signout method="post" action="/signout" {
                        (csrf_field(viewer))
                        span.who { (v.subject.name) }
                        button type="submit" { "Sign out" }
                    }
                }
                main id="main" tabindex="-1" {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// A page with no navigation (sign-in, password change, errors).
pub(super) fn bare(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                header.top { a.brand href="/" { "rapid-rs" } }
                main id="main" tabindex="-1" {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// Messages for the viewer: errors in a `role=alert` box, so screen readers announce them.
pub(super) fn errors(messages: &[String]) -> Markup {
    html! {
        @if !messages.is_empty() {
            div.alert.error role="alert" {
                @if messages.len() == 1 { p { (messages[0]) } }
                @else { ul { @for m in messages { li { (m) } } } }
            }
        }
    }
}

pub(super) fn notice(message: &str) -> Markup {
    html! { div.alert.ok role="status" { p { (message) } } }
}

fn error_title(status: StatusCode) -> &'static str {
    match status {
        StatusCode::FORBIDDEN => "Not allowed",
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::UNAUTHORIZED => "Not signed in",
        StatusCode::TOO_MANY_REQUESTS => "Too many attempts",
        s if s.is_server_error() => "Server error",
        _ => "That did not work",
    }
}

pub(super) fn error_page(status: StatusCode, messages: &[String]) -> Markup {
    bare(
        error_title(status),
        html! {
            (errors(messages))
            p { "Status " (status.as_u16()) ". " a href="/" { "Back to the catalogue" } }
        },
    )
}

/// A refusal shown to a signed-in viewer: the page with its navigation, the reasons in words.
pub(super) fn refused_to(viewer: &Viewer, status: StatusCode, messages: &[String]) -> Markup {
    let hint = match status {
        StatusCode::FORBIDDEN => {
            "Your permissions do not cover this. An administrator of users can grant them."
        }
        _ => "",
    };
    page(
        viewer,
        error_title(status),
        html! {
            (errors(messages))
            @if !hint.is_empty() { p { (hint) } }
            p { "Status " (status.as_u16()) ". " a href="/" { "Back to the catalogue" } }
        },
    )
}
