//! Two nodes on one catalog: a change made through one node's `Auth` is seen by the other's at
//! its very next check, with no message between them. (Two SQLite handles on one file stand in
//! for two nodes on PostgreSQL; the catalog's auth version is what carries the news.)

use std::sync::Arc;

use super::pass::user_admin_pass;
use super::{Auth, AuthSettings};
use crate::catalog::sqlite::SqliteCatalog;
use crate::error::ErrorKind;
use crate::storage::Durability;

fn settings(dir: &std::path::Path) -> AuthSettings {
    AuthSettings {
        token_ttl_seconds: 600,
        allowed_email_domains: vec!["example.com".into()],
        admin_override: None,
        credentials_file: dir.join("admin-credentials.json"),
        key_file: dir.join("shared.key"),
        layers: vec!["default".into()],
        hash_pool: Default::default(),
        throttle: Default::default(),
    }
}

fn node(dir: &std::path::Path) -> Auth {
    let catalog = SqliteCatalog::open(&dir.join("data"))
        .unwrap()
        .shared_like_a_node();
    Auth::start(Arc::new(catalog), settings(dir), Durability::Full)
        .unwrap()
        .0
}

#[actix::test]
async fn changes_on_one_node_take_effect_on_the_other_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (node(dir.path()), node(dir.path()));
    let admin_id = a.snapshot().subjects.keys().next().cloned().unwrap();
    let admin = user_admin_pass(a.snapshot().subjects[&admin_id].clone()).unwrap();

    let made = a
        .create_client(&admin, "reporter".into(), vec!["READ_ALL".into()])
        .await
        .unwrap();
    // B signs the new client in and sees its permissions, though only A's actor wrote them.
    let token = b
        .client_token(&made.client_id, &made.client_secret, [127, 0, 0, 1].into())
        .unwrap();
    let seen = b.authenticate(&token.access_token).unwrap();
    assert_eq!(seen.permission_names(), vec!["READ_ALL".to_string()]);

    a.set_permissions(&admin, made.client_id.clone(), vec!["WRITE_ALL".into()])
        .await
        .unwrap();
    let seen = b.authenticate(&token.access_token).unwrap();
    assert_eq!(seen.permission_names(), vec!["WRITE_ALL".to_string()]);

    a.delete_client(&admin, made.client_id.clone())
        .await
        .unwrap();
    let refused = b.authenticate(&token.access_token).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Unauthenticated);
}

#[actix::test]
async fn a_node_alone_on_its_catalog_does_not_read_it_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Arc::new(SqliteCatalog::open(&dir.path().join("data")).unwrap());
    let auth = Auth::start(catalog.clone(), settings(dir.path()), Durability::Full)
        .unwrap()
        .0;
    let before = auth.snapshot();
    // A write behind the service's back (not possible while it holds the data folder's lock)
    // is not picked up: the cached picture is the truth for a catalog nobody else shares.
    use crate::catalog::interface::SubjectCatalog;
    assert!(catalog.create_protected_domain("vault").unwrap());
    assert!(Arc::ptr_eq(&before, &auth.snapshot()));
}
