//! Large-query jobs' admission. A job is asynchronous by nature: a client that asks for one while
//! every large-query slot is taken is given its job (202) and the job waits its turn, in a wait
//! list of `large_queue` places (RAPID_LARGE_QUERY_QUEUE). Only with the list full too is the
//! request refused (503 with Retry-After, after the queue wait). Before, a second job on a
//! 2-core machine (one slot) was refused whenever the first ran longer than the queue wait, so
//! several users starting jobs at once got 503s for work the service would have done a moment
//! later.

use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use super::load::QueryKind;
use super::pools::{QueryPools, Slot};
use crate::error::{Error, ErrorKind, Result};

/// How long a finished job waits for its slot to be given back (the work's own tasks ending).
const RELEASE_WAIT: Duration = Duration::from_secs(5);

/// A large-query job's claim, taken before its 202: a slot now, or a place in the wait list.
#[derive(Debug)]
pub struct JobTicket(Claim);

#[derive(Debug)]
enum Claim {
    Running(Slot),
    /// Given back once the job has its slot.
    Waiting(OwnedSemaphorePermit),
}

impl JobTicket {
    /// Whether the job waits for a slot (it starts once one frees).
    pub fn waits(&self) -> bool {
        matches!(self.0, Claim::Waiting(_))
    }
}

impl QueryPools {
    /// A claim for a large-query job: a free slot, else a free place in the wait list; with both
    /// full, whichever frees first within the queue wait; else `Busy` (503).
    pub async fn admit_job(&self) -> Result<JobTicket> {
        let (slots, places) = (&self.large_slots, &self.large_queue);
        if let Ok(permit) = slots.clone().try_acquire_owned() {
            return Ok(JobTicket(Claim::Running(Slot::new(permit))));
        }
        if let Ok(place) = places.clone().try_acquire_owned() {
            return Ok(JobTicket(Claim::Waiting(place)));
        }
        let waited = {
            let _waiting = self.load.wait(QueryKind::Large);
            tokio::time::timeout(self.settings().queue_wait, async {
                tokio::select! {
                    permit = slots.clone().acquire_owned() => permit.map(|p| Claim::Running(Slot::new(p))),
                    place = places.clone().acquire_owned() => place.map(Claim::Waiting),
                }
            })
            .await
        };
        match waited {
            Ok(Ok(claim)) => Ok(JobTicket(claim)),
            _ => {
                self.load.refuse(QueryKind::Large);
                let settings = self.settings();
                Err(Error::new(
                    ErrorKind::Busy,
                    format!(
                        "The service is running as many large-query jobs as it allows ({}, \
                         RAPID_LARGE_QUERY_CONCURRENCY) and has as many waiting as it keeps \
                         ({}, RAPID_LARGE_QUERY_QUEUE): try again in a moment",
                        settings.large_concurrency.max(1),
                        settings.large_queue
                    ),
                ))
            }
        }
    }

    /// `run` for a job: waits for a slot if the ticket has none (counted as waiting, without a
    /// limit: the jobs ahead have theirs), then runs `work` for at most `limit`. Returns once
    /// the slot is given back too (at most `RELEASE_WAIT` after the answer): the slot goes
    /// only after the work's tasks have ended, a moment after the answer, and a job recorded
    /// as done before that let a client that saw SUCCESS and started its next job at once find
    /// the pool still full.
    pub async fn run_job<T: Send + 'static>(
        &self,
        ticket: JobTicket,
        limit: Duration,
        work: impl std::future::Future<Output = Result<T>> + Send + 'static,
        timed_out: Error,
    ) -> Result<T> {
        let mut slot = match ticket.0 {
            Claim::Running(slot) => slot,
            Claim::Waiting(place) => {
                let _waiting = self.load.wait(QueryKind::Large);
                let permit = self.large_slots.clone().acquire_owned().await;
                drop(place);
                Slot::new(permit.map_err(|_| Error::internal("the query pools were closed"))?)
            }
        };
        let released = slot.on_release();
        let result = self.run(Some(slot), limit, work, timed_out).await;
        // Never sent: the wait ends when the sender is dropped with the slot.
        let _ = tokio::time::timeout(RELEASE_WAIT, released).await;
        result
    }
}
