//! Answers: query results written as JSON, CSV, Arrow or Parquet, cell by cell, and large
//! answers streamed into a result file.

pub(super) mod cells;
pub mod large;
pub mod output;
