//! Jobs: the persistent record of every upload and large query, polled by clients.
//! Every job ends SUCCESS or FAILED, across restarts too ([`fail_interrupted`]).

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;

use crate::catalog::{now_text, Catalog};
use crate::error::{Error, Result};
use crate::key::DatasetKey;

mod state;

pub use state::{JobKind, JobStatus, JobStep};

/// A job as clients see it (docs/API.md, Uploads and jobs).
#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    pub job_id: String,
    #[serde(rename = "type")]
    pub kind: JobKind,
    pub status: JobStatus,
    pub step: JobStep,
    pub errors: Option<Vec<String>>,
    pub filename: Option<String>,
    pub raw_filename: Option<String>,
    pub layer: String,
    pub domain: String,
    pub dataset: String,
    pub version: i64,
    pub result_url: Option<String>,
    /// Rows read so far (uploads) or written (queries).
    pub rows_processed: i64,
    pub created_at: String,
    pub finished_at: Option<String>,
    #[serde(skip)]
    pub subject_id: String,
}

/// What a new job is about.
pub struct NewJob<'a> {
    pub kind: JobKind,
    pub key: &'a DatasetKey,
    pub version: i64,
    pub subject_id: &'a str,
    pub filename: Option<&'a str>,
    pub raw_filename: Option<&'a str>,
}

#[derive(Clone)]
pub struct Jobs {
    catalog: Catalog,
}

const COLUMNS: &str = "job_id, kind, status, step, errors, filename, raw_filename, layer, domain, \
                       dataset, version, result_url, rows_processed, created_at, finished_at, subject_id";

impl Jobs {
    pub fn new(catalog: Catalog) -> Jobs {
        Jobs { catalog }
    }

    pub fn create(&self, job: NewJob<'_>) -> Result<String> {
        let id = uuid::Uuid::new_v4().to_string();
        self.catalog.with(|c| {
            c.execute(
                "INSERT INTO jobs (job_id, kind, status, step, filename, raw_filename, layer, domain,
                                   dataset, version, subject_id, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    id,
                    job.kind.as_str(),
                    JobStatus::InProgress.as_str(),
                    job.kind.first_step().as_str(),
                    job.filename,
                    job.raw_filename,
                    job.key.layer,
                    job.key.domain,
                    job.key.dataset,
                    job.version,
                    job.subject_id,
                    now_text()
                ],
            )?;
            Ok(())
        })?;
        Ok(id)
    }

    /// Moves a running job to `step` from the step before it (see [`JobStep::comes_after`]);
    /// a job elsewhere (finished, or at another step) is an internal error.
    pub fn advance(&self, job_id: &str, step: JobStep) -> Result<()> {
        let from = step
            .comes_after()
            .ok_or_else(|| Error::internal(format!("no job moves to step {}", step.as_str())))?;
        let moved = self.catalog.with(|c| {
            Ok(c.execute(
                "UPDATE jobs SET step = ?1 WHERE job_id = ?2 AND status = ?3 AND step = ?4",
                params![
                    step.as_str(),
                    job_id,
                    JobStatus::InProgress.as_str(),
                    from.as_str()
                ],
            )?)
        })?;
        if moved == 0 {
            return Err(Error::internal(format!(
                "job {job_id} is not at step {} to move to {}",
                from.as_str(),
                step.as_str()
            )));
        }
        Ok(())
    }

    pub fn set_progress(&self, job_id: &str, rows: u64) -> Result<()> {
        self.catalog.with(|c| {
            c.execute(
                "UPDATE jobs SET rows_processed = ?1 WHERE job_id = ?2",
                params![rows as i64, job_id],
            )?;
            Ok(())
        })
    }

    pub fn fail(&self, job_id: &str, errors: &[String]) -> Result<()> {
        self.catalog.with(|c| fail_in(c, job_id, errors))
    }

    pub fn get(&self, job_id: &str) -> Result<JobView> {
        self.catalog
            .with(|c| {
                Ok(c.query_row(
                    &format!("SELECT {COLUMNS} FROM jobs WHERE job_id = ?1"),
                    [job_id],
                    read_job,
                )
                .optional()?)
            })?
            .ok_or_else(|| Error::not_found(format!("Could not find job with id {job_id}")))
    }

    /// The jobs of one subject, or of everyone when `subject_id` is `None`; newest first.
    pub fn list(&self, subject_id: Option<&str>) -> Result<Vec<JobView>> {
        self.catalog.with(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM jobs WHERE ?1 IS NULL OR subject_id = ?1
                 ORDER BY created_at DESC, rowid DESC LIMIT 1000"
            ))?;
            let jobs = stmt
                .query_map([subject_id], read_job)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(jobs)
        })
    }

    /// A finished large query: SUCCESS with its download link.
    pub fn succeed_with_url(&self, job_id: &str, result_url: &str) -> Result<()> {
        self.catalog.with(|c| {
            c.execute(
                "UPDATE jobs SET status = ?1, step = ?2, result_url = ?3, finished_at = ?4
                 WHERE job_id = ?5 AND status = ?6",
                params![
                    JobStatus::Success.as_str(),
                    JobStep::Done.as_str(),
                    result_url,
                    now_text(),
                    job_id,
                    JobStatus::InProgress.as_str()
                ],
            )?;
            Ok(())
        })
    }

    /// At start-up: a job still IN PROGRESS was cut off by a crash or a stop.
    pub fn fail_interrupted(&self) -> Result<usize> {
        self.catalog.with(|c| {
            Ok(c.execute(
                "UPDATE jobs SET status = ?1, errors = ?2, finished_at = ?3 WHERE status = ?4",
                params![
                    JobStatus::Failed.as_str(),
                    serde_json::json!(["The job was interrupted by a restart of the service"])
                        .to_string(),
                    now_text(),
                    JobStatus::InProgress.as_str()
                ],
            )?)
        })
    }
}

/// Marks a running job FAILED inside a caller's transaction or connection (a finished job
/// stays as it ended).
pub fn fail_in(c: &Connection, job_id: &str, errors: &[String]) -> Result<()> {
    c.execute(
        "UPDATE jobs SET status = ?1, errors = ?2, finished_at = ?3 WHERE job_id = ?4 AND status = ?5",
        params![
            JobStatus::Failed.as_str(),
            serde_json::to_string(errors).unwrap_or_default(),
            now_text(),
            job_id,
            JobStatus::InProgress.as_str()
        ],
    )?;
    Ok(())
}

/// Marks a job SUCCESS inside a caller's transaction, so it commits with the work it reports.
pub fn succeed_in(c: &Connection, job_id: &str) -> Result<()> {
    c.execute(
        "UPDATE jobs SET status = ?1, step = ?2, finished_at = ?3 WHERE job_id = ?4 AND status = ?5",
        params![
            JobStatus::Success.as_str(),
            JobStep::Done.as_str(),
            now_text(),
            job_id,
            JobStatus::InProgress.as_str()
        ],
    )?;
    Ok(())
}

/// A stored name read back through `parse`; a name the code does not know is a corrupt row.
fn parsed<T>(r: &Row<'_>, i: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text: String = r.get(i)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("unknown job state [{text}]").into(),
        )
    })
}

fn read_job(r: &Row<'_>) -> rusqlite::Result<JobView> {
    let errors: Option<String> = r.get(4)?;
    Ok(JobView {
        job_id: r.get(0)?,
        kind: parsed(r, 1, JobKind::parse)?,
        status: parsed(r, 2, JobStatus::parse)?,
        step: parsed(r, 3, JobStep::parse)?,
        errors: errors.and_then(|e| serde_json::from_str(&e).ok()),
        filename: r.get(5)?,
        raw_filename: r.get(6)?,
        layer: r.get(7)?,
        domain: r.get(8)?,
        dataset: r.get(9)?,
        version: r.get(10)?,
        result_url: r.get(11)?,
        rows_processed: r.get(12)?,
        created_at: r.get(13)?,
        finished_at: r.get(14)?,
        subject_id: r.get(15)?,
    })
}
