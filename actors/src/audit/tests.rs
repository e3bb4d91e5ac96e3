//! The SQLite store and the chain: rows come back as written, filters narrow, the chain verifies
//! until a row is changed, removed or inserted, and still verifies after retention; openings are
//! replaced by their rows, and a crash's become rows with status 0.

use std::sync::Arc;

use super::pending::{Batch, Opened, Opening, Row, OUTCOME_UNKNOWN};
use super::store::SqliteAudit;
use super::*;
use crate::key::DatasetKey;
use crate::storage::Durability;

fn entry(n: u64, subject: &str, front: Front, dataset: Option<&str>) -> AuditEntry {
    AuditEntry {
        at: format!("2026-11-{:02}T10:00:00.000Z", 1 + n % 28),
        subject_id: Some(subject.to_string()),
        subject_name: Some(format!("name-{subject}")),
        front,
        action: "POST /api/datasets/{layer}/{domain}/{dataset}/query".into(),
        layer: dataset.map(|_| "default".to_string()),
        domain: dataset.map(|_| "sales".to_string()),
        dataset: dataset.map(str::to_string),
        version: dataset.map(|_| 1),
        commit: Some(n as i64),
        columns: vec!["a".into(), "b".into()],
        policies: vec!["mask:email".into()],
        rows: Some(n),
        bytes: None,
        status: 200,
        duration_ms: n,
        request_id: Some(format!("r{n}")),
        client_addr: Some("127.0.0.1".into()),
        statement: Some("a > ?".into()),
    }
}

fn store(dir: &tempfile::TempDir) -> Arc<SqliteAudit> {
    Arc::new(SqliteAudit::open(&dir.path().join("audit.sqlite"), Durability::Full).unwrap())
}

fn all(store: &SqliteAudit) -> AuditFilter {
    let _ = store;
    AuditFilter {
        limit: 1_000,
        ..Default::default()
    }
}

#[test]
fn rows_come_back_as_written_and_filters_narrow() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let written: Vec<_> = (1..=6)
        .map(|n| {
            let front = if n % 2 == 0 { Front::Pg } else { Front::Http };
            entry(n, if n < 4 { "s1" } else { "s2" }, front, Some("orders"))
        })
        .collect();
    s.append(&written[..2]).unwrap();
    s.append(&written[2..]).unwrap();
    let rows = s.page(&all(&s)).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.id).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    assert_eq!(
        rows.iter().map(|r| r.entry.clone()).collect::<Vec<_>>(),
        written
    );

    let pick = |f: AuditFilter| -> Vec<i64> { s.page(&f).unwrap().iter().map(|r| r.id).collect() };
    let base = all(&s);
    assert_eq!(
        pick(AuditFilter {
            subject_id: Some("s2".into()),
            ..base.clone()
        }),
        [4, 5, 6]
    );
    assert_eq!(
        pick(AuditFilter {
            front: Some(Front::Pg),
            ..base.clone()
        }),
        [2, 4, 6]
    );
    assert_eq!(
        pick(AuditFilter {
            dataset: Some("ORDERS".into()),
            after: Some(4),
            ..base.clone()
        }),
        [5, 6]
    );
    assert_eq!(
        pick(AuditFilter {
            limit: 2,
            after: Some(1),
            ..base.clone()
        }),
        [2, 3]
    );
    assert_eq!(
        pick(AuditFilter {
            since: Some("2026-11-03".into()),
            until: Some("2026-11-05".into()),
            ..base.clone()
        }),
        [2, 3]
    );
    assert!(pick(AuditFilter {
        dataset: Some("other".into()),
        ..base
    })
    .is_empty());
}

#[test]
fn the_chain_finds_a_changed_removed_or_inserted_row() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let rows: Vec<_> = (1..=5).map(|n| entry(n, "s1", Front::Http, None)).collect();
    s.append(&rows).unwrap();
    let found = verify(s.as_ref()).unwrap();
    assert_eq!((found.rows, found.first, found.last), (5, Some(1), Some(5)));

    let raw = rusqlite::Connection::open(dir.path().join("audit.sqlite")).unwrap();
    let tamper = |sql: &str| raw.execute_batch(sql).unwrap();
    tamper("UPDATE audit_events SET rows_returned = 99 WHERE id = 3");
    let e = verify(s.as_ref()).unwrap_err().to_string();
    assert!(e.contains("row 3"), "{e}");
    tamper("UPDATE audit_events SET rows_returned = 3 WHERE id = 3");
    verify(s.as_ref()).unwrap();

    tamper("DELETE FROM audit_events WHERE id = 4");
    let e = verify(s.as_ref()).unwrap_err().to_string();
    assert!(e.contains("row 5"), "{e}");
}

#[test]
fn retention_keeps_the_newest_row_and_what_remains_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let rows: Vec<_> = (1..=5).map(|n| entry(n, "s1", Front::Job, None)).collect();
    s.append(&rows).unwrap();
    assert_eq!(s.prune_before("2026-11-04").unwrap(), 2);
    let found = verify(s.as_ref()).unwrap();
    assert_eq!((found.rows, found.first), (3, Some(3)));
    // Everything older: the newest row stays, the chain goes on from it.
    assert_eq!(s.prune_before("2027-01-01").unwrap(), 2);
    s.append(&[entry(9, "s1", Front::Web, None)]).unwrap();
    let found = verify(s.as_ref()).unwrap();
    assert_eq!((found.rows, found.first, found.last), (2, Some(5), Some(6)));
}

#[test]
fn the_writer_answers_once_rows_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let log = AuditLog::start(s.clone(), None, Writers::One).unwrap();
    let threads: Vec<_> = (0..8)
        .map(|n| {
            let log = log.clone();
            std::thread::spawn(move || log.record_blocking(entry(n, "s1", Front::Sql, None)))
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    assert_eq!(s.page(&all(&s)).unwrap().len(), 8);
    assert_eq!(verify(s.as_ref()).unwrap().rows, 8);
}

/// Openings replace each other, a row closes its opening, a recovered opening becomes a row with
/// status 0 once (not again, nor after its row came), and the chain verifies. Both stores.
pub(crate) fn openings_close_and_recover(s: &dyn AuditStore) {
    let opened = |key: &str, n| Opened {
        key: key.into(),
        entry: entry(n, "s1", Front::Http, Some("orders")),
    };
    let keys = |left: Vec<Opened>| left.into_iter().map(|o| o.key).collect::<Vec<_>>();
    let only = |opened: Vec<Opened>| Batch {
        opened,
        ..Batch::default()
    };
    s.write(&only(vec![opened("a", 1), opened("b", 2)]))
        .unwrap();
    s.write(&only(vec![opened("a", 3)])).unwrap();
    let left = s.pending(None).unwrap();
    assert_eq!(
        left[1].entry.rows,
        Some(3),
        "the later opening replaces the earlier"
    );
    assert_eq!(keys(left), ["b", "a"], "oldest first");
    assert_eq!(keys(s.pending(Some("2026-11-04")).unwrap()), ["b"]);
    assert!(s.pending(Some("2026-11-01")).unwrap().is_empty());

    let row = Row {
        entry: entry(4, "s1", Front::Http, Some("orders")),
        closes: Some("b".into()),
        only_if_open: false,
    };
    // Lazily, as the writer commits rows whose openings are durable; then synced.
    s.write(&Batch {
        rows: vec![row],
        lazy: true,
        ..Batch::default()
    })
    .unwrap();
    s.sync().unwrap();
    assert_eq!(keys(s.pending(None).unwrap()), ["a"]);

    s.write(&Batch::recovering(s.pending(None).unwrap()))
        .unwrap();
    // Recovered again (another node, the same moment) or after its row came: nothing appended.
    s.write(&Batch::recovering(vec![opened("a", 3), opened("b", 2)]))
        .unwrap();
    assert!(s.pending(None).unwrap().is_empty());
    let rows = s
        .page(&AuditFilter {
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    let seen: Vec<_> = rows
        .iter()
        .map(|r| (r.entry.rows, r.entry.status))
        .collect();
    assert_eq!(seen, [(Some(4), 200), (Some(3), OUTCOME_UNKNOWN)]);
    assert_eq!(verify(s).unwrap().rows, 2);
}

#[test]
fn sqlite_openings_close_and_recover() {
    let dir = tempfile::tempdir().unwrap();
    openings_close_and_recover(store(&dir).as_ref());
}

fn reading(log: &AuditLog, request: &str) -> Note {
    let opener = Opener::new(
        log,
        Front::Http,
        "POST /query".into(),
        Some(request.into()),
        None,
    );
    let note = Note::opened_by(opener);
    note.by("s1", "ana");
    note.statement("a > ?".into());
    let key = DatasetKey::new("default", "sales", "orders");
    note.read(&key, 1, Some(7), ["a".to_string()], &[]);
    note
}

#[tokio::test]
async fn a_read_opens_its_row_and_a_crash_leaves_it_with_status_0() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let log = AuditLog::start(s.clone(), None, Writers::One).unwrap();
    let unread = Note::opened_by(Opener::new(&log, Front::Http, "GET /x".into(), None, None));
    assert!(
        unread.take_opening().is_none(),
        "nothing read, nothing opened"
    );

    // Answered: the row replaces its opening; the request did not wait for the row's fsync.
    let note = reading(&log, "r1");
    let opening = note.take_opening().expect("a read opens the row");
    let mut row = entry(1, "s1", Front::Http, Some("orders"));
    row.request_id = Some("r1".into());
    log.finish(row.clone(), Some(opening)).await.unwrap();
    assert!(note.take_opening().is_none(), "taken once");
    // Committed lazily, then synced once the writer has been quiet; it writes on after that.
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert!(s.pending(None).unwrap().is_empty());
    log.flush().await.unwrap();

    // Cut after its opening is durable, before its row: the next start makes the row.
    let cut = reading(&log, "r2");
    let Some(Opening {
        written: Some(written),
        ..
    }) = cut.take_opening()
    else {
        panic!("a read opens the row")
    };
    written.await.unwrap().unwrap();
    drop(log);
    let several = AuditLog::start(s.clone(), None, Writers::Several).unwrap();
    assert_eq!(
        s.pending(None).unwrap().len(),
        1,
        "another node's may be live"
    );
    drop(several);
    let _log = AuditLog::start(s.clone(), None, Writers::One).unwrap();
    assert!(s.pending(None).unwrap().is_empty());
    let rows = s.page(&all(&s)).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].entry, row);
    let recovered = &rows[1].entry;
    assert_eq!(recovered.status, OUTCOME_UNKNOWN);
    assert_eq!(recovered.request_id.as_deref(), Some("r2"));
    assert_eq!(recovered.subject_id.as_deref(), Some("s1"));
    assert_eq!(recovered.dataset.as_deref(), Some("orders"));
    assert_eq!(recovered.columns, ["a"]);
    assert_eq!(recovered.statement.as_deref(), Some("a > ?"));
    assert_eq!(recovered.action, "POST /query");
    assert_eq!(verify(s.as_ref()).unwrap().rows, 2);
}
