//! Answers: query results written as JSON, CSV, Arrow or Parquet, cell by cell, large answers
//! streamed into a result file, and answers as typed tables for the web pages.

pub(super) mod cells;
pub mod large;
pub mod output;
pub mod table;

pub use table::{Cell, Table};
