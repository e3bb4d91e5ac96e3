//! Permission names and what each grants.
//!
//! `*_ALL` covers every sensitivity including every protected domain; `*_PRIVATE` also covers
//! PUBLIC; PROTECTED data needs `*_PROTECTED_{its domain}` or `*_ALL`. The admin permissions grant
//! no data access (API.md, Permissions).

use std::collections::BTreeSet;
use std::fmt;

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
    fn prefix(self) -> &'static str {
        match self {
            Access::Read => "READ",
            Access::Write => "WRITE",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Permission {
    All(Access),
    Public(Access),
    Private(Access),
    /// Domain kept lower-case, as protected domains are stored.
    Protected(Access, String),
    DataAdmin,
    UserAdmin,
}

impl Permission {
    /// Parses a permission name. Protected ones parse whatever the domain; whether that domain
    /// exists is checked by [`validate_permissions`].
    pub fn parse(name: &str) -> Option<Permission> {
        match name {
            "DATA_ADMIN" => return Some(Permission::DataAdmin),
            "USER_ADMIN" => return Some(Permission::UserAdmin),
            _ => {}
        }
        let (access, rest) = if let Some(rest) = name.strip_prefix("READ_") {
            (Access::Read, rest)
        } else if let Some(rest) = name.strip_prefix("WRITE_") {
            (Access::Write, rest)
        } else {
            return None;
        };
        match rest {
            "ALL" => Some(Permission::All(access)),
            "PUBLIC" => Some(Permission::Public(access)),
            "PRIVATE" => Some(Permission::Private(access)),
            _ => {
                let domain = rest.strip_prefix("PROTECTED_")?;
                is_upper_domain(domain)
                    .then(|| Permission::Protected(access, domain.to_ascii_lowercase()))
            }
        }
    }

    /// Whether this permission lets its holder `access` a dataset of `sensitivity` in `domain`.
    pub fn grants(&self, access: Access, sensitivity: Sensitivity, domain: &str) -> bool {
        match self {
            Permission::All(a) => *a == access,
            Permission::Private(a) => *a == access && sensitivity != Sensitivity::Protected,
            Permission::Public(a) => *a == access && sensitivity == Sensitivity::Public,
            Permission::Protected(a, d) => {
                *a == access
                    && sensitivity == Sensitivity::Protected
                    && d.eq_ignore_ascii_case(domain)
            }
            Permission::DataAdmin | Permission::UserAdmin => false,
        }
    }

    /// Whether this permission gives any kind of `access` at all (used where no dataset is named yet).
    pub fn is_access(&self, access: Access) -> bool {
        match self {
            Permission::All(a)
            | Permission::Public(a)
            | Permission::Private(a)
            | Permission::Protected(a, _) => *a == access,
            Permission::DataAdmin | Permission::UserAdmin => false,
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Permission::All(a) => write!(f, "{}_ALL", a.prefix()),
            Permission::Public(a) => write!(f, "{}_PUBLIC", a.prefix()),
            Permission::Private(a) => write!(f, "{}_PRIVATE", a.prefix()),
            Permission::Protected(a, d) => {
                write!(f, "{}_PROTECTED_{}", a.prefix(), d.to_ascii_uppercase())
            }
            Permission::DataAdmin => f.write_str("DATA_ADMIN"),
            Permission::UserAdmin => f.write_str("USER_ADMIN"),
        }
    }
}

fn is_upper_domain(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Every valid permission name, given the protected domains that exist.
pub fn all_permission_names(protected_domains: &BTreeSet<String>) -> Vec<String> {
    let mut names = Vec::new();
    for access in [Access::Read, Access::Write] {
        names.push(Permission::All(access).to_string());
        names.push(Permission::Public(access).to_string());
        names.push(Permission::Private(access).to_string());
        for d in protected_domains {
            names.push(Permission::Protected(access, d.clone()).to_string());
        }
    }
    names.push(Permission::DataAdmin.to_string());
    names.push(Permission::UserAdmin.to_string());
    names
}

/// Checks a requested permission list: every name known (protected ones for an existing domain),
/// none repeated. An empty list is refused unless `allow_empty` (revoking everything is a
/// legitimate permission update, but a new subject with no permission is a mistake).
pub fn validate_permissions(
    names: &[String],
    protected_domains: &BTreeSet<String>,
    allow_empty: bool,
) -> Result<Vec<Permission>> {
    if names.is_empty() && !allow_empty {
        return Err(Error::invalid("At least one permission must be provided"));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let p = Permission::parse(name).ok_or_else(|| Error::invalid(INVALID_PERMISSIONS))?;
        if let Permission::Protected(_, d) = &p {
            if !protected_domains.contains(d) {
                return Err(Error::invalid(INVALID_PERMISSIONS));
            }
        }
        if !seen.insert(p.clone()) {
            return Err(Error::invalid(INVALID_PERMISSIONS));
        }
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Sensitivity::*;

    fn p(name: &str) -> Permission {
        Permission::parse(name).unwrap()
    }

    #[test]
    fn names_round_trip() {
        let domains = BTreeSet::from(["land".to_string()]);
        for name in all_permission_names(&domains) {
            assert_eq!(p(&name).to_string(), name);
        }
    }

    #[test]
    fn private_covers_public_but_not_protected() {
        let perm = p("READ_PRIVATE");
        assert!(perm.grants(Access::Read, Public, "x"));
        assert!(perm.grants(Access::Read, Private, "x"));
        assert!(!perm.grants(Access::Read, Protected, "x"));
        assert!(!perm.grants(Access::Write, Public, "x"));
    }

    #[test]
    fn public_covers_only_public() {
        let perm = p("WRITE_PUBLIC");
        assert!(perm.grants(Access::Write, Public, "x"));
        assert!(!perm.grants(Access::Write, Private, "x"));
    }

    #[test]
    fn protected_covers_only_its_domain() {
        let perm = p("READ_PROTECTED_LAND");
        assert!(perm.grants(Access::Read, Protected, "land"));
        assert!(!perm.grants(Access::Read, Protected, "sea"));
        assert!(!perm.grants(Access::Read, Public, "land"));
    }

    #[test]
    fn all_covers_every_protected_domain() {
        assert!(p("WRITE_ALL").grants(Access::Write, Protected, "anything"));
        assert!(!p("WRITE_ALL").grants(Access::Read, Public, "x"));
    }

    #[test]
    fn admin_permissions_grant_no_data_access() {
        for name in ["DATA_ADMIN", "USER_ADMIN"] {
            for s in Sensitivity::ALL {
                assert!(!p(name).grants(Access::Read, s, "d"));
                assert!(!p(name).grants(Access::Write, s, "d"));
            }
        }
    }

    #[test]
    fn unknown_duplicated_or_lowercase_names_are_invalid() {
        let domains = BTreeSet::from(["land".to_string()]);
        for bad in [
            vec!["READ_SOME"],
            vec!["read_all"],
            vec!["READ_ALL", "READ_ALL"],
            vec!["READ_PROTECTED_SEA"],
            vec!["READ_PROTECTED_land"],
            vec![""],
        ] {
            let names: Vec<String> = bad.iter().map(|s| s.to_string()).collect();
            let err = validate_permissions(&names, &domains, false).unwrap_err();
            assert_eq!(
                err.details,
                crate::error::Details::One(INVALID_PERMISSIONS.into())
            );
        }
        let ok = vec!["READ_PROTECTED_LAND".to_string(), "DATA_ADMIN".to_string()];
        assert_eq!(validate_permissions(&ok, &domains, false).unwrap().len(), 2);
    }

    #[test]
    fn empty_list_refused_on_create_allowed_on_update() {
        let domains = BTreeSet::new();
        assert!(validate_permissions(&[], &domains, false).is_err());
        assert!(validate_permissions(&[], &domains, true)
            .unwrap()
            .is_empty());
    }
}
