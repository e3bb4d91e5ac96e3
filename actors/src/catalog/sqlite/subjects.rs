//! Subjects, permissions, protected domains and the legacy signing key in SQLite.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use super::{insert_if_free, SqliteCatalog};
use crate::catalog::interface::SubjectCatalog;
use crate::catalog::{now_text, AdminClient, AuthRows, Credential, DomainDeletion, SubjectRow};
use crate::error::Result;

fn insert_permissions(tx: &Transaction<'_>, subject_id: &str, perms: &[String]) -> Result<()> {
    let mut stmt =
        tx.prepare("INSERT INTO subject_permissions (subject_id, permission) VALUES (?1, ?2)")?;
    for p in perms {
        stmt.execute(params![subject_id, p])?;
    }
    Ok(())
}

/// Inserts the admin client under its name, or `{name}-{n}` when an earlier admin holds it.
fn insert_admin(tx: &Transaction<'_>, admin: &AdminClient) -> Result<()> {
    let taken: i64 = tx.query_row(
        "SELECT count(*) FROM subjects WHERE kind = 'CLIENT' AND name_key LIKE ?1 || '%'",
        [&admin.name.to_ascii_lowercase()],
        |r| r.get(0),
    )?;
    let name = if taken == 0 {
        admin.name.clone()
    } else {
        format!("{}-{}", admin.name, taken + 1)
    };
    tx.execute(
        "INSERT INTO subjects (subject_id, kind, name, name_key, secret_digest, created_at)
         VALUES (?1, 'CLIENT', ?2, ?3, ?4, ?5)",
        params![
            admin.client_id,
            name,
            name.to_ascii_lowercase(),
            admin.secret_digest,
            now_text()
        ],
    )?;
    insert_permissions(tx, &admin.client_id, &admin.permissions)
}

fn read_subjects(conn: &Connection) -> Result<Vec<SubjectRow>> {
    let mut stmt = conn.prepare(
        "SELECT subject_id, kind, name, email, secret_digest, password_hash, must_change_password
         FROM subjects",
    )?;
    let rows = stmt.query_map([], |r| {
        let credential = match r.get::<_, String>(1)?.as_str() {
            "CLIENT" => {
                Credential::SecretDigest(r.get::<_, Option<Vec<u8>>>(4)?.unwrap_or_default())
            }
            _ => Credential::PasswordHash(r.get::<_, Option<String>>(5)?.unwrap_or_default()),
        };
        Ok(SubjectRow {
            id: r.get(0)?,
            name: r.get(2)?,
            email: r.get(3)?,
            credential,
            must_change_password: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

impl SubjectCatalog for SqliteCatalog {
    fn auth_rows(&self) -> Result<AuthRows> {
        self.transaction(|tx| {
            let mut stmt = tx.prepare("SELECT domain FROM protected_domains")?;
            let protected_domains = stmt
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            let mut stmt = tx
                .prepare("SELECT subject_id, permission FROM subject_permissions ORDER BY rowid")?;
            let permissions = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(AuthRows {
                version: read_auth_version(tx)?,
                subjects: read_subjects(tx)?,
                permissions,
                protected_domains,
            })
        })
    }

    fn auth_version(&self) -> Result<i64> {
        self.with(|c| read_auth_version(c))
    }

    fn create_subject(&self, subject: &SubjectRow, permissions: &[String]) -> Result<bool> {
        self.transaction(|tx| {
            let name_key = subject.name.to_ascii_lowercase();
            let inserted = match &subject.credential {
                Credential::SecretDigest(digest) => tx.execute(
                    "INSERT INTO subjects (subject_id, kind, name, name_key, secret_digest, created_at)
                     VALUES (?1, 'CLIENT', ?2, ?3, ?4, ?5)",
                    params![subject.id, subject.name, name_key, digest, now_text()],
                ),
                Credential::PasswordHash(hash) => tx.execute(
                    "INSERT INTO subjects (subject_id, kind, name, name_key, email, password_hash, created_at,
                                           must_change_password)
                     VALUES (?1, 'USER', ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        subject.id,
                        subject.name,
                        name_key,
                        subject.email,
                        hash,
                        now_text(),
                        subject.must_change_password
                    ],
                ),
            };
            if !insert_if_free(inserted)? {
                return Ok(false);
            }
            insert_permissions(tx, &subject.id, permissions)?;
            super::events::permission_changed(tx, &subject.id)?;
            Ok(true)
        })
    }

    fn delete_client(&self, client_id: &str) -> Result<bool> {
        self.transaction(|tx| {
            let n = tx.execute(
                "DELETE FROM subjects WHERE subject_id = ?1 AND kind = 'CLIENT'",
                [client_id],
            )?;
            if n > 0 {
                super::events::permission_changed(tx, client_id)?;
            }
            Ok(n > 0)
        })
    }

    fn delete_user(&self, user_id: &str, username: &str) -> Result<bool> {
        self.transaction(|tx| {
            let n = tx.execute(
                "DELETE FROM subjects WHERE subject_id = ?1 AND kind = 'USER' AND name_key = ?2",
                params![user_id, username.to_ascii_lowercase()],
            )?;
            if n > 0 {
                super::events::permission_changed(tx, user_id)?;
            }
            Ok(n > 0)
        })
    }

    fn set_password(&self, user_id: &str, password_hash: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE subjects SET password_hash = ?1, must_change_password = 0 WHERE subject_id = ?2",
                params![password_hash, user_id],
            )?;
            Ok(())
        })
    }

    fn set_client_secret(&self, client_id: &str, secret_digest: &[u8]) -> Result<bool> {
        self.with(|c| {
            let n = c.execute(
                "UPDATE subjects SET secret_digest = ?1 WHERE subject_id = ?2 AND kind = 'CLIENT'",
                params![secret_digest, client_id],
            )?;
            Ok(n > 0)
        })
    }

    fn replace_permissions(&self, subject_id: &str, permissions: &[String]) -> Result<bool> {
        self.transaction(|tx| {
            let exists = tx
                .query_row(
                    "SELECT 1 FROM subjects WHERE subject_id = ?1",
                    [subject_id],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if !exists {
                return Ok(false);
            }
            tx.execute(
                "DELETE FROM subject_permissions WHERE subject_id = ?1",
                [subject_id],
            )?;
            insert_permissions(tx, subject_id, permissions)?;
            super::events::permission_changed(tx, subject_id)?;
            Ok(true)
        })
    }

    fn create_protected_domain(&self, domain: &str) -> Result<bool> {
        self.with(|c| {
            insert_if_free(c.execute(
                "INSERT INTO protected_domains (domain, created_at) VALUES (?1, ?2)",
                params![domain, now_text()],
            ))
        })
    }

    fn delete_protected_domain(&self, domain: &str, revoke: &[String]) -> Result<DomainDeletion> {
        self.transaction(|tx| {
            let mut stmt = tx.prepare(
                "SELECT layer || '/' || domain || '/' || dataset FROM datasets
                 WHERE sensitivity = 'PROTECTED' AND domain = ?1 ORDER BY 1",
            )?;
            let in_use: Vec<String> = stmt
                .query_map([domain], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            if !in_use.is_empty() {
                return Ok(DomainDeletion::InUse(in_use));
            }
            if tx.execute("DELETE FROM protected_domains WHERE domain = ?1", [domain])? == 0 {
                return Ok(DomainDeletion::NotFound);
            }
            let mut stmt = tx.prepare(
                "DELETE FROM subject_permissions WHERE permission = ?1 RETURNING subject_id",
            )?;
            let mut revoked = std::collections::BTreeSet::new();
            for name in revoke {
                let holders = stmt.query_map([name], |r| r.get::<_, String>(0))?;
                for holder in holders {
                    revoked.insert(holder?);
                }
            }
            for subject_id in &revoked {
                super::events::permission_changed(tx, subject_id)?;
            }
            Ok(DomainDeletion::Deleted)
        })
    }

    fn put_admin_client(&self, admin: &AdminClient) -> Result<()> {
        self.transaction(|tx| {
            let updated = tx.execute(
                "UPDATE subjects SET secret_digest = ?1 WHERE subject_id = ?2 AND kind = 'CLIENT'",
                params![admin.secret_digest, admin.client_id],
            )?;
            if updated == 0 {
                insert_admin(tx, admin)?;
            }
            Ok(())
        })
    }

    fn create_first_admin(
        &self,
        admin: &AdminClient,
        before_commit: &mut dyn FnMut() -> Result<()>,
    ) -> Result<bool> {
        self.transaction(|tx| {
            let subjects: i64 = tx.query_row("SELECT count(*) FROM subjects", [], |r| r.get(0))?;
            if subjects > 0 {
                return Ok(false);
            }
            insert_admin(tx, admin)?;
            before_commit()?;
            Ok(true)
        })
    }

    fn oldest_client_named(&self, prefix: &str) -> Result<Option<String>> {
        self.with(|c| {
            Ok(c.query_row(
                "SELECT subject_id FROM subjects WHERE kind = 'CLIENT' AND name_key LIKE ?1 || '%'
                 ORDER BY created_at LIMIT 1",
                [prefix.to_ascii_lowercase()],
                |r| r.get(0),
            )
            .optional()?)
        })
    }

    fn legacy_signing_key(&self) -> Result<Option<Vec<u8>>> {
        self.with(|c| {
            Ok(c.query_row(
                "SELECT value FROM settings WHERE key = 'token_key'",
                [],
                |r| r.get(0),
            )
            .optional()?)
        })
    }

    fn erase_legacy_signing_key(&self) -> Result<()> {
        self.with(|c| {
            c.pragma_update(None, "secure_delete", "ON")?;
            c.execute("DELETE FROM settings WHERE key = 'token_key'", [])?;
            c.pragma_update(None, "secure_delete", "OFF")?;
            // Copies the zeroed page into the main file and empties the WAL.
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(())
        })
    }
}

impl SqliteCatalog {
    /// Puts a signing key where older installs kept it (tests of its move out of the catalog).
    #[cfg(test)]
    pub(crate) fn store_legacy_signing_key(&self, key: &[u8]) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO settings (key, value) VALUES ('token_key', ?1)",
                [key],
            )?;
            Ok(())
        })
    }
}

fn read_auth_version(c: &Connection) -> Result<i64> {
    Ok(
        c.prepare_cached("SELECT version FROM auth_version WHERE id = 1")?
            .query_row([], |r| r.get(0))?,
    )
}
