//! The threads queries run on: a multi-threaded runtime separate from the HTTP workers, so a
//! heavy query uses every core without stalling the requests that share an HTTP worker.
//!
//! - Stacks: parsing, checking, planning and executing walk expression trees by recursion.
//!   The limits bound those trees before anything walks them; as a second line, these threads
//!   have stacks far larger than any bounded tree needs, even with a debug build's frames
//!   (64 MiB of address space each; pages are only committed as they are touched).
//! - Priority: the threads run at a lower priority (nice 10), so when queries keep every core
//!   busy the kernel still runs HTTP workers first and cheap requests (status, tokens, listing,
//!   job polls, receiving uploads) answer at once.

/// Stack of every query thread (workers and their blocking threads).
pub(crate) const QUERY_STACK_BYTES: usize = 64 << 20;

/// Blocking threads (file reads) the query runtime may start; each reserves a large stack.
const MAX_BLOCKING_THREADS: usize = 64;

/// Nice value of query threads: below the HTTP workers' 0, so they yield the CPU to them.
const QUERY_NICE: i32 = 10;

pub(super) fn build(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_name("query")
        .thread_stack_size(QUERY_STACK_BYTES)
        .on_thread_start(lower_priority)
        .enable_all()
        .build()
}

fn lower_priority() {
    set_thread_nice(QUERY_NICE);
}

/// Sets the calling thread's nice value (query threads, the compactor). Failure (not allowed to
/// change it) leaves the thread at normal priority, which is harmless.
#[cfg(target_os = "linux")]
pub(crate) fn set_thread_nice(nice: i32) {
    // SAFETY: setpriority takes plain integers and touches no memory of ours. On Linux the nice
    // value belongs to the thread, and `who = 0` names the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, nice);
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn set_thread_nice(_nice: i32) {}
