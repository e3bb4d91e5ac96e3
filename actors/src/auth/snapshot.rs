//! The read side of auth: an immutable picture of subjects, their permissions and the protected
//! domains, rebuilt by the AuthActor after every change and swapped in whole. Request checks read
//! it without awaiting anything, and a change is visible to the very next request.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use rusqlite::Connection;
use serde::Serialize;

use crate::auth::permission::{Permission, PermissionContext, PermissionItem};
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
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

#[derive(Debug)]
pub(crate) enum Credential {
    SecretDigest(Vec<u8>),
    PasswordHash(String),
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
}

impl AuthSnapshot {
    pub fn permission_context(&self) -> PermissionContext<'_> {
        PermissionContext {
            layers: &self.layers,
            protected_domains: &self.protected_domains,
        }
    }

    pub fn load(conn: &Connection, layers: Arc<[String]>) -> Result<AuthSnapshot> {
        let mut snapshot = AuthSnapshot {
            layers,
            ..AuthSnapshot::default()
        };
        let mut stmt = conn.prepare("SELECT domain FROM protected_domains")?;
        for d in stmt.query_map([], |r| r.get::<_, String>(0))? {
            snapshot.protected_domains.insert(d?);
        }

        let mut perms: HashMap<String, Vec<Permission>> = HashMap::new();
        let mut stmt =
            conn.prepare("SELECT subject_id, permission FROM subject_permissions ORDER BY rowid")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (id, name) = row?;
            // A stored name that no longer parses (a layer no longer configured, a future
            // format) is skipped, not fatal.
            if let Some(p) = Permission::parse(&name, snapshot.permission_context()) {
                perms.entry(id).or_default().push(p);
            }
        }

        let mut stmt = conn.prepare(
            "SELECT subject_id, kind, name, email, secret_digest, password_hash, must_change_password
             FROM subjects",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<Vec<u8>>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, bool>(6)?,
            ))
        })?;
        for row in rows {
            let (id, kind, name, email, digest, hash, must_change_password) = row?;
            let (kind, credential) = match kind.as_str() {
                "CLIENT" => (
                    SubjectKind::Client,
                    Credential::SecretDigest(digest.unwrap_or_default()),
                ),
                _ => (
                    SubjectKind::User,
                    Credential::PasswordHash(hash.unwrap_or_default()),
                ),
            };
            if kind == SubjectKind::User {
                snapshot
                    .users_by_name
                    .insert(name.to_ascii_lowercase(), id.clone());
            }
            let subject = Subject {
                permissions: perms.remove(&id).unwrap_or_default(),
                id: id.clone(),
                kind,
                name,
                email,
                must_change_password,
                credential,
            };
            snapshot.subjects.insert(id, Arc::new(subject));
        }
        Ok(snapshot)
    }
}
