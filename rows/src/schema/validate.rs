//! Judging a whole schema: column rules (`columns.rs`) then metadata rules (`metadata.rs`),
//! every problem collected, and on success the typed [`ValidSchema`].

use super::columns::check_columns;
use super::metadata::{check_metadata, Rules, SchemaContext};
use super::model::Schema;
use super::valid::ValidSchema;
use crate::error::{Error, ErrorKind, Result};

/// Every rule, for a schema a client sends to be stored (`POST`/`PUT /schema`). A `version` in it
/// is dropped: the service assigns versions ([`ValidSchema::set_version`]). All problems are
/// reported together (`Invalid`); a single one as a single message.
pub fn validate(schema: &Schema, ctx: &SchemaContext) -> Result<ValidSchema> {
    let rules = Rules {
        ctx: Some(ctx),
        owners: true,
    };
    run(schema, &rules, false)
}

/// Every rule except the owner rules, for a schema the generator just made from a sample file: its
/// owner is the placeholder the user must replace before storing it.
pub fn validate_generated(schema: &Schema, ctx: &SchemaContext) -> Result<ValidSchema> {
    let rules = Rules {
        ctx: Some(ctx),
        owners: false,
    };
    run(schema, &rules, false)
}

/// The rules that depend only on the schema, for one read back from the catalog: it passed
/// [`validate`] when stored, and a layer since removed from the configuration (or similar) must not
/// make its data unreadable. Keeps the stored `version`.
pub fn validate_stored(schema: &Schema) -> Result<ValidSchema> {
    let rules = Rules {
        ctx: None,
        owners: true,
    };
    run(schema, &rules, true)
}

fn run(schema: &Schema, rules: &Rules, keep_version: bool) -> Result<ValidSchema> {
    let mut problems = Vec::new();
    let columns = check_columns(&schema.columns, &mut problems);
    let meta = check_metadata(&schema.metadata, rules, &mut problems);
    let (Some(sensitivity), Some(update_behaviour), true) =
        (meta.sensitivity, meta.update_behaviour, problems.is_empty())
    else {
        return Err(invalid(problems));
    };
    let mut metadata = meta.metadata;
    if !keep_version {
        metadata.version = None;
    }
    let mut wire = Schema {
        metadata,
        columns: schema.columns.clone(),
    };
    for (c, valid) in wire.columns.iter_mut().zip(&columns.columns) {
        c.data_type = valid.data_type.as_str().to_owned();
        c.format = valid.format.map(|f| f.as_str().to_owned());
    }
    Ok(ValidSchema {
        schema: wire,
        sensitivity,
        update_behaviour,
        columns: columns.columns,
        partitions: columns.partitions,
    })
}

fn invalid(mut problems: Vec<String>) -> Error {
    if problems.len() == 1 {
        Error::invalid(problems.remove(0))
    } else {
        Error::many(ErrorKind::Invalid, problems)
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
