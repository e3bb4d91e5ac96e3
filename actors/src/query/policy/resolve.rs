//! A policy as it applies to one reading subject: the row filters it is under (their
//! `subject_attr` calls replaced by its attributes) and the masks of its columns.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::Policy;
use crate::auth::Subject;
use crate::error::{Error, Result};
use crate::query::language::policy_filter::policy_filter_sql;
use crate::schema::ValidSchema;

/// How a masked column's values are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mask {
    /// The text `REDACTED` for every value (a null stays null).
    Redact,
    /// NULL, the column keeping its type.
    Null,
    /// A keyed hash (HMAC-SHA256, hex) of the value's text: equal values stay equal.
    Hash,
    /// The last four characters of the value's text.
    Last4,
    /// A date's year.
    Year,
}

impl Mask {
    pub const NAMES: &'static [&'static str] = &["redact", "null", "hash", "last4", "year"];

    /// Its name in a policy.
    pub fn name(self) -> &'static str {
        match self {
            Mask::Redact => "redact",
            Mask::Null => "null",
            Mask::Hash => "hash",
            Mask::Last4 => "last4",
            Mask::Year => "year",
        }
    }

    pub fn parse(name: &str) -> Result<Mask> {
        Ok(match name {
            "redact" => Mask::Redact,
            "null" => Mask::Null,
            "hash" => Mask::Hash,
            "last4" => Mask::Last4,
            "year" => Mask::Year,
            other => {
                return Err(Error::invalid(format!(
                    "Invalid policy: unknown mask [{other}] (masks: {})",
                    Mask::NAMES.join(", ")
                )))
            }
        })
    }
}

/// What one subject's table applies; [`EffectivePolicy::is_none`] when nothing applies to it.
#[derive(Debug, Clone, Default)]
pub struct EffectivePolicy {
    /// Checked filters (SQL text, attributes as literals); a row must pass every one.
    pub filters: Vec<String>,
    /// Column name -> its mask.
    pub masks: HashMap<String, Mask>,
    /// The names of what applies (row filters' names, `mask:{column}`), for EXPLAIN.
    pub names: Vec<String>,
    /// Equal for equal filters and masks: what caches of tables and plans are keyed by.
    pub fingerprint: u64,
    /// The key of the `hash` mask.
    pub hash_key: Arc<Vec<u8>>,
}

impl EffectivePolicy {
    pub fn is_none(&self) -> bool {
        self.filters.is_empty() && self.masks.is_empty()
    }

    /// Everything the table's plan depends on, written out (empty when nothing applies): a
    /// kept plan is reused only under an equal text, never on a fingerprint's say-so, so two
    /// subjects' filters can never share a plan by a hash collision.
    pub fn plan_text(&self) -> String {
        if self.is_none() {
            return String::new();
        }
        let mut masks: Vec<String> = self
            .masks
            .iter()
            .map(|(c, m)| format!("{c}:{m:?}"))
            .collect();
        masks.sort();
        let key: String = match self.masks.values().any(|m| *m == Mask::Hash) {
            true => self.hash_key.iter().map(|b| format!("{b:02x}")).collect(),
            false => String::new(),
        };
        // Unit separators: no filter's text, name or column holds one.
        [
            self.filters.join("\u{1f}"),
            masks.join("\u{1f}"),
            self.names.join("\u{1f}"),
            key,
        ]
        .join("\u{1e}")
    }
}

/// Whether the entries (ids, names, permission names, `"*"`) name `subject`.
fn names_subject(entries: &[String], subject: &Subject) -> bool {
    entries.iter().any(|e| {
        e == "*"
            || *e == subject.id
            || e.eq_ignore_ascii_case(&subject.name)
            || subject.permissions.iter().any(|p| p.to_string() == *e)
    })
}

fn applies(applies_to: &[String], except: &[String], subject: &Subject) -> bool {
    names_subject(applies_to, subject) && !names_subject(except, subject)
}

/// `policy` for `subject` over `schema`; `attributes` are read (once) only when a filter that
/// applies reads one. `hash_key` keys the `hash` mask.
pub fn resolve(
    policy: &Policy,
    subject: &Subject,
    schema: &ValidSchema,
    attributes: &dyn Fn() -> Result<HashMap<String, String>>,
    hash_key: Arc<Vec<u8>>,
) -> Result<EffectivePolicy> {
    let columns: HashSet<String> = schema.columns().iter().map(|c| c.name.clone()).collect();
    let mut out = EffectivePolicy {
        hash_key,
        ..EffectivePolicy::default()
    };
    let mut attrs: Option<HashMap<String, String>> = None;
    for f in &policy.row_filters {
        if !applies(&f.applies_to, &f.except, subject) {
            continue;
        }
        if attrs.is_none() && crate::query::language::policy_filter::reads_attributes(&f.filter) {
            attrs = Some(attributes()?);
        }
        let known = attrs.clone().unwrap_or_default();
        let sql = policy_filter_sql(&f.filter, &columns, &|k| known.get(k).cloned())
            .map_err(|e| Error::internal(format!("stored policy filter [{}]: {e}", f.name)))?;
        out.filters.push(sql);
        out.names.push(f.name.clone());
    }
    for m in &policy.column_masks {
        if out.masks.contains_key(&m.column)
            || !columns.contains(&m.column)
            || !applies(&m.applies_to, &m.except, subject)
        {
            continue;
        }
        out.masks.insert(m.column.clone(), Mask::parse(&m.mask)?);
        out.names.push(format!("mask:{}", m.column));
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    out.filters.hash(&mut h);
    let mut masks: Vec<_> = out.masks.iter().collect();
    masks.sort();
    masks.hash(&mut h);
    out.fingerprint = h.finish();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effective(filters: &[&str], masks: &[(&str, Mask)], key: &[u8]) -> EffectivePolicy {
        EffectivePolicy {
            filters: filters.iter().map(|f| f.to_string()).collect(),
            masks: masks.iter().map(|(c, m)| (c.to_string(), *m)).collect(),
            names: vec!["a".into()],
            fingerprint: 0,
            hash_key: Arc::new(key.to_vec()),
        }
    }

    #[test]
    fn plan_texts_differ_wherever_the_tables_differ() {
        let text = |f: &[&str], m: &[(&str, Mask)], k: &[u8]| effective(f, m, k).plan_text();
        assert_eq!(EffectivePolicy::default().plan_text(), "");
        let north = text(&["region = 'north'"], &[], b"k");
        assert_eq!(north, text(&["region = 'north'"], &[], b"other key"));
        assert_ne!(north, text(&["region = 'south'"], &[], b"k"));
        // Two filters are not one filter holding both texts.
        assert_ne!(
            text(&["a = 1", "b = 2"], &[], b"k"),
            text(&["a = 1b = 2"], &[], b"k")
        );
        let hashed = text(&[], &[("email", Mask::Hash)], b"k1");
        assert_ne!(hashed, text(&[], &[("email", Mask::Hash)], b"k2"));
        assert_ne!(hashed, text(&[], &[("email", Mask::Redact)], b"k1"));
        assert_eq!(
            text(&[], &[("a", Mask::Null), ("b", Mask::Year)], b"k"),
            text(&[], &[("b", Mask::Year), ("a", Mask::Null)], b"k")
        );
    }
}
