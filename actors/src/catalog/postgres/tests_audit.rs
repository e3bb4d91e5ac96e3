//! The audit log's PostgreSQL store against a real server: two nodes appending at once keep one
//! chain (ids without gaps, every link verified), filters and retention as in SQLite.

use super::tests::{server_url, Schemas};
use crate::audit::{verify, AuditEntry, AuditFilter, AuditStore, Front};

fn entry(n: u64, front: Front) -> AuditEntry {
    AuditEntry {
        at: format!("2026-11-{:02}T10:00:00.000Z", 1 + n % 28),
        subject_id: Some(format!("s{}", n % 3)),
        subject_name: None,
        front,
        action: "SELECT".into(),
        layer: Some("default".into()),
        domain: Some("sales".into()),
        dataset: Some("orders".into()),
        version: Some(1),
        commit: None,
        columns: vec!["a".into()],
        policies: vec![],
        rows: Some(n),
        bytes: Some(10),
        status: 200,
        duration_ms: 1,
        request_id: Some(format!("r{n}")),
        client_addr: None,
        statement: Some("SELECT ? FROM t".into()),
    }
}

#[test]
fn two_nodes_append_one_chain_that_verifies_until_changed() {
    let Some(url) = server_url("two_nodes_append_one_chain_that_verifies_until_changed") else {
        return;
    };
    let schemas = Schemas::new(url);
    let schema = schemas.schema();
    let nodes: Vec<super::PostgresCatalog> = (0..2).map(|_| schemas.catalog_in(&schema)).collect();
    std::thread::scope(|scope| {
        for (i, node) in nodes.iter().enumerate() {
            scope.spawn(move || {
                for batch in 0..10u64 {
                    let n = i as u64 * 100 + batch * 2;
                    let front = if i == 0 { Front::Http } else { Front::Pg };
                    node.append(&[entry(n, front), entry(n + 1, front)])
                        .unwrap();
                }
            });
        }
    });
    let found = verify(&nodes[0]).unwrap();
    assert_eq!(
        (found.rows, found.first, found.last),
        (40, Some(1), Some(40))
    );
    let all = AuditFilter {
        limit: 1_000,
        ..Default::default()
    };
    let pg = nodes[1]
        .page(&AuditFilter {
            front: Some(Front::Pg),
            ..all.clone()
        })
        .unwrap();
    assert_eq!(pg.len(), 20);
    assert!(pg.iter().all(|r| r.entry.front == Front::Pg));
    let page = nodes[0]
        .page(&AuditFilter {
            after: Some(38),
            ..all.clone()
        })
        .unwrap();
    assert_eq!(page.iter().map(|r| r.id).collect::<Vec<_>>(), [39, 40]);
    let written = nodes[0].page(&all).unwrap();
    assert!(written.iter().any(|r| r.entry == entry(101, Front::Pg)));

    nodes[0]
        .with(|db| {
            db.execute(
                "UPDATE audit_events SET rows_returned = 7 WHERE id = 5",
                &[],
            )
            .map(|_| ())
        })
        .unwrap();
    let e = verify(&nodes[0]).unwrap_err().to_string();
    assert!(e.contains("row 5"), "{e}");

    // Retention: everything is old, the newest row stays.
    let removed = nodes[0].prune_before("2027-01-01").unwrap();
    assert_eq!(removed, 39);
    assert_eq!(nodes[1].page(&all).unwrap().len(), 1);
}

#[test]
fn openings_close_and_recover_in_postgresql() {
    let Some(url) = server_url("openings_close_and_recover_in_postgresql") else {
        return;
    };
    let schemas = Schemas::new(url);
    let node = schemas.catalog_in(&schemas.schema());
    crate::audit::tests::openings_close_and_recover(&node);
}
