//! The upload use case, `POST /datasets/{layer}/{domain}/{dataset}`: steps 1 to 5 of the upload
//! path (docs/DESIGN.md, "Upload path"), from resolving the target before the body to the 202,
//! then the hand-over to the dataset's actor for the commit (step 6, `dataset/commit.rs`).

use std::path::PathBuf;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde::Serialize;
use tracing::Instrument;

use super::{pick_version, Engine};
use crate::auth::pass::{DatasetPass, Write};
use crate::catalog::ColumnKeys;
use crate::dataset::{check_before_answer, staged_keys, CommitUpload, StagedUpload};
use crate::error::{Error, ErrorKind, Result};
use crate::file_kind::FileKind;
use crate::ingest::{ingest_stream, messages, Chunk, IngestPlan, OnError, StagedOutput};
use crate::jobs::{JobKind, JobStatus, JobStep, NewJob};
use crate::key::DatasetRecord;
use crate::schema::ValidSchema;
use crate::traced::Traced;

// The upload's report and quarantine, beside it (they read its private fields).
#[path = "upload_reports.rs"]
mod reports;

/// A checked upload destination: the dataset, the version and its schema.
pub struct UploadTarget {
    engine: Engine,
    pass: DatasetPass<Write>,
    version: i64,
    schema: ValidSchema,
    /// Where clients reach the service (`https://host`), for the link to a refused upload's
    /// report; empty: the link is a path.
    link_origin: String,
    on_error: OnError,
}

/// The 202 answer's details (docs/API.md, Uploads and jobs).
#[derive(Debug, Clone, Serialize)]
pub struct UploadAccepted {
    pub original_filename: String,
    pub raw_filename: String,
    pub dataset_version: i64,
    pub status: &'static str,
    pub job_id: String,
    /// A quarantining upload's counts and links (`on_error=quarantine`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub quarantine: Option<QuarantineOutcome>,
}

/// What a quarantining upload stores and keeps apart.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct QuarantineOutcome {
    pub rows_accepted: u64,
    pub rows_rejected: u64,
    /// Every problem (CSV; its Parquet form is the same link ending in `.parquet`).
    pub report_url: Option<String>,
    /// The rejected rows as received, with `_row` and `_problems` (CSV).
    pub quarantine_url: Option<String>,
}

impl Engine {
    /// Step 1: the version to upload to (the latest when absent or 0) and its schema (404).
    pub fn upload_target(
        &self,
        pass: DatasetPass<Write>,
        version: Option<i64>,
    ) -> Result<UploadTarget> {
        let version = pick_version(version, pass.record().latest_version);
        let schema = self.registry.schema(&pass.record().key, Some(version))?;
        Ok(UploadTarget {
            engine: self.clone(),
            pass,
            version,
            schema,
            link_origin: String::new(),
            on_error: OnError::Reject,
        })
    }
}

impl UploadTarget {
    /// Links given with this upload (a refused upload's report) start with `origin`.
    pub fn linking_from(mut self, origin: &str) -> UploadTarget {
        self.link_origin = origin.trim_end_matches('/').to_string();
        self
    }

    /// What rows that break the schema do: refuse the file (the default) or be kept apart.
    pub fn on_error(mut self, on_error: OnError) -> UploadTarget {
        self.on_error = on_error;
        self
    }

    /// Steps 2 to 6: receives the file `filename` from `body`, validates it, answers with the
    /// job that commits it. A body over the upload limit is 413, invalid data 422 (every error).
    pub async fn receive<S>(self, filename: &str, body: S) -> Result<UploadAccepted>
    where
        S: Stream<Item = Result<Bytes>> + Unpin,
    {
        let kind = FileKind::from_filename(filename)?;
        let raw_filename = new_raw_filename(filename, kind);
        let engine = &self.engine;
        let record = self.pass.record().clone();
        let job_id = engine.jobs.create(NewJob {
            kind: JobKind::Upload,
            key: &record.key,
            version: self.version,
            subject_id: &self.pass.subject().id,
            filename: Some(filename),
            raw_filename: Some(&raw_filename),
        })?;
        // The job's span is a child of the request's, so its lines carry the request id too.
        let span = tracing::info_span!("job", job_id = %job_id, kind = "UPLOAD");
        let staging = engine.storage.staging_dir(&job_id);
        let raw_staged = engine.storage.staged_raw(&job_id);
        let received = self
            .validate(&record, &job_id, kind, &staging, &raw_staged, body)
            .instrument(span.clone())
            .await;
        let (output, raw_bytes, file_keys, checked_at) = match received {
            Ok(done) => done,
            Err(e) => {
                let e = self.refused(&job_id, e).await?;
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let quarantine = self.keep_quarantine(&job_id, &output).await?;
        engine.jobs.advance(&job_id, JobStep::Commit)?;
        let upload = StagedUpload {
            job_id: job_id.clone(),
            dataset_id: record.id,
            version: self.version,
            behaviour: self.schema.update_behaviour(),
            raw_staged,
            raw_filename: raw_filename.clone(),
            original_filename: filename.to_string(),
            uploaded_by: self.pass.subject().name.clone(),
            raw_bytes,
            output,
            file_keys,
            checked_at,
        };
        engine.spawn_commit(record, staging, upload, span);
        Ok(UploadAccepted {
            original_filename: filename.to_string(),
            raw_filename,
            dataset_version: self.version,
            status: "Data processing",
            job_id,
            quarantine,
        })
    }

    /// Steps 3 and 4: the staged, valid output, the raw file's size, the staged files' unique
    /// index keys and the manifest generation they were checked against.
    async fn validate<S>(
        &self,
        record: &DatasetRecord,
        job_id: &str,
        kind: FileKind,
        staging: &std::path::Path,
        raw_staged: &std::path::Path,
        body: S,
    ) -> Result<(StagedOutput, u64, Vec<Vec<ColumnKeys>>, Option<i64>)>
    where
        S: Stream<Item = Result<Bytes>> + Unpin,
    {
        let engine = &self.engine;
        let (jobs, job) = (engine.jobs.clone(), job_id.to_string());
        let (staging, raw_staged) = (staging.to_path_buf(), raw_staged.to_path_buf());
        let staged_data = engine.storage.staged_data(job_id);
        let schema = self.schema.clone();
        let max_value_bytes = engine.settings.max_value_bytes;
        let (on_error, profile) = (self.on_error, engine.settings.profile_uploads);
        let durability = engine.storage.durability();
        let ingest = move |rx| {
            std::fs::create_dir_all(&staging)?;
            let progress = move |rows: u64| {
                let _ = jobs.set_progress(&job, rows);
            };
            let plan = IngestPlan {
                schema: &schema,
                staging: &staged_data,
                progress: &progress,
                max_value_bytes,
                on_error,
                profile,
            };
            ingest_stream(kind, rx, &raw_staged, &plan, durability)
        };
        let (output, raw_bytes) =
            stream_to_ingest(body, engine.settings.max_upload_bytes, ingest).await?;
        let (catalog, storage) = (engine.catalog.clone(), engine.storage.clone());
        let (dataset_id, version) = (record.id, self.version);
        let behaviour = self.schema.update_behaviour();
        tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let file_keys = staged_keys(&output)?;
            let read = started.elapsed().as_micros();
            let checked_at = check_before_answer(
                catalog.as_ref(),
                &storage,
                dataset_id,
                version,
                behaviour,
                (&output, &file_keys),
            )?;
            if !output.unique.is_empty() {
                let micros = started.elapsed().as_micros();
                tracing::debug!(read, micros, "unique keys read and checked");
            }
            Ok((output, raw_bytes, file_keys, checked_at))
        })
        .await
        .map_err(|e| Error::internal(format!("unique check task: {e}")))?
    }
}

impl Engine {
    /// Step 6: hands the staged upload to the dataset's actor; the job records the outcome.
    fn spawn_commit(
        &self,
        record: DatasetRecord,
        staging: PathBuf,
        upload: StagedUpload,
        span: tracing::Span,
    ) {
        let (registry, jobs, compactor) = (
            self.registry.clone(),
            self.jobs.clone(),
            self.compactor.clone(),
        );
        let (key, version) = (record.key.clone(), upload.version);
        // Graceful shutdown waits while commits are pending; metrics count what they stored.
        let (pending, commits) = (self.commits.started(), self.commits.clone());
        let stored = (upload.output.rows, upload.raw_bytes);
        actix::spawn(
            async move {
                let _pending = pending;
                let job_id = upload.job_id.clone();
                let outcome = match registry.dataset_actor(&record.key).await {
                    Ok(actor) => actor
                        .send(Traced::new(CommitUpload(upload)))
                        .await
                        .map_err(Error::from)
                        .and_then(|r| r),
                    Err(e) => Err(e),
                };
                if outcome.is_ok() {
                    commits.stored(stored.0, stored.1);
                    compactor.committed(&key, version);
                    // Inside the job's span, itself inside the request's: carries its id.
                    tracing::info!(rows = stored.0, bytes = stored.1, "upload committed");
                }
                if let Err(e) = outcome {
                    tracing::warn!(job_id, error = %e.report(), "upload commit failed");
                    // The actor records its own failures; this covers it being unreachable.
                    if let Ok(job) = jobs.get(&job_id) {
                        if job.status == JobStatus::InProgress {
                            let _ = jobs.fail(&job_id, &messages(&e));
                        }
                    }
                }
                let _ = tokio::fs::remove_dir_all(&staging).await;
            }
            .instrument(span),
        );
    }
}

fn too_large(limit: u64) -> Error {
    Error::new(
        ErrorKind::TooLarge,
        format!("The file is larger than the upload limit of {limit} bytes"),
    )
}

/// Streams `body` into the blocking `ingest` through a bounded channel. Returns what the ingest
/// returned; a body that breaks off or exceeds `limit` fails with that reason instead.
async fn stream_to_ingest<T: Send + 'static, S>(
    mut body: S,
    limit: u64,
    ingest: impl FnOnce(tokio::sync::mpsc::Receiver<Chunk>) -> Result<T> + Send + 'static,
) -> Result<T>
where
    S: Stream<Item = Result<Bytes>> + Unpin,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(8);
    let task = tokio::task::spawn_blocking(move || ingest(rx));
    let mut received: u64 = 0;
    let mut body_error: Option<Error> = None;
    let mut parser_gone = false;
    while let Some(chunk) = body.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                body_error = Some(e);
                break;
            }
        };
        received += chunk.len() as u64;
        if received > limit {
            body_error = Some(too_large(limit));
            break;
        }
        // Once the parser has stopped (it found the header wrong, say), the rest of the body is
        // still read, and dropped, so the client gets the answer instead of a broken pipe.
        if !parser_gone && tx.send(Chunk::Data(chunk)).await.is_err() {
            parser_gone = true;
        }
    }
    if let Some(e) = &body_error {
        let _ = tx.send(Chunk::Abort(e.to_string())).await;
    }
    drop(tx);
    let outcome = task
        .await
        .map_err(|e| Error::internal(format!("ingest task: {e}")))?;
    match body_error {
        Some(e) => Err(e),
        None => outcome,
    }
}

/// A raw file name: UTC timestamp, a random part, the original name made path-safe, its extension.
fn new_raw_filename(original: &str, kind: FileKind) -> String {
    let stem = std::path::Path::new(original)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("upload");
    let mut safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if safe.is_empty() {
        safe.push_str("upload");
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%3fZ");
    let random = &uuid::Uuid::new_v4().simple().to_string()[..8];
    format!("{stamp}-{random}-{safe}.{}", kind.extension())
}
