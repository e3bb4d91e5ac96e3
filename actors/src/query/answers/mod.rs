//! Answers: query results written as JSON, CSV, Arrow or Parquet, cell by cell (rapid-rows'
//! `answers`, re-exported), large answers streamed into a result file, and answers as typed
//! tables for the web pages.

pub mod large;

pub use rapid_rows::answers::{output, table, Cell, Table};
