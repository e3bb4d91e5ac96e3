//! Two engines in one process keep what they decide by to themselves: each has its own query
//! pools (slots, threads, memory), its own durability and its own Delta checkpoint interval, so
//! a test or an embedding can open engines that differ.

use std::path::Path;

use rapid_actors::key::DatasetKey;
use rapid_actors::query::{QueryKind, QuerySettings};
use rapid_actors::storage::Durability;

// The support module serves other tests too; this one uses only `config`, `seeded`,
// `seeded_engine` and `upload_csv`.
#[allow(dead_code)]
#[path = "support/engine.rs"]
mod engine;

#[test]
fn two_engines_in_one_process_have_pools_of_their_own() {
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let settings = |concurrency| QuerySettings {
        concurrency,
        threads: 2,
        ..QuerySettings::default()
    };
    actix_rt::System::new().block_on(async move {
        let (a, ..) = engine::seeded_engine(a_dir.path().into(), "a", settings(1), &[]).await;
        let (b, ..) = engine::seeded_engine(b_dir.path().into(), "b", settings(3), &[]).await;
        assert_eq!(a.query_pools().load().sync.slots, 1);
        assert_eq!(b.query_pools().load().sync.slots, 3);

        // a's only slot taken: a refuses the next query, b still has all of its own.
        let _held = a.query_pools().admit(QueryKind::Sync).await.unwrap();
        assert!(a.query_pools().admit(QueryKind::Sync).await.is_err());
        assert_eq!(b.query_pools().load().sync.running, 0);
        let _b_slot = b.query_pools().admit(QueryKind::Sync).await.unwrap();
        assert_eq!(b.query_pools().load().sync.running, 1);
    });
}

const EVENTS: &str = r#"{"metadata": {"domain": "two", "dataset": "events", "sensitivity": "PUBLIC",
        "owners": [{"name": "Two", "email": "two@example.com"}]},
    "columns": [
        {"name": "id", "data_type": "int", "allow_null": false},
        {"name": "what", "data_type": "string", "allow_null": true}]}"#;
const ROWS: &str = "id,what\n1,open\n2,close\n";

/// The file names in the Delta log of version 1 of `default/two/events` in the data folder `dir`.
fn delta_log(dir: &Path) -> Vec<String> {
    let folder = dir.join("data/default/two/events/1/_delta_log");
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[test]
fn two_engines_in_one_process_sync_and_checkpoint_by_their_own_settings() {
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a_path, b_path) = (a_dir.path().to_path_buf(), b_dir.path().to_path_buf());
    actix_rt::System::new().block_on(async move {
        // a: no fsyncs, no checkpoints. b, opened after it: fully durable, a checkpoint every
        // two log versions. A setting held by the process would be b's for both.
        let mut a_config = engine::config(a_path.clone(), "a", QuerySettings::default());
        a_config.durability = Durability::Off;
        a_config.delta_checkpoint_interval = 0;
        let mut b_config = engine::config(b_path.clone(), "b", QuerySettings::default());
        b_config.durability = Durability::Full;
        b_config.delta_checkpoint_interval = 2;
        let (a, ..) = engine::seeded(a_config, &[(EVENTS, ROWS)]).await;
        let (b, ..) = engine::seeded(b_config, &[(EVENTS, ROWS)]).await;
        assert_eq!(a.durability(), Durability::Off);
        assert_eq!(b.durability(), Durability::Full);

        // Three commits in each: Delta log versions 0, 1 and 2.
        let key = DatasetKey::new("default", "two", "events");
        for engine in [&a, &b] {
            for _ in 0..2 {
                engine::upload_csv(engine, &key, ROWS).await;
            }
            // Every log brought up to date, with the checkpoint due (the commits' own log
            // writes may still be running: this waits for nothing, it writes what they would).
            engine.expire_history().unwrap();
        }
        let json: Vec<String> = (0..3).map(|v| format!("{v:020}.json")).collect();
        let (a_log, b_log) = (delta_log(&a_path), delta_log(&b_path));
        assert_eq!(a_log, json, "a checkpoints never");
        let checkpoint = format!("{:020}.checkpoint.parquet", 2);
        let mut b_expected = json.clone();
        b_expected.extend([checkpoint, "_last_checkpoint".to_string()]);
        b_expected.sort();
        assert_eq!(b_log, b_expected, "b checkpoints at version 2");
    });
}
