//! The read side of auth: an immutable picture of subjects, their permissions and the protected
//! domains, rebuilt by the AuthActor after every change and swapped in whole. Request checks read
//! it without awaiting anything, and a change is visible to the very next request.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;

use crate::auth::permission::{Permission, PermissionContext, PermissionItem};
use crate::catalog::Catalog;
pub(crate) use crate::catalog::Credential;
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum SubjectKind {
    Client,
    User,
}

impl SubjectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Client => "CLIENT",
            SubjectKind::User => "USER",
        }
    }
}

/// One subject as the request path sees it. The credential stays private to the auth module.
#[derive(Debug)]
pub struct Subject {
    pub id: String,
    pub kind: SubjectKind,
    pub name: String,
    pub email: Option<String>,
    pub permissions: Vec<Permission>,
    /// A user still holding the temporary password it was created with.
    pub must_change_password: bool,
    pub(crate) credential: Credential,
}

impl Subject {
    pub fn has(&self, permission: &Permission) -> bool {
        self.permissions.contains(permission)
    }

    pub fn permission_names(&self) -> Vec<String> {
        self.permissions.iter().map(|p| p.to_string()).collect()
    }

    pub fn permission_items(&self) -> Vec<PermissionItem> {
        self.permissions.iter().map(|p| p.item()).collect()
    }
}

#[derive(Debug, Default)]
pub struct AuthSnapshot {
    pub subjects: HashMap<String, Arc<Subject>>,
    /// Lower-cased username -> user id, for password logins.
    pub users_by_name: HashMap<String, String>,
    pub protected_domains: BTreeSet<String>,
    /// The configured layers (lower-case): layered permission names are read against them.
    pub layers: Arc<[String]>,
    /// The catalog's auth version the rows were read at.
    pub version: i64,
}

impl AuthSnapshot {
    pub fn permission_context(&self) -> PermissionContext<'_> {
        PermissionContext {
            layers: &self.layers,
            protected_domains: &self.protected_domains,
        }
    }

    pub fn load(catalog: &dyn Catalog, layers: Arc<[String]>) -> Result<AuthSnapshot> {
        let mut snapshot = AuthSnapshot {
            layers,
            ..AuthSnapshot::default()
        };
        let rows = catalog.auth_rows()?;
        snapshot.version = rows.version;
        snapshot.protected_domains.extend(rows.protected_domains);

        let mut perms: HashMap<String, Vec<Permission>> = HashMap::new();
        for (id, name) in rows.permissions {
            // A stored name that no longer parses (a layer no longer configured, a future
            // format) is skipped, not fatal.
            if let Some(p) = Permission::parse(&name, snapshot.permission_context()) {
                perms.entry(id).or_default().push(p);
            }
        }

        for row in rows.subjects {
            let kind = match row.credential {
                Credential::SecretDigest(_) => SubjectKind::Client,
                Credential::PasswordHash(_) => SubjectKind::User,
            };
            if kind == SubjectKind::User {
                snapshot
                    .users_by_name
                    .insert(row.name.to_ascii_lowercase(), row.id.clone());
            }
            let subject = Subject {
                permissions: perms.remove(&row.id).unwrap_or_default(),
                id: row.id.clone(),
                kind,
                name: row.name,
                email: row.email,
                must_change_password: row.must_change_password,
                credential: row.credential,
            };
            snapshot.subjects.insert(row.id, Arc::new(subject));
        }
        Ok(snapshot)
    }
}
