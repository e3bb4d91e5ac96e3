//! The token signing key and client secrets, changed with the service stopped (it keeps the key
//! and the subjects in memory; the CLI refuses while the data folder is locked by it).

use std::path::Path;

use rusqlite::{params, OptionalExtension};

use crate::auth::secrets;
use crate::error::{Error, Result};

/// Replaces the signing key file with a new random key: every token issued before stops working
/// at the next start (download links too). The old key is overwritten in place by the rename.
pub fn rotate_signing_key(key_file: &Path) -> Result<()> {
    crate::auth::key_file::replace(key_file)
}

/// The admin client created at first start (`rapid-admin`), if there is one.
pub fn admin_client_id(data_dir: &Path) -> Result<Option<String>> {
    let conn = super::open_existing(data_dir)?;
    Ok(conn
        .query_row(
            "SELECT subject_id FROM subjects WHERE kind = 'CLIENT' AND name_key LIKE 'rapid-admin%'
             ORDER BY created_at LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// Gives client `client_id` a new random secret, returned once; the old one stops working.
pub fn reset_client_secret(data_dir: &Path, client_id: &str) -> Result<String> {
    let conn = super::open_existing(data_dir)?;
    let secret = secrets::new_client_secret();
    let changed = conn.execute(
        "UPDATE subjects SET secret_digest = ?1 WHERE subject_id = ?2 AND kind = 'CLIENT'",
        params![secrets::secret_digest(&secret), client_id],
    )?;
    if changed == 0 {
        return Err(Error::not_found(format!("no client with id [{client_id}]")));
    }
    Ok(secret)
}
