//! glibc's allocator settings for a long-running server that moves megabyte buffers between
//! threads, set once, process-wide, before the work starts ([`steady`]).

/// Blocks of 1 MB or more come from the system and go back to it when freed. By default glibc
/// raises that threshold to the largest block freed (up to 32 MB), after which such blocks come
/// from per-thread arenas that keep their peak: a 2 GB CSV upload, whose chunks are allocated on
/// one thread and freed on another, peaked at 333 MB instead of 236 MB.
const MMAP_THRESHOLD: i32 = 1 << 20;

/// Fixing the mmap threshold also fixes the trim threshold at its 128 KB default: every free at
/// the top of a heap then gave pages back, and the next batch faulted them in again (a group-by
/// over 1M rows used 24% more CPU in a process that had run one upload). Free memory at the
/// top of a heap is kept up to this much.
const TRIM_THRESHOLD: i32 = 16 << 20;

/// Applies the settings above; later calls do nothing.
pub fn steady() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt only sets allocator parameters; glibc takes them under its own lock.
        ONCE.call_once(|| unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        });
    }
}
