//! Datasets and schema versions.

use super::{dataset, key, kind_of, schema, upload, upload_job};
use crate::catalog::{Catalog, SchemaVersion};
use crate::error::{Error, ErrorKind};
use crate::key::DatasetKey;
use crate::sensitivity::Sensitivity;

pub(super) fn create_find_and_list(c: &dyn Catalog) {
    assert!(c.find_dataset(&key("sales")).unwrap().is_none());
    assert!(c.dataset_keys().unwrap().is_empty());
    let created = c
        .create_dataset(&key("Zeta"), "Zeta", Sensitivity::Private, &schema(1))
        .unwrap();
    dataset(c, "alpha");
    let other_layer = DatasetKey::new("clean", "sales", "beta");
    c.create_dataset(&other_layer, "beta", Sensitivity::Public, &schema(1))
        .unwrap();
    let found = c
        .find_dataset(&DatasetKey::new("RAW", "Sales", "ZETA"))
        .unwrap();
    let found = found.expect("found regardless of case");
    assert_eq!(found.id, created.id);
    assert_eq!(found.name, "Zeta", "the name keeps its case");
    assert_eq!(found.sensitivity, Sensitivity::Private);
    assert_eq!(found.latest_version, 1);
    let keys: Vec<String> = c
        .dataset_keys()
        .unwrap()
        .iter()
        .map(|k| k.display())
        .collect();
    assert_eq!(
        keys,
        ["clean/sales/beta", "raw/sales/alpha", "raw/sales/zeta"]
    );
    let again = c.create_dataset(&key("ZETA"), "ZETA", Sensitivity::Public, &schema(1));
    assert_eq!(kind_of(again), ErrorKind::Conflict);
    assert_eq!(
        c.dataset_keys().unwrap().len(),
        3,
        "the conflict added nothing"
    );
    assert_eq!(
        c.schema_json(created.id, 1).unwrap().as_deref(),
        Some("{\"version\":1}")
    );
    assert_eq!(c.schema_json(created.id, 2).unwrap(), None);
    // Metadata edited in place: only over the JSON it was read from, and only that version.
    let edited = "{\"version\":1,\"e\":1}";
    assert!(!c.replace_schema_json(created.id, 1, "{}", edited).unwrap());
    assert!(!c
        .replace_schema_json(created.id, 2, "{\"version\":1}", edited)
        .unwrap());
    assert!(c
        .replace_schema_json(created.id, 1, "{\"version\":1}", edited)
        .unwrap());
    assert_eq!(
        c.schema_json(created.id, 1).unwrap().as_deref(),
        Some(edited)
    );
    assert_eq!(
        c.find_dataset(&key("zeta"))
            .unwrap()
            .unwrap()
            .latest_version,
        1
    );
}

pub(super) fn protected_schema_needs_its_domain(c: &dyn Catalog) {
    let protected = SchemaVersion {
        protected_domain: Some("sales".into()),
        ..schema(1)
    };
    let refused = c.create_dataset(&key("secret"), "secret", Sensitivity::Protected, &protected);
    assert_eq!(kind_of(refused), ErrorKind::Invalid);
    assert!(
        c.find_dataset(&key("secret")).unwrap().is_none(),
        "nothing left"
    );
    assert!(c.dataset_keys().unwrap().is_empty());
    assert!(c.create_protected_domain("sales").unwrap());
    let record = c
        .create_dataset(&key("secret"), "secret", Sensitivity::Protected, &protected)
        .unwrap();
    assert_eq!(record.sensitivity, Sensitivity::Protected);
}

pub(super) fn schema_versions(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let mut seen = 0;
    let bumped = c
        .add_schema_version(&record.key, &mut |current| {
            seen = current.latest_version;
            Ok(schema(current.latest_version + 1))
        })
        .unwrap();
    assert_eq!(seen, 1);
    assert_eq!(bumped.latest_version, 2);
    assert_eq!(
        c.find_dataset(&record.key).unwrap().unwrap().latest_version,
        2
    );
    assert_eq!(
        c.schema_json(record.id, 2).unwrap().as_deref(),
        Some("{\"version\":2}")
    );
    let refused = c.add_schema_version(&record.key, &mut |_| Err(Error::invalid("no")));
    assert_eq!(kind_of(refused), ErrorKind::Invalid);
    assert_eq!(
        c.find_dataset(&record.key).unwrap().unwrap().latest_version,
        2
    );
    let taken = c.add_schema_version(&record.key, &mut |_| Ok(schema(2)));
    assert!(taken.is_err(), "a version number is stored once");
    let missing = c.add_schema_version(&key("nope"), &mut |_| Ok(schema(1)));
    assert_eq!(kind_of(missing), ErrorKind::NotFound);
    let protected = c.add_schema_version(&record.key, &mut |_| {
        Ok(SchemaVersion {
            protected_domain: Some("gone".into()),
            ..schema(3)
        })
    });
    assert_eq!(kind_of(protected), ErrorKind::Invalid);
    assert_eq!(c.schema_json(record.id, 3).unwrap(), None);
}

pub(super) fn delete_removes_everything(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    let kept = dataset(c, "kept");
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(&record, &job, "r1.csv", &["data/a.parquet"]))
        .unwrap();
    let job = upload_job(c, &kept, "s1", "r2.csv");
    c.commit_upload(&upload(&kept, &job, "r2.csv", &["data/b.parquet"]))
        .unwrap();
    c.delete_dataset(record.id).unwrap();
    assert!(c.find_dataset(&record.key).unwrap().is_none());
    assert!(c.data_files(record.id, 1).unwrap().is_empty());
    assert!(c.raw_files(record.id, 1).unwrap().is_empty());
    assert_eq!(c.schema_json(record.id, 1).unwrap(), None);
    let stored = c.stored_files().unwrap();
    assert_eq!(stored.data.len(), 1, "the other dataset's files stay");
    assert_eq!(stored.data[0].path, "data/b.parquet");
    assert_eq!(stored.raw.len(), 1);
    assert_eq!(stored.raw[0].key, kept.key);
}

pub(super) fn last_update_and_uploader(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    assert_eq!(c.last_updated(record.id, 1).unwrap(), None);
    assert_eq!(c.last_uploaded_by(record.id, 1).unwrap(), None);
    let job = upload_job(c, &record, "s1", "r1.csv");
    let mut first = upload(&record, &job, "r1.csv", &["data/a.parquet"]);
    first.uploaded_by = "first".into();
    c.commit_upload(&first).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let job = upload_job(c, &record, "s1", "r2.csv");
    let mut second = upload(&record, &job, "r2.csv", &["data/b.parquet"]);
    second.uploaded_by = "second".into();
    second.based_on = Some(c.manifest_generation(record.id, 1).expect("generation"));
    c.commit_upload(&second).unwrap();
    let updated = c.last_updated(record.id, 1).unwrap().expect("updated");
    let raw = c.raw_files(record.id, 1).unwrap();
    assert_eq!(updated, raw.last().unwrap().uploaded_at);
    assert!(
        chrono::DateTime::parse_from_rfc3339(&updated).is_ok(),
        "RFC 3339: {updated}"
    );
    assert_eq!(
        c.last_uploaded_by(record.id, 1).unwrap().as_deref(),
        Some("second")
    );
    assert_eq!(c.last_updated(record.id, 2).unwrap(), None);
}
