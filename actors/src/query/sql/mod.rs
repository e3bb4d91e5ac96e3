//! SQL over the datasets a subject may read (docs/DESIGN.md, "SQL and the PostgreSQL
//! protocol"): `POST /api/sql` and the PostgreSQL wire front share it.
//! - [`statement`]: the gate every statement passes before planning: size and depth limits, and
//!   read-only (queries, EXPLAIN, SHOW, SET of client settings, transaction statements).
//! - [`parse_budget`]: the parser's work bounded, not only its depth.
//! - [`tables`]: the catalogs a session sees, `"{layer}"."{domain}"."{dataset}"` for a dataset's
//!   latest schema version and `"{dataset}@v{n}"` for an older one, only for datasets the
//!   subject may read, read again before every statement.
//! - [`naming`]: unaliased expressions named as written, on both fronts; [`datetime_formats`]:
//!   PostgreSQL's `to_date`/`to_timestamp` patterns, on both fronts.
//! - [`rules`]: what every synchronous statement runs under, on both fronts: admission, the
//!   time limit, the row cap, a prepared plan's tables still readable.
//! - [`run`]: one statement planned over a session's tables and run to the end.
//! - [`lazy_table`]: one such table, reading the manifest's files of one moment when scanned.

pub(crate) mod datetime_formats;
mod layers;
pub(crate) mod lazy_table;
pub(crate) mod naming;
pub(crate) mod parse_budget;
pub(crate) mod rules;
pub(crate) mod run;
pub(crate) mod statement;
pub(crate) mod tables;

pub use datetime_formats::chrono_patterns;
pub use lazy_table::not_null_columns;
pub use naming::name_as_written;
pub(crate) use rules::{admit, still_readable, Admitted};
pub(crate) use run::{collect_capped, partition_streams, plan};
pub(crate) use statement::{check_parse_cost, check_parsed, one_select, Refused};
pub(crate) use tables::SqlTables;
