//! `rapid-rs admin audit verify`: the audit log's hash chain checked from outside the service
//! (it may be running: the check only reads).

use std::path::Path;

use crate::audit::store::AUDIT_FILE;
use crate::audit::Verified;
use crate::error::{Error, Result};

/// The chain of the data folder's log (or the PostgreSQL catalog's at `url`) from its oldest
/// row kept to its newest. A broken link is a `Conflict` naming the first row that is wrong.
pub fn verify(data_dir: &Path, url: Option<&str>) -> Result<Verified> {
    let file = data_dir.join(AUDIT_FILE);
    if url.is_none() && !file.is_file() {
        return Err(Error::not_found(format!(
            "no audit log at {}: is this a rapid-rs data folder?",
            file.display()
        )));
    }
    let store = crate::catalog::open_audit(data_dir, url, crate::storage::Durability::Full)?;
    crate::audit::verify(store.as_ref())
}
