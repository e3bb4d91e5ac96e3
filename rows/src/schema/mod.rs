//! Dataset schemas: the wire model, every rule a schema must follow, and the validated, typed form
//! the rest of the engine works from.
//!
//! A client's JSON deserialises into a loose [`Schema`] (unknown keys ignored, doubtful values kept
//! as strings so they get our messages). [`validate()`] judges it against the instance
//! ([`SchemaContext`]: layers, protected domains), collects every problem into one
//! [`Error`](crate::Error) of kind `Invalid`, and otherwise returns a [`ValidSchema`]: normalised
//! wire form (for storing and showing) plus typed columns, [`DataType`]s, [`DateFormat`]s and
//! [`Check`]s, partition columns in order.
//!
//! ## Layout
//! - [`model`]: the serde types of docs/SPEC.md 2.1, and the [`DataType`] and [`UpdateBehaviour`] enums.
//! - [`date_format`]: the ten date formats and the fast value parser used at upload.
//! - [`check`]: column checks (docs/SPEC.md 2.2) as typed [`Check`]s.
//! - [`names`]: the column name rule and [`sanitise_column_name`] for schema generation.
//! - `columns`, `metadata`: the rules, each problem naming what it concerns.
//! - [`validate`](mod@validate): the entry points; [`valid`]: [`ValidSchema`].

pub mod check;
mod check_words;
mod columns;
pub mod date_format;
mod metadata;
pub mod model;
pub mod names;
pub mod patch;
mod tags;
pub mod valid;
pub mod validate;

pub use check::Check;
pub use date_format::DateFormat;
pub use metadata::SchemaContext;
pub use metadata::{
    MAX_DESCRIPTION_LEN, MAX_NAME_LEN, MAX_TAGS, PLACEHOLDER_OWNER_EMAIL, PLACEHOLDER_OWNER_NAME,
    RESERVED_TAG_KEYS,
};
pub use model::{
    CheckSpec, Column, DataType, HistoryRetention, Metadata, Owner, Schema, UpdateBehaviour,
    DEFAULT_LAYER,
};
pub use names::{column_names_from_headers, is_valid_column_name, sanitise_column_name};
pub use patch::MetadataPatch;
pub use tags::Tags;
pub use valid::{NamedCheck, ValidColumn, ValidSchema};
pub use validate::{validate, validate_generated, validate_stored};
