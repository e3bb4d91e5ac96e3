//! The SQLite store and the chain: rows come back as written, filters narrow, the chain verifies
//! until a row is changed, removed or inserted, and still verifies after retention.

use std::sync::Arc;

use super::store::SqliteAudit;
use super::*;
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
    let log = AuditLog::start(s.clone(), None).unwrap();
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
