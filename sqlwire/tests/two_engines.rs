//! Two engines in one process keep what they decide by to themselves: each has its own query
//! pools (slots, threads, memory), so a test or an embedding can open engines that differ.

use rapid_actors::query::{QueryKind, QuerySettings};

// The support module serves other tests too; this one uses only `seeded_engine`.
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
