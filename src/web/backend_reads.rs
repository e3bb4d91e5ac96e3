//! The pages' door into the engine for reading rows and history: queries (one at a time, the
//! builder's preview, large-query jobs), SQL, a version's commits and rollback, with the passes
//! [`super::backend`] mints, as the API's handlers call them.

use rapid_actors::auth::pass::{AdminPass, DatasetPass, Read, SubjectPass};
use rapid_actors::engine::OutputFormat;
use rapid_actors::history::AsOf;
use rapid_actors::key::DatasetKey;
use rapid_actors::Result;
use serde_json::Value;

use crate::state::AppState;
use crate::web::backend;

/// A synchronous query as the API runs it, in `format`, over commit `at` of the version.
pub(crate) async fn run_query(
    state: &AppState,
    pass: DatasetPass<Read>,
    (version, at): (Option<i64>, &AsOf),
    body: Value,
    format: OutputFormat,
) -> Result<(&'static str, Vec<u8>)> {
    let bytes = actix_web::web::Bytes::from(body.to_string());
    let (content_type, bytes, _commit) = state
        .engine
        .query(pass, version, at.clone(), bytes, format)
        .await?;
    Ok((content_type, bytes))
}

/// Page `page` of `per_page` commits of `version`, newest first.
pub fn history(
    state: &AppState,
    pass: &DatasetPass<Read>,
    version: i64,
    page: i64,
    per_page: i64,
) -> Result<Vec<rapid_actors::engine::Commit>> {
    state.engine.history(pass, Some(version), page, per_page)
}

/// A new commit of `version` equal to commit `to_commit`, for a DATA_ADMIN; its number.
pub async fn rollback(
    state: &AppState,
    pass: &AdminPass,
    key: &DatasetKey,
    version: i64,
    to_commit: i64,
) -> Result<i64> {
    state
        .engine
        .rollback(pass, key, Some(version), to_commit)
        .await
}

/// One SQL SELECT as `POST /api/sql` runs it, in `format`.
pub(crate) async fn run_sql(
    state: &AppState,
    pass: &SubjectPass,
    sql: String,
    format: OutputFormat,
) -> Result<Vec<u8>> {
    Ok(state.engine.sql(pass, sql, format).await?.1)
}

/// A large-query job as the API starts it; its id.
pub async fn start_large_query(
    state: &AppState,
    pass: DatasetPass<Read>,
    (version, at): (Option<i64>, AsOf),
    body: Value,
    base: &str,
) -> Result<String> {
    let bytes = actix_web::web::Bytes::from(body.to_string());
    let (job_id, _commit) = state
        .engine
        .start_large_query(pass, version, at, bytes, base)
        .await?;
    Ok(job_id)
}

/// What a preview runs: one page of the answer, the count of the answer, and facet counts
/// (each named by its column), every one a JSON query object.
pub(crate) struct PreviewQueries {
    pub page: Value,
    pub count: Value,
    pub facets: Vec<(String, Value)>,
}

/// What came back: the page (or why not), the count and the facets that could be answered.
pub(crate) struct PreviewAnswers {
    pub rows: Result<Vec<u8>>,
    pub count: std::result::Result<Vec<u8>, ()>,
    pub facets: Vec<(String, Vec<u8>)>,
}

/// The preview's queries, run as the API runs queries for the subject of `pass` (the count and
/// the facets only when the page could be answered, each left out when it fails).
pub(crate) async fn preview(
    state: &AppState,
    pass: DatasetPass<Read>,
    (version, at): (i64, &AsOf),
    queries: PreviewQueries,
) -> PreviewAnswers {
    let read = (Some(version), at);
    let (subject, key) = (pass.subject().clone(), pass.record().key().clone());
    let again = || backend::dataset_access_to::<Read>(state, &subject, &key);
    let rows = run_query(state, pass, read, queries.page, OutputFormat::Json).await;
    let mut answers = PreviewAnswers {
        rows: rows.map(|(_, bytes)| bytes),
        count: Err(()),
        facets: vec![],
    };
    if answers.rows.is_err() {
        return answers;
    }
    if let Ok(p) = again() {
        let counted = run_query(state, p, read, queries.count, OutputFormat::Json).await;
        answers.count = counted.map(|(_, bytes)| bytes).map_err(|_| ());
    }
    for (column, body) in queries.facets {
        let Ok(p) = again() else { break };
        if let Ok((_, bytes)) = run_query(state, p, read, body, OutputFormat::Json).await {
            answers.facets.push((column, bytes));
        }
    }
    answers
}
