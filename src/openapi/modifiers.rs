//! Post-processing of the generated document: security schemes, the alias path, bodies that may
//! be left out, and the error answers every operation can give.

use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{
    ClientCredentials, Flow, Http, HttpAuthScheme, OAuth2, Password, Scopes, SecurityScheme,
};
use utoipa::openapi::{Content, Ref, Required, ResponseBuilder};
use utoipa::Modify;

/// The token endpoint, as the `oauth2` scheme names it.
const TOKEN_URL: &str = "/api/oauth2/token";

/// `bearer`: the token from `POST /api/oauth2/token`; `basic`: client credentials at that endpoint;
/// `oauth2`: the same endpoint described as OAuth2 (client credentials, and password for users),
/// so that clients and tools know where tokens come from (its refusals are OAuth2's 400 and 401).
pub(super) struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::builder().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "basic",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Basic)),
        );
        components.add_security_scheme(
            "oauth2",
            SecurityScheme::OAuth2(OAuth2::new([
                Flow::ClientCredentials(ClientCredentials::new(TOKEN_URL, Scopes::new())),
                Flow::Password(Password::new(TOKEN_URL, Scopes::new())),
            ])),
        );
    }
}

/// Paths the router serves twice under two names (see src/routes/mod.rs): the second gets a copy
/// of the first's operations, with their own operation ids.
const ALIASES: &[(&str, &str)] = &[("/api/subject/permissions", "/api/subjects/permissions")];

pub(super) struct Aliases;

impl Modify for Aliases {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (alias, canonical) in ALIASES {
            let Some(mut item) = openapi.paths.paths.get(*canonical).cloned() else {
                continue;
            };
            for op in operations(&mut item) {
                op.operation_id = op.operation_id.take().map(|id| format!("{id}_alias"));
                op.description = Some(format!(
                    "The same endpoint as `{canonical}` (the rAPId SDK calls this form)."
                ));
            }
            openapi.paths.paths.insert(alias.to_string(), item);
        }
    }
}

/// Operations whose JSON body may be left out (empty), but is never `null`: the document
/// describes the body's type, this marks it optional.
const OPTIONAL_BODIES: &[&str] = &["list_datasets", "query_dataset", "query_dataset_large"];

pub(super) struct OptionalBodies;

impl Modify for OptionalBodies {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for op in operations(item) {
                let optional = op
                    .operation_id
                    .as_deref()
                    .is_some_and(|id| OPTIONAL_BODIES.contains(&id));
                if let (true, Some(body)) = (optional, op.request_body.as_mut()) {
                    body.required = Some(Required::False);
                }
            }
        }
    }
}

fn operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.patch.as_mut(),
        item.head.as_mut(),
        item.options.as_mut(),
        item.trace.as_mut(),
    ]
    .into_iter()
    .flatten()
}

/// Answers any operation can give, added where an operation does not describe them itself:
/// 400 (a malformed request, path or query parameter), 500 and 503 (heavy work pools full, with
/// `Retry-After`); and for operations that need a token, 401 and 403.
pub(super) struct CommonErrors;

const COMMON: &[(&str, &str)] = &[
    ("400", "Bad request: the message says what is wrong"),
    ("500", "Internal error (details in the server log)"),
    ("503", "Busy: retry after the `Retry-After` seconds"),
];
const WITH_TOKEN: &[(&str, &str)] = &[
    ("401", "Missing, malformed, expired or revoked token"),
    ("403", "The token's subject lacks the permission"),
];

impl Modify for CommonErrors {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for op in operations(item) {
                // No security of its own: the document's default, a bearer token.
                let needs_token = op.security.is_none();
                let extra = if needs_token { WITH_TOKEN } else { &[] };
                for (status, description) in COMMON.iter().chain(extra) {
                    op.responses
                        .responses
                        .entry(status.to_string())
                        .or_insert_with(|| error_response(description).into());
                }
            }
        }
    }
}

pub(super) fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            Content::new(Some(Ref::from_schema_name("ErrorBody"))),
        )
        .build()
}
