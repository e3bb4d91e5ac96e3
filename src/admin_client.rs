//! `rapid-rs admin create-client`: the service's own code path (the AuthActor, its permission and
//! name rules) run on the data folder, inside a short-lived actix system.

use std::path::Path;

use clap::Parser;
use rapid_actors::auth::NewClient;
use rapid_actors::Error;

pub fn create(
    data_dir: &Path,
    catalog_url: Option<&str>,
    layers: &str,
    name: &str,
    permissions: &[String],
) -> Result<NewClient, Error> {
    let cli =
        crate::config::Cli::try_parse_from(["rapid-rs", "--layers", layers, "--hash-workers", "1"])
            .map_err(|e| Error::invalid(e.to_string()))?;
    let mut args = cli.serve;
    args.data_dir = data_dir.to_path_buf();
    let (name, permissions) = (name.to_string(), permissions.to_vec());
    let catalog_url = catalog_url.map(str::to_string);
    actix_web::rt::System::new().block_on(async move {
        let settings = crate::server::auth_settings(&args)?;
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
