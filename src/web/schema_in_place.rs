//! The editor's save of an existing dataset. Metadata alone (description, tags, owners, history
//! retention) is edited in place, as `PATCH /api/schema/...` does, so the version keeps its rows
//! and every reader keeps seeing them. Only a change to what the rows are (columns, update
//! behaviour; sensitivity, which is then refused) needs a new version, which starts empty: it is
//! offered only then, and stored only once the editor confirms it.

use std::collections::BTreeSet;

use rapid_actors::auth::pass::AdminPass;
use rapid_actors::key::DatasetKey;
use rapid_actors::schema::{validate, MetadataPatch, Schema, SchemaContext, ValidSchema};
use rapid_actors::Result;

use crate::state::AppState;

/// What a save did, or must ask first.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Saved {
    /// The metadata of this version changed; its rows stay.
    InPlace(i64),
    /// Stored as this new (empty) version.
    NewVersion(i64),
    /// The columns changed (each change in words): saving stores this version, empty; not
    /// done until confirmed.
    NeedsNewVersion(i64, Vec<String>),
}

/// Saves `edited` over the dataset's latest version: in place when only metadata changed, as a
/// new version when the rows' shape changed and `confirmed`, else asks.
pub(super) async fn save(
    state: &AppState,
    pass: &AdminPass,
    edited: &Schema,
    confirmed: bool,
) -> Result<Saved> {
    let m = &edited.metadata;
    let key = DatasetKey::new(m.layer(), &m.domain, &m.dataset);
    let stored = state.engine.latest_schema(pass, &key)?;
    let version = stored.version().unwrap_or(1);
    let layers = state.engine.layers().to_vec();
    let domains: BTreeSet<String> = state.auth().protected_domains(pass).into_iter().collect();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &domains,
    };
    // Judged whole first: a broken column is refused, never dropped by an in-place save.
    let valid = validate(edited, &ctx)?;
    if !same_rows(&stored, &valid) {
        return match confirmed {
            true => Ok(Saved::NewVersion(
                state
                    .engine
                    .update_schema(pass, edited)
                    .await?
                    .version()
                    .unwrap_or_default(),
            )),
            false => Ok(Saved::NeedsNewVersion(
                version + 1,
                changes(&stored, &valid),
            )),
        };
    }
    let patch = MetadataPatch {
        description: m.description.clone(),
        owners: m.owners.clone(),
        key_value_tags: Some(m.key_value_tags.clone()),
        key_only_tags: Some(m.key_only_tags.clone()),
        history: Some(m.history),
    };
    state
        .engine
        .patch_metadata(pass, &key, Some(version), &patch)?;
    Ok(Saved::InPlace(version))
}

/// Whether both describe the same rows: columns, update behaviour and sensitivity, compared in
/// their validated (normalised) form so that the editor's round trip changes nothing.
fn same_rows(stored: &ValidSchema, edited: &ValidSchema) -> bool {
    stored.schema().columns == edited.schema().columns
        && stored.update_behaviour() == edited.update_behaviour()
        && stored.sensitivity() == edited.sensitivity()
}

/// What differs between the stored version and the edited one, in words: columns added, removed
/// or changed (each property), the update behaviour, the sensitivity.
fn changes(stored: &ValidSchema, edited: &ValidSchema) -> Vec<String> {
    let (old, new) = (&stored.schema().columns, &edited.schema().columns);
    let mut out = vec![];
    for c in new {
        let Some(was) = old.iter().find(|o| o.name == c.name) else {
            out.push(format!("column {} added ({})", c.name, c.data_type));
            continue;
        };
        let none = |v: Option<String>| v.unwrap_or_else(|| "none".to_string());
        let index = |i: Option<i64>| none(i.map(|i| i.to_string()));
        let properties = [
            ("type", was.data_type.clone(), c.data_type.clone()),
            (
                "allows null",
                was.allow_null.to_string(),
                c.allow_null.to_string(),
            ),
            (
                "partition order",
                index(was.partition_index),
                index(c.partition_index),
            ),
            (
                "date format",
                none(was.format.clone()),
                none(c.format.clone()),
            ),
            ("unique", was.unique.to_string(), c.unique.to_string()),
        ];
        for (what, before, after) in properties.iter().filter(|(_, b, a)| b != a) {
            out.push(format!("column {}: {what} {before} → {after}", c.name));
        }
        if was.checks != c.checks {
            out.push(format!("column {}: checks changed", c.name));
        }
    }
    for c in old.iter().filter(|o| !new.iter().any(|n| n.name == o.name)) {
        out.push(format!("column {} removed", c.name));
    }
    if stored.update_behaviour() != edited.update_behaviour() {
        out.push(format!(
            "update behaviour {} → {}",
            stored.update_behaviour().as_str(),
            edited.update_behaviour().as_str()
        ));
    }
    if stored.sensitivity() != edited.sensitivity() {
        out.push("sensitivity (a dataset's sensitivity cannot change)".into());
    }
    out
}
