//! An in-process engine for the PostgreSQL front, seeded with small datasets and a
//! READ_ALL_PUBLIC client: shared by `sqlwire/tests/wire_findings.rs` and the `sql_wire` fuzz
//! target (`fuzz/fuzz_targets/sql_wire.rs` includes this file by path; the fuzz crate is a
//! workspace of its own).

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use rapid_actors::auth::pass::Write;
use rapid_actors::auth::{AdminCredentials, AuthSettings};
use rapid_actors::engine::{Engine, EngineConfig};
use rapid_actors::job_state::JobStatus;
use rapid_actors::key::DatasetKey;
use rapid_actors::query::QuerySettings;
use rapid_actors::schema::Schema;

pub(crate) const ADMIN_ID: &str = "seed-admin";
const ADMIN_SECRET: &str = "seed-admin-secret-0123456789abcdef0123456789";

/// The engine's settings in `dir`: `name` names the node and key file; statements end within
/// `query`'s time limit. Fully durable, a Delta checkpoint every 10 log versions.
pub(crate) fn config(dir: PathBuf, name: &str, query: QuerySettings) -> EngineConfig {
    let layers = vec!["default".to_string()];
    EngineConfig {
        data_dir: dir.clone(),
        catalog_url: None,
        node_id: name.into(),
        job_lease: Duration::from_secs(60),
        layers: layers.clone(),
        auth: AuthSettings {
            token_ttl_seconds: 3600,
            allowed_email_domains: vec![],
            admin_override: Some(AdminCredentials {
                client_id: ADMIN_ID.into(),
                client_secret: ADMIN_SECRET.into(),
            }),
            credentials_file: dir.join("admin-credentials.json"),
            key_file: dir.join(format!("{name}.key")),
            layers,
            hash_pool: Default::default(),
            throttle: Default::default(),
        },
        query,
        max_upload_bytes: 1 << 20,
        max_value_bytes: 1 << 16,
        result_ttl_seconds: 3600,
        storage_url: None,
        sweep_grace: Duration::from_secs(3600),
        durability: rapid_actors::storage::Durability::Full,
        delta_checkpoint_interval: 10,
        compaction: Default::default(),
        history: Default::default(),
        audit_retention: None,
        profile_uploads: true,
        deliveries: Default::default(),
    }
}

/// The engine with each of `datasets` (schema JSON, CSV rows) created in layer `default` and
/// uploaded, and a READ_ALL_PUBLIC client `{name}-reader`: (engine, its id, its secret).
pub(crate) async fn seeded_engine(
    dir: PathBuf,
    name: &str,
    query: QuerySettings,
    datasets: &[(&str, &str)],
) -> (Engine, String, String) {
    seeded(config(dir, name, query), datasets).await
}

/// [`seeded_engine`] opened with `config` (its node id names the reader).
pub(crate) async fn seeded(
    config: EngineConfig,
    datasets: &[(&str, &str)],
) -> (Engine, String, String) {
    let name = config.node_id.clone();
    let (engine, _) = Engine::open(config).expect("engine");
    let admin = admin(&engine);
    let admin_pass = engine.admin_pass(admin.clone()).expect("admin pass");
    for (schema, csv) in datasets {
        let schema: Schema = serde_json::from_str(schema).expect("schema json");
        engine
            .create_schema(&admin_pass, &schema)
            .await
            .expect("create schema");
        let key = DatasetKey::new("default", &schema.metadata.domain, &schema.metadata.dataset);
        upload_csv(&engine, &key, csv).await;
    }
    let user_admin = engine.user_admin_pass(admin).expect("user admin pass");
    let reader = engine
        .auth()
        .create_client(
            &user_admin,
            format!("{name}-reader"),
            vec!["READ_ALL_PUBLIC".into()],
        )
        .await
        .expect("reader client");
    (engine, reader.client_id, reader.client_secret)
}

fn admin(engine: &Engine) -> std::sync::Arc<rapid_actors::auth::Subject> {
    let admin = engine.auth().snapshot().subjects.get(ADMIN_ID).cloned();
    admin.expect("the admin client")
}

/// Uploads `csv` to the latest version of `key` as the admin client; returns once its job
/// succeeded (the commit is made).
pub(crate) async fn upload_csv(engine: &Engine, key: &DatasetKey, csv: &str) {
    let admin = admin(engine);
    let pass = engine.dataset_pass::<Write>(admin.clone(), key);
    let body = Bytes::from(csv.to_string());
    let body = futures_util::stream::iter([Ok::<_, rapid_actors::Error>(body)]);
    let accepted = engine
        .upload_target(pass.expect("write pass"), None)
        .expect("upload target")
        .receive("data.csv", body)
        .await
        .expect("upload");
    let subject = engine.subject_pass(admin);
    loop {
        let job = engine.job(&subject, &accepted.job_id).expect("job");
        match job.status {
            JobStatus::InProgress => tokio::time::sleep(Duration::from_millis(20)).await,
            JobStatus::Success => break,
            JobStatus::Failed => panic!("the upload failed: {:?}", job.errors),
        }
    }
}

/// A frontend message: its tag, its length (with itself) and `body`.
pub(crate) fn message(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}
