//! Subjects, permissions, protected domains and the legacy signing key in PostgreSQL.

use super::pool::Db;
use super::PostgresCatalog;
use crate::catalog::interface::SubjectCatalog;
use crate::catalog::{now_text, AdminClient, AuthRows, Credential, DomainDeletion, SubjectRow};
use crate::error::Result;

/// The advisory lock key admin bootstrap runs under, so two nodes starting on an empty catalog
/// create one admin client.
const ADMIN_LOCK: i64 = 0x7261_7069_645f_6164; // "rapid_ad"

fn insert_permissions(db: &Db<'_>, subject_id: &str, perms: &[String]) -> Result<()> {
    for p in perms {
        db.execute(
            "INSERT INTO subject_permissions (subject_id, permission) VALUES ($1, $2)",
            &[&subject_id, p],
        )?;
    }
    Ok(())
}

/// Inserts the admin client under its name, or `{name}-{n}` when an earlier admin holds it.
fn insert_admin(db: &Db<'_>, admin: &AdminClient) -> Result<()> {
    let taken: i64 = db
        .query_one(
            "SELECT count(*) FROM subjects WHERE kind = 'CLIENT' AND name_key LIKE $1 || '%'",
            &[&admin.name.to_ascii_lowercase()],
        )?
        .try_get(0)?;
    let name = if taken == 0 {
        admin.name.clone()
    } else {
        format!("{}-{}", admin.name, taken + 1)
    };
    db.execute(
        "INSERT INTO subjects (subject_id, kind, name, name_key, secret_digest, created_at)
         VALUES ($1, 'CLIENT', $2, $3, $4, $5)",
        &[
            &admin.client_id,
            &name,
            &name.to_ascii_lowercase(),
            &admin.secret_digest,
            &now_text(),
        ],
    )?;
    insert_permissions(db, &admin.client_id, &admin.permissions)
}

fn read_subjects(db: &Db<'_>) -> Result<Vec<SubjectRow>> {
    db.query(
        "SELECT subject_id, kind, name, email, secret_digest, password_hash, must_change_password
         FROM subjects",
        &[],
    )?
    .iter()
    .map(|r| {
        let credential = match r.try_get::<_, String>(1)?.as_str() {
            "CLIENT" => {
                Credential::SecretDigest(r.try_get::<_, Option<Vec<u8>>>(4)?.unwrap_or_default())
            }
            _ => Credential::PasswordHash(r.try_get::<_, Option<String>>(5)?.unwrap_or_default()),
        };
        Ok(SubjectRow {
            id: r.try_get(0)?,
            name: r.try_get(2)?,
            email: r.try_get(3)?,
            credential,
            must_change_password: r.try_get(6)?,
        })
    })
    .collect()
}

impl SubjectCatalog for PostgresCatalog {
    fn auth_rows(&self) -> Result<AuthRows> {
        self.snapshot(|db| {
            let protected_domains = db
                .query("SELECT domain FROM protected_domains", &[])?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<Vec<String>, _>>()?;
            let permissions = db
                .query(
                    "SELECT subject_id, permission FROM subject_permissions ORDER BY seq",
                    &[],
                )?
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<Vec<_>>>()?;
            Ok(AuthRows {
                version: read_auth_version(db)?,
                subjects: read_subjects(db)?,
                permissions,
                protected_domains,
            })
        })
    }

    fn auth_version(&self) -> Result<i64> {
        self.with(read_auth_version)
    }

    fn create_subject(&self, subject: &SubjectRow, permissions: &[String]) -> Result<bool> {
        self.transaction(|db| {
            let name_key = subject.name.to_ascii_lowercase();
            // DO NOTHING on any unique index (id, kind and name, email): the insert counts 0.
            let inserted = match &subject.credential {
                Credential::SecretDigest(digest) => db.execute(
                    "INSERT INTO subjects (subject_id, kind, name, name_key, secret_digest, created_at)
                     VALUES ($1, 'CLIENT', $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                    &[&subject.id, &subject.name, &name_key, digest, &now_text()],
                )?,
                Credential::PasswordHash(hash) => db.execute(
                    "INSERT INTO subjects (subject_id, kind, name, name_key, email, password_hash,
                                           created_at, must_change_password)
                     VALUES ($1, 'USER', $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                    &[
                        &subject.id,
                        &subject.name,
                        &name_key,
                        &subject.email,
                        hash,
                        &now_text(),
                        &subject.must_change_password,
                    ],
                )?,
            };
            if inserted == 0 {
                return Ok(false);
            }
            insert_permissions(db, &subject.id, permissions)?;
            super::events::permission_changed(db, &subject.id)?;
            Ok(true)
        })
    }

    fn delete_client(&self, client_id: &str) -> Result<bool> {
        self.transaction(|db| {
            let n = db.execute(
                "DELETE FROM subjects WHERE subject_id = $1 AND kind = 'CLIENT'",
                &[&client_id],
            )?;
            if n > 0 {
                super::events::permission_changed(db, client_id)?;
            }
            Ok(n > 0)
        })
    }

    fn delete_user(&self, user_id: &str, username: &str) -> Result<bool> {
        self.transaction(|db| {
            let n = db.execute(
                "DELETE FROM subjects WHERE subject_id = $1 AND kind = 'USER' AND name_key = $2",
                &[&user_id, &username.to_ascii_lowercase()],
            )?;
            if n > 0 {
                super::events::permission_changed(db, user_id)?;
            }
            Ok(n > 0)
        })
    }

    fn set_password(&self, user_id: &str, password_hash: &str) -> Result<()> {
        self.with(|db| {
            db.execute(
                "UPDATE subjects SET password_hash = $1, must_change_password = FALSE
                 WHERE subject_id = $2",
                &[&password_hash, &user_id],
            )?;
            Ok(())
        })
    }

    fn set_client_secret(&self, client_id: &str, secret_digest: &[u8]) -> Result<bool> {
        self.with(|db| {
            let n = db.execute(
                "UPDATE subjects SET secret_digest = $1 WHERE subject_id = $2 AND kind = 'CLIENT'",
                &[&secret_digest, &client_id],
            )?;
            Ok(n > 0)
        })
    }

    fn replace_permissions(&self, subject_id: &str, permissions: &[String]) -> Result<bool> {
        self.transaction(|db| {
            // Locks the subject: a concurrent delete or replacement waits for this one.
            let exists = db.query_opt(
                "SELECT 1 FROM subjects WHERE subject_id = $1 FOR UPDATE",
                &[&subject_id],
            )?;
            if exists.is_none() {
                return Ok(false);
            }
            db.execute(
                "DELETE FROM subject_permissions WHERE subject_id = $1",
                &[&subject_id],
            )?;
            insert_permissions(db, subject_id, permissions)?;
            super::events::permission_changed(db, subject_id)?;
            Ok(true)
        })
    }

    fn create_protected_domain(&self, domain: &str) -> Result<bool> {
        self.with(|db| {
            let n = db.execute(
                "INSERT INTO protected_domains (domain, created_at) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING",
                &[&domain, &now_text()],
            )?;
            Ok(n > 0)
        })
    }

    fn delete_protected_domain(&self, domain: &str, revoke: &[String]) -> Result<DomainDeletion> {
        self.transaction(|db| {
            // FOR UPDATE first: a schema being stored in the domain holds it FOR SHARE, so this
            // waits for that commit and the check below sees its dataset.
            let found = db.query_opt(
                "SELECT 1 FROM protected_domains WHERE domain = $1 FOR UPDATE",
                &[&domain],
            )?;
            let in_use = db
                .query(
                    "SELECT layer || '/' || domain || '/' || dataset FROM datasets
                     WHERE sensitivity = 'PROTECTED' AND domain = $1 ORDER BY 1",
                    &[&domain],
                )?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<Vec<String>, _>>()?;
            if !in_use.is_empty() {
                return Ok(DomainDeletion::InUse(in_use));
            }
            if found.is_none() {
                return Ok(DomainDeletion::NotFound);
            }
            db.execute(
                "DELETE FROM protected_domains WHERE domain = $1",
                &[&domain],
            )?;
            if !revoke.is_empty() {
                let holders = db.query(
                    "DELETE FROM subject_permissions WHERE permission = ANY($1)
                     RETURNING subject_id",
                    &[&revoke],
                )?;
                let mut revoked = std::collections::BTreeSet::new();
                for row in holders {
                    revoked.insert(row.try_get::<_, String>(0)?);
                }
                for subject_id in &revoked {
                    super::events::permission_changed(db, subject_id)?;
                }
            }
            Ok(DomainDeletion::Deleted)
        })
    }

    fn put_admin_client(&self, admin: &AdminClient) -> Result<()> {
        self.transaction(|db| {
            db.execute("SELECT pg_advisory_xact_lock($1)", &[&ADMIN_LOCK])?;
            let updated = db.execute(
                "UPDATE subjects SET secret_digest = $1 WHERE subject_id = $2 AND kind = 'CLIENT'",
                &[&admin.secret_digest, &admin.client_id],
            )?;
            if updated == 0 {
                insert_admin(db, admin)?;
            }
            Ok(())
        })
    }

    fn create_first_admin(
        &self,
        admin: &AdminClient,
        before_commit: &mut dyn FnMut() -> Result<()>,
    ) -> Result<bool> {
        self.transaction(|db| {
            db.execute("SELECT pg_advisory_xact_lock($1)", &[&ADMIN_LOCK])?;
            let subjects: i64 = db
                .query_one("SELECT count(*) FROM subjects", &[])?
                .try_get(0)?;
            if subjects > 0 {
                return Ok(false);
            }
            insert_admin(db, admin)?;
            before_commit()?;
            Ok(true)
        })
    }

    fn oldest_client_named(&self, prefix: &str) -> Result<Option<String>> {
        self.with(|db| {
            db.query_opt(
                "SELECT subject_id FROM subjects WHERE kind = 'CLIENT' AND name_key LIKE $1 || '%'
                 ORDER BY created_at LIMIT 1",
                &[&prefix.to_ascii_lowercase()],
            )?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(Into::into)
        })
    }

    fn legacy_signing_key(&self) -> Result<Option<Vec<u8>>> {
        self.with(|db| {
            db.query_opt("SELECT value FROM settings WHERE key = 'token_key'", &[])?
                .map(|r| r.try_get(0))
                .transpose()
                .map_err(Into::into)
        })
    }

    fn erase_legacy_signing_key(&self) -> Result<()> {
        // Only catalogs moved from older installs could hold one; PostgreSQL frees the row's
        // space at its next vacuum.
        self.with(|db| {
            db.execute("DELETE FROM settings WHERE key = 'token_key'", &[])?;
            Ok(())
        })
    }
}

fn read_auth_version(db: &Db<'_>) -> Result<i64> {
    let row = db.query_one("SELECT version FROM auth_version WHERE id = 1", &[])?;
    Ok(row.try_get(0)?)
}
