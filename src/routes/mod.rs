//! Every route of the service, in one table. Each handler is thin: extract (permission first),
//! one engine call, render.

mod clients;
mod datasets;
mod jobs;
mod protected_domains;
mod queries;
mod schemas;
mod status;
mod subjects;
mod token;
mod users;

use actix_web::web;

/// Routes are grouped by path with `web::resource`, so a known path with a wrong method is 405.
pub fn configure(cfg: &mut web::ServiceConfig) {
    use web::{delete, get, post, put, resource};
    cfg.service(
        web::scope("/api")
            .service(resource("/status").route(get().to(status::get_status)))
            .service(resource("/layers").route(get().to(status::list_layers)))
            .service(resource("/oauth2/token").route(post().to(token::issue_token)))
            .service(resource("/permissions").route(get().to(subjects::list_permissions)))
            .service(
                resource("/permissions/{subject_id}")
                    .route(get().to(subjects::get_subject_permissions)),
            )
            .service(resource("/client").route(post().to(clients::create_client)))
            .service(resource("/client/{client_id}").route(delete().to(clients::delete_client)))
            .service(
                resource("/user")
                    .route(post().to(users::create_user))
                    .route(delete().to(users::delete_user)),
            )
            .service(resource("/user/password").route(put().to(users::change_password)))
            .service(resource("/subjects").route(get().to(subjects::list_subjects)))
            // The rAPId SDK calls the singular form; both are the same endpoint.
            .service(
                resource(["/subjects/permissions", "/subject/permissions"])
                    .route(put().to(subjects::set_subject_permissions)),
            )
            .service(
                resource("/schema")
                    .route(post().to(schemas::create_schema))
                    .route(put().to(schemas::update_schema)),
            )
            .service(
                resource("/schema/{layer}/{sensitivity}/{domain}/{dataset}/generate")
                    .route(post().to(schemas::generate_schema)),
            )
            .service(
                resource("/schema/{domain}/{dataset}/generate")
                    .route(post().to(schemas::generate_schema_short)),
            )
            .service(
                resource("/datasets/{layer}/{domain}/{dataset}")
                    .route(post().to(datasets::upload_dataset))
                    .route(delete().to(datasets::delete_dataset)),
            )
            .service(resource("/datasets").route(post().to(queries::list_datasets)))
            .service(
                resource("/datasets/{layer}/{domain}/{dataset}/info")
                    .route(get().to(queries::get_dataset_info)),
            )
            .service(
                resource("/datasets/{layer}/{domain}/{dataset}/query")
                    .route(post().to(queries::query_dataset)),
            )
            // Before `{version}/{filename}`, which has the same shape.
            .service(
                resource("/datasets/{layer}/{domain}/{dataset}/query/large")
                    .route(post().to(queries::query_dataset_large)),
            )
            .service(resource("/results/{name}").route(get().to(queries::download_result)))
            .service(
                resource("/datasets/{layer}/{domain}/{dataset}/{version}/files")
                    .route(get().to(datasets::list_raw_files)),
            )
            .service(
                resource("/datasets/{layer}/{domain}/{dataset}/{version}/{filename}")
                    .route(delete().to(datasets::delete_raw_file)),
            )
            .service(resource("/jobs").route(get().to(jobs::list_jobs)))
            .service(resource("/jobs/{job_id}").route(get().to(jobs::get_job)))
            .service(
                resource("/protected_domains")
                    .route(get().to(protected_domains::list_protected_domains)),
            )
            .service(
                resource("/protected_domains/{domain}")
                    .route(post().to(protected_domains::create_protected_domain))
                    .route(delete().to(protected_domains::delete_protected_domain)),
            ),
    );
}
