//! Subjects, credentials, permissions, protected domains, the admin client, figures.

use super::{dataset, key, schema, upload, upload_job};
use crate::catalog::{AdminClient, Catalog, Credential, DomainDeletion, SchemaVersion, SubjectRow};
use crate::error::Error;
use crate::sensitivity::Sensitivity;

fn client(id: &str, name: &str) -> SubjectRow {
    SubjectRow {
        id: id.into(),
        name: name.into(),
        email: None,
        credential: Credential::SecretDigest(vec![1, 2, 3]),
        must_change_password: false,
    }
}

fn user(id: &str, name: &str, email: &str) -> SubjectRow {
    SubjectRow {
        id: id.into(),
        name: name.into(),
        email: Some(email.into()),
        credential: Credential::PasswordHash("hash".into()),
        must_change_password: true,
    }
}

fn perms(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// (subject id, permission) rows of one subject, in grant order.
fn permissions_of(c: &dyn Catalog, id: &str) -> Vec<String> {
    let rows = c.auth_rows().unwrap();
    rows.permissions
        .into_iter()
        .filter(|(s, _)| s == id)
        .map(|(_, p)| p)
        .collect()
}

fn subject(c: &dyn Catalog, id: &str) -> Option<SubjectRow> {
    c.auth_rows()
        .unwrap()
        .subjects
        .into_iter()
        .find(|s| s.id == id)
}

pub(super) fn create_and_read_back(c: &dyn Catalog) {
    assert!(c.auth_rows().unwrap().subjects.is_empty());
    assert!(c
        .create_subject(
            &client("c1", "Reporter"),
            &perms(&["READ_ALL", "WRITE_ALL"])
        )
        .unwrap());
    assert!(c
        .create_subject(
            &user("u1", "Ann", "ann@example.com"),
            &perms(&["USER_ADMIN"])
        )
        .unwrap());
    assert_eq!(subject(c, "c1"), Some(client("c1", "Reporter")));
    assert_eq!(subject(c, "u1"), Some(user("u1", "Ann", "ann@example.com")));
    assert_eq!(
        permissions_of(c, "c1"),
        ["READ_ALL", "WRITE_ALL"],
        "grant order"
    );
    assert_eq!(permissions_of(c, "u1"), ["USER_ADMIN"]);
    assert_eq!(c.auth_rows().unwrap().subjects.len(), 2);
}

pub(super) fn names_and_emails_are_unique(c: &dyn Catalog) {
    assert!(c
        .create_subject(&client("c1", "Reporter"), &perms(&["READ_ALL"]))
        .unwrap());
    assert!(!c
        .create_subject(&client("c2", "REPORTER"), &perms(&["WRITE_ALL"]))
        .unwrap());
    assert!(subject(c, "c2").is_none(), "nothing created");
    assert!(permissions_of(c, "c2").is_empty());
    assert!(
        c.create_subject(&user("u1", "reporter", "r@example.com"), &[])
            .unwrap(),
        "kinds apart"
    );
    assert!(
        !c.create_subject(&user("u2", "other", "r@example.com"), &[])
            .unwrap(),
        "email taken"
    );
    assert!(!c
        .create_subject(&user("u3", "Reporter", "x@example.com"), &[])
        .unwrap());
    assert!(
        !c.create_subject(&client("c1", "fresh"), &[]).unwrap(),
        "id taken"
    );
    assert_eq!(c.auth_rows().unwrap().subjects.len(), 2);
}

pub(super) fn delete_subjects(c: &dyn Catalog) {
    c.create_subject(&client("c1", "Reporter"), &perms(&["READ_ALL"]))
        .unwrap();
    c.create_subject(&user("u1", "Ann", "ann@example.com"), &perms(&["READ_ALL"]))
        .unwrap();
    assert!(!c.delete_client("u1").unwrap(), "a user is not a client");
    assert!(
        !c.delete_user("c1", "Reporter").unwrap(),
        "a client is not a user"
    );
    assert!(
        !c.delete_user("u1", "bob").unwrap(),
        "id and name must match"
    );
    assert!(c.delete_user("u1", "ANN").unwrap());
    assert!(c.delete_client("c1").unwrap());
    assert!(!c.delete_client("c1").unwrap());
    let rows = c.auth_rows().unwrap();
    assert!(rows.subjects.is_empty());
    assert!(
        rows.permissions.is_empty(),
        "permissions go with their subject"
    );
}

pub(super) fn credentials_change(c: &dyn Catalog) {
    c.create_subject(&client("c1", "Reporter"), &[]).unwrap();
    c.create_subject(&user("u1", "Ann", "ann@example.com"), &[])
        .unwrap();
    c.set_password("u1", "new-hash").unwrap();
    let ann = subject(c, "u1").unwrap();
    assert_eq!(ann.credential, Credential::PasswordHash("new-hash".into()));
    assert!(!ann.must_change_password);
    assert!(c.set_client_secret("c1", &[9, 9]).unwrap());
    assert_eq!(
        subject(c, "c1").unwrap().credential,
        Credential::SecretDigest(vec![9, 9])
    );
    assert!(
        !c.set_client_secret("u1", &[9]).unwrap(),
        "users have no secret"
    );
    assert!(!c.set_client_secret("nobody", &[9]).unwrap());
}

pub(super) fn permissions_are_replaced(c: &dyn Catalog) {
    c.create_subject(
        &client("c1", "Reporter"),
        &perms(&["READ_ALL", "WRITE_ALL"]),
    )
    .unwrap();
    c.create_subject(&client("c2", "Other"), &perms(&["READ_ALL"]))
        .unwrap();
    assert!(c
        .replace_permissions("c1", &perms(&["DATA_ADMIN"]))
        .unwrap());
    assert_eq!(permissions_of(c, "c1"), ["DATA_ADMIN"]);
    assert_eq!(permissions_of(c, "c2"), ["READ_ALL"], "others keep theirs");
    assert!(c.replace_permissions("c1", &[]).unwrap());
    assert!(permissions_of(c, "c1").is_empty());
    assert!(!c
        .replace_permissions("nobody", &perms(&["READ_ALL"]))
        .unwrap());
    assert!(permissions_of(c, "nobody").is_empty());
}

pub(super) fn protected_domains(c: &dyn Catalog) {
    assert!(c.create_protected_domain("land").unwrap());
    assert!(!c.create_protected_domain("land").unwrap());
    assert!(c.create_protected_domain("sea").unwrap());
    let mut domains = c.auth_rows().unwrap().protected_domains;
    domains.sort();
    assert_eq!(domains, ["land", "sea"]);
    assert_eq!(
        c.delete_protected_domain("air", &[]).unwrap(),
        DomainDeletion::NotFound
    );
    let revoke = perms(&["READ_PROTECTED_LAND", "WRITE_PROTECTED_LAND"]);
    c.create_subject(
        &client("c1", "Reporter"),
        &perms(&["READ_PROTECTED_LAND", "READ_ALL"]),
    )
    .unwrap();
    let protected = SchemaVersion {
        protected_domain: Some("land".into()),
        ..schema(1)
    };
    let land = crate::key::DatasetKey::new("raw", "land", "secret");
    let record = c
        .create_dataset(&land, "Secret", Sensitivity::Protected, &protected)
        .unwrap();
    assert_eq!(
        c.delete_protected_domain("land", &revoke).unwrap(),
        DomainDeletion::InUse(vec!["raw/land/Secret".into()])
    );
    assert_eq!(permissions_of(c, "c1").len(), 2, "refused: nothing revoked");
    c.delete_dataset(record.id).unwrap();
    assert_eq!(
        c.delete_protected_domain("land", &revoke).unwrap(),
        DomainDeletion::Deleted
    );
    assert_eq!(permissions_of(c, "c1"), ["READ_ALL"]);
    assert_eq!(c.auth_rows().unwrap().protected_domains, ["sea"]);
    let public = c.create_dataset(&key("open"), "open", Sensitivity::Public, &schema(1));
    assert!(
        public.is_ok() && c.delete_protected_domain("sea", &[]).unwrap() == DomainDeletion::Deleted
    );
}

fn admin(id: &str) -> AdminClient {
    AdminClient {
        client_id: id.into(),
        secret_digest: vec![7],
        name: "rapid-admin".into(),
        permissions: perms(&["DATA_ADMIN", "USER_ADMIN"]),
    }
}

pub(super) fn admin_bootstrap(c: &dyn Catalog) {
    let refused = c.create_first_admin(&admin("a0"), &mut || Err(Error::internal("disk full")));
    assert!(refused.is_err());
    assert!(
        c.auth_rows().unwrap().subjects.is_empty(),
        "a failed hook creates nothing"
    );
    let mut called = 0;
    assert!(c
        .create_first_admin(&admin("a1"), &mut || {
            called += 1;
            Ok(())
        })
        .unwrap());
    assert_eq!(called, 1);
    assert_eq!(subject(c, "a1").unwrap().name, "rapid-admin");
    assert_eq!(permissions_of(c, "a1"), ["DATA_ADMIN", "USER_ADMIN"]);
    assert!(!c
        .create_first_admin(&admin("a2"), &mut || {
            called += 1;
            Ok(())
        })
        .unwrap());
    assert_eq!(called, 1, "not called when subjects exist");
    let mut again = admin("a1");
    again.secret_digest = vec![8];
    c.put_admin_client(&again).unwrap();
    assert_eq!(
        subject(c, "a1").unwrap().credential,
        Credential::SecretDigest(vec![8])
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    c.put_admin_client(&admin("a3")).unwrap();
    assert_eq!(
        subject(c, "a3").unwrap().name,
        "rapid-admin-2",
        "a free name"
    );
    assert_eq!(c.auth_rows().unwrap().subjects.len(), 2);
    assert_eq!(
        c.oldest_client_named("rapid-admin").unwrap().as_deref(),
        Some("a1")
    );
    assert_eq!(c.oldest_client_named("nobody").unwrap(), None);
}

pub(super) fn legacy_key_and_ping(c: &dyn Catalog) {
    c.ping().unwrap();
    assert_eq!(
        c.legacy_signing_key().unwrap(),
        None,
        "a new catalog has none"
    );
    c.erase_legacy_signing_key().unwrap();
    assert_eq!(c.legacy_signing_key().unwrap(), None);
}

pub(super) fn figures_count_objects(c: &dyn Catalog) {
    let record = dataset(c, "sales");
    c.add_schema_version(&record.key, &mut |_| Ok(schema(2)))
        .unwrap();
    let job = upload_job(c, &record, "s1", "r1.csv");
    c.commit_upload(&upload(
        &record,
        &job,
        "r1.csv",
        &["data/a.parquet", "data/b.parquet"],
    ))
    .unwrap();
    upload_job(c, &record, "s1", "r2.csv");
    c.create_subject(&client("c1", "Reporter"), &[]).unwrap();
    let figures = c.figures().unwrap();
    let count = |name: &str| {
        figures
            .counts
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    };
    assert_eq!(count("datasets"), Some(1));
    assert_eq!(count("schema_versions"), Some(2));
    assert_eq!(count("data_files"), Some(2));
    assert_eq!(count("raw_files"), Some(1));
    assert_eq!(count("stored_rows"), Some(4));
    assert_eq!(count("stored_bytes"), Some(20));
    assert_eq!(count("subjects"), Some(1));
    assert_eq!(count("retained_files"), Some(0));
    assert_eq!(count("retained_bytes"), Some(0));
    let mut jobs = figures.jobs.clone();
    jobs.sort();
    assert_eq!(
        jobs,
        [
            ("UPLOAD".into(), "IN PROGRESS".into(), 1),
            ("UPLOAD".into(), "SUCCESS".into(), 1)
        ]
    );
    assert!(figures.file_bytes > 0);
}
