//! Every route of the service, in one table. Each handler is thin: extract (permission first),
//! one engine call, render.

pub(crate) mod audit;
pub(crate) mod clients;
pub(crate) mod datasets;
pub(crate) mod events;
pub(crate) mod history;
pub(crate) mod jobs;
pub(crate) mod policies;
pub(crate) mod profiles;
pub(crate) mod protected_domains;
pub(crate) mod queries;
pub(crate) mod schemas;
pub(crate) mod sql;
pub(crate) mod status;
pub(crate) mod subjects;
pub(crate) mod token;
pub(crate) mod users;

use actix_web::web;

/// Builds the router, [`ROUTES`] (the list of what it serves, so the OpenAPI test in
/// tests/api/openapi.rs compares the document with exactly what is routed) and [`is_public`] from
/// one table. Each path is one `web::resource`, so a known path with a wrong method is 405;
/// resources are registered in table order (actix matches the first that fits). A path marked
/// `public` is served without a token.
macro_rules! route_table {
    ($($path:literal => $($public:ident)? { $($method:ident: $handler:path),+ $(,)? }),+ $(,)?) => {
        /// Every API route as (method, path under `/api`), in registration order.
        pub const ROUTES: &[(&str, &str)] = &[$($((stringify!($method), $path)),+),+];

        /// The paths under `/api` marked `public` in the table.
        const PUBLIC: &[&str] = &[$($(public_path!($public, $path),)?)+];

        pub fn configure(cfg: &mut web::ServiceConfig) {
            let mut scope = web::scope("/api");
            $(scope = scope.service(web::resource($path)$(.route(web::$method().to($handler)))+);)+
            cfg.service(scope);
        }
    };
}

/// Only the marker `public` is accepted.
macro_rules! public_path {
    (public, $path:literal) => {
        $path
    };
}

/// Whether `path` is a public route's. A public path with a parameter opens everything under its
/// fixed part (a result link's name is its own authorisation; the router answers 404 to names it
/// does not know, without asking for a token).
pub fn is_public(path: &str) -> bool {
    let Some(under_api) = path.strip_prefix("/api") else {
        return false;
    };
    PUBLIC.iter().any(|p| match p.split_once('{') {
        Some((fixed, _)) => under_api.starts_with(fixed),
        None => under_api == *p,
    })
}

route_table! {
    "/status" => public { get: status::get_status },
    "/layers" => { get: status::list_layers },
    "/ready" => public { get: crate::ops::ready::get_ready },
    "/metrics" => { get: crate::ops::metrics::get_metrics },
    "/oauth2/token" => public { post: token::issue_token },
    "/permissions" => { get: subjects::list_permissions },
    "/permissions/{subject_id}" => { get: subjects::get_subject_permissions },
    "/client" => { post: clients::create_client },
    "/client/{client_id}" => { delete: clients::delete_client },
    "/user" => { post: users::create_user, delete: users::delete_user },
    "/user/password" => { put: users::change_password },
    "/subjects" => { get: subjects::list_subjects },
    "/subjects/permissions" => { put: subjects::set_subject_permissions },
    // The rAPId SDK calls the singular form; both are the same endpoint.
    "/subject/permissions" => { put: subjects::set_subject_permissions },
    "/subjects/{subject_id}/attributes" => { put: policies::set_subject_attributes },
    "/schema" => { post: schemas::create_schema, put: schemas::update_schema },
    "/schema/{layer}/{sensitivity}/{domain}/{dataset}/generate" => {
        post: schemas::generate_schema
    },
    "/schema/{domain}/{dataset}/generate" => { post: schemas::generate_schema_short },
    // After the generate routes, which a three-segment path could also be.
    "/schema/{layer}/{domain}/{dataset}" => { patch: schemas::patch_metadata },
    "/datasets/{layer}/{domain}/{dataset}" => {
        post: datasets::upload_dataset,
        delete: datasets::delete_dataset,
    },
    "/datasets" => { post: queries::list_datasets },
    "/datasets/{layer}/{domain}/{dataset}/info" => { get: queries::get_dataset_info },
    "/datasets/{layer}/{domain}/{dataset}/profile" => { get: profiles::get_profile },
    "/datasets/{layer}/{domain}/{dataset}/policy" => {
        put: policies::put_policy,
        get: policies::get_policy,
        delete: policies::delete_policy,
    },
    "/datasets/{layer}/{domain}/{dataset}/history" => { get: history::get_history },
    "/datasets/{layer}/{domain}/{dataset}/changes" => { get: events::get_changes },
    "/datasets/{layer}/{domain}/{dataset}/rollback" => { post: history::rollback },
    "/datasets/{layer}/{domain}/{dataset}/compact" => { post: datasets::compact_dataset },
    "/datasets/{layer}/{domain}/{dataset}/query" => { post: queries::query_dataset },
    // Before `{version}/{filename}`, which has the same shape.
    "/datasets/{layer}/{domain}/{dataset}/query/large" => { post: queries::query_dataset_large },
    // A result link carries its own signed, expiring authorisation.
    "/results/{name}" => public { get: queries::download_result },
    "/sql" => { post: sql::run_sql },
    "/sql/large" => { post: sql::run_sql_large },
    "/datasets/{layer}/{domain}/{dataset}/{version}/files" => { get: datasets::list_raw_files },
    "/datasets/{layer}/{domain}/{dataset}/{version}/{filename}" => {
        delete: datasets::delete_raw_file
    },
    "/audit" => { get: audit::get_audit },
    "/events" => { get: events::get_events },
    "/webhooks" => { post: events::create_webhook, get: events::list_webhooks },
    "/webhooks/{id}" => { get: events::get_webhook, delete: events::delete_webhook },
    "/webhooks/{id}/redeliver" => { post: events::redeliver },
    "/jobs" => { get: jobs::list_jobs },
    "/jobs/{job_id}" => { get: jobs::get_job },
    "/protected_domains" => { get: protected_domains::list_protected_domains },
    "/protected_domains/{domain}" => {
        post: protected_domains::create_protected_domain,
        delete: protected_domains::delete_protected_domain,
    },
}

#[cfg(test)]
mod tests {
    use super::is_public;

    #[test]
    fn public_routes_are_the_marked_ones() {
        assert!(is_public("/api/status"));
        assert!(is_public("/api/oauth2/token"));
        assert!(is_public("/api/results/a1b2"));
        assert!(!is_public("/api/results"));
        assert!(!is_public("/api/status/more"));
        assert!(!is_public("/api/jobs"));
        assert!(!is_public("/status"));
    }
}
