//! A job's record and its life as a small state machine (shared: the catalog stores it, the
//! jobs module drives it). Every job starts IN PROGRESS at the first step of its
//! kind and ends SUCCESS or FAILED, once:
//!
//! ```text
//! UPLOAD: IN PROGRESS/VALIDATION -> IN PROGRESS/COMMIT -> SUCCESS/- | FAILED (from either step)
//! QUERY:  IN PROGRESS/RUNNING -> SUCCESS/- (with its result_url) | FAILED
//! COMPACT: IN PROGRESS/RUNNING -> SUCCESS/- | FAILED
//! ```
//!
//! A restart fails every job still IN PROGRESS ([`crate::jobs::Jobs::fail_interrupted`]). The strings
//! on the wire are the ones clients have always seen (docs/API.md, Uploads and jobs).

use serde::Serialize;

use crate::key::DatasetKey;

/// A job as clients see it (docs/API.md, Uploads and jobs), as the catalog stores it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Job))]
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
    /// A refused upload's whole report (every problem, CSV): a signed link.
    pub report_url: Option<String>,
    /// Rows of the file that had problems (a refused upload: at least these many; the report
    /// counts what it could not list).
    pub rows_rejected: i64,
    /// A quarantining upload's rejected rows (CSV, uploadable again once fixed): a signed link.
    pub quarantine_url: Option<String>,
}

/// What an upload's job records about its problems: a refused upload's report, or a
/// quarantining upload's report and quarantine file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobReport {
    pub url: Option<String>,
    pub rows_rejected: i64,
    pub quarantine_url: Option<String>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum JobStatus {
    #[serde(rename = "IN PROGRESS")]
    InProgress,
    #[serde(rename = "SUCCESS")]
    Success,
    #[serde(rename = "FAILED")]
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum JobStep {
    /// An upload being received and validated.
    #[serde(rename = "VALIDATION")]
    Validation,
    /// A valid upload being committed by its dataset's actor.
    #[serde(rename = "COMMIT")]
    Commit,
    /// A large query running.
    #[serde(rename = "RUNNING")]
    Running,
    /// Finished.
    #[serde(rename = "-")]
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum JobKind {
    Upload,
    Query,
    /// Small files of a dataset version merged (on demand; automatic runs record no job).
    Compact,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::InProgress => "IN PROGRESS",
            JobStatus::Success => "SUCCESS",
            JobStatus::Failed => "FAILED",
        }
    }

    pub fn parse(s: &str) -> Option<JobStatus> {
        [JobStatus::InProgress, JobStatus::Success, JobStatus::Failed]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

impl JobStep {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStep::Validation => "VALIDATION",
            JobStep::Commit => "COMMIT",
            JobStep::Running => "RUNNING",
            JobStep::Done => "-",
        }
    }

    pub fn parse(s: &str) -> Option<JobStep> {
        [
            JobStep::Validation,
            JobStep::Commit,
            JobStep::Running,
            JobStep::Done,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }

    /// The step a running job must be at to move to this one (`None`: no job moves here by
    /// [`crate::jobs::Jobs::advance`]; jobs start at their kind's first step and finish at `Done`).
    pub fn comes_after(self) -> Option<JobStep> {
        match self {
            JobStep::Commit => Some(JobStep::Validation),
            JobStep::Validation | JobStep::Running | JobStep::Done => None,
        }
    }
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Upload => "UPLOAD",
            JobKind::Query => "QUERY",
            JobKind::Compact => "COMPACT",
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        [JobKind::Upload, JobKind::Query, JobKind::Compact]
            .into_iter()
            .find(|v| v.as_str() == s)
    }

    /// Where a new job of this kind starts.
    pub fn first_step(self) -> JobStep {
        match self {
            JobKind::Upload => JobStep::Validation,
            JobKind::Query | JobKind::Compact => JobStep::Running,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip() {
        for s in [JobStatus::InProgress, JobStatus::Success, JobStatus::Failed] {
            assert_eq!(JobStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for s in [
            JobStep::Validation,
            JobStep::Commit,
            JobStep::Running,
            JobStep::Done,
        ] {
            assert_eq!(JobStep::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for k in [JobKind::Upload, JobKind::Query, JobKind::Compact] {
            assert_eq!(JobKind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        assert_eq!(JobStatus::parse("DONE"), None);
    }

    #[test]
    fn only_commit_follows_a_step() {
        assert_eq!(JobStep::Commit.comes_after(), Some(JobStep::Validation));
        assert_eq!(JobStep::Running.comes_after(), None);
        assert_eq!(JobKind::Upload.first_step(), JobStep::Validation);
        assert_eq!(JobKind::Query.first_step(), JobStep::Running);
    }
}
