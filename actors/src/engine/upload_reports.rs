//! What an upload leaves besides its commit: a refused upload's problem report and a
//! quarantining upload's rejected rows, kept as results with signed links and recorded on the
//! job (docs/API.md, "Upload feedback").

use std::path::PathBuf;

use super::{QuarantineOutcome, UploadTarget};
use crate::error::{Error, ReportLinks, Result};
use crate::ingest::{messages, parquet_path, quarantine_path, report_path, OnError, StagedOutput};
use crate::jobs::JobReport;
use crate::storage::keys::result_key;
use crate::storage::StagedObject;

impl UploadTarget {
    /// Fails the job of an upload refused with `e`; a validation refusal's report (when it
    /// wrote one) is kept first and linked from the job and from `e`.
    pub(super) async fn refused(&self, job_id: &str, mut e: Error) -> Result<Error> {
        let jobs = &self.engine.jobs;
        let Some(found) = e.report.as_deref_mut() else {
            jobs.fail(job_id, &messages(&e))?;
            return Ok(e);
        };
        let report = report_path(&self.engine.storage.staged_data(job_id));
        found.links = self.keep_report(job_id, report).await;
        let job_report = JobReport {
            url: found.links.as_ref().map(|l| l.csv.clone()),
            rows_rejected: found.rows_rejected as i64,
            quarantine_url: None,
        };
        jobs.fail_with_report(job_id, &messages(&e), &job_report)?;
        Ok(e)
    }

    /// Keeps a refused upload's whole report (when validation wrote one), as the results
    /// `{job_id}-problems.csv` and `.parquet`, kept and expiring like large-query results; their
    /// signed links.
    async fn keep_report(&self, job_id: &str, report: PathBuf) -> Option<ReportLinks> {
        if !report.is_file() {
            return None;
        }
        let files = [
            (parquet_path(&report), format!("{job_id}-problems.parquet")),
            (report, format!("{job_id}-problems.csv")),
        ];
        let links = self.keep_results(job_id, files).await?;
        Some(ReportLinks {
            csv: links[1].clone(),
            parquet: links[0].clone(),
        })
    }

    /// Keeps staged files as results named as given (the last one is written last), kept and
    /// expiring like large-query results; their signed links, or `None` when they could not be
    /// stored (logged: the upload's outcome does not depend on them).
    async fn keep_results<const N: usize>(
        &self,
        job_id: &str,
        files: [(PathBuf, String); N],
    ) -> Option<[String; N]> {
        let engine = &self.engine;
        let names = files.clone().map(|(_, name)| name);
        let objects: Vec<StagedObject> = files
            .into_iter()
            .map(|(staged, name)| StagedObject {
                staged,
                key: result_key(&name),
            })
            .collect();
        let store = engine.storage.objects().clone();
        let put = tokio::task::spawn_blocking(move || store.put(&objects)).await;
        if let Err(e) = put
            .map_err(|e| Error::internal(e.to_string()))
            .and_then(|r| r)
        {
            tracing::warn!(job_id, error = %e.report(), "could not keep an upload's report");
            return None;
        }
        let ttl = engine.settings.result_ttl_seconds;
        Some(names.map(|name| engine.auth.result_link(&self.link_origin, &name, ttl)))
    }

    /// Keeps a quarantining upload's report and quarantine file and links them from its job.
    pub(super) async fn keep_quarantine(
        &self,
        job_id: &str,
        output: &StagedOutput,
    ) -> Result<Option<QuarantineOutcome>> {
        if self.on_error != OnError::Quarantine {
            return Ok(None);
        }
        let mut outcome = QuarantineOutcome {
            rows_accepted: output.rows,
            rows_rejected: 0,
            report_url: None,
            quarantine_url: None,
        };
        if let Some(q) = output.quarantined {
            let staged = self.engine.storage.staged_data(job_id);
            let files = [(quarantine_path(&staged), format!("{job_id}-quarantine.csv"))];
            let report = self.keep_report(job_id, report_path(&staged)).await;
            outcome.rows_rejected = q.rows_rejected;
            outcome.report_url = report.map(|r| r.csv);
            outcome.quarantine_url = self.keep_results(job_id, files).await.map(|[l]| l);
            let job_report = JobReport {
                url: outcome.report_url.clone(),
                rows_rejected: q.rows_rejected as i64,
                quarantine_url: outcome.quarantine_url.clone(),
            };
            self.engine.jobs.record_report(job_id, &job_report)?;
        }
        Ok(Some(outcome))
    }
}
