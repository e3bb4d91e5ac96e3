//! A job's life as a small state machine. Every job starts IN PROGRESS at the first step of its
//! kind and ends SUCCESS or FAILED, once:
//!
//! ```text
//! UPLOAD: IN PROGRESS/VALIDATION -> IN PROGRESS/COMMIT -> SUCCESS/- | FAILED (from either step)
//! QUERY:  IN PROGRESS/RUNNING -> SUCCESS/- (with its result_url) | FAILED
//! ```
//!
//! A restart fails every job still IN PROGRESS ([`super::Jobs::fail_interrupted`]). The strings
//! on the wire are the ones clients have always seen (docs/API.md, Uploads and jobs).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum JobStatus {
    #[serde(rename = "IN PROGRESS")]
    InProgress,
    #[serde(rename = "SUCCESS")]
    Success,
    #[serde(rename = "FAILED")]
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
pub enum JobKind {
    Upload,
    Query,
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
    /// [`super::Jobs::advance`]; jobs start at their kind's first step and finish at `Done`).
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
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        [JobKind::Upload, JobKind::Query]
            .into_iter()
            .find(|v| v.as_str() == s)
    }

    /// Where a new job of this kind starts.
    pub fn first_step(self) -> JobStep {
        match self {
            JobKind::Upload => JobStep::Validation,
            JobKind::Query => JobStep::Running,
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
        for k in [JobKind::Upload, JobKind::Query] {
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
