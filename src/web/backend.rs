//! The web pages' one door into the engine: every call the pages make into auth, the registry and
//! jobs is here, so the engine facade can take them over in one place. The permission checks are
//! the API's own (`crate::auth` policies, `Permission::grants`).

use std::net::IpAddr;
use std::sync::Arc;

use actix_web::{HttpMessage, HttpRequest};
use rapid_actors::auth::permission::{Access, Permission};
use rapid_actors::auth::{NewClient, NewUser, Subject, SubjectView};
use rapid_actors::dataset::manifest::{data_files, raw_files, RawFile};
use rapid_actors::jobs::JobView;
use rapid_actors::registry::{DatasetFilter, DatasetRecord};
use rapid_actors::Result;
use serde_json::Value;

use crate::auth::{DataAdmin, DatasetAccessKind, Policy, UserAdmin};
use crate::state::AppState;

pub fn subject(state: &AppState, subject_id: &str) -> Option<Arc<Subject>> {
    state.auth.snapshot().subjects.get(subject_id).cloned()
}

pub fn is_user_admin(s: &Subject) -> bool {
    UserAdmin::check(s).is_ok()
}

pub fn is_data_admin(s: &Subject) -> bool {
    DataAdmin::check(s).is_ok()
}

/// Whether the subject may write any dataset at all (the upload page is offered only then).
pub fn can_write_any(s: &Subject) -> bool {
    s.permissions.iter().any(|p| p.is_access(Access::Write))
}

/// Policy `P` or its refusal in the API's words.
pub fn require<P: Policy>(s: &Subject) -> std::result::Result<(), String> {
    P::check(s)
}

// ---- sign-in -------------------------------------------------------------------------------

/// A user's sign-in through the API's throttle and hash pool; the user id and whether the
/// temporary password must be replaced first.
pub async fn sign_in_user(
    state: &AppState,
    username: &str,
    password: &str,
    addr: IpAddr,
) -> Result<(String, bool)> {
    let token = state.auth.password_token(username, password, addr).await?;
    let subject = state.auth.authenticate(&token.access_token)?;
    let temporary = has_temporary_password(state, &subject.id)?;
    Ok((subject.id.clone(), temporary))
}

/// A client's sign-in through the API's throttle; the client id.
pub fn sign_in_client(state: &AppState, id: &str, secret: &str, addr: IpAddr) -> Result<String> {
    let token = state.auth.client_token(id, secret, addr)?;
    Ok(state.auth.authenticate(&token.access_token)?.id.clone())
}

pub async fn change_password(
    state: &AppState,
    user_id: &str,
    current: &str,
    new: &str,
    addr: IpAddr,
) -> Result<()> {
    state
        .auth
        .change_password(user_id, current, new, addr)
        .await?;
    clear_temporary_password(state, user_id)
}

// ---- temporary passwords -------------------------------------------------------------------
// Users created with a temporary password that they have not replaced yet. The table is the web
// layer's own; it is created when first needed, so the catalog's migrations are untouched.

const TEMPORARY_TABLE: &str = "CREATE TABLE IF NOT EXISTS web_temporary_passwords (
    subject_id TEXT PRIMARY KEY, created_at TEXT NOT NULL)";

fn with_temporary<R>(
    state: &AppState,
    f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<R>,
) -> Result<R> {
    state.registry.catalog().with(|c| {
        c.execute(TEMPORARY_TABLE, [])?;
        Ok(f(c)?)
    })
}

/// Called when a user is created (API or page): its first sign-in must replace the password.
pub fn mark_temporary_password(state: &AppState, user_id: &str) -> Result<()> {
    let now = chrono::Utc::now().to_rfc3339();
    with_temporary(state, |c| {
        c.execute(
            "INSERT OR REPLACE INTO web_temporary_passwords (subject_id, created_at) VALUES (?1, ?2)",
            rusqlite::params![user_id, now],
        )
        .map(|_| ())
    })
}

/// Called when a user replaces their password (API or page).
pub fn clear_temporary_password(state: &AppState, user_id: &str) -> Result<()> {
    with_temporary(state, |c| {
        c.execute(
            "DELETE FROM web_temporary_passwords WHERE subject_id = ?1",
            [user_id],
        )
        .map(|_| ())
    })
}

fn has_temporary_password(state: &AppState, user_id: &str) -> Result<bool> {
    with_temporary(state, |c| {
        c.query_row(
            "SELECT COUNT(*) FROM web_temporary_passwords WHERE subject_id = ?1",
            [user_id],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
    })
}

// ---- catalogue and jobs ----------------------------------------------------------------------

pub fn layers(state: &AppState) -> Vec<String> {
    state.registry.layers().to_vec()
}

/// The enriched listing the API gives this subject (`POST /api/datasets?enriched=true`).
pub fn list_datasets(
    state: &AppState,
    subject: &Subject,
    filter: &DatasetFilter,
) -> Result<Vec<Value>> {
    rapid_actors::registry::list_datasets(
        state.registry.catalog(),
        &subject.permissions,
        filter,
        true,
    )
}

/// The subject's jobs; every job for DATA_ADMIN (as `GET /api/jobs`).
pub fn list_jobs(state: &AppState, subject: &Subject) -> Result<Vec<JobView>> {
    let all = subject.has(&Permission::DataAdmin);
    state.jobs.list((!all).then_some(subject.id.as_str()))
}

/// One job, for its owner or a DATA_ADMIN (as `GET /api/jobs/{id}`).
pub fn job(state: &AppState, subject: &Subject, job_id: &str) -> Result<JobView> {
    let job = state.jobs.get(job_id)?;
    if job.subject_id != subject.id && !subject.has(&Permission::DataAdmin) {
        return Err(rapid_actors::Error::forbidden(format!(
            "The job {} belongs to another subject",
            job.job_id
        )));
    }
    Ok(job)
}

// ---- subjects and protected domains (callers check USER_ADMIN / DATA_ADMIN first) -------------

pub fn list_subjects(state: &AppState) -> Vec<SubjectView> {
    state.auth.list_subjects()
}

pub fn permission_names(state: &AppState) -> Vec<String> {
    state.auth.permission_names()
}

pub async fn create_user(
    state: &AppState,
    username: String,
    email: String,
    permissions: Vec<String>,
) -> Result<NewUser> {
    let user = state.auth.create_user(username, email, permissions).await?;
    mark_temporary_password(state, &user.user_id)?;
    Ok(user)
}

pub async fn create_client(
    state: &AppState,
    name: String,
    permissions: Vec<String>,
) -> Result<NewClient> {
    state.auth.create_client(name, permissions).await
}

pub async fn delete_subject(state: &AppState, subject_id: &str) -> Result<String> {
    let s = subject(state, subject_id).ok_or_else(|| {
        rapid_actors::Error::not_found(format!("Subject with ID {subject_id} does not exist"))
    })?;
    match s.kind {
        rapid_actors::auth::SubjectKind::User => {
            state.auth.delete_user(s.name.clone(), s.id.clone()).await?
        }
        rapid_actors::auth::SubjectKind::Client => state.auth.delete_client(s.id.clone()).await?,
    }
    Ok(s.name.clone())
}

pub async fn set_permissions(
    state: &AppState,
    subject_id: &str,
    permissions: Vec<String>,
) -> Result<Vec<String>> {
    state
        .auth
        .set_permissions(subject_id.to_string(), permissions)
        .await
}

pub fn protected_domains(state: &AppState) -> Vec<String> {
    state.auth.protected_domains()
}

pub async fn create_protected_domain(state: &AppState, domain: &str) -> Result<String> {
    state.auth.create_protected_domain(domain).await
}

pub async fn delete_protected_domain(state: &AppState, domain: &str) -> Result<String> {
    state.auth.delete_protected_domain(domain).await
}

// ---- datasets ----------------------------------------------------------------------------------

/// The dataset named by the request path's `layer`, `domain` and `dataset`, if `subject` may
/// read (or write) it: the API's own check (`crate::auth::resolve_dataset_access`).
pub fn dataset_access<A: DatasetAccessKind>(
    req: &HttpRequest,
    subject: &Arc<Subject>,
) -> Result<DatasetRecord> {
    req.extensions_mut()
        .insert(crate::auth::Authenticated(subject.clone()));
    crate::auth::resolve_dataset_access::<A>(req).map(|a| a.record)
}

/// Whether `subject` may `access` the dataset (for showing or hiding controls).
pub fn may(subject: &Subject, access: Access, record: &DatasetRecord) -> bool {
    subject.permissions.iter().any(|p| {
        p.grants(
            access,
            record.sensitivity,
            &record.key.layer,
            &record.key.domain,
        )
    })
}

/// The version's schema as the API shows it (rAPId's JSON form).
pub fn schema_json(state: &AppState, record: &DatasetRecord, version: i64) -> Result<Value> {
    let schema = state.registry.schema(&record.key, Some(version))?;
    serde_json::to_value(&schema)
        .map_err(|e| rapid_actors::Error::internal(format!("schema to JSON: {e}")))
}

/// `GET /api/datasets/.../info` for a version: rows, date ranges, last update.
pub async fn dataset_info(state: &AppState, record: &DatasetRecord, version: i64) -> Result<Value> {
    let schema = state.registry.schema(&record.key, Some(version))?;
    rapid_actors::query::info::dataset_info(
        state.registry.catalog(),
        state.registry.storage(),
        record,
        &schema,
        version,
    )
    .await
}

/// Rows per partition path, in path order.
pub type PartitionRows = Vec<(String, i64)>;

/// The version's raw files (oldest first) and its rows per partition.
pub fn files_and_partitions(
    state: &AppState,
    record: &DatasetRecord,
    version: i64,
) -> Result<(Vec<RawFile>, PartitionRows)> {
    state.registry.catalog().with(|c| {
        let raw = raw_files(c, record.id, version)?;
        let mut parts: std::collections::BTreeMap<String, i64> = Default::default();
        for f in data_files(c, record.id, version)? {
            *parts.entry(f.partition_path).or_default() += f.rows;
        }
        Ok((raw, parts.into_iter().collect()))
    })
}

pub async fn delete_raw_file(
    state: &AppState,
    record: &DatasetRecord,
    version: i64,
    filename: &str,
) -> Result<()> {
    crate::routes::datasets::remove_raw_file(state, &record.key, version, filename).await
}

/// Deletes the dataset: callers check DATA_ADMIN first.
pub async fn delete_dataset(state: &AppState, record: &DatasetRecord) -> Result<()> {
    state.registry.delete_dataset(&record.key).await.map(|_| ())
}

/// An upload from the page: the API's own validation and commit job.
pub(crate) async fn upload(
    state: &AppState,
    record: DatasetRecord,
    subject: &Subject,
    version: Option<i64>,
    payload: &mut actix_multipart::Multipart,
) -> Result<crate::routes::datasets::AcceptedUpload> {
    crate::routes::datasets::accept_upload(state, record, subject, version, payload).await
}

/// A dataset by name, without an access check (callers check DATA_ADMIN).
pub fn find_dataset(
    state: &AppState,
    layer: &str,
    domain: &str,
    dataset: &str,
) -> Result<DatasetRecord> {
    state
        .registry
        .find(&rapid_actors::registry::DatasetKey::new(
            layer, domain, dataset,
        ))
}

/// A synchronous query as the API runs it, in `format`.
pub(crate) async fn run_query(
    state: actix_web::web::Data<AppState>,
    record: DatasetRecord,
    version: Option<i64>,
    body: Value,
    format: crate::routes::queries::Format,
) -> Result<(&'static str, Vec<u8>)> {
    let bytes = actix_web::web::Bytes::from(body.to_string());
    crate::routes::queries::run_sync_query(state, record, version, bytes, format).await
}

/// A large-query job as the API starts it; its id.
pub async fn start_large_query(
    state: actix_web::web::Data<AppState>,
    record: DatasetRecord,
    subject: &Subject,
    version: Option<i64>,
    body: Value,
    base: String,
) -> Result<String> {
    let bytes = actix_web::web::Bytes::from(body.to_string());
    crate::routes::queries::start_large_query(state, record, subject, version, bytes, base).await
}

// ---- schemas (callers check DATA_ADMIN first) --------------------------------------------------

/// A place among the schema generations running at once, taken before the sample is read.
pub async fn generation_permit(state: &AppState) -> Result<tokio::sync::OwnedSemaphorePermit> {
    state.generations.acquire().await
}

/// Receives the sample from the page's `file` part and drafts its schema, as the API does.
pub async fn draft_schema(
    state: &AppState,
    target: [String; 4],
    field: actix_multipart::Field,
    filename: &str,
) -> Result<Value> {
    let sample = crate::upload::read_sample_field(
        field,
        filename,
        &state.staging_dir(),
        state.max_upload_bytes,
        state.max_value_bytes,
    )
    .await?;
    let [layer, sensitivity, domain, dataset] = target;
    let draft = crate::routes::schemas::draft_from_sample(
        state,
        layer,
        sensitivity,
        domain,
        dataset,
        None,
        sample,
    )
    .await?;
    serde_json::to_value(&draft)
        .map_err(|e| rapid_actors::Error::internal(format!("schema to JSON: {e}")))
}

/// Stores a schema: version 1 of a new dataset, or (`update`) the next version of an existing one.
pub async fn save_schema(state: &AppState, schema: Value, update: bool) -> Result<i64> {
    let schema: rapid_actors::schema::Schema = serde_json::from_value(schema)
        .map_err(|e| rapid_actors::Error::invalid(format!("Invalid schema: {e}")))?;
    let protected = state.auth.snapshot().protected_domains.clone();
    if update {
        let stored = state.registry.update_schema(&schema, &protected).await?;
        Ok(stored.version().unwrap_or_default())
    } else {
        state.registry.create_schema(&schema, &protected).await?;
        Ok(1)
    }
}
