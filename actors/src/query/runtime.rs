//! The runtime queries execute on: multi-threaded, separate from the HTTP workers, so a heavy
//! query uses both cores without stalling the requests that share an HTTP worker thread.

use std::future::Future;
use std::sync::OnceLock;

use crate::error::{Error, Result};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()))
            .thread_name("query")
            .enable_all()
            .build()
            // expect: without threads the service cannot run queries at all; fail loudly at first use.
            .expect("starting the query runtime")
    })
}

/// Runs `work` on the query runtime and waits for it from any runtime.
pub async fn on_query_runtime<T: Send + 'static>(
    work: impl Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    runtime()
        .spawn(work)
        .await
        .map_err(|e| Error::internal(format!("query task: {e}")))?
}
