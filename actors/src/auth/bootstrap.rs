//! First-start preparation: the admin client.

use std::io::Write;

use rusqlite::params;

use super::permission::{Access, Permission};
use super::secrets;
use super::AuthSettings;
use crate::catalog::{now_text, Catalog};
use crate::error::Result;

#[derive(Debug, Clone)]
pub struct AdminCredentials {
    pub client_id: String,
    pub client_secret: String,
}

/// What start-up did about the admin client, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bootstrap {
    /// Subjects existed already; nothing was created.
    Existing,
    /// Created (or re-keyed) the admin client from the environment override.
    FromEnvironment { client_id: String },
    /// Generated an admin client and wrote its credentials to this file (0600).
    Generated {
        client_id: String,
        file: std::path::PathBuf,
    },
}

const ADMIN_CLIENT_NAME: &str = "rapid-admin";

fn admin_permissions() -> [Permission; 4] {
    [
        Permission::DataAdmin,
        Permission::UserAdmin,
        Permission::All(Access::Read),
        Permission::All(Access::Write),
    ]
}

/// Creates the admin client if needed; says what was done about it. (The signing key is
/// `key_file`'s business.)
pub(super) fn prepare(catalog: &Catalog, settings: &AuthSettings) -> Result<Bootstrap> {
    catalog.transaction(|tx| {
        let bootstrap = if let Some(creds) = &settings.admin_override {
            let digest = secrets::secret_digest(&creds.client_secret);
            let updated = tx.execute(
                "UPDATE subjects SET secret_digest = ?1 WHERE subject_id = ?2 AND kind = 'CLIENT'",
                params![digest, creds.client_id],
            )?;
            if updated == 0 {
                insert_admin(tx, &creds.client_id, &digest)?;
            }
            Bootstrap::FromEnvironment {
                client_id: creds.client_id.clone(),
            }
        } else {
            let subjects: i64 = tx.query_row("SELECT count(*) FROM subjects", [], |r| r.get(0))?;
            if subjects > 0 {
                Bootstrap::Existing
            } else {
                let creds = AdminCredentials {
                    client_id: secrets::new_client_id(),
                    client_secret: secrets::new_client_secret(),
                };
                insert_admin(
                    tx,
                    &creds.client_id,
                    &secrets::secret_digest(&creds.client_secret),
                )?;
                write_credentials_file(&settings.credentials_file, &creds)?;
                Bootstrap::Generated {
                    client_id: creds.client_id,
                    file: settings.credentials_file.clone(),
                }
            }
        };
        Ok(bootstrap)
    })
}

fn insert_admin(tx: &rusqlite::Transaction<'_>, client_id: &str, digest: &[u8]) -> Result<()> {
    // The name must be free; an earlier admin of the same name gets a suffixed one.
    let taken: i64 = tx.query_row(
        "SELECT count(*) FROM subjects WHERE kind = 'CLIENT' AND name_key LIKE 'rapid-admin%'",
        [],
        |r| r.get(0),
    )?;
    let name = if taken == 0 {
        ADMIN_CLIENT_NAME.to_string()
    } else {
        format!("{ADMIN_CLIENT_NAME}-{}", taken + 1)
    };
    tx.execute(
        "INSERT INTO subjects (subject_id, kind, name, name_key, secret_digest, created_at)
         VALUES (?1, 'CLIENT', ?2, ?2, ?3, ?4)",
        params![client_id, name, digest, now_text()],
    )?;
    for p in admin_permissions() {
        tx.execute(
            "INSERT INTO subject_permissions (subject_id, permission) VALUES (?1, ?2)",
            params![client_id, p.to_string()],
        )?;
    }
    Ok(())
}

/// Writes the generated credentials once, readable by the owner only.
fn write_credentials_file(path: &std::path::Path, creds: &AdminCredentials) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    let body = serde_json::json!({
        "client_id": creds.client_id,
        "client_secret": creds.client_secret,
        "note": "Admin client of this rapid-rs instance (DATA_ADMIN, USER_ADMIN, READ_ALL, WRITE_ALL). Keep this file private.",
    });
    writeln!(file, "{body:#}")?;
    // Durable before the transaction creating the admin commits: after a power cut the admin
    // never exists without the file that holds its only copy of the secret.
    crate::storage::sync_file(&file)?;
    if let Some(folder) = path.parent() {
        crate::storage::sync_dir(folder)?;
    }
    Ok(())
}
