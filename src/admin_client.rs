//! `rapid-rs admin create-client`: the service's own code path (the AuthActor, its permission and
//! name rules) run on the data folder, inside a short-lived actix system.

use std::path::Path;

use rapid_actors::auth::NewClient;
use rapid_actors::Error;

use crate::config::ServeArgs;

pub fn create(
    data_dir: &Path,
    catalog_url: Option<&str>,
    layers: &str,
    name: &str,
    permissions: &[String],
) -> Result<NewClient, Error> {
    let args = ServeArgs::for_admin(data_dir, layers)?;
    let (name, permissions) = (name.to_string(), permissions.to_vec());
    let catalog_url = catalog_url.map(str::to_string);
    actix_web::rt::System::new().block_on(async move {
        let settings = args.auth_settings()?;
        rapid_actors::admin::clients::create_client(
            &args.data_dir,
            catalog_url.as_deref(),
            settings,
            name,
            permissions,
        )
        .await
    })
}
