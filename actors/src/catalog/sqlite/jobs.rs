//! Jobs in SQLite.

use rusqlite::{params, OptionalExtension, Row};

use super::SqliteCatalog;
use crate::catalog::interface::{AfterFailing, JobCatalog};
use crate::catalog::{now_text, time_text_before};
use crate::error::Result;
use crate::job_state::{JobKind, JobReport, JobStatus, JobStep, JobView, NewJob};

const COLUMNS: &str = "job_id, kind, status, step, errors, filename, raw_filename, layer, domain, \
                       dataset, version, result_url, rows_processed, created_at, finished_at, subject_id, \
                       report_url, rows_rejected, quarantine_url";

fn errors_text(errors: &[String]) -> String {
    serde_json::to_string(errors).unwrap_or_default()
}

impl JobCatalog for SqliteCatalog {
    fn create_job(&self, job_id: &str, node_id: &str, job: &NewJob<'_>) -> Result<()> {
        self.with(|c| {
            let now = now_text();
            c.execute(
                "INSERT INTO jobs (job_id, kind, status, step, filename, raw_filename, layer, domain,
                                   dataset, version, subject_id, created_at, node_id, heartbeat_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?12)",
                params![
                    job_id,
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
                    now,
                    node_id
                ],
            )?;
            Ok(())
        })
    }

    fn heartbeat_jobs(&self, node_id: &str) -> Result<usize> {
        self.with(|c| {
            Ok(c.execute(
                "UPDATE jobs SET heartbeat_at = ?1 WHERE node_id = ?2 AND status = ?3",
                params![now_text(), node_id, JobStatus::InProgress.as_str()],
            )?)
        })
    }

    fn fail_expired_jobs(&self, lease: std::time::Duration, errors: &[String]) -> Result<usize> {
        self.with(|c| {
            Ok(c.execute(
                "UPDATE jobs SET status = ?1, errors = ?2, finished_at = ?3
                 WHERE status = ?4 AND heartbeat_at < ?5",
                params![
                    JobStatus::Failed.as_str(),
                    errors_text(errors),
                    now_text(),
                    JobStatus::InProgress.as_str(),
                    time_text_before(lease)
                ],
            )?)
        })
    }

    fn advance_job(&self, job_id: &str, from: JobStep, to: JobStep) -> Result<bool> {
        let moved = self.with(|c| {
            Ok(c.execute(
                "UPDATE jobs SET step = ?1 WHERE job_id = ?2 AND status = ?3 AND step = ?4",
                params![
                    to.as_str(),
                    job_id,
                    JobStatus::InProgress.as_str(),
                    from.as_str()
                ],
            )?)
        })?;
        Ok(moved > 0)
    }

    fn set_job_progress(&self, job_id: &str, rows: u64) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET rows_processed = ?1 WHERE job_id = ?2",
                params![rows as i64, job_id],
            )?;
            Ok(())
        })
    }

    fn fail_job(&self, job_id: &str, errors: &[String]) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET status = ?1, errors = ?2, finished_at = ?3 WHERE job_id = ?4 AND status = ?5",
                params![
                    JobStatus::Failed.as_str(),
                    errors_text(errors),
                    now_text(),
                    job_id,
                    JobStatus::InProgress.as_str()
                ],
            )?;
            Ok(())
        })
    }

    fn fail_job_with_report(
        &self,
        job_id: &str,
        errors: &[String],
        report: &JobReport,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET status = ?1, errors = ?2, report_url = ?3, rows_rejected = ?4,
                                 finished_at = ?5
                 WHERE job_id = ?6 AND status = ?7",
                params![
                    JobStatus::Failed.as_str(),
                    errors_text(errors),
                    report.url,
                    report.rows_rejected,
                    now_text(),
                    job_id,
                    JobStatus::InProgress.as_str()
                ],
            )?;
            Ok(())
        })
    }

    fn record_job_report(&self, job_id: &str, report: &JobReport) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE jobs SET report_url = ?1, rows_rejected = ?2, quarantine_url = ?3
                 WHERE job_id = ?4 AND status = ?5",
                params![
                    report.url,
                    report.rows_rejected,
                    report.quarantine_url,
                    job_id,
                    JobStatus::InProgress.as_str()
                ],
            )?;
            Ok(())
        })
    }

    fn succeed_job(&self, job_id: &str) -> Result<()> {
        self.with(|c| {
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
        })
    }

    fn succeed_job_with_url(&self, job_id: &str, result_url: &str) -> Result<()> {
        self.with(|c| {
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

    fn job(&self, job_id: &str) -> Result<Option<JobView>> {
        self.with(|c| {
            Ok(
                c.prepare_cached(&format!("SELECT {COLUMNS} FROM jobs WHERE job_id = ?1"))?
                    .query_row([job_id], read_job)
                    .optional()?,
            )
        })
    }

    fn jobs(&self, subject_id: Option<&str>, limit: usize) -> Result<Vec<JobView>> {
        self.with(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM jobs WHERE ?1 IS NULL OR subject_id = ?1
                 ORDER BY created_at DESC, rowid DESC LIMIT ?2"
            ))?;
            let jobs = stmt
                .query_map(params![subject_id, limit as i64], read_job)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(jobs)
        })
    }

    fn fail_in_progress_jobs(
        &self,
        node_id: &str,
        errors: &[String],
        after: AfterFailing<'_>,
    ) -> Result<usize> {
        // All under the lock: no other catalog write commits until `after` returns.
        self.with(|c| {
            let failed = c.execute(
                "UPDATE jobs SET status = ?1, errors = ?2, finished_at = ?3
                 WHERE status = ?4 AND (node_id = ?5 OR node_id IS NULL)",
                params![
                    JobStatus::Failed.as_str(),
                    errors_text(errors),
                    now_text(),
                    JobStatus::InProgress.as_str(),
                    node_id
                ],
            )?;
            let conn: &rusqlite::Connection = c;
            after(failed, &|| super::manifest::stored_files(conn))?;
            Ok(failed)
        })
    }
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
        report_url: r.get(16)?,
        rows_rejected: r.get(17)?,
        quarantine_url: r.get(18)?,
    })
}
