//! Subjects (USER_ADMIN): users and clients, their permissions as grouped checkboxes, creation
//! (the temporary password or client secret shown once) and deletion with a confirmation step.

use actix_web::http::StatusCode;
use actix_web::web;
use maud::{html, Markup};
use rapid_actors::auth::pass::UserAdminPass;
use rapid_actors::auth::permission::Permission;
use rapid_actors::auth::Subject;

use crate::auth::UserAdmin;
use crate::state::AppState;
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, errors, notice, page};
use crate::web::page::{html as render, ok, see_other, FormData, PageError, PageResult};
use crate::web::session::Viewer;

/// rAPId's grouping: administration, then read, then write permissions.
fn groups(names: &[String]) -> Vec<(&'static str, Vec<&String>)> {
    let pick = |f: &dyn Fn(&str) -> bool| names.iter().filter(|n| f(n)).collect::<Vec<_>>();
    vec![
        ("Administration", pick(&|n| n.ends_with("_ADMIN"))),
        ("Read", pick(&|n| n.starts_with("READ_"))),
        ("Write", pick(&|n| n.starts_with("WRITE_"))),
    ]
}

/// A permission name that may break only after its underscores, never mid-word.
fn breakable(name: &str) -> Markup {
    let parts: Vec<&str> = name.split('_').collect();
    html! { @for (i, p) in parts.iter().enumerate() { @if i > 0 { "_" wbr; } (p) } }
}

/// Checkbox groups named `permissions`, `held` ticked.
fn permission_boxes(
    state: &AppState,
    pass: &UserAdminPass,
    prefix: &str,
    held: &[String],
) -> Markup {
    let names = state.auth().permission_names(pass);
    let snapshot = state.auth().snapshot();
    let meaning = |n: &str| {
        let parsed = Permission::parse(n, snapshot.permission_context());
        parsed.map(|p| p.meaning()).unwrap_or_default()
    };
    html! {
        p.help #perm-help { "Each permission names what it lets the subject do. READ and WRITE permissions cover a sensitivity (PRIVATE includes PUBLIC; PROTECTED is per domain) in every layer or in one layer; a dataset needs one that covers its layer, sensitivity and domain." }
        div.perm-groups {
            @for (title, list) in groups(&names) {
                fieldset.perms {
                    legend { (title) }
                    @for n in list {
                        @let id = format!("{prefix}-{n}");
                        div.check {
                            input type="checkbox" id=(id) name="permissions" value=(n) checked[held.contains(n)];
                            label for=(id) { span.perm-name { (breakable(n)) } small.perm-meaning { (meaning(n)) } }
                        }
                    }
                }
            }
        }
    }
}

fn subjects_page(
    state: &AppState,
    pass: &UserAdminPass,
    viewer: &Viewer,
    messages: &[String],
    done: &str,
    sent: Option<&FormData>,
) -> Markup {
    let subjects = state.auth().list_subjects(pass);
    // After a refusal, the form that was sent keeps what was typed and ticked.
    let typed = |kind: &str, field: &str| {
        sent.filter(|f| f.get("kind").unwrap_or("user") == kind)
            .and_then(|f| f.get(field))
            .unwrap_or("")
            .to_string()
    };
    let ticked = |kind: &str| match sent.filter(|f| f.get("kind").unwrap_or("user") == kind) {
        Some(f) => f.all("permissions"),
        None => vec!["READ_PUBLIC".to_string()],
    };
    let body = html! {
        @if !done.is_empty() { (notice(done)) }
        (errors(messages))
        div.table-wrap {
            table.subjects {
                thead { tr { th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Email" } th scope="col" { "Id" } } }
                tbody {
                    @for s in &subjects {
                        tr {
                            td { a href={ "/subjects/" (s.subject_id) } { (s.subject_name) } }
                            td { (s.kind.as_str()) }
                            td { (s.email.clone().unwrap_or_default()) }
                            td { code { (s.subject_id) } }
                        }
                    }
                }
            }
        }
        div.cards {
            section.card aria-labelledby="new-user" {
                h2 id="new-user" { "New user" }
                form method="post" action="/subjects/new" {
                    (csrf_field(viewer))
                    input type="hidden" name="kind" value="user";
                    label for="user-name" { "User name" }
                    input id="user-name" name="name" required value=(typed("user", "name"));
                    label for="user-email" { "Email" }
                    input id="user-email" name="email" type="email" required value=(typed("user", "email"));
                    (permission_boxes(state, pass, "user", &ticked("user")))
                    button type="submit" { "Create user" }
                }
            }
            section.card aria-labelledby="new-client" {
                h2 id="new-client" { "New client" }
                form method="post" action="/subjects/new" {
                    (csrf_field(viewer))
                    input type="hidden" name="kind" value="client";
                    label for="client-name" { "Client name" }
                    input id="client-name" name="name" required value=(typed("client", "name"));
                    (permission_boxes(state, pass, "client", &ticked("client")))
                    button type="submit" { "Create client" }
                }
            }
        }
    };
    page(viewer, "Subjects", body)
}

pub(crate) async fn get_subjects(
    state: web::Data<AppState>,
    done: web::Query<crate::web::done::Done>,
    Page { viewer, pass }: Page<UserAdmin>,
) -> PageResult {
    Ok(ok(subjects_page(
        &state,
        &pass,
        &viewer,
        &[],
        done.said(&viewer),
        None,
    )))
}

/// A new subject as the page shows it: its kind, name, id and the secret shown once.
struct Created {
    kind: &'static str,
    name: String,
    id: String,
    secret_label: &'static str,
    secret: String,
}

pub(crate) async fn post_new(
    state: web::Data<AppState>,
    Posted { viewer, pass, form }: Posted<UserAdmin>,
) -> PageResult {
    match create(&state, &pass, &form).await? {
        Ok(created) => Ok(render(
            StatusCode::CREATED,
            page(&viewer, "Subject created", created_body(&created)),
        )),
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let m = PageError::from(e).messages();
            Ok(render(
                status,
                subjects_page(&state, &pass, &viewer, &m, "", Some(&form)),
            ))
        }
    }
}

/// The client or user the form asks for (its fields missing: 400 in words; the engine refusing
/// it: the inner error, shown on the subjects page).
async fn create(
    state: &AppState,
    pass: &UserAdminPass,
    form: &FormData,
) -> Result<Result<Created, rapid_actors::Error>, PageError> {
    let permissions = form.all("permissions");
    Ok(match form.get("kind") {
        Some("client") => {
            let name = form.required("name", "the client name")?;
            let made = state.auth().create_client(pass, name, permissions).await;
            made.map(|c| Created {
                kind: "client",
                name: c.client_name,
                id: c.client_id,
                secret_label: "Client secret",
                secret: c.client_secret,
            })
        }
        _ => {
            let name = form.required("name", "the user name")?;
            let email = form.required("email", "the email")?;
            let made = state
                .auth()
                .create_user(pass, name, email, permissions)
                .await;
            made.map(|u| Created {
                kind: "user",
                name: u.username,
                id: u.user_id,
                secret_label: "Temporary password",
                secret: u.temporary_password,
            })
        }
    })
}

fn created_body(c: &Created) -> Markup {
    let Created {
        kind,
        name,
        id,
        secret_label,
        secret,
    } = c;
    html! {
        (notice(&format!("The {kind} {name} has been created.")))
        p.warning { "Copy the " (secret_label.to_lowercase()) " now: it is shown only once." }
        dl.facts.secret {
            @if *kind == "client" {
                dt { "Client id (signs in with the secret)" }
                dd { code id="new-id" { (id) } }
            } @else {
                // A user signs in with its name; the id names it in the API only.
                dt { "User name (signs in with the password)" }
                dd { code id="new-name" { (name) } }
                dt { "User id (for the API's permission routes; not for signing in)" }
                dd { code id="new-id" { (id) } }
            }
            dt { (secret_label) }
            dd { code id="new-secret" { (secret) } }
        }
        p { a href={ "/subjects/" (id) } { "Edit its permissions" } " · " a href="/subjects" { "Back to subjects" } }
    }
}

pub(crate) async fn get_subject(
    state: web::Data<AppState>,
    path: web::Path<String>,
    done: web::Query<crate::web::done::Done>,
    Page { viewer, pass }: Page<UserAdmin>,
) -> PageResult {
    let subject = state
        .auth()
        .snapshot()
        .subjects
        .get(path.as_str())
        .cloned()
        .ok_or_else(|| {
            PageError::Shown(
                StatusCode::NOT_FOUND,
                vec![format!("Subject with ID {path} does not exist")],
            )
        })?;
    let said = done.said(&viewer);
    let body = subject_body(&state, &pass, &viewer, &subject, said);
    Ok(ok(page(&viewer, &subject.name, body)))
}

fn subject_body(
    state: &AppState,
    pass: &UserAdminPass,
    viewer: &Viewer,
    subject: &Subject,
    done: &str,
) -> Markup {
    let held = subject.permission_names();
    html! {
        @if !done.is_empty() { (notice(done)) }
        dl.facts {
            dt { "Type" } dd { (subject.kind.as_str()) }
            dt { "Id" } dd { code { (subject.id) } }
            @if let Some(e) = &subject.email { dt { "Email" } dd { (e) } }
        }
        h2 { "Permissions" }
        form method="post" action={ "/subjects/" (subject.id) "/permissions" } {
            (csrf_field(viewer))
            (permission_boxes(state, pass, "perm", &held))
            button type="submit" { "Save permissions" }
        }
        h2 { "Delete" }
        form method="post" action={ "/subjects/" (subject.id) "/delete" } {
            (csrf_field(viewer))
            button.danger type="submit" { "Delete " (subject.name) "…" }
        }
    }
}

pub(crate) async fn post_permissions(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Posted { viewer, pass, form }: Posted<UserAdmin>,
) -> PageResult {
    let saved = state
        .auth()
        .set_permissions(&pass, path.to_string(), form.all("permissions"))
        .await?;
    let list = if saved.is_empty() {
        "none".to_string()
    } else {
        saved.join(", ")
    };
    Ok(see_other(&format!(
        "/subjects/{path}?{}",
        crate::web::done::query(&viewer, &format!("Permissions saved: {list}"))
    )))
}

pub(crate) async fn post_delete(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Posted { viewer, pass, form }: Posted<UserAdmin>,
) -> PageResult {
    if form.get("confirm") != Some("yes") {
        let name = state
            .auth()
            .snapshot()
            .subjects
            .get(path.as_str())
            .cloned()
            .map(|s| s.name.clone())
            .unwrap_or_default();
        let body = html! {
            p { "Delete " strong { (name) } " (" code { (path) } ")? It can no longer sign in or use its tokens." }
            form.inline method="post" action={ "/subjects/" (path) "/delete" } {
                (csrf_field(&viewer))
                input type="hidden" name="confirm" value="yes";
                button.danger type="submit" { "Yes, delete " (name) }
            }
            " " a href={ "/subjects/" (path) } { "Cancel" }
        };
        return Ok(ok(page(&viewer, "Delete a subject?", body)));
    }
    let name = delete_subject(&state, &pass, &path).await?;
    Ok(see_other(&format!(
        "/subjects?{}",
        crate::web::done::query(&viewer, &format!("{name} has been deleted"))
    )))
}

/// Deletes a user or a client (as the API's two routes), and says whose name it was.
pub(crate) async fn delete_subject(
    state: &AppState,
    pass: &UserAdminPass,
    subject_id: &str,
) -> rapid_actors::Result<String> {
    let s = state
        .auth()
        .snapshot()
        .subjects
        .get(subject_id)
        .cloned()
        .ok_or_else(|| {
            rapid_actors::Error::not_found(format!("Subject with ID {subject_id} does not exist"))
        })?;
    match s.kind {
        rapid_actors::auth::SubjectKind::User => {
            state
                .auth()
                .delete_user(pass, s.name.clone(), s.id.clone())
                .await?
        }
        rapid_actors::auth::SubjectKind::Client => {
            state.auth().delete_client(pass, s.id.clone()).await?
        }
    }
    Ok(s.name.clone())
}
