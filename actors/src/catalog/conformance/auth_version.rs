//! The auth version: every committed change to subjects, credentials, permissions or protected
//! domains makes it grow, reads and refused changes leave it alone, and `auth_rows` reports the
//! version its rows are at.

use crate::catalog::{AdminClient, Catalog, Credential, SubjectRow};

fn client(id: &str, name: &str) -> SubjectRow {
    SubjectRow {
        id: id.into(),
        name: name.into(),
        email: None,
        credential: Credential::SecretDigest(vec![7; 8]),
        must_change_password: false,
    }
}

/// Runs `change` and says whether the version grew (and that `auth_rows` agrees).
fn grows(c: &dyn Catalog, what: &str, change: impl FnOnce(&dyn Catalog)) {
    let before = c.auth_version().unwrap();
    change(c);
    let after = c.auth_version().unwrap();
    assert!(after > before, "{what}: version {before} -> {after}");
    assert_eq!(
        c.auth_rows().unwrap().version,
        after,
        "{what}: rows' version"
    );
}

pub(super) fn grows_with_every_change(c: &dyn Catalog) {
    assert_eq!(c.auth_rows().unwrap().version, c.auth_version().unwrap());
    let perms = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    grows(c, "create client", |c| {
        assert!(c
            .create_subject(&client("c1", "one"), &perms(&["READ_ALL"]))
            .unwrap())
    });
    grows(c, "replace permissions", |c| {
        assert!(c.replace_permissions("c1", &perms(&["WRITE_ALL"])).unwrap())
    });
    grows(c, "new client secret", |c| {
        assert!(c.set_client_secret("c1", &[9; 8]).unwrap())
    });
    grows(c, "create protected domain", |c| {
        assert!(c.create_protected_domain("vault").unwrap())
    });
    grows(c, "delete protected domain", |c| {
        c.delete_protected_domain("vault", &[]).unwrap();
    });
    grows(c, "admin client", |c| {
        c.put_admin_client(&AdminClient {
            client_id: "admin".into(),
            secret_digest: vec![1; 8],
            name: "rapid-admin".into(),
            permissions: vec!["USER_ADMIN".into()],
        })
        .unwrap()
    });
    grows(c, "delete client", |c| {
        assert!(c.delete_client("c1").unwrap())
    });

    // Reads and refused changes leave it where it is.
    let settled = c.auth_version().unwrap();
    c.auth_rows().unwrap();
    assert!(!c.delete_client("nobody").unwrap());
    assert!(!c.create_subject(&client("c2", "rapid-admin"), &[]).unwrap());
    assert_eq!(c.auth_version().unwrap(), settled);
}
