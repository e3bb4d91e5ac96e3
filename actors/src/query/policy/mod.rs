//! Dataset policies (docs/API.md, "Policies, audit, events, MCP"): row filters and column masks
//! of one schema version, each for the subjects or permissions it names. [`Policy`] is the
//! stored and answered form, checked against the version's columns when set; [`resolve`] turns
//! it, for one reading subject, into the [`EffectivePolicy`] the table the engine gives that
//! subject applies (`query::reading::policy_table`).

mod resolve;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::query::language::policy_filter::policy_filter_sql;
use crate::schema::{DataType, ValidSchema};

pub use resolve::{resolve, EffectivePolicy, Mask};

/// A dataset policy: every row filter a subject is under must pass; a column's first mask that
/// applies to the subject replaces its values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Policy {
    #[serde(default)]
    pub row_filters: Vec<RowFilter>,
    #[serde(default)]
    pub column_masks: Vec<ColumnMask>,
}

/// Rows a subject named in `applies_to` (and not in `except`) sees: those `filter` keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RowFilter {
    pub name: String,
    /// A `/query` filter; `subject_attr('k')` reads the subject's attribute `k`.
    pub filter: String,
    /// Subject ids, subject names or permission names; `"*"` is every subject.
    pub applies_to: Vec<String>,
    #[serde(default)]
    pub except: Vec<String>,
}

/// A column's values as a subject named in `applies_to` (and not in `except`) sees them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ColumnMask {
    pub column: String,
    /// `redact`, `null`, `hash`, `last4` or `year`.
    pub mask: String,
    pub applies_to: Vec<String>,
    #[serde(default)]
    pub except: Vec<String>,
}

impl Policy {
    /// Parses a policy body (400 naming what is wrong).
    pub fn parse(body: &[u8]) -> Result<Policy> {
        serde_json::from_slice(body).map_err(|e| Error::invalid(format!("Invalid policy: {e}")))
    }

    /// Checks the policy against `schema`: known columns, masks that fit their column's type,
    /// filters of the `/query` filter language, and `applies_to`/`except` entries that
    /// `is_known` accepts (a subject id or name, or a permission name) or `"*"`.
    pub fn check(&self, schema: &ValidSchema, is_known: &dyn Fn(&str) -> bool) -> Result<()> {
        let columns: HashSet<String> = schema.columns().iter().map(|c| c.name.clone()).collect();
        let mut names = HashSet::new();
        for f in &self.row_filters {
            let what = format!("row filter [{}]", f.name);
            if f.name.trim().is_empty() {
                return Err(Error::invalid("Invalid policy: a row filter has no name"));
            }
            if !names.insert(f.name.clone()) {
                return Err(Error::invalid(format!(
                    "Invalid policy: two row filters are named [{}]",
                    f.name
                )));
            }
            policy_filter_sql(&f.filter, &columns, &|_| Some(String::new()))
                .map_err(|e| Error::invalid(format!("Invalid policy: {what}: {e}")))?;
            check_entries(&what, &f.applies_to, &f.except, is_known)?;
        }
        for m in &self.column_masks {
            let what = format!("mask of column [{}]", m.column);
            let column = schema.column(&m.column).ok_or_else(|| {
                Error::invalid(format!(
                    "Invalid policy: unknown column [{}] (columns: {})",
                    m.column,
                    sorted(&columns).join(", ")
                ))
            })?;
            let mask = Mask::parse(&m.mask)?;
            if mask == Mask::Year && column.data_type != DataType::Date {
                return Err(Error::invalid(format!(
                    "Invalid policy: {what}: the year mask is for date columns only"
                )));
            }
            check_entries(&what, &m.applies_to, &m.except, is_known)?;
        }
        Ok(())
    }
}

fn sorted(names: &HashSet<String>) -> Vec<String> {
    let mut v: Vec<String> = names.iter().cloned().collect();
    v.sort();
    v
}

fn check_entries(
    what: &str,
    applies_to: &[String],
    except: &[String],
    is_known: &dyn Fn(&str) -> bool,
) -> Result<()> {
    if applies_to.is_empty() {
        return Err(Error::invalid(format!(
            "Invalid policy: {what}: applies_to is empty (name subjects, permissions or \"*\")"
        )));
    }
    for (list, entries) in [("applies_to", applies_to), ("except", except)] {
        if let Some(bad) = entries.iter().find(|e| *e != "*" && !is_known(e)) {
            return Err(Error::invalid(format!(
                "Invalid policy: {what}: {list} names [{bad}], which is no subject id, subject \
                 name or permission name"
            )));
        }
    }
    Ok(())
}

/// The policy of schema version `version` of dataset `dataset_id` as it applies to `subject`
/// (nothing when the version has none).
pub fn for_subject(
    catalog: &dyn crate::catalog::Catalog,
    (dataset_id, version): (i64, i64),
    schema: &ValidSchema,
    subject: &crate::auth::Subject,
    hash_key: &std::sync::Arc<Vec<u8>>,
) -> Result<EffectivePolicy> {
    let Some(json) = catalog.policy(dataset_id, version)? else {
        return Ok(EffectivePolicy::default());
    };
    let policy: Policy = serde_json::from_str(&json)
        .map_err(|e| Error::internal(format!("stored policy of dataset {dataset_id}: {e}")))?;
    let attributes = || subject_attributes(catalog, &subject.id);
    resolve(&policy, subject, schema, &attributes, hash_key.clone())
}

/// A subject's attributes (none when never set).
pub fn subject_attributes(
    catalog: &dyn crate::catalog::Catalog,
    subject_id: &str,
) -> Result<std::collections::HashMap<String, String>> {
    match catalog.subject_attributes(subject_id)? {
        None => Ok(Default::default()),
        Some(json) => serde_json::from_str(&json)
            .map_err(|e| Error::internal(format!("stored attributes of {subject_id}: {e}"))),
    }
}
