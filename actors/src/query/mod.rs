//! Queries: the query object is checked part by part ([`check`]), becomes a statement over a
//! table of exactly the manifest's files ([`table`]), runs in DataFusion ([`run`]), and is
//! rendered as JSON, CSV, Arrow or Parquet ([`output`]). Before any of that, every part is
//! bounded in size and depth ([`limits`]); queries run on the [`engine`]'s own threads, through
//! its admission slots, time limits and memory pool.

mod cells;
mod check;
mod checked;
mod checked_udf;
pub mod engine;
mod file_pruning;
mod filter_group;
pub mod info;
pub mod large;
pub mod limits;
mod limits_json;
pub mod load;
mod local_reader;
mod naming;
pub mod output;
mod plan_cache;
pub mod request;
pub mod run;
mod runtime;
pub(crate) use runtime::set_thread_nice;
mod session;
mod signed_zero;
mod small_groups;
pub mod table;
#[cfg(test)]
mod test_plans;
mod text_groups;
mod three_valued;
mod work_scope;
mod yielding;

pub use engine::on_query_runtime;
pub use engine::{configure, engine, QuerySettings, Slot};
pub use limits::{check_request, QueryLimits};
pub use limits_json::parse_request;
pub use load::QueryKind;
pub use request::{CheckedQuery, QueryRequest};
pub use run::{engine_error, PreparedQuery, SYNC_ROW_LIMIT};
