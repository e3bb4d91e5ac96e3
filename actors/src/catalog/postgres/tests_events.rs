//! Change events across nodes (two catalogs on one database, as two nodes hold them): events
//! committed by both get positions with no gap or repeat, and concurrent claims of deliveries
//! never hand one delivery to both nodes; a claim whose node died is taken over once its lease
//! ends.

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use super::tests::{server_url, Schemas};
use crate::catalog::conformance::schema_of;
use crate::catalog::interface::DatasetCatalog;
use crate::catalog::{EventRow, EventsCatalog, WebhookRow};
use crate::key::DatasetKey;
use crate::sensitivity::Sensitivity;

fn hook(id: &str) -> WebhookRow {
    WebhookRow {
        id: id.into(),
        url: "http://127.0.0.1:9/".into(),
        events: "[\"*\"]".into(),
        datasets: "[\"*\"]".into(),
        secret: "whsec_AAAA".into(),
        created_by: "s".into(),
        created_at: String::new(),
        after_event: 0,
    }
}

#[test]
fn two_nodes_position_events_and_claim_deliveries_once() {
    let Some(url) = server_url("two_nodes_position_events_and_claim_deliveries_once") else {
        return;
    };
    let schemas = Schemas::new(url);
    let schema = schemas.schema();
    let nodes = [
        Arc::new(schemas.catalog_in(&schema)),
        Arc::new(schemas.catalog_in(&schema)),
    ];
    for n in &nodes {
        n.create_webhook(&hook(&format!("wh_{}", Arc::as_ptr(n) as usize)))
            .unwrap();
    }
    // Both nodes create datasets (each a schema.created event) at once, sequencing as they go.
    let barrier = Arc::new(Barrier::new(2));
    let workers: Vec<_> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let (node, barrier) = (node.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for k in 0..20 {
                    let key = DatasetKey::new("raw", "ev", &format!("n{i}d{k}"));
                    node.create_dataset(&key, "d", Sensitivity::Public, &schema_of(1))
                        .unwrap();
                    node.sequence_events().unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    nodes[0].sequence_events().unwrap();
    let events = nodes[1].events_after(0, 1000).unwrap();
    let positions: Vec<i64> = events.iter().map(|e| e.position).collect();
    assert_eq!(positions, (1..=40).collect::<Vec<_>>(), "no gap, no repeat");
    let ids: BTreeSet<i64> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids.len(), 40);

    claims_are_shared_once(&nodes);
}

/// Fan-out by one node, claims by both at once: every delivery to exactly one node; a node
/// that dies holding claims leaves them to the other when the lease ends.
fn claims_are_shared_once(nodes: &[Arc<super::PostgresCatalog>; 2]) {
    let hooks: Vec<String> = nodes[0]
        .webhooks()
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    let mut wanted = |_: &EventRow| hooks.clone();
    assert_eq!(nodes[0].fan_out(1000, 0, &mut wanted).unwrap(), 40);
    let barrier = Arc::new(Barrier::new(2));
    let claims: Vec<_> = nodes
        .iter()
        .map(|node| {
            let (node, barrier) = (node.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut got = Vec::new();
                loop {
                    let batch = node.claim_deliveries(1_000, 60_000, 7).unwrap();
                    if batch.is_empty() {
                        return got;
                    }
                    got.extend(batch.into_iter().map(|d| (d.webhook_id, d.event_id)));
                }
            })
        })
        .collect();
    let got: Vec<Vec<(String, i64)>> = claims.into_iter().map(|c| c.join().unwrap()).collect();
    let (a, b): (BTreeSet<_>, BTreeSet<_>) = (
        got[0].iter().cloned().collect(),
        got[1].iter().cloned().collect(),
    );
    assert!(a.is_disjoint(&b), "a delivery claimed by both nodes");
    assert_eq!(a.len() + b.len(), 80, "every delivery claimed once");
    assert_eq!(got[0].len() + got[1].len(), 80);
    assert!(
        nodes[1]
            .claim_deliveries(30_000, 60_000, 100)
            .unwrap()
            .is_empty(),
        "leased"
    );
    let taken = nodes[1].claim_deliveries(61_001, 60_000, 100).unwrap();
    assert_eq!(taken.len(), 80, "every lease ended");
}
