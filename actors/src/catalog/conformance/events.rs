//! The outbox: one event exactly for each change that happened (none for a refused commit or a
//! compaction), in the change's order, and webhook deliveries claimed, leased, retried and
//! released.

use super::{dataset, kind_of, schema, upload, upload_job};
use crate::catalog::{Catalog, Credential, DeliveryState, EventRow, SubjectRow, WebhookRow};
use crate::error::ErrorKind;

fn all_events(c: &dyn Catalog) -> Vec<EventRow> {
    c.sequence_events().unwrap();
    c.events_after(0, 1000).unwrap()
}

fn kinds(events: &[EventRow]) -> Vec<String> {
    events.iter().map(|e| e.kind.clone()).collect()
}

/// One change of every kind on dataset `evented` and subject `s-ev` (and one refused commit);
/// answers the refused upload's job id.
fn changes_of_every_kind(c: &dyn Catalog) -> String {
    let record = dataset(c, "evented");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(&record, &job, "r1.csv", &["data/a.parquet"]))
        .unwrap();
    // Refused: based on nothing. No event for it.
    let job2 = upload_job(c, &record, "s1", "r2.csv");
    let stale = upload(&record, &job2, "r2.csv", &["data/b.parquet"]);
    assert_eq!(kind_of(c.commit_upload(&stale)), ErrorKind::Conflict);
    c.fail_job(&job2, &["refused".to_string()]).unwrap();
    c.delete_raw_file(record.id, 1, "r1.csv", Some("s1"))
        .unwrap();
    c.add_schema_version(&record.key, &mut |_| Ok(schema(2)))
        .unwrap();
    assert!(c.put_policy(record.id, 1, "{}").unwrap());
    assert!(c.put_policy(record.id, 1, "{\"x\":1}").unwrap());
    assert!(c.delete_policy(record.id, 1).unwrap());
    let subject = SubjectRow {
        id: "s-ev".into(),
        name: "ev-client".into(),
        email: None,
        credential: Credential::SecretDigest(vec![1]),
        must_change_password: false,
    };
    assert!(c.create_subject(&subject, &["READ_ALL".into()]).unwrap());
    assert!(c
        .replace_permissions("s-ev", &["READ_ALL".into(), "WRITE_ALL".into()])
        .unwrap());
    // Its policy goes with the dataset: the deletion is one event, no policy change.
    assert!(c.put_policy(record.id, 2, "{}").unwrap());
    c.delete_dataset(record.id).unwrap();
    job2
}

pub(super) fn outbox_follows_changes(c: &dyn Catalog) {
    let job2 = changes_of_every_kind(c);
    let events = all_events(c);
    assert_eq!(
        kinds(&events),
        [
            "schema.created",
            "dataset.committed",
            "upload.rejected",
            "dataset.committed",
            "schema.updated",
            "policy.changed",
            "policy.changed",
            "policy.changed",
            "permission.changed",
            "permission.changed",
            "policy.changed",
            "dataset.deleted",
        ]
    );
    let commit = &events[1];
    assert_eq!(
        (commit.layer.as_deref(), commit.dataset.as_deref()),
        (Some("raw"), Some("evented"))
    );
    assert_eq!(commit.sensitivity.as_deref(), Some("PUBLIC"));
    assert_eq!((commit.version, commit.commit), (Some(1), Some(1)));
    assert_eq!(commit.operation.as_deref(), Some("APPEND"));
    assert_eq!((commit.rows_added, commit.rows_removed), (Some(2), Some(0)));
    assert_eq!(commit.raw_filename.as_deref(), Some("r1.csv"));
    assert_eq!(events[2].job_id.as_deref(), Some(job2.as_str()));
    assert_eq!(events[2].raw_filename.as_deref(), Some("r2.csv"));
    let delete = &events[3];
    assert_eq!(delete.operation.as_deref(), Some("DELETE"));
    assert_eq!(delete.rows_removed, Some(2));
    assert_eq!(delete.subject.as_deref(), Some("s1"));
    assert_eq!(
        (
            events[5].operation.as_deref(),
            events[7].operation.as_deref()
        ),
        (Some("SET"), Some("REMOVED"))
    );
    assert_eq!(events[8].about.as_deref(), Some("s-ev"));
    assert_eq!(
        events[11].dataset.as_deref(),
        Some("evented"),
        "named after its row is gone"
    );
    for pair in events.windows(2) {
        assert!(pair[0].position < pair[1].position, "positions ascend");
    }
    // Paging by position loses nothing.
    let first = c.events_after(0, 5).unwrap();
    let rest = c
        .events_after(first.last().unwrap().position, 1000)
        .unwrap();
    assert_eq!(first.len() + rest.len(), events.len());
    assert_eq!(
        c.last_event_position().unwrap(),
        events.last().unwrap().position
    );
    assert_eq!(c.event(events[1].id).unwrap().as_ref(), Some(&events[1]));
}

fn hook(id: &str) -> WebhookRow {
    WebhookRow {
        id: id.into(),
        url: "http://127.0.0.1:9/hook".into(),
        events: "[\"*\"]".into(),
        datasets: "[\"*\"]".into(),
        secret: "whsec_AAAA".into(),
        created_by: "s1".into(),
        created_at: String::new(),
        after_event: 0,
    }
}

pub(super) fn deliveries_are_leased_retried_and_redelivered(c: &dyn Catalog) {
    let record = dataset(c, "hooked");
    let after = c.create_webhook(&hook("wh_a")).unwrap();
    assert_eq!(after, all_events(c).last().unwrap().position);
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(&record, &job, "r1.csv", &["data/a.parquet"]))
        .unwrap();
    c.sequence_events().unwrap();
    let stored = c.webhooks().unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].after_event, after);
    // Only events after the subscription are owed.
    let mut wanted = |e: &EventRow| -> Vec<String> {
        match e.position > after {
            true => vec!["wh_a".to_string()],
            false => vec![],
        }
    };
    assert_eq!(c.fan_out(100, 1_000, &mut wanted).unwrap(), 2);
    assert_eq!(
        c.fan_out(100, 1_000, &mut wanted).unwrap(),
        0,
        "fanned out once"
    );
    let claimed = c.claim_deliveries(1_000, 60_000, 10).unwrap();
    assert_eq!(claimed.len(), 1);
    assert!(
        c.claim_deliveries(2_000, 60_000, 10).unwrap().is_empty(),
        "leased"
    );
    let mut failed = claimed[0].clone();
    failed.attempts = 1;
    failed.next_at = 5_000;
    failed.last_status = Some(500);
    failed.first_at = Some(1_000);
    c.finish_delivery(&failed).unwrap();
    assert!(
        c.claim_deliveries(4_000, 60_000, 10).unwrap().is_empty(),
        "not due"
    );
    let again = c.claim_deliveries(5_000, 60_000, 10).unwrap();
    assert_eq!((again.len(), again[0].attempts), (1, 1));
    assert_eq!(c.release_claims().unwrap(), 1);
    let mut dead = again[0].clone();
    dead.state = DeliveryState::Dead;
    c.finish_delivery(&dead).unwrap();
    assert!(
        c.claim_deliveries(9_000, 60_000, 10).unwrap().is_empty(),
        "dead"
    );
    let shown = c.deliveries("wh_a", 10).unwrap();
    assert_eq!(shown[0].state, DeliveryState::Dead);
    assert!(c.redeliver("wh_a", dead.event_id, 10_000).unwrap());
    assert!(
        !c.redeliver("wh_a", 999_999, 10_000).unwrap(),
        "no such event"
    );
    let due = c.claim_deliveries(10_000, 60_000, 10).unwrap();
    assert_eq!((due.len(), due[0].state), (1, DeliveryState::Pending));
    assert!(c.delete_webhook("wh_a").unwrap());
    assert!(!c.delete_webhook("wh_a").unwrap());
    assert!(c.deliveries("wh_a", 10).unwrap().is_empty(), "gone with it");
}
