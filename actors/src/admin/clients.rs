//! Creating a client offline (`rapid-admin create-client`), with the service stopped: through
//! [`crate::auth::Auth`] itself, so the service's own permission and name rules apply.

use std::path::Path;

use crate::auth::{Auth, AuthSettings, NewClient};
use crate::error::Result;
use crate::storage::Durability;

/// Opens the data folder's catalog, starts auth on it and creates the client `name` with
/// `permissions`; its secret is in the answer, once. Call inside a running actix system.
pub async fn create_client(
    data_dir: &Path,
    catalog_url: Option<&str>,
    settings: AuthSettings,
    name: String,
    permissions: Vec<String>,
) -> Result<NewClient> {
    // As every admin command: fully durable.
    let catalog = crate::catalog::open(data_dir, catalog_url, Durability::Full)?;
    let (auth, _) = Auth::start(catalog, settings, Durability::Full)?;
    auth.create_client(
        &crate::auth::pass::operator_user_admin_pass(),
        name,
        permissions,
    )
    .await
}
