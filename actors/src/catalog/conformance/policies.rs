//! Dataset policies (one per schema version) and subject attributes: set, replaced, read,
//! removed, and gone with the dataset or subject they belong to.

use super::{dataset, schema};
use crate::catalog::{Catalog, Credential, SubjectRow};

pub(super) fn policy_per_version(c: &dyn Catalog) {
    let record = dataset(c, "policed");
    assert_eq!(c.policy(record.id, 1).unwrap(), None);
    assert!(c.put_policy(record.id, 1, "{\"a\":1}").unwrap());
    assert!(c.put_policy(record.id, 1, "{\"a\":2}").unwrap(), "replaced");
    assert_eq!(
        c.policy(record.id, 1).unwrap().as_deref(),
        Some("{\"a\":2}")
    );
    assert!(
        !c.put_policy(record.id, 2, "{}").unwrap(),
        "no version 2 yet"
    );
    assert_eq!(c.policy(record.id, 2).unwrap(), None);
    c.add_schema_version(&record.key, &mut |_| Ok(schema(2)))
        .unwrap();
    assert!(c.put_policy(record.id, 2, "{\"b\":1}").unwrap());
    assert_eq!(
        c.policy(record.id, 1).unwrap().as_deref(),
        Some("{\"a\":2}")
    );
    assert!(c.delete_policy(record.id, 1).unwrap());
    assert!(!c.delete_policy(record.id, 1).unwrap(), "already gone");
    assert_eq!(c.policy(record.id, 1).unwrap(), None);
    assert_eq!(
        c.policy(record.id, 2).unwrap().as_deref(),
        Some("{\"b\":1}")
    );
    // A new version takes the latest version's policy in its own transaction.
    c.add_schema_version(&record.key, &mut |_| Ok(schema(3)))
        .unwrap();
    assert_eq!(
        c.policy(record.id, 3).unwrap().as_deref(),
        Some("{\"b\":1}"),
        "carried to the new version"
    );
    c.delete_dataset(record.id).unwrap();
    assert_eq!(
        c.policy(record.id, 2).unwrap(),
        None,
        "gone with the dataset"
    );
}

pub(super) fn subject_attributes(c: &dyn Catalog) {
    let row = SubjectRow {
        id: "s-attr".into(),
        name: "attr-client".into(),
        email: None,
        credential: Credential::SecretDigest(vec![1]),
        must_change_password: false,
    };
    assert!(
        !c.put_subject_attributes("s-attr", "{}").unwrap(),
        "no subject yet"
    );
    assert!(c.create_subject(&row, &[]).unwrap());
    assert_eq!(c.subject_attributes("s-attr").unwrap(), None);
    assert!(c
        .put_subject_attributes("s-attr", "{\"region\":\"north\"}")
        .unwrap());
    assert!(c
        .put_subject_attributes("s-attr", "{\"region\":\"south\"}")
        .unwrap());
    assert_eq!(
        c.subject_attributes("s-attr").unwrap().as_deref(),
        Some("{\"region\":\"south\"}")
    );
    assert!(c.delete_client("s-attr").unwrap());
    assert_eq!(
        c.subject_attributes("s-attr").unwrap(),
        None,
        "gone with it"
    );
}
