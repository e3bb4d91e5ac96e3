//! Dataset ids are identities: a dataset deleted and created again under the same name gets a
//! new id, so work validated against the old one can tell.

use super::{dataset, key, schema};
use crate::catalog::Catalog;
use crate::sensitivity::Sensitivity;

pub(super) fn dataset_ids_are_never_reused(c: &dyn Catalog) {
    let first = dataset(c, "orders");
    c.delete_dataset(first.id).unwrap();
    let again = dataset(c, "orders");
    assert_ne!(again.id, first.id, "a recreated dataset is another dataset");
    let other = c
        .create_dataset(&key("returns"), "returns", Sensitivity::Public, &schema(1))
        .unwrap();
    c.delete_dataset(other.id).unwrap();
    let last = dataset(c, "refunds");
    assert!(
        last.id > other.id && other.id > again.id,
        "{first:?} {again:?} {other:?} {last:?}"
    );
}
