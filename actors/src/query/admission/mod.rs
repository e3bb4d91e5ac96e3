//! Admission: the query pools (threads, memory pool, admission slots, time limits), their load,
//! and query work that yields its thread and ends with its query.

pub mod job_slots;
pub mod load;
pub mod pools;
pub(super) mod runtime;
pub(super) mod work_scope;
pub(super) mod yielding;
