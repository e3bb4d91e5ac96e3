//! Permission names and what each grants.
//!
//! `*_ALL` covers every sensitivity including every protected domain; `*_PRIVATE` also covers
//! PUBLIC; PROTECTED data needs `*_PROTECTED_{its domain}` or `*_ALL`. The admin permissions grant
//! no data access (docs/API.md, Permissions).
//!
//! docs/SPEC.md's names (`READ_PUBLIC`, `READ_PROTECTED_{DOMAIN}`) cover every layer. rAPId v7's layered
//! names (`READ_{LAYER}_PUBLIC`, `READ_{LAYER}_PROTECTED_{DOMAIN}`, `{LAYER}` a configured layer
//! upper-cased or `ALL`) cover that layer only, so scripts written for rAPId v7 work unchanged.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::sensitivity::Sensitivity;

/// The exact message the rAPId SDK compares against to tell a permission error from a duplicate name.
pub const INVALID_PERMISSIONS: &str =
    "One or more of the provided permissions is invalid or duplicated";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "READ",
            Access::Write => "WRITE",
        }
    }
}

/// The layers a data permission covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LayerScope {
    /// docs/SPEC.md's names, which have no layer part: every layer.
    Unnamed,
    /// rAPId's `ALL` layer part: every layer as well, under its own name.
    All,
    /// One configured layer, kept lower-case as layers are.
    Named(String),
}

impl LayerScope {
    fn covers(&self, layer: &str) -> bool {
        match self {
            LayerScope::Unnamed | LayerScope::All => true,
            LayerScope::Named(l) => l.eq_ignore_ascii_case(layer),
        }
    }

    /// The layer as rAPId's permission objects show it: upper-case, `ALL` for every layer.
    pub fn label(&self) -> String {
        match self {
            LayerScope::Unnamed | LayerScope::All => "ALL".to_string(),
            LayerScope::Named(l) => l.to_ascii_uppercase(),
        }
    }
}

/// Which data of a layer a data permission covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Public,
    /// PRIVATE and PUBLIC.
    Private,
    /// PROTECTED data of one domain, kept lower-case as protected domains are stored.
    Protected(String),
}

impl Level {
    fn covers(&self, sensitivity: Sensitivity, domain: &str) -> bool {
        match self {
            Level::Public => sensitivity == Sensitivity::Public,
            Level::Private => sensitivity != Sensitivity::Protected,
            Level::Protected(d) => {
                sensitivity == Sensitivity::Protected && d.eq_ignore_ascii_case(domain)
            }
        }
    }

    fn parse(s: &str) -> Option<Level> {
        match s {
            "PUBLIC" => Some(Level::Public),
            "PRIVATE" => Some(Level::Private),
            _ => {
                let domain = s.strip_prefix("PROTECTED_")?;
                is_upper_name(domain).then(|| Level::Protected(domain.to_ascii_lowercase()))
            }
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Public => f.write_str("PUBLIC"),
            Level::Private => f.write_str("PRIVATE"),
            Level::Protected(d) => write!(f, "PROTECTED_{}", d.to_ascii_uppercase()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Permission {
    /// `READ_ALL` / `WRITE_ALL`: every layer, sensitivity and protected domain.
    All(Access),
    Data {
        access: Access,
        layer: LayerScope,
        level: Level,
    },
    DataAdmin,
    UserAdmin,
}

/// What makes a permission name valid: the configured layers and the protected domains that exist.
#[derive(Debug, Clone, Copy)]
pub struct PermissionContext<'a> {
    /// Lower-case, as configured.
    pub layers: &'a [String],
    /// Lower-case, as stored.
    pub protected_domains: &'a BTreeSet<String>,
}

impl Permission {
    /// A docs/SPEC.md data permission, covering every layer.
    pub fn unlayered(access: Access, level: Level) -> Permission {
        Permission::Data {
            access,
            layer: LayerScope::Unnamed,
            level,
        }
    }

    /// Parses a permission name valid in `ctx`: a named layer must be configured and a protected
    /// domain must exist. Where a name reads two ways (a layer called `protected`), docs/SPEC.md's
    /// reading wins, then the one with the shortest layer part.
    pub fn parse(name: &str, ctx: PermissionContext<'_>) -> Option<Permission> {
        readings(name).into_iter().find(|p| p.valid_in(ctx))
    }

    fn valid_in(&self, ctx: PermissionContext<'_>) -> bool {
        let Permission::Data { layer, level, .. } = self else {
            return true;
        };
        let layer_ok = match layer {
            LayerScope::Named(l) => ctx.layers.contains(l),
            _ => true,
        };
        let domain_ok = match level {
            Level::Protected(d) => ctx.protected_domains.contains(d),
            _ => true,
        };
        layer_ok && domain_ok
    }

    /// Whether this permission lets its holder `access` a dataset of `sensitivity` in `layer` and
    /// `domain`.
    pub fn grants(
        &self,
        access: Access,
        sensitivity: Sensitivity,
        layer: &str,
        domain: &str,
    ) -> bool {
        match self {
            Permission::All(a) => *a == access,
            Permission::Data {
                access: a,
                layer: scope,
                level,
            } => *a == access && scope.covers(layer) && level.covers(sensitivity, domain),
            Permission::DataAdmin | Permission::UserAdmin => false,
        }
    }

    /// Whether this permission lets its holder read some dataset of `layer`.
    pub fn reads_layer(&self, layer: &str) -> bool {
        match self {
            Permission::All(a) => *a == Access::Read,
            Permission::Data {
                access,
                layer: scope,
                ..
            } => *access == Access::Read && scope.covers(layer),
            Permission::DataAdmin | Permission::UserAdmin => false,
        }
    }

    /// Whether this permission gives any kind of `access` at all (used where no dataset is named yet).
    pub fn is_access(&self, access: Access) -> bool {
        match self {
            Permission::All(a) | Permission::Data { access: a, .. } => *a == access,
            Permission::DataAdmin | Permission::UserAdmin => false,
        }
    }
}

/// A permission as rAPId's `GET /permissions/{subject_id}` shows it. `sensitivity` is `ALL` for
/// `*_ALL`; `layer` is `ALL` for names covering every layer; both are null for the admin
/// permissions, and `domain` (upper-case) is set only for protected ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PermissionItem {
    #[cfg_attr(feature = "openapi", schema(example = "READ_PUBLIC"))]
    pub id: String,
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(example = "READ"))]
    pub kind: &'static str,
    pub sensitivity: Option<&'static str>,
    pub domain: Option<String>,
    pub layer: Option<String>,
}

impl Permission {
    pub fn item(&self) -> PermissionItem {
        let (kind, sensitivity, domain, layer) = match self {
            Permission::All(a) => (a.as_str(), Some("ALL"), None, Some("ALL".to_string())),
            Permission::Data {
                access,
                layer,
                level,
            } => {
                let (sensitivity, domain) = match level {
                    Level::Public => ("PUBLIC", None),
                    Level::Private => ("PRIVATE", None),
                    Level::Protected(d) => ("PROTECTED", Some(d.to_ascii_uppercase())),
                };
                (
                    access.as_str(),
                    Some(sensitivity),
                    domain,
                    Some(layer.label()),
                )
            }
            Permission::DataAdmin => ("DATA_ADMIN", None, None, None),
            Permission::UserAdmin => ("USER_ADMIN", None, None, None),
        };
        PermissionItem {
            id: self.to_string(),
            kind,
            sensitivity,
            domain,
            layer,
        }
    }
}

/// Every way `name` can be read, docs/SPEC.md's first, before any check against configured layers and
/// existing protected domains.
fn readings(name: &str) -> Vec<Permission> {
    match name {
        "DATA_ADMIN" => return vec![Permission::DataAdmin],
        "USER_ADMIN" => return vec![Permission::UserAdmin],
        _ => {}
    }
    let (access, rest) = if let Some(rest) = name.strip_prefix("READ_") {
        (Access::Read, rest)
    } else if let Some(rest) = name.strip_prefix("WRITE_") {
        (Access::Write, rest)
    } else {
        return Vec::new();
    };
    if rest == "ALL" {
        return vec![Permission::All(access)];
    }
    let mut out = Vec::new();
    if let Some(level) = Level::parse(rest) {
        out.push(Permission::unlayered(access, level));
    }
    for (i, _) in rest.match_indices('_') {
        let (prefix, tail) = (&rest[..i], &rest[i + 1..]);
        let Some(level) = Level::parse(tail) else {
            continue;
        };
        let layer = if prefix == "ALL" {
            LayerScope::All
        } else if is_upper_name(prefix) {
            LayerScope::Named(prefix.to_ascii_lowercase())
        } else {
            continue;
        };
        out.push(Permission::Data {
            access,
            layer,
            level,
        });
    }
    out
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Permission::All(a) => write!(f, "{}_ALL", a.as_str()),
            Permission::Data {
                access,
                layer,
                level,
            } => match layer {
                LayerScope::Unnamed => write!(f, "{}_{level}", access.as_str()),
                LayerScope::All => write!(f, "{}_ALL_{level}", access.as_str()),
                LayerScope::Named(l) => {
                    write!(f, "{}_{}_{level}", access.as_str(), l.to_ascii_uppercase())
                }
            },
            Permission::DataAdmin => f.write_str("DATA_ADMIN"),
            Permission::UserAdmin => f.write_str("USER_ADMIN"),
        }
    }
}

/// An upper-case name: a letter, then letters, digits and underscores.
fn is_upper_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The layer scopes of data permissions: docs/SPEC.md's unlayered names, `ALL`, then each layer.
fn layer_scopes(layers: &[String]) -> Vec<LayerScope> {
    let mut scopes = vec![LayerScope::Unnamed, LayerScope::All];
    scopes.extend(layers.iter().map(|l| LayerScope::Named(l.clone())));
    scopes
}

/// Every valid permission name: docs/SPEC.md's, then rAPId v7's layered ones.
pub fn all_permission_names(ctx: PermissionContext<'_>) -> Vec<String> {
    let mut names = Vec::new();
    for access in [Access::Read, Access::Write] {
        names.push(Permission::All(access).to_string());
        for layer in layer_scopes(ctx.layers) {
            let levels = [Level::Public, Level::Private]
                .into_iter()
                .chain(ctx.protected_domains.iter().cloned().map(Level::Protected));
            for level in levels {
                let layer = layer.clone();
                names.push(
                    Permission::Data {
                        access,
                        layer,
                        level,
                    }
                    .to_string(),
                );
            }
        }
    }
    names.push(Permission::DataAdmin.to_string());
    names.push(Permission::UserAdmin.to_string());
    names
}

/// Every name, in every layer scope, of the READ and WRITE permissions of protected `domain`.
pub fn protected_domain_permission_names(domain: &str, layers: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for access in [Access::Read, Access::Write] {
        for layer in layer_scopes(layers) {
            let level = Level::Protected(domain.to_ascii_lowercase());
            names.push(
                Permission::Data {
                    access,
                    layer,
                    level,
                }
                .to_string(),
            );
        }
    }
    names
}

/// Checks a requested permission list: every name valid in `ctx`, none repeated. An empty list is
/// refused unless `allow_empty` (revoking everything is a legitimate permission update, but a new
/// subject with no permission is a mistake).
pub fn validate_permissions(
    names: &[String],
    ctx: PermissionContext<'_>,
    allow_empty: bool,
) -> Result<Vec<Permission>> {
    if names.is_empty() && !allow_empty {
        return Err(Error::invalid("At least one permission must be provided"));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let p = Permission::parse(name, ctx).ok_or_else(|| Error::invalid(INVALID_PERMISSIONS))?;
        if !seen.insert(p.clone()) {
            return Err(Error::invalid(INVALID_PERMISSIONS));
        }
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "permission_tests.rs"]
mod tests;
