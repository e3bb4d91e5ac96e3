//! Webhook subscriptions (DATA_ADMIN): the list with each one's delivery counts, a new
//! subscription (its secret shown once), one subscription's newest deliveries with a
//! "send again" button, and removal with a confirmation step.

use actix_web::web;
use maud::{html, Markup};
use rapid_actors::engine::WebhookView;
use rapid_actors::events::EVENT_TYPES;

use crate::auth::DataAdmin;
use crate::state::AppState;
use crate::web::guard::{Page, Posted};
use crate::web::layout::{csrf_field, errors, notice, page};
use crate::web::page::{html as render, ok, see_other, PageError, PageResult};
use crate::web::session::Viewer;

pub(super) async fn get_webhooks(
    state: web::Data<AppState>,
    done: web::Query<crate::web::done::Done>,
    Page { viewer, pass }: Page<DataAdmin>,
) -> PageResult {
    let said = done.said(&viewer);
    let hooks = with_counts(&state, &pass)?;
    let body = list_body(&viewer, said, &hooks, None);
    Ok(ok(page(&viewer, "Webhooks", body)))
}

/// Every subscription with its delivery counts.
fn with_counts(
    state: &AppState,
    pass: &rapid_actors::auth::pass::AdminPass,
) -> Result<Vec<WebhookView>, PageError> {
    let mut hooks = Vec::new();
    for h in state.engine.webhooks(pass)? {
        hooks.push(state.engine.webhook(pass, &h.id)?);
    }
    Ok(hooks)
}

/// What was typed into a refused form.
struct Typed {
    messages: Vec<String>,
    url: String,
}

fn list_body(viewer: &Viewer, done: &str, hooks: &[WebhookView], refused: Option<Typed>) -> Markup {
    let typed_url = refused.as_ref().map_or("", |r| r.url.as_str());
    html! {
        @if !done.is_empty() { (notice(done)) }
        @if let Some(r) = &refused { (errors(&r.messages)) }
        p { "Each change (a commit, a refused upload, a schema or policy change, ...) is sent to the subscribed URLs as a signed CloudEvent (Standard Webhooks headers), retried with backoff for a day; what keeps failing is marked dead and can be sent again." }
        @if hooks.is_empty() { p.empty { "No webhooks." } } @else {
            table #webhooks {
                thead { tr { th { "URL" } th { "Events" } th { "Datasets" } th { "Delivered" } th { "Pending" } th { "Dead" } } }
                tbody {
                    @for h in hooks {
                        @let counts = h.counts.as_ref();
                        tr {
                            td { a href={ "/webhooks/" (h.id) } { (h.url) } }
                            td { (h.events.join(", ")) }
                            td { (h.datasets.join(", ")) }
                            td.num { (counts.map_or(0, |c| c.delivered)) }
                            td.num { (counts.map_or(0, |c| c.pending)) }
                            td.num { (counts.map_or(0, |c| c.dead)) }
                        }
                    }
                }
            }
        }
        h2 { "Subscribe a URL" }
        form.narrow method="post" action="/webhooks" {
            (csrf_field(viewer))
            label for="url" { "Receiver URL" }
            input id="url" name="url" type="url" required value=(typed_url) placeholder="https://hooks.example.com/rapid";
            fieldset {
                legend { "Events" }
                label { input type="checkbox" name="events" value="*" checked; " every event" }
                @for t in EVENT_TYPES { label { input type="checkbox" name="events" value=(t); " " code { (t) } } }
            }
            label for="datasets" { "Datasets (layer/domain/dataset, comma-separated; * for all)" }
            input id="datasets" name="datasets" value="*";
            button type="submit" { "Subscribe" }
        }
    }
}

pub(super) async fn post_webhook(
    state: web::Data<AppState>,
    Posted { viewer, pass, form }: Posted<DataAdmin>,
) -> PageResult {
    let url = form.required("url", "the receiver URL")?;
    let events = form.all("events");
    let datasets: Vec<String> = form
        .get("datasets")
        .unwrap_or("*")
        .split(',')
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .collect();
    let body = serde_json::json!({"url": url, "events": events, "datasets": datasets});
    match state
        .engine
        .create_webhook(&pass, body.to_string().as_bytes())
    {
        Ok(made) => {
            let body = html! {
                (notice("Subscribed. Copy the signing secret now: it is not shown again."))
                p { "Receivers verify each delivery's " code { "webhook-signature" } " with this secret (any Standard Webhooks library)." }
                pre #secret { (made.secret) }
                p { a href={ "/webhooks/" (made.id) } { "See its deliveries" } " · " a href="/webhooks" { "All webhooks" } }
            };
            Ok(ok(page(&viewer, "Webhook created", body)))
        }
        Err(e) => {
            let status = crate::error::status_of(e.kind);
            let messages = PageError::from(e).messages();
            let hooks = with_counts(&state, &pass)?;
            let body = list_body(&viewer, "", &hooks, Some(Typed { messages, url }));
            Ok(render(status, page(&viewer, "Webhooks", body)))
        }
    }
}

pub(super) async fn get_webhook(
    state: web::Data<AppState>,
    path: web::Path<String>,
    done: web::Query<crate::web::done::Done>,
    Page { viewer, pass }: Page<DataAdmin>,
) -> PageResult {
    let hook = state.engine.webhook(&pass, &path)?;
    let said = done.said(&viewer);
    let body = html! {
        @if !said.is_empty() { (notice(said)) }
        dl {
            dt { "URL" } dd { (hook.url) }
            dt { "Events" } dd { (hook.events.join(", ")) }
            dt { "Datasets" } dd { (hook.datasets.join(", ")) }
            dt { "Made by" } dd { (hook.created_by) " at " (hook.created_at) }
        }
        h2 { "Newest deliveries" }
        @let deliveries = hook.deliveries.as_deref().unwrap_or_default();
        @if deliveries.is_empty() { p.empty { "Nothing delivered yet." } } @else {
            table #deliveries {
                thead { tr { th { "Event" } th { "State" } th { "Attempts" } th { "Last answer" } th { "Next attempt / done" } th {} } }
                tbody {
                    @for d in deliveries {
                        tr {
                            td { code { (d.event_id) } }
                            td { span class={ "state " (d.state.to_lowercase()) } { (d.state) } }
                            td.num { (d.attempts) }
                            td { @if let Some(s) = d.last_status { (s) " " } @if let Some(e) = &d.last_error { small { (e) } } }
                            td { (d.next_attempt_at.clone().or(d.done_at.clone()).unwrap_or_default()) }
                            td {
                                form.inline method="post" action={ "/webhooks/" (hook.id) "/redeliver" } {
                                    (csrf_field(&viewer))
                                    input type="hidden" name="event_id" value=(d.event_id);
                                    button type="submit" { "Send again" }
                                }
                            }
                        }
                    }
                }
            }
        }
        form.inline method="post" action={ "/webhooks/" (hook.id) "/delete" } {
            (csrf_field(&viewer))
            button.danger type="submit" { "Remove this webhook…" }
        }
    };
    Ok(ok(page(&viewer, "Webhook", body)))
}

pub(super) async fn post_redeliver(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Posted { viewer, pass, form }: Posted<DataAdmin>,
) -> PageResult {
    let event = form.required("event_id", "the event")?;
    state.engine.redeliver(&pass, &path, &event)?;
    Ok(see_other(&format!(
        "/webhooks/{path}?{}",
        crate::web::done::query(&viewer, &format!("Event {event} will be sent again"))
    )))
}

pub(super) async fn post_delete(
    state: web::Data<AppState>,
    path: web::Path<String>,
    Posted { viewer, pass, form }: Posted<DataAdmin>,
) -> PageResult {
    if form.get("confirm") != Some("yes") {
        let body = html! {
            p { "Remove this webhook? Deliveries still owed to it are dropped." }
            form.inline method="post" action={ "/webhooks/" (path) "/delete" } {
                (csrf_field(&viewer))
                input type="hidden" name="confirm" value="yes";
                button.danger type="submit" { "Yes, remove it" }
            }
            " " a href={ "/webhooks/" (path) } { "Cancel" }
        };
        return Ok(ok(page(&viewer, "Remove a webhook?", body)));
    }
    state.engine.delete_webhook(&pass, &path)?;
    Ok(see_other(&format!(
        "/webhooks?{}",
        crate::web::done::query(&viewer, "Webhook removed")
    )))
}
