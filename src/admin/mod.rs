//! `rapid-rs admin ...`: commands on a data folder. `backup` and `check` work while the service
//! runs; the others change what the service keeps in memory (the signing key, subjects) or the
//! whole store, so they need it stopped and refuse while it holds the folder's lock.
//!
//! Exit codes: 0 done; 1 failed (the message says why); 3 `check` found drift; 4 the service (or
//! another admin command) is using the data folder; 2 a usage error (clap).

pub mod archive;
pub mod lock;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use rapid_actors::admin::{backup, check, keys};
use serde_json::json;

use lock::{DataLock, LockError};

#[derive(Debug, Args)]
pub struct AdminArgs {
    /// The service's data folder.
    #[arg(long, env = "RAPID_DATA_DIR", default_value = "./data", global = true)]
    pub data_dir: PathBuf,
    /// The catalog's PostgreSQL URL when the service uses one (unset: the data folder's SQLite).
    #[arg(long, env = "RAPID_CATALOG_URL", hide_env_values = true, global = true)]
    pub catalog_url: Option<String>,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a client with permissions; prints its id and secret once (service stopped).
    CreateClient {
        /// The client's name.
        name: String,
        /// A permission (repeat the flag for more), e.g. --permission READ_ALL.
        #[arg(long = "permission", required = true)]
        permissions: Vec<String>,
        /// The layers the service is configured with (for layered permission names).
        #[arg(long, env = "RAPID_LAYERS", default_value = "default")]
        layers: String,
    },
    /// Give the admin client a new secret; prints it once (service stopped).
    ResetAdminSecret {
        /// The client to re-key (default: the admin client created at first start).
        #[arg(long)]
        client_id: Option<String>,
    },
    /// Replace the token signing key: every token issued before is refused (service stopped).
    RotateKey {
        /// The key file, when the service is given one (`RAPID_KEY_FILE`); default: the data
        /// folder's.
        #[arg(long, env = "RAPID_KEY_FILE")]
        key_file: Option<PathBuf>,
    },
    /// Copy the store into DEST, a new or empty folder, or a new archive if DEST ends in `.tar`
    /// (works while the service runs).
    Backup { dest: PathBuf },
    /// Restore a backup (folder or `.tar`) into the data folder, which must hold no store
    /// (service stopped).
    Restore { src: PathBuf },
    /// Merge small data files of every dataset's latest version (or one dataset's) now, as the
    /// service does on its own (service stopped; while it runs, `POST .../compact`).
    Compact {
        /// Only this dataset, as `layer/domain/dataset`.
        #[arg(long)]
        dataset: Option<String>,
        /// Merged files are cut at about this many bytes (as `RAPID_COMPACT_TARGET_BYTES`).
        #[arg(long, env = "RAPID_COMPACT_TARGET_BYTES", default_value_t = 128 * 1024 * 1024)]
        target_bytes: u64,
    },
    /// Compare the catalog with the files and report drift (works while the service runs).
    Check {
        /// Remove files no catalog row lists (service stopped).
        #[arg(long)]
        repair: bool,
    },
    /// The audit log (works while the service runs).
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the log's hash chain: every row as written, none removed or inserted since (exit 3
    /// naming the first row that is not).
    Verify,
}

const DRIFT: u8 = 3;
const BUSY: u8 = 4;

pub fn run(args: AdminArgs) -> ExitCode {
    match execute(&args) {
        Ok(code) => code,
        Err(Failure::Busy) => {
            eprintln!(
                "rapid-admin: the service (or another admin command) is using {}: stop it first \
                 (systemctl stop rapid-rs)",
                args.data_dir.display()
            );
            ExitCode::from(BUSY)
        }
        Err(Failure::Other(message)) => {
            eprintln!("rapid-admin: {message}");
            ExitCode::FAILURE
        }
    }
}

enum Failure {
    Busy,
    Other(String),
}

impl From<rapid_actors::Error> for Failure {
    fn from(e: rapid_actors::Error) -> Self {
        Failure::Other(match e.details {
            rapid_actors::Details::One(m) => m,
            rapid_actors::Details::Many(ms) => ms.join("; "),
        })
    }
}

impl From<LockError> for Failure {
    fn from(e: LockError) -> Self {
        match e {
            LockError::Busy => Failure::Busy,
            other => Failure::Other(other.to_string()),
        }
    }
}

fn stopped(data_dir: &Path) -> Result<DataLock, Failure> {
    if !data_dir.is_dir() {
        return Err(Failure::Other(format!(
            "no data folder at {}",
            data_dir.display()
        )));
    }
    Ok(DataLock::acquire(data_dir)?)
}

fn print(value: serde_json::Value) {
    println!("{value:#}");
}

/// The PostgreSQL catalog's URL, if set. Backup and restore copy the SQLite catalog file, so they
/// refuse with one: a PostgreSQL catalog is backed up with PostgreSQL's own tools.
fn catalog_url(args: &AdminArgs) -> Result<Option<&str>, Failure> {
    let url = crate::config::postgres_catalog(args.catalog_url.as_deref());
    let command = match args.command {
        AdminCommand::Backup { .. } => "backup",
        AdminCommand::Restore { .. } => "restore",
        _ => return Ok(url),
    };
    match url {
        None => Ok(None),
        Some(_) => Err(Failure::Other(format!(
            "`{command}` copies the SQLite catalog of the data folder, but RAPID_CATALOG_URL puts \
             the catalog in PostgreSQL: back it up with pg_dump (and the files with the data \
             folder or bucket) instead"
        ))),
    }
}

fn execute(args: &AdminArgs) -> Result<ExitCode, Failure> {
    let (dir, url) = (&args.data_dir, catalog_url(args)?);
    match &args.command {
        AdminCommand::CreateClient {
            name,
            permissions,
            layers,
        } => {
            let _lock = stopped(dir)?;
            let client = crate::admin_client::create(dir, url, layers, name, permissions)?;
            print(json!(client));
        }
        AdminCommand::ResetAdminSecret { client_id } => {
            let _lock = stopped(dir)?;
            let id = match client_id {
                Some(id) => id.clone(),
                None => keys::admin_client_id(dir, url)?.ok_or_else(|| {
                    Failure::Other(
                        "no admin client (rapid-admin) in this catalog: name one with --client-id"
                            .into(),
                    )
                })?,
            };
            let secret = keys::reset_client_secret(dir, url, &id)?;
            print(json!({"client_id": id, "client_secret": secret}));
        }
        AdminCommand::RotateKey { key_file } => {
            let _lock = stopped(dir)?;
            let store = rapid_actors::storage::Storage::new(dir);
            if url.is_none() && !store.catalog_file().is_file() {
                return Err(Failure::Other(format!("no store in {}", dir.display())));
            }
            keys::rotate_signing_key(&key_file.clone().unwrap_or_else(|| store.key_file()))?;
            eprintln!("rapid-admin: new signing key written; tokens issued before are refused from the next start");
        }
        AdminCommand::Backup { dest } => {
            let summary = if archive::is_archive(dest) {
                archive::backup_to_archive(dir, dest).map_err(Failure::Other)?
            } else {
                backup::backup(dir, dest)?
            };
            print(json!({"backup": dest, "summary": summary}));
        }
        AdminCommand::Restore { src } => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::Other(format!("creating {}: {e}", dir.display())))?;
            let _lock = stopped(dir)?;
            let files = if archive::is_archive(src) {
                archive::restore_from_archive(src, dir).map_err(Failure::Other)?
            } else {
                backup::restore(src, dir)?
            };
            let logged = check::write_delta_logs(dir, url)?;
            let report = check::check(dir, url, false, false)?;
            print(json!({"restored_files": files, "delta_log_versions": logged, "check": report}));
            if !report.clean() {
                return Ok(ExitCode::from(DRIFT));
            }
        }
        AdminCommand::Compact {
            dataset,
            target_bytes,
        } => {
            let _lock = stopped(dir)?;
            compact(dir, url, dataset.as_deref(), *target_bytes)?;
        }
        AdminCommand::Check { repair } => return check_command(dir, url, *repair),
        AdminCommand::Audit {
            command: AuditCommand::Verify,
        } => return audit_verify(dir, url),
    }
    Ok(ExitCode::SUCCESS)
}

/// `compact`: the latest version of every dataset (or of `dataset`, `layer/domain/dataset`).
fn compact(
    dir: &Path,
    url: Option<&str>,
    dataset: Option<&str>,
    target_bytes: u64,
) -> Result<(), Failure> {
    let only = match dataset.map(|d| d.split('/').collect::<Vec<_>>()) {
        None => None,
        Some(parts) if parts.len() == 3 => Some(rapid_actors::key::DatasetKey::new(
            parts[0], parts[1], parts[2],
        )),
        Some(_) => {
            return Err(Failure::Other(
                "--dataset is layer/domain/dataset, e.g. default/sales/orders".into(),
            ))
        }
    };
    let settings = rapid_actors::compaction::CompactionSettings {
        target_bytes,
        ..Default::default()
    };
    let report = rapid_actors::admin::compact::compact(dir, url, only.as_ref(), &settings)?;
    print(json!({ "compacted": report }));
    Ok(())
}

/// `check`: online unless the data folder's lock can be taken; a repair needs it.
fn check_command(dir: &Path, url: Option<&str>, repair: bool) -> Result<ExitCode, Failure> {
    // Online unless the lock can be taken; a repair needs it.
    if !dir.is_dir() {
        return Err(Failure::Other(format!(
            "no data folder at {}",
            dir.display()
        )));
    }
    let lock = DataLock::acquire(dir);
    let online = matches!(lock, Err(LockError::Busy));
    if repair && online {
        return Err(Failure::Busy);
    }
    let report = check::check(dir, url, online, repair)?;
    print(json!({"online": online, "report": report}));
    if !report.clean() {
        return Ok(ExitCode::from(DRIFT));
    }
    Ok(ExitCode::SUCCESS)
}

/// `audit verify`: the chain from the oldest row kept to the newest.
fn audit_verify(dir: &Path, url: Option<&str>) -> Result<ExitCode, Failure> {
    match rapid_actors::admin::audit::verify(dir, url) {
        Ok(found) => {
            print(
                json!({"verified": true, "rows": found.rows, "first": found.first, "last": found.last}),
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.kind == rapid_actors::ErrorKind::Conflict => {
            print(json!({"verified": false, "problem": e.to_string()}));
            Ok(ExitCode::from(DRIFT))
        }
        Err(e) => Err(e.into()),
    }
}
