//! # rapid-rows: the engine's work per row
//!
//! The part of rapid-rs's engine that touches every row or value: schemas and their validation,
//! the ingest of an upload (CSV and Parquet read, checked and written as partitioned Parquet),
//! column profiles, the manifest's per-file column bounds, the answers' writers (JSON, CSV,
//! Arrow, Parquet), the plan rewrites and functions queries run with, and what they rest on
//! (the one engine error, dataset keys, sensitivity, file kinds, the data folder and object
//! storage). `rapid-actors` (the catalog, auth, the actors, queries' planning, the facade)
//! builds on it and re-exports its modules under the same names, so `rapid_actors::schema` and
//! `rapid_rows::schema` are one module.
//!
//! It is a crate of its own for the build (issue 57): the release profile builds it at
//! opt-level 3, where its loops are measured to need it (docs/DESIGN.md, "Build timings"), and
//! rapid-actors at `s`, which halves that crate's build.
//!
//! ## Layers, bottom first
//! Each module imports only from its own layer or the layers below, without cycles
//! (`tests/module_graph.rs` checks it).
//! 1. Shared types: [`error`] (the one engine error; its closed set of kinds maps to HTTP
//!    statuses at the edge), [`key`] (a dataset's key and catalog record), [`key_list`] (a
//!    list of unique index keys in one buffer), [`sensitivity`]
//!    (PUBLIC / PRIVATE / PROTECTED), [`file_kind`] (CSV or Parquet by name; staged files removed
//!    on drop), [`allocator`] (the process's allocator settings).
//! 2. [`storage`]: every path in the data folder and every object key is built there; the kept
//!    objects are reached only through its `ObjectStorage` interface, which `LocalFolder`
//!    implements with the fsync discipline.
//! 3. Rules: [`schema`] (the wire model, every schema rule, the validated typed form),
//!    [`profile`] (column profiles: counted while an upload is validated, merged per version),
//!    [`stats`] (per-file column bounds for the manifest).
//! 4. The work per row: [`ingest`] (a CSV or Parquet stream validated and written as
//!    partitioned Parquet), [`unique_index`] (a keyed upload's keys read back from its staged
//!    files and sorted, per key), [`answers`] (results written as JSON, CSV, Arrow or Parquet),
//!    [`rewrites`] (the DataFusion session, its plan rewrites and functions, the faster
//!    group-by over one text column), [`mask_hash`] (the `hash` column mask).

pub mod allocator;
pub mod answers;
pub mod error;
pub mod file_kind;
pub mod ingest;
pub mod key;
pub mod key_list;
pub mod mask_hash;
pub mod profile;
pub mod rewrites;
pub mod schema;
pub mod sensitivity;
pub mod stats;
pub mod storage;
#[cfg(any(test, feature = "test-plans"))]
pub mod test_plans;
pub mod unique_index;

pub use error::{Details, Error, ErrorKind, ReportLinks, Result, UploadReport};
