//! The metadata rules of a schema (docs/SPEC.md 2.1): layer, domain and dataset names, sensitivity,
//! update behaviour, description, tags and owners. Every problem is collected.

use std::collections::BTreeSet;
use std::str::FromStr;

use email_address::EmailAddress;

use super::model::{HistoryRetention, Metadata, Owner, UpdateBehaviour};
use crate::sensitivity::Sensitivity;

/// What a schema is judged against besides itself: the instance's layers and the protected
/// domains that exist (lower case).
#[derive(Debug, Clone, Copy)]
pub struct SchemaContext<'a> {
    pub layers: &'a [String],
    pub protected_domains: &'a BTreeSet<String>,
}

/// Longest domain or dataset name (they become path segments and table names).
pub const MAX_NAME_LEN: usize = 128;
/// Longest description, in characters. docs/SPEC.md sets none; this keeps listings small.
pub const MAX_DESCRIPTION_LEN: usize = 2000;
/// Most tags per dataset, key-value and key-only together (docs/SPEC.md 8).
pub const MAX_TAGS: usize = 30;
/// Tag keys the service itself puts in a dataset listing's `tags` (docs/SPEC.md 2.3); a custom tag with
/// one of these names would be confused with them, so they are refused (in any case).
pub const RESERVED_TAG_KEYS: [&str; 2] = ["sensitivity", "no_of_versions"];
/// What the schema generator writes as owner, which must be replaced (docs/SPEC.md 2.1).
pub const PLACEHOLDER_OWNER_NAME: &str = "change_me";
pub const PLACEHOLDER_OWNER_EMAIL: &str = "change_me@email.com";
/// Most commits a schema's `history.keep_commits` may retain per version.
pub(super) const MAX_KEEP_COMMITS: i64 = 1_000_000;
/// Longest a schema's `history.keep_seconds` may retain commits: 100 years.
pub(super) const MAX_KEEP_SECONDS: i64 = 100 * 365 * 86_400;

/// Which rules apply beyond the schema's own content.
pub(super) struct Rules<'a> {
    /// The instance's layers and protected domains; `None` skips the rules that need them.
    pub ctx: Option<&'a SchemaContext<'a>>,
    /// Whether owners are checked (not for a freshly generated schema, whose owner is the
    /// placeholder).
    pub owners: bool,
}

/// The typed metadata values, and the metadata normalised (meaningful only when no problem was
/// added).
pub(super) struct Checked {
    pub metadata: Metadata,
    pub sensitivity: Option<Sensitivity>,
    pub update_behaviour: Option<UpdateBehaviour>,
}

pub(super) fn check_metadata(m: &Metadata, rules: &Rules, problems: &mut Vec<String>) -> Checked {
    let layer = m.layer().to_owned();
    if let Some(ctx) = rules.ctx {
        if !ctx.layers.contains(&layer) {
            problems.push(format!(
                "The layer [{layer}] does not exist. Accepted layers: {}",
                ctx.layers.join(", ")
            ));
        }
    }
    let domain_ok = check_name("domain", &m.domain, problems);
    check_name("dataset", &m.dataset, problems);
    let domain = m.domain.to_ascii_lowercase();
    let sensitivity = m.sensitivity();
    match (sensitivity, rules.ctx) {
        (None, _) => problems.push(
            "You must specify a valid sensitivity level. Accepted values: ['PUBLIC', 'PRIVATE', 'PROTECTED']"
                .to_owned(),
        ),
        (Some(Sensitivity::Protected), Some(ctx))
            if domain_ok && !ctx.protected_domains.contains(&domain) =>
        {
            problems.push(format!("The protected domain '{domain}' does not exist."));
        }
        _ => {}
    }
    let update_behaviour = UpdateBehaviour::from_str(&m.update_behaviour).ok();
    if update_behaviour.is_none() {
        problems.push(
            "You must specify a valid update behaviour. Accepted values: ['APPEND', 'OVERWRITE']"
                .to_owned(),
        );
    }
    let description = m.description.clone().unwrap_or_default();
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_LEN {
        problems.push(format!(
            "The description must be at most {MAX_DESCRIPTION_LEN} characters; it has {chars}"
        ));
    }
    let key_only_tags = check_tags(m, problems);
    if let Some(history) = &m.history {
        check_history(history, problems);
    }
    if rules.owners {
        check_owners(m.owners.as_deref().unwrap_or(&[]), problems);
    }
    Checked {
        metadata: Metadata {
            layer: Some(layer),
            domain,
            description: Some(description),
            key_only_tags,
            // `"history": {}` says nothing: stored as absent.
            history: m.history.filter(|h| *h != HistoryRetention::default()),
            ..m.clone()
        },
        sensitivity,
        update_behaviour,
    }
}

/// A domain or dataset name: `^[a-zA-Z][_a-zA-Z0-9]*$`, at most [`MAX_NAME_LEN`] characters.
/// Such a name is also safe as a path segment. Returns whether it passed.
fn check_name(what: &str, value: &str, problems: &mut Vec<String>) -> bool {
    let bytes = value.as_bytes();
    let problem = if bytes.is_empty() {
        format!("The {what} must not be empty")
    } else if !bytes[0].is_ascii_alphabetic()
        || !bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_')
    {
        format!(
            "The value set for {what} [{value}] can only contain alphanumeric and underscore `_` \
             characters and must start with an alphabetic character"
        )
    } else if bytes.len() > MAX_NAME_LEN {
        format!("The value set for {what} [{value}] must be at most {MAX_NAME_LEN} characters")
    } else {
        return true;
    };
    problems.push(problem);
    false
}

/// `history.keep_commits` from 1 to [`MAX_KEEP_COMMITS`], `history.keep_seconds` from 0 to
/// [`MAX_KEEP_SECONDS`] (wrong JSON types are refused before, as for every field).
fn check_history(h: &HistoryRetention, problems: &mut Vec<String>) {
    if let Some(n) = h
        .keep_commits
        .filter(|n| !(1..=MAX_KEEP_COMMITS).contains(n))
    {
        problems.push(format!(
            "The history keep_commits [{n}] must be from 1 (only the current commit) to \
             {MAX_KEEP_COMMITS}"
        ));
    }
    if let Some(s) = h
        .keep_seconds
        .filter(|s| !(0..=MAX_KEEP_SECONDS).contains(s))
    {
        problems.push(format!(
            "The history keep_seconds [{s}] must be from 0 (the count alone decides) to \
             {MAX_KEEP_SECONDS} (100 years)"
        ));
    }
}

fn is_tag_key(key: &str) -> bool {
    (1..=128).contains(&key.len()) && is_tag_text(key)
}

fn is_tag_value(value: &str) -> bool {
    value.len() <= 256 && is_tag_text(value)
}

fn is_tag_text(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks every tag; returns the key-only tags without repeats and without keys that are also
/// key-value tags (the listing merges both kinds into one map, docs/SPEC.md 2.3).
fn check_tags(m: &Metadata, problems: &mut Vec<String>) -> Vec<String> {
    let keys = m.key_value_tags.keys().chain(&m.key_only_tags);
    for key in keys {
        if !is_tag_key(key) {
            problems.push(format!(
                "Tag key [{key}] can only include alphanumeric characters, underscores and hyphens, \
                 between 1 and 128 characters"
            ));
        } else if RESERVED_TAG_KEYS.contains(&key.to_ascii_lowercase().as_str()) {
            problems.push(format!(
                "Tag key [{key}] is reserved: the service sets it in dataset listings"
            ));
        }
    }
    for (key, value) in &m.key_value_tags {
        if !is_tag_value(value) {
            problems.push(format!(
                "Tag value [{value}] of tag [{key}] can only include alphanumeric characters, \
                 underscores and hyphens, up to 256 characters"
            ));
        }
    }
    let mut seen: BTreeSet<&str> = m.key_value_tags.keys().map(String::as_str).collect();
    let key_only: Vec<String> = (m.key_only_tags.iter())
        .filter(|k| seen.insert(k.as_str()))
        .cloned()
        .collect();
    if seen.len() > MAX_TAGS {
        problems.push(format!(
            "You cannot specify more than {MAX_TAGS} tags; this schema has {}",
            seen.len()
        ));
    }
    key_only
}

fn is_placeholder(owner: &Owner) -> bool {
    owner.name == PLACEHOLDER_OWNER_NAME
        || owner.email.eq_ignore_ascii_case(PLACEHOLDER_OWNER_EMAIL)
}

fn check_owners(owners: &[Owner], problems: &mut Vec<String>) {
    if owners.is_empty() {
        problems.push("You must specify at least one owner".to_owned());
        return;
    }
    if owners.iter().any(is_placeholder) {
        problems.push("You must change the default owner".to_owned());
    }
    for (i, owner) in owners.iter().enumerate() {
        if is_placeholder(owner) {
            continue;
        }
        if owner.name.trim().is_empty() {
            problems.push(format!("Owner number {} must have a name", i + 1));
        }
        if !EmailAddress::is_valid(&owner.email) {
            problems.push(format!(
                "Owner [{}] has an invalid email [{}]",
                owner.name, owner.email
            ));
        }
    }
}

#[cfg(test)]
#[path = "metadata_tests.rs"]
mod tests;
