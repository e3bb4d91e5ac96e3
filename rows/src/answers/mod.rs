//! Answers: query results written as JSON, CSV, Arrow or Parquet, cell by cell, and answers as
//! typed tables for the web pages (large answers, streamed into a result file, are rapid-actors'
//! `query::answers::large`).

pub(super) mod cells;
pub mod output;
pub mod table;

pub use table::{Cell, Table};
