//! The token signing key and client secrets, changed with the service stopped (it keeps the key
//! and the subjects in memory; the CLI refuses while the data folder is locked by it).

use std::path::Path;

use crate::auth::secrets;
use crate::error::{Error, Result};

/// Replaces the signing key file with a new random key: every token issued before stops working
/// at the next start (download links too). The old key is overwritten in place by the rename.
pub fn rotate_signing_key(key_file: &Path) -> Result<()> {
    crate::auth::key_file::replace(key_file)
}

/// The admin client created at first start (`rapid-admin`), if there is one. `catalog_url`: the
/// catalog's PostgreSQL URL, if it is not the data folder's SQLite file.
pub fn admin_client_id(data_dir: &Path, catalog_url: Option<&str>) -> Result<Option<String>> {
    let catalog = crate::catalog::open_existing(data_dir, catalog_url)?;
    crate::auth::admin_client_id(catalog.as_ref())
}

/// Gives client `client_id` a new random secret, returned once; the old one stops working.
pub fn reset_client_secret(
    data_dir: &Path,
    catalog_url: Option<&str>,
    client_id: &str,
) -> Result<String> {
    let catalog = crate::catalog::open_existing(data_dir, catalog_url)?;
    let secret = secrets::new_client_secret();
    if !catalog.set_client_secret(client_id, &secrets::secret_digest(&secret))? {
        return Err(Error::not_found(format!("no client with id [{client_id}]")));
    }
    Ok(secret)
}
