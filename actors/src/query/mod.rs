//! Queries: the query object is checked part by part ([`check`]), becomes a statement over a
//! table of exactly the manifest's files ([`table`]), runs in DataFusion ([`run`]), and is
//! rendered as JSON, CSV, Arrow or Parquet ([`output`]).

mod check;
mod checked;
mod checked_udf;
mod filter_group;
pub mod info;
pub mod large;
mod naming;
pub mod output;
pub mod request;
pub mod run;
mod runtime;
mod session;
mod signed_zero;
pub mod table;
mod three_valued;

pub use request::{CheckedQuery, QueryRequest};
pub use run::{engine_error, PreparedQuery, SYNC_ROW_LIMIT};
pub use runtime::on_query_runtime;
