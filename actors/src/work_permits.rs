//! A bounded pool for heavy per-request work (schema generation today): at most `n` run at once;
//! a request waits a bounded time for its turn, and is then told 503 (with `Retry-After`)
//! before it has read its body or spent anything.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, Result};

#[derive(Clone)]
pub struct WorkPermits {
    permits: Arc<Semaphore>,
    max_wait: Duration,
    /// What the work is, for the busy message ("schema generations").
    what: &'static str,
}

impl WorkPermits {
    pub fn new(n: usize, max_wait: Duration, what: &'static str) -> WorkPermits {
        WorkPermits {
            permits: Arc::new(Semaphore::new(n.max(1))),
            max_wait,
            what,
        }
    }

    /// A place in the pool, held until the permit is dropped; Busy after the bounded wait.
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit> {
        let busy = || {
            Error::busy(format!(
                "The service is busy with other {}: try again shortly",
                self.what
            ))
        };
        if let Ok(p) = self.permits.clone().try_acquire_owned() {
            return Ok(p);
        }
        match tokio::time::timeout(self.max_wait, self.permits.clone().acquire_owned()).await {
            Ok(Ok(p)) => Ok(p),
            _ => Err(busy()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn at_most_n_at_once_and_the_rest_are_busy_after_the_wait() {
        let pool = WorkPermits::new(2, Duration::from_millis(30), "tests");
        let a = pool.acquire().await.unwrap();
        let _b = pool.acquire().await.unwrap();
        let e = pool.acquire().await.unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Busy);
        assert!(e.to_string().contains("busy with other tests"));
        drop(a);
        assert!(pool.acquire().await.is_ok());
    }
}
