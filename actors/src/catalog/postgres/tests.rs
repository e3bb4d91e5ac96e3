//! The PostgreSQL catalog against a real server: the conformance suite, calls from any kind of
//! thread, reconnection, migrations (locking across connections: `tests_locks.rs`).
//!
//! The server's URL comes from `RAPID_TEST_PG_URL` (scripts/pg.sh starts a throwaway one). Unset:
//! each test prints "skipped: ..." and passes, unless `RAPID_REQUIRE_PG=1` (scripts/test.sh, CI).
//! Each catalog lives in a new schema of its own, dropped at the end.

use std::sync::Arc;
use std::time::Instant;

use super::*;
use crate::catalog::interface::{DatasetCatalog, SubjectCatalog};
use crate::catalog::Catalog;
use crate::error::ErrorKind;
use crate::key::DatasetKey;
use crate::sensitivity::Sensitivity;

/// The test server's URL, or `None` after printing why the test is skipped.
pub(super) fn server_url(test: &str) -> Option<String> {
    match std::env::var("RAPID_TEST_PG_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("RAPID_REQUIRE_PG").as_deref() != Ok("1"),
                "{test}: RAPID_REQUIRE_PG=1 but RAPID_TEST_PG_URL is unset (scripts/pg.sh starts a server)"
            );
            println!("skipped: {test}: RAPID_TEST_PG_URL is unset (scripts/pg.sh starts a server)");
            None
        }
    }
}

/// Fresh schemas on one server, dropped when this goes.
pub(super) struct Schemas {
    url: String,
    made: std::sync::Mutex<Vec<String>>,
}

impl Schemas {
    pub(super) fn new(url: String) -> Schemas {
        Schemas {
            url,
            made: Default::default(),
        }
    }

    fn admin(&self) -> Pool {
        Pool::new(parse(&self.url).unwrap()).unwrap()
    }

    /// A new empty schema; returns its name.
    pub(super) fn schema(&self) -> String {
        let name = format!("rapid_test_{}", uuid::Uuid::new_v4().simple());
        self.admin()
            .with(|db| db.batch(&format!("CREATE SCHEMA {name}")))
            .unwrap();
        self.made.lock().unwrap().push(name.clone());
        name
    }

    /// Connection settings whose tables live in `schema`, tagged `app` in pg_stat_activity.
    fn config(&self, schema: &str, app: &str) -> Config {
        let mut config = parse(&self.url).unwrap();
        config.options(format!("-c search_path={schema}"));
        config.application_name(app);
        config
    }

    /// A catalog in `schema` (made by [`Self::schema`]).
    pub(super) fn catalog_in(&self, schema: &str) -> PostgresCatalog {
        PostgresCatalog::open_config(self.config(schema, "rapid-test")).unwrap()
    }

    pub(super) fn catalog(&self) -> PostgresCatalog {
        self.catalog_in(&self.schema())
    }
}

impl Drop for Schemas {
    fn drop(&mut self) {
        let made = std::mem::take(&mut *self.made.lock().unwrap());
        let admin = self.admin();
        for name in made {
            let dropped = admin.with(|db| db.batch(&format!("DROP SCHEMA {name} CASCADE")));
            if let Err(e) = dropped {
                eprintln!("dropping test schema {name}: {}", e.report());
            }
        }
    }
}

#[test]
fn postgres_passes_the_catalog_conformance_suite() {
    let Some(url) = server_url("postgres_passes_the_catalog_conformance_suite") else {
        return;
    };
    let schemas = Schemas::new(url);
    let started = Instant::now();
    crate::catalog::conformance::suite(&|| Arc::new(schemas.catalog()));
    println!(
        "catalog conformance suite on PostgreSQL: {:?} (a new schema and connections per case)",
        started.elapsed()
    );
}

#[test]
fn postgres_commit_latency() {
    let Some(url) = server_url("postgres_commit_latency") else {
        return;
    };
    let schemas = Schemas::new(url);
    let catalog = schemas.catalog();
    let per_commit = crate::catalog::conformance::commit_latency(&catalog, 200);
    println!("commit_upload on PostgreSQL: {per_commit:?} per commit (200 in a row, debug build)");
}

/// The sync client of the `postgres` crate panics when called inside a tokio runtime; this one is
/// called from a current-thread runtime, a multi-thread runtime's worker, `spawn_blocking` and an
/// actix system (where the dataset actors call it), and answers everywhere.
#[test]
fn callable_from_any_thread() {
    let Some(url) = server_url("callable_from_any_thread") else {
        return;
    };
    let schemas = Schemas::new(url);
    let catalog = Arc::new(schemas.catalog());
    let schema = crate::catalog::conformance::schema_of(1);
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    current.block_on(async {
        let key = DatasetKey::new("raw", "sales", "current");
        catalog
            .create_dataset(&key, "current", Sensitivity::Public, &schema)
            .unwrap();
    });
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (c1, c2, s) = (catalog.clone(), catalog.clone(), schema.clone());
    multi.block_on(async move {
        tokio::spawn(async move {
            let key = DatasetKey::new("raw", "sales", "worker");
            c1.create_dataset(&key, "worker", Sensitivity::Public, &s)
        })
        .await
        .unwrap()
        .unwrap();
        let keys = tokio::task::spawn_blocking(move || c2.dataset_keys())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(keys.len(), 2);
    });
    let c3 = catalog.clone();
    actix::System::new().block_on(async move {
        let found = c3.find_dataset(&DatasetKey::new("raw", "sales", "worker"));
        assert!(found.unwrap().is_some());
    });
    drop(current);
    drop(multi);
    assert_eq!(catalog.dataset_keys().unwrap().len(), 2);
}

/// PostgreSQL ends the catalog's connections (as a restart does): a call may fail once, as an
/// internal error, and the next one works on a new connection.
#[test]
fn reconnects_after_its_connections_are_killed() {
    let Some(url) = server_url("reconnects_after_its_connections_are_killed") else {
        return;
    };
    let schemas = Schemas::new(url);
    let schema = schemas.schema();
    let app = format!("rapid-reconnect-{}", uuid::Uuid::new_v4().simple());
    let catalog = PostgresCatalog::open_config(schemas.config(&schema, &app)).unwrap();
    catalog.create_protected_domain("land").unwrap();
    let admin = schemas.admin();
    let killed: i64 = admin
        .with(|db| {
            let row = db.query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
                &[&app],
            )?;
            Ok(row.try_get(0)?)
        })
        .unwrap();
    assert!(killed >= 1, "the catalog had a connection");
    for _ in 0..100 {
        let left: i64 = admin
            .with(|db| {
                let row = db.query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                    &[&app],
                )?;
                Ok(row.try_get(0)?)
            })
            .unwrap();
        if left == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if let Err(e) = catalog.ping() {
        assert_eq!(e.kind, ErrorKind::Internal, "{}", e.report());
    }
    catalog.ping().unwrap();
    assert_eq!(catalog.auth_rows().unwrap().protected_domains, ["land"]);
}

#[test]
fn migrations_are_versioned_and_applied_once() {
    let Some(url) = server_url("migrations_are_versioned_and_applied_once") else {
        return;
    };
    let schemas = Schemas::new(url);
    let empty = schemas.schema();
    let missing = PostgresCatalog::open_existing_config(schemas.config(&empty, "rapid-test"));
    assert_eq!(missing.err().map(|e| e.kind), Some(ErrorKind::NotFound));
    let schema = schemas.schema();
    schemas
        .catalog_in(&schema)
        .create_protected_domain("land")
        .unwrap();
    // Reopening applies nothing again (a second CREATE TABLE would fail) and keeps the rows.
    let catalog = schemas.catalog_in(&schema);
    assert_eq!(catalog.auth_rows().unwrap().protected_domains, ["land"]);
    let (count, max): (i64, i32) = catalog
        .with(|db| {
            let row = db.query_one("SELECT count(*), max(version) FROM catalog_migrations", &[])?;
            Ok((row.try_get(0)?, row.try_get(1)?))
        })
        .unwrap();
    assert_eq!(
        (count, i64::from(max)),
        (migrations::latest(), migrations::latest())
    );
    PostgresCatalog::open_existing_config(schemas.config(&schema, "rapid-test")).unwrap();
    catalog
        .with(|db| db.batch("INSERT INTO catalog_migrations VALUES (999, 'future')"))
        .unwrap();
    let newer = PostgresCatalog::open_config(schemas.config(&schema, "rapid-test"));
    let message = format!("{:?}", newer.err().map(|e| e.details));
    assert!(message.contains("newer than this binary"), "{message}");
}
