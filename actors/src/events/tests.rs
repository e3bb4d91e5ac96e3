use super::delivery::after_attempt;
use super::*;
use crate::catalog::{DeliveryRow, DeliveryState};

fn committed() -> EventRow {
    EventRow {
        id: 7,
        position: 7,
        at: "2026-11-29T08:00:00.000Z".into(),
        kind: "dataset.committed".into(),
        layer: Some("raw".into()),
        domain: Some("sales".into()),
        dataset: Some("orders".into()),
        sensitivity: Some("PRIVATE".into()),
        version: Some(1),
        commit: Some(3),
        operation: Some("APPEND".into()),
        subject: Some("client-1".into()),
        rows_added: Some(10),
        rows_removed: Some(0),
        job_id: None,
        about: None,
        raw_filename: Some("r1.csv".into()),
    }
}

#[test]
fn a_commit_is_a_cloud_event_naming_its_dataset_and_rows() {
    let e = cloud_event(&committed(), "https://rapid.example");
    assert_eq!(e["specversion"], "1.0");
    assert_eq!(e["id"], "7");
    assert_eq!(e["type"], "dataset.committed");
    assert_eq!(e["subject"], "raw/sales/orders");
    assert_eq!(
        e["source"],
        "https://rapid.example/api/datasets/raw/sales/orders"
    );
    assert_eq!(e["time"], "2026-11-29T08:00:00.000Z");
    assert_eq!(e["data"]["commit"], 3);
    assert_eq!(e["data"]["rows_added"], 10);
    assert_eq!(e["data"]["rows_removed"], 0);
    assert_eq!(e["data"]["subject"], "client-1");
    assert!(e["data"].get("job_id").is_none(), "no nulls in data");
}

#[test]
fn interests_match_type_and_dataset() {
    let i = Interest {
        events: vec!["dataset.committed".into()],
        datasets: vec!["RAW/sales/Orders".into()],
    };
    assert!(i.wants(&committed()));
    let mut other = committed();
    other.dataset = Some("items".into());
    assert!(!i.wants(&other));
    other.kind = "schema.created".into();
    let all = Interest {
        events: vec!["*".into()],
        datasets: vec!["*".into()],
    };
    assert!(all.wants(&other));
}

#[test]
fn after_attempt_backs_off_doubling_then_dies() {
    let d = DeliveryRow {
        webhook_id: "h".into(),
        event_id: 1,
        state: DeliveryState::Pending,
        attempts: 0,
        next_at: 0,
        last_status: None,
        last_error: None,
        first_at: None,
        done_at: None,
    };
    let day = 86_400_000;
    let a = after_attempt(&d, 1_000, Err((Some(500), "boom".into())), day);
    assert_eq!(
        (a.state, a.attempts, a.next_at),
        (DeliveryState::Pending, 1, 2_000)
    );
    let b = after_attempt(&a, 2_000, Err((None, "refused".into())), day);
    assert_eq!((b.attempts, b.next_at, b.first_at), (2, 4_000, Some(1_000)));
    let mut late = b.clone();
    late.attempts = 30;
    let c = after_attempt(&late, 1_000 + day, Err((Some(503), "down".into())), day);
    assert_eq!(c.state, DeliveryState::Dead);
    let ok = after_attempt(&b, 5_000, Ok(204), day);
    assert_eq!(
        (ok.state, ok.last_status, ok.attempts),
        (DeliveryState::Delivered, Some(204), 3)
    );
}
