//! Jobs: the persistent record of every upload and large query, polled by clients.
//! Every job ends SUCCESS or FAILED, across restarts too ([`Jobs::fail_interrupted`]).
//! The record and its state machine are in [`crate::job_state`]; the rows in the catalog.

use crate::catalog::SharedCatalog;
use crate::error::{Error, Result};

pub use crate::job_state::{JobKind, JobReport, JobStatus, JobStep, JobView, NewJob};

/// The most jobs a listing returns.
const LIST_LIMIT: usize = 1000;

#[derive(Clone)]
pub struct Jobs {
    catalog: SharedCatalog,
    /// The node (this process) the jobs created here run on.
    node_id: std::sync::Arc<str>,
}

impl Jobs {
    pub fn new(catalog: SharedCatalog, node_id: &str) -> Jobs {
        Jobs {
            catalog,
            node_id: node_id.into(),
        }
    }

    /// This process's node id.
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    pub fn create(&self, job: NewJob<'_>) -> Result<String> {
        let id = uuid::Uuid::new_v4().to_string();
        self.catalog.create_job(&id, &self.node_id, &job)?;
        Ok(id)
    }

    /// Moves a running job to `step` from the step before it (see [`JobStep::comes_after`]);
    /// a job elsewhere (finished, or at another step) is an internal error.
    pub fn advance(&self, job_id: &str, step: JobStep) -> Result<()> {
        let from = step
            .comes_after()
            .ok_or_else(|| Error::internal(format!("no job moves to step {}", step.as_str())))?;
        if !self.catalog.advance_job(job_id, from, step)? {
            return Err(Error::internal(format!(
                "job {job_id} is not at step {} to move to {}",
                from.as_str(),
                step.as_str()
            )));
        }
        Ok(())
    }

    pub fn set_progress(&self, job_id: &str, rows: u64) -> Result<()> {
        self.catalog.set_job_progress(job_id, rows)
    }

    /// Marks a running job FAILED (a finished job stays as it ended).
    pub fn fail(&self, job_id: &str, errors: &[String]) -> Result<()> {
        self.catalog.fail_job(job_id, errors)
    }

    pub fn fail_with_report(
        &self,
        job_id: &str,
        errors: &[String],
        report: &JobReport,
    ) -> Result<()> {
        self.catalog.fail_job_with_report(job_id, errors, report)
    }

    /// Links a running upload's report and quarantine file (its rows kept apart).
    pub fn record_report(&self, job_id: &str, report: &JobReport) -> Result<()> {
        self.catalog.record_job_report(job_id, report)
    }

    pub fn get(&self, job_id: &str) -> Result<JobView> {
        self.catalog
            .job(job_id)?
            .ok_or_else(|| Error::not_found(format!("Could not find job with id {job_id}")))
    }

    /// The jobs of one subject, or of everyone when `subject_id` is `None`; newest first.
    pub fn list(&self, subject_id: Option<&str>) -> Result<Vec<JobView>> {
        self.catalog.jobs(subject_id, LIST_LIMIT)
    }

    /// A finished job with nothing to download (a compaction): SUCCESS.
    pub fn succeed(&self, job_id: &str) -> Result<()> {
        self.catalog.succeed_job(job_id)
    }

    /// A finished large query: SUCCESS with its download link.
    pub fn succeed_with_url(&self, job_id: &str, result_url: &str) -> Result<()> {
        self.catalog.succeed_job_with_url(job_id, result_url)
    }

    /// At start-up: a job of this node still IN PROGRESS was cut off by a crash or a stop.
    pub fn fail_interrupted(&self) -> Result<usize> {
        let errors = ["The job was interrupted by a restart of the service".to_string()];
        self.catalog
            .fail_in_progress_jobs(&self.node_id, &errors, &mut |_, _| Ok(()))
    }

    /// Keeps this node's running jobs alive, and fails any node's whose heartbeat is older than
    /// `lease` (their node died). Runs every third of the lease, on a thread of its own, for
    /// as long as the process lives.
    pub fn start_heartbeat(&self, lease: std::time::Duration) -> Result<()> {
        let jobs = self.clone();
        let every = (lease / 3).max(std::time::Duration::from_millis(100));
        let errors = [format!(
            "The node running this job stopped answering for {} seconds",
            lease.as_secs()
        )];
        std::thread::Builder::new()
            .name("rapid-heartbeat".into())
            .spawn(move || loop {
                std::thread::sleep(every);
                if let Err(e) = jobs.catalog.heartbeat_jobs(&jobs.node_id) {
                    tracing::warn!(error = %e.report(), "job heartbeat failed");
                }
                match jobs.catalog.fail_expired_jobs(lease, &errors) {
                    Ok(0) => {}
                    Ok(n) => tracing::warn!(failed_jobs = n, "failed jobs whose node stopped"),
                    Err(e) => tracing::warn!(error = %e.report(), "failing expired jobs failed"),
                }
            })?;
        Ok(())
    }
}
