//! # rapid-actors: the engine of rapid-rs
//!
//! Everything that is not HTTP: the catalog, auth, schemas, (later) validation, storage, queries and
//! the actors that serialise changes. The `rapid-rs` crate is a thin HTTP edge over this one;
//! dependencies point one way, and nothing here knows about actix-web.
//!
//! ## Layout
//! - [`admin`]: what `rapid-rs admin` does to a data folder (keys, backup, restore, check).
//! - [`error`]: the one engine error, with a closed set of kinds the edge maps to HTTP statuses.
//! - [`catalog`]: the SQLite catalog (opened once, WAL, versioned migrations).
//! - [`auth`]: subjects, credentials, tokens, permissions, protected domains. One writer, the
//!   AuthActor; readers use a published snapshot, so a permission check never waits.
//! - [`schema`]: the schema wire model, every schema rule, and the validated typed form.
//! - [`registry`]: the catalog of datasets and their schema versions; its actor creates datasets
//!   and starts one dataset actor per dataset.
//! - [`dataset`]: the DatasetActor, the one writer of a dataset (version bumps, later upload
//!   commits, file and dataset deletion), handling one change at a time in arrival order.
//! - [`infer`]: schema drafts from a sample CSV or Parquet file.
//! - [`file_kind`]: CSV or Parquet, by name; staged files removed on drop.
//! - [`query`]: the query object checked into expression trees and run by DataFusion over a
//!   table of exactly the manifest's files.
//! - [`sensitivity`]: PUBLIC / PRIVATE / PROTECTED.
//! - [`work_permits`]: bounded pools for heavy per-request work (503 when full).

pub mod admin;
pub mod auth;
pub mod catalog;
pub mod dataset;
pub mod error;
pub mod file_kind;
pub mod infer;
pub mod ingest;
pub mod jobs;
pub mod query;
pub mod registry;
pub mod schema;
pub mod sensitivity;
pub mod storage;
pub mod work_permits;

pub use error::{Details, Error, ErrorKind, Result};
