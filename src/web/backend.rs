//! The web pages' one door into the engine: every call the pages make goes through the engine
//! facade (`state.engine`) with the permission passes the API's handlers use, minted here from the
//! session's subject by the engine itself; where a handler does more than one engine call, the
//! page shares the handler's helper (`upload::receive_upload`, `upload::read_sample_field`).
//! Kept samples' calls are in `backend_samples`, the reads of rows in `backend_reads`.

use std::net::IpAddr;
use std::sync::Arc;

use actix_web::HttpRequest;
use rapid_actors::auth::pass::{
    AccessKind, AdminPass, DatasetPass, Read, SubjectPass, UserAdminPass,
};
use rapid_actors::auth::permission::{Access, Permission};
use rapid_actors::auth::{NewClient, NewUser, Subject, SubjectView};
use rapid_actors::engine::{
    DatasetEntry, DatasetFilter, DatasetInfo, UploadAccepted, VersionFiles,
};
use rapid_actors::jobs::JobView;
use rapid_actors::key::{DatasetKey, DatasetRecord};
use rapid_actors::schema::Schema;
use rapid_actors::Result;

use crate::auth::Policy;
use crate::state::AppState;

pub fn subject(state: &AppState, subject_id: &str) -> Option<Arc<Subject>> {
    state.auth().snapshot().subjects.get(subject_id).cloned()
}

pub fn is_user_admin(s: &Subject) -> bool {
    s.has(&Permission::UserAdmin)
}

pub fn is_data_admin(s: &Subject) -> bool {
    s.has(&Permission::DataAdmin)
}

/// Whether the subject may write any dataset at all (the upload page is offered only then).
pub fn can_write_any(s: &Subject) -> bool {
    s.permissions.iter().any(|p| p.is_access(Access::Write))
}

/// The pass of policy `P` for `s`, or its refusal in the API's words (minted by the engine).
pub fn require<P: Policy>(state: &AppState, s: &Arc<Subject>) -> Result<P::Pass> {
    P::mint(&state.engine, s.clone())
}

pub(crate) fn subject_pass(state: &AppState, s: &Arc<Subject>) -> SubjectPass {
    state.engine.subject_pass(s.clone())
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
    let auth = state.auth();
    let token = auth.password_token(username, password, addr).await?;
    let subject = auth.authenticate(&token.access_token)?;
    Ok((subject.id.clone(), subject.must_change_password))
}

/// A client's sign-in through the API's throttle; the client id.
pub fn sign_in_client(state: &AppState, id: &str, secret: &str, addr: IpAddr) -> Result<String> {
    let auth = state.auth();
    let token = auth.client_token(id, secret, addr)?;
    Ok(auth.authenticate(&token.access_token)?.id.clone())
}

/// Replaces the password (which also clears the must-change flag of a temporary one).
pub async fn change_password(
    state: &AppState,
    user: &Arc<Subject>,
    current: &str,
    new: &str,
    addr: IpAddr,
) -> Result<()> {
    state
        .auth()
        .change_password(&subject_pass(state, user), current, new, addr)
        .await
}

// ---- catalogue and jobs ----------------------------------------------------------------------

pub fn layers(state: &AppState) -> Vec<String> {
    state.engine.layers().to_vec()
}

/// The enriched listing the API gives this subject (`POST /api/datasets?enriched=true`).
pub fn list_datasets(
    state: &AppState,
    subject: &Arc<Subject>,
    filter: &DatasetFilter,
) -> Result<Vec<DatasetEntry>> {
    state
        .engine
        .list(&subject_pass(state, subject), filter, true)
}

/// The subject's jobs; every job for DATA_ADMIN (as `GET /api/jobs`).
pub fn list_jobs(state: &AppState, subject: &Arc<Subject>) -> Result<Vec<JobView>> {
    state.engine.jobs(&subject_pass(state, subject))
}

/// One job, for its owner or a DATA_ADMIN (as `GET /api/jobs/{id}`).
pub fn job(state: &AppState, subject: &Arc<Subject>, job_id: &str) -> Result<JobView> {
    state.engine.job(&subject_pass(state, subject), job_id)
}

// ---- subjects and protected domains (the caller's USER_ADMIN / DATA_ADMIN pass) ----------------

pub fn list_subjects(state: &AppState, pass: &UserAdminPass) -> Vec<SubjectView> {
    state.auth().list_subjects(pass)
}

pub fn permission_names(state: &AppState, pass: &UserAdminPass) -> Vec<String> {
    state.auth().permission_names(pass)
}

/// A new user; its first sign-in must replace the temporary password (the engine records it).
pub async fn create_user(
    state: &AppState,
    pass: &UserAdminPass,
    username: String,
    email: String,
    permissions: Vec<String>,
) -> Result<NewUser> {
    state
        .auth()
        .create_user(pass, username, email, permissions)
        .await
}

pub async fn create_client(
    state: &AppState,
    pass: &UserAdminPass,
    name: String,
    permissions: Vec<String>,
) -> Result<NewClient> {
    state.auth().create_client(pass, name, permissions).await
}

pub async fn delete_subject(
    state: &AppState,
    pass: &UserAdminPass,
    subject_id: &str,
) -> Result<String> {
    let s = subject(state, subject_id).ok_or_else(|| {
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

pub async fn set_permissions(
    state: &AppState,
    pass: &UserAdminPass,
    subject_id: &str,
    permissions: Vec<String>,
) -> Result<Vec<String>> {
    state
        .auth()
        .set_permissions(pass, subject_id.to_string(), permissions)
        .await
}

pub fn protected_domains(state: &AppState, pass: &AdminPass) -> Vec<String> {
    state.auth().protected_domains(pass)
}

pub async fn create_protected_domain(
    state: &AppState,
    pass: &AdminPass,
    domain: &str,
) -> Result<String> {
    state.auth().create_protected_domain(pass, domain).await
}

pub async fn delete_protected_domain(
    state: &AppState,
    pass: &AdminPass,
    domain: &str,
) -> Result<String> {
    state.auth().delete_protected_domain(pass, domain).await
}

// ---- datasets ----------------------------------------------------------------------------------

/// The dataset named by the request path's `layer`, `domain` and `dataset`: the pass to read (or
/// write) it, minted by the engine as for the API (`crate::auth::DatasetAccess`).
pub fn dataset_access<A: AccessKind>(
    state: &AppState,
    req: &HttpRequest,
    subject: &Arc<Subject>,
) -> Result<DatasetPass<A>> {
    let info = req.match_info();
    let key = DatasetKey::new(
        info.get("layer").unwrap_or_default(),
        info.get("domain").unwrap_or_default(),
        info.get("dataset").unwrap_or_default(),
    );
    dataset_access_to(state, subject, &key)
}

/// The pass to read (or write) the dataset `key`, or why not.
pub fn dataset_access_to<A: AccessKind>(
    state: &AppState,
    subject: &Arc<Subject>,
    key: &DatasetKey,
) -> Result<DatasetPass<A>> {
    state.engine.dataset_pass::<A>(subject.clone(), key)
}

/// Whether `subject` may have `A` access to the dataset `key` (for showing or hiding controls).
pub fn may<A: AccessKind>(state: &AppState, subject: &Arc<Subject>, key: &DatasetKey) -> bool {
    dataset_access_to::<A>(state, subject, key).is_ok()
}

/// The version's schema as the API shows it.
pub fn schema<A: AccessKind>(
    state: &AppState,
    pass: &DatasetPass<A>,
    version: i64,
) -> Result<Schema> {
    Ok(state.engine.schema(pass, Some(version))?.into_schema())
}

/// `GET /api/datasets/.../info` for a version: rows, date ranges, last update.
pub async fn dataset_info(
    state: &AppState,
    pass: &DatasetPass<Read>,
    version: i64,
) -> Result<DatasetInfo> {
    state.engine.info(pass, Some(version)).await
}

/// The version's column profile (its uploads' profiles merged).
pub fn profile(
    state: &AppState,
    pass: &DatasetPass<Read>,
    version: i64,
) -> Result<rapid_actors::profile::ProfileView> {
    state.engine.profile(pass, Some(version))
}

/// The version's raw files (oldest first) and its rows per partition.
pub fn version_files<A: AccessKind>(
    state: &AppState,
    pass: &DatasetPass<A>,
    version: i64,
) -> Result<VersionFiles> {
    state.engine.version_files(pass, version)
}

pub async fn delete_raw_file(
    state: &AppState,
    pass: &DatasetPass<rapid_actors::auth::pass::Write>,
    version: i64,
    filename: &str,
    erase: bool,
) -> Result<()> {
    state
        .engine
        .delete_file(pass, version, filename, erase)
        .await
}

/// Any dataset's record for a DATA_ADMIN (as the API's dataset deletion reaches any dataset).
pub fn find_dataset(state: &AppState, pass: &AdminPass, key: &DatasetKey) -> Result<DatasetRecord> {
    state.engine.dataset(pass, key)
}

/// Deletes the dataset, for a DATA_ADMIN.
pub async fn delete_dataset(state: &AppState, pass: &AdminPass, key: &DatasetKey) -> Result<()> {
    state.engine.delete_dataset(pass, key).await.map(|_| ())
}

/// An upload from the page: the API's own target check, validation and commit job.
pub(crate) async fn upload(
    state: &AppState,
    pass: DatasetPass<rapid_actors::auth::pass::Write>,
    version: Option<i64>,
    on_error: rapid_actors::ingest::OnError,
    payload: &mut actix_multipart::Multipart,
) -> Result<UploadAccepted> {
    let target = state
        .engine
        .upload_target(pass, version)?
        .on_error(on_error);
    crate::upload::receive_upload(target, payload).await
}

// ---- schemas (callers mint DATA_ADMIN first) ---------------------------------------------------

/// A place among the schema generations running at once, taken before the sample is read.
pub async fn generation_permit(state: &AppState) -> Result<tokio::sync::OwnedSemaphorePermit> {
    state.generations.acquire().await
}

/// The latest schema of any dataset, for a DATA_ADMIN to edit into its next version.
pub fn latest_schema(state: &AppState, pass: &AdminPass, key: &DatasetKey) -> Result<Schema> {
    Ok(state.engine.latest_schema(pass, key)?.into_schema())
}

/// Stores a schema: version 1 of a new dataset, or (`update`) the next version of an existing one.
pub async fn save_schema(
    state: &AppState,
    pass: &AdminPass,
    schema: &Schema,
    update: bool,
) -> Result<i64> {
    if update {
        let stored = state.engine.update_schema(pass, schema).await?;
        Ok(stored.version().unwrap_or_default())
    } else {
        state.engine.create_schema(pass, schema).await?;
        Ok(1)
    }
}

/// Each version's rows in its current commit, newest first: which versions hold data.
pub fn rows_per_version<A: AccessKind>(
    state: &AppState,
    pass: &DatasetPass<A>,
) -> Result<Vec<(i64, i64)>> {
    let latest = pass.record().latest_version();
    let mut out = vec![];
    for v in (1..=latest).rev().take(50) {
        let files = state.engine.version_files(pass, v)?;
        out.push((v, files.live.values().sum()));
    }
    Ok(out)
}

/// The first `budget` bytes of a job's problem report, from its signed link (`report_url`, the
/// job already checked as the viewer's), and whether the report went on past them; `None` when
/// the link is not one of ours or no longer valid.
pub async fn problem_report(state: &AppState, url: &str, budget: usize) -> Option<(Vec<u8>, bool)> {
    use futures_util::StreamExt;
    let rest = url.split("/api/results/").nth(1)?;
    let (name, query) = rest.split_once('?')?;
    let param = |k: &str| {
        let found = query
            .split('&')
            .find_map(|p| p.strip_prefix(&format!("{k}=")[..]));
        found.map(str::to_string)
    };
    let expires = param("expires")?.parse::<i64>().ok()?;
    let signature = param("signature")?;
    let mut stream = state.engine.result(name, expires, &signature).await.ok()?;
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.ok()?;
        if bytes.len() + chunk.len() > budget {
            bytes.extend_from_slice(&chunk[..budget - bytes.len()]);
            return Some((bytes, true));
        }
        bytes.extend_from_slice(&chunk);
    }
    Some((bytes, false))
}

/// One job (as [`job`]) and the first `budget` bytes of its problem report, if it has one.
pub async fn job_and_report(
    state: &AppState,
    subject: &Arc<Subject>,
    job_id: &str,
    budget: usize,
) -> Result<(JobView, Option<(Vec<u8>, bool)>)> {
    let found = job(state, subject, job_id)?;
    let report = match &found.report_url {
        Some(url) => problem_report(state, url, budget).await,
        None => None,
    };
    Ok((found, report))
}

/// Every rule the schema breaks, as storing it would say, without storing it (the API's own
/// validation, with this instance's layers and protected domains).
pub fn schema_problems(state: &AppState, pass: &AdminPass, schema: &Schema) -> Vec<String> {
    let layers = layers(state);
    let domains: std::collections::BTreeSet<String> =
        protected_domains(state, pass).into_iter().collect();
    let ctx = rapid_actors::schema::SchemaContext {
        layers: &layers,
        protected_domains: &domains,
    };
    match rapid_actors::schema::validate::validate(schema, &ctx) {
        Ok(_) => vec![],
        Err(e) => rapid_actors::ingest::messages(&e),
    }
}
