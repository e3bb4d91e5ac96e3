//! # rapid-actors: the engine of rapid-rs
//!
//! Everything that is not HTTP: the catalog, auth, schemas, validation, storage, queries and the
//! actors that serialise changes. The `rapid-rs` crate is a thin edge over this one: its handlers
//! extract a request, make one call to the [`engine::Engine`] facade and render the answer.
//! Dependencies point one way, and nothing here knows about actix-web.
//!
//! ## Layers, bottom first
//! Each module imports only from its own layer or the layers below, without cycles;
//! `tests/module_graph.rs` reads every `use` line and checks it (the same list is written there).
//! 0. The per-row crate, `rapid-rows`, re-exported here under its own module names (built at
//!    opt-level 3 on its own, docs/DESIGN.md "Build timings"): [`error`] (the one engine error;
//!    its closed set of kinds maps to HTTP statuses at the edge), [`key`], [`sensitivity`],
//!    [`file_kind`], [`allocator`], [`storage`] (every path in the data folder and every object
//!    key is built there; the kept objects are reached only through its `ObjectStorage`
//!    interface, which `LocalFolder` implements with the fsync discipline), [`schema`] (the wire
//!    model, every schema rule, the validated typed form), [`profile`] (column profiles),
//!    [`ingest`] (a CSV or Parquet stream validated and written as partitioned Parquet), and
//!    `query::answers`' writers and `query::rewrites`.
//! 1. Shared types: [`work_permits`] (bounded pools for heavy per-request work, 503 when full),
//!    [`job_state`] (a job's record and its state machine), [`traced`] (actor messages that
//!    carry their sender's tracing span, so an actor's log lines keep the request id),
//!    [`sql_walk`] (every walk over a SQL syntax tree, here and in rapid-sqlwire, through one
//!    visitor type, so sqlparser's traversal is compiled once).
//! 2. Where things are kept beside the data folder: [`audit`] (the audit log) and `catalog` (one
//!    interface, `Catalog`, over subjects, datasets, schema versions, the manifest and jobs, in
//!    plain types; every SQL statement is in its SQLite implementation: one file opened once,
//!    WAL, migrations; one conformance suite for every implementation).
//! 3. Rules over the catalog's rows: [`jobs`] (jobs driven through their states), [`auth`]
//!    (subjects, credentials, tokens, permissions, protected domains, and the permission passes
//!    the engine takes), [`events`], `records` (datasets and schema versions), `manifest` (which
//!    files make up each version), [`history`] (commits as versions: retention, as-of reads),
//!    [`delta_log`] (each stored version as a Delta Lake table, its log derived from the
//!    catalog's commits).
//! 4. The work: [`infer`] (schema drafts from a sample), [`query`] (the query object checked into
//!    expression trees, run by DataFusion over exactly the manifest's files; and SQL statements,
//!    read-only, over the datasets a subject may read), [`compaction`]
//!    (which small files to merge, merging them, rewriting a merged file without a raw file).
//! 5. The actors: [`registry`] (creates datasets, starts one dataset actor per dataset) and
//!    [`dataset`] (the one writer of a dataset: version bumps, upload commits, compactions,
//!    deletions, one at a time in arrival order).
//! 6. The facade: [`engine`], opened once ([`engine::Engine::open`]: catalog, auth, recovery,
//!    query threads, registry); its methods are the use cases and take a permission pass.
//!    Beside it, [`admin`]: what `rapid-rs admin` does to a data folder (keys, client creation,
//!    backup, restore, check), the operator's door for work outside the HTTP API. Operations
//!    (readiness, metrics figures, the upload commits graceful shutdown waits for, failing what
//!    a shutdown left unfinished) are engine methods too (`engine/ops.rs`).
//!
//! ## The upload commit path
//! Told once, in docs/DESIGN.md ("Upload path"): the pass before the body, the stream into the
//! ingest ([`engine::Engine::upload_target`], `engine/upload.rs`), the 422 or 202, the commit in
//! the dataset's actor (`dataset/commit.rs`) and recovery at start-up ([`engine::Engine::open`]).
//!
//! ## Threads and runtimes
//! - HTTP workers (actix-web, one single-threaded runtime each): extract, await the engine,
//!   render. They run quick catalog reads (permission snapshots, records, listings), never
//!   validation, hashing or query work.
//! - The actix system's arbiters: the registry actor and the auth actor each on an arbiter of
//!   their own; dataset actors on a small pool of arbiters (one per core), so changes to one
//!   dataset are serialised while different datasets proceed in parallel.
//! - Tokio's blocking pool: the ingest of an upload, the unique check, schema inference.
//! - The query runtime: a multi-threaded runtime of its own with large stacks at a lower
//!   priority ([`query::admission::pools`]); every parse, check, plan, run and render of a query.
//! - The hash pool: a fixed number of threads for argon2 ([`auth::hash_pool`]).
//!
//! Every request runs in a span carrying its request id (the HTTP edge opens it); jobs open a
//! span of their own under it, and messages to the actors carry the sender's span
//! ([`traced::Traced`]), so a line logged anywhere on the way names the request it served.
//!
//! Documents cited in comments are in the repository: `docs/API.md` (the API contract),
//! `docs/SPEC.md`, `docs/DESIGN.md`, and the README.

pub mod admin;
pub mod audit;
pub mod auth;
pub(crate) mod catalog;
pub mod compaction;
pub(crate) mod dataset;
pub mod delta_log;
pub mod engine;
pub mod events;
pub mod history;
pub mod infer;
pub mod job_state;
pub mod jobs;
pub(crate) mod manifest;
pub mod query;
pub(crate) mod records;
pub(crate) mod registry;
pub mod sql_walk;
pub mod traced;
pub mod work_permits;

// The per-row modules live in rapid-rows (built at opt-level 3); they keep their paths here.
pub use rapid_rows::{
    allocator, error, file_kind, ingest, key, profile, schema, sensitivity, storage,
};

pub use error::{Details, Error, ErrorKind, ReportLinks, Result, UploadReport};
