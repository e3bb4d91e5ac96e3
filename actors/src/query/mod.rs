//! Queries: the query object is checked part by part, becomes a statement over a table of
//! exactly the manifest's files, runs in DataFusion, and is rendered as JSON, CSV, Arrow or
//! Parquet. Before any of that, every part is bounded in size and depth; queries run on the
//! query pools' own threads, through their admission slots, time limits and memory pool.
//!
//! The modules, by concern:
//! - [`language`]: the query object, parsed from its JSON body, bounded in size and depth
//!   ([`language::limits`]) and checked against an allow-list ([`language::check`]); filter
//!   groups and result column names.
//! - [`rewrites`]: the DataFusion session and the plan rewrites and functions that keep answers
//!   to docs/API.md's query semantics (three-valued logic, checked integers, signed zero) and
//!   the faster group-by over one text column.
//! - [`admission`]: the query pools ([`admission::pools`]): the threads queries run on, admission
//!   slots and their load, time limits, work that yields and ends with its query.
//! - [`reading`]: tables over the manifest's files ([`reading::table`]), pruning files, local
//!   reads, kept plans, running a checked query ([`reading::run`]) and dataset info.
//! - [`sql`]: SQL statements over the datasets a subject may read (`POST /api/sql`, the
//!   PostgreSQL front): the read-only gate and the per-subject catalogs.
//! - [`answers`]: answers written as JSON, CSV, Arrow or Parquet ([`answers::output`]), and large
//!   answers streamed to a result file ([`answers::large`]).

pub mod admission;
pub mod answers;
pub mod language;
pub mod policy;
pub mod reading;
pub(crate) mod sql;
// The session and its rewrites live in rapid-rows (built at opt-level 3).
pub use rapid_rows::rewrites;

pub use admission::job_slots::JobTicket;
pub use admission::load::QueryKind;
pub use admission::pools::{default_large_queue, default_threads, QueryPools, QuerySettings, Slot};
pub(crate) use admission::runtime::set_thread_nice;
pub use language::limits::{check_request, QueryLimits, DEPTH_CEILING};
pub use language::limits_json::parse_request;
pub use language::request::{CheckedQuery, QueryRequest};
pub use reading::run::{engine_error, PreparedQuery, SYNC_ROW_LIMIT};
