//! # rapid-actors: the engine of rapid-rs
//!
//! Everything that is not HTTP: the catalog, auth, (later) schemas, validation, storage, queries and
//! the actors that serialise changes. The `rapid-rs` crate is a thin HTTP edge over this one;
//! dependencies point one way, and nothing here knows about actix-web.
//!
//! ## Layout
//! - [`error`]: the one engine error, with a closed set of kinds the edge maps to HTTP statuses.
//! - [`catalog`]: the SQLite catalog (opened once, WAL, versioned migrations).
//! - [`auth`]: subjects, credentials, tokens, permissions, protected domains. One writer, the
//!   AuthActor; readers use a published snapshot, so a permission check never waits.
//! - [`schema`]: the schema wire model, every schema rule, and the validated typed form.
//! - [`sensitivity`]: PUBLIC / PRIVATE / PROTECTED.

pub mod auth;
pub mod catalog;
pub mod error;
pub mod schema;
pub mod sensitivity;

pub use error::{Details, Error, ErrorKind, Result};
