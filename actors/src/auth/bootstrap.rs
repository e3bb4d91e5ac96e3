//! First-start preparation: the admin client.

use std::io::Write;

use super::permission::{Access, Permission};
use super::secrets;
use super::AuthSettings;
use crate::catalog::{AdminClient, Catalog};
use crate::error::Result;
use crate::storage::Durability;

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

fn admin_client(client_id: &str, secret: &str) -> AdminClient {
    AdminClient {
        client_id: client_id.to_string(),
        secret_digest: secrets::secret_digest(secret),
        // The name must be free; an earlier admin of the same name gets a suffixed one.
        name: ADMIN_CLIENT_NAME.to_string(),
        permissions: admin_permissions().iter().map(|p| p.to_string()).collect(),
    }
}

/// Creates the admin client if needed; says what was done about it. (The signing key is
/// `key_file`'s business.)
pub(super) fn prepare(
    catalog: &dyn Catalog,
    settings: &AuthSettings,
    durability: Durability,
) -> Result<Bootstrap> {
    if let Some(creds) = &settings.admin_override {
        catalog.put_admin_client(&admin_client(&creds.client_id, &creds.client_secret))?;
        return Ok(Bootstrap::FromEnvironment {
            client_id: creds.client_id.clone(),
        });
    }
    let creds = AdminCredentials {
        client_id: secrets::new_client_id(),
        client_secret: secrets::new_client_secret(),
    };
    let admin = admin_client(&creds.client_id, &creds.client_secret);
    let created = catalog.create_first_admin(&admin, &mut || {
        write_credentials_file(&settings.credentials_file, &creds, durability)
    })?;
    Ok(if created {
        Bootstrap::Generated {
            client_id: creds.client_id,
            file: settings.credentials_file.clone(),
        }
    } else {
        Bootstrap::Existing
    })
}

/// The admin client created at first start, if there is one (the oldest of that name).
pub(crate) fn admin_client_id(catalog: &dyn Catalog) -> Result<Option<String>> {
    catalog.oldest_client_named(ADMIN_CLIENT_NAME)
}

/// Writes the generated credentials once, readable by the owner only.
fn write_credentials_file(
    path: &std::path::Path,
    creds: &AdminCredentials,
    durability: Durability,
) -> Result<()> {
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
    durability.sync_file(&file)?;
    if let Some(folder) = path.parent() {
        durability.sync_dir(folder)?;
    }
    Ok(())
}
