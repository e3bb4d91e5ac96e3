use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::auth::permission::{Permission, PermissionContext};
use crate::catalog::sqlite::SqliteCatalog;
use crate::key::DatasetKey;
use crate::query::{QueryPools, QuerySettings};
use crate::records::stored_version;
use crate::schema::{validate, Schema, SchemaContext, ValidSchema};
use crate::sensitivity::Sensitivity;

struct Lake {
    _dir: tempfile::TempDir,
    catalog: SharedCatalog,
    storage: Storage,
}

/// Query pools for one test's session (the session needs only their template).
fn test_pools() -> QueryPools {
    let settings = QuerySettings {
        threads: 1,
        ..QuerySettings::default()
    };
    QueryPools::new(settings).expect("query pools")
}

fn schema(domain: &str, dataset: &str, sensitivity: &str, version: i64) -> ValidSchema {
    let schema: Schema = serde_json::from_value(json!({
        "metadata": {"domain": domain, "dataset": dataset, "sensitivity": sensitivity,
                     "owners": [{"name": "T", "email": "t@example.com"}]},
        "columns": [{"name": "id", "data_type": "int", "allow_null": false}]
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let protected = ["secret".to_string()].into_iter().collect();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &protected,
    };
    let mut schema = validate(&schema, &ctx).unwrap();
    schema.set_version(version);
    schema
}

/// `default/sales/orders` (PUBLIC, two schema versions) and `default/secret/payroll` (PROTECTED).
fn lake() -> Lake {
    let dir = tempfile::tempdir().unwrap();
    let catalog: SharedCatalog = Arc::new(SqliteCatalog::open(dir.path()).unwrap());
    let storage = Storage::new(dir.path());
    catalog.create_protected_domain("secret").unwrap();
    let orders = DatasetKey::new("default", "sales", "orders");
    let v1 = stored_version(&schema("sales", "orders", "PUBLIC", 1)).unwrap();
    catalog
        .create_dataset(&orders, "orders", Sensitivity::Public, &v1)
        .unwrap();
    catalog
        .add_schema_version(&orders, &mut |_| {
            stored_version(&schema("sales", "orders", "PUBLIC", 2))
        })
        .unwrap();
    let payroll = DatasetKey::new("default", "secret", "payroll");
    let v1 = stored_version(&schema("secret", "payroll", "PROTECTED", 1)).unwrap();
    catalog
        .create_dataset(&payroll, "payroll", Sensitivity::Protected, &v1)
        .unwrap();
    Lake {
        _dir: dir,
        catalog,
        storage,
    }
}

fn permissions(names: &[&str]) -> Vec<Permission> {
    let layers: Vec<String> = vec!["default".into()];
    let protected = ["secret".to_string()].into_iter().collect();
    let ctx = PermissionContext {
        layers: &layers,
        protected_domains: &protected,
    };
    names
        .iter()
        .map(|n| Permission::parse(n, ctx).unwrap())
        .collect()
}

/// A client holding the permissions `names`.
fn subject(names: &[&str]) -> Arc<Subject> {
    Arc::new(Subject {
        id: "s1".into(),
        kind: crate::auth::SubjectKind::Client,
        name: "tester".into(),
        email: None,
        permissions: permissions(names),
        must_change_password: false,
        credential: crate::catalog::Credential::SecretDigest(Vec::new()),
    })
}

/// The tables `permissions` see, as information_schema lists them ("layer.domain.table").
async fn listed(lake: &Lake, names: &[&str]) -> Vec<String> {
    let tables = SqlTables::new(
        (lake.catalog.clone(), lake.storage.clone()),
        Arc::default(),
        "datafusion",
    );
    tables.refresh(&subject(names)).unwrap();
    let ctx = test_pools().sql_session(Arc::new(tables), "datafusion");
    let sql = "SELECT table_catalog || '.' || table_schema || '.' || table_name AS t \
               FROM information_schema.tables WHERE table_schema NOT IN ('information_schema') \
               ORDER BY t";
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let column = arrow::array::AsArray::as_string::<i32>(b.column(0).as_ref()).clone();
        out.extend(column.iter().map(|v| v.unwrap().to_string()));
    }
    out
}

#[tokio::test]
async fn a_subject_without_read_permission_sees_no_table() {
    let lake = lake();
    assert!(listed(&lake, &["WRITE_ALL"]).await.is_empty());
    let tables = SqlTables::new(
        (lake.catalog.clone(), lake.storage.clone()),
        Arc::default(),
        "datafusion",
    );
    tables.refresh(&subject(&["WRITE_ALL"])).unwrap();
    let ctx = test_pools().sql_session(Arc::new(tables), "datafusion");
    let e = ctx
        .sql("SELECT * FROM \"default\".\"sales\".\"orders\"")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not found"), "{e}");
}

#[tokio::test]
async fn a_protected_dataset_is_invisible_without_its_permission() {
    let lake = lake();
    let public = listed(&lake, &["READ_PUBLIC"]).await;
    assert_eq!(public, ["default.sales.orders", "default.sales.orders@v1"]);
    let with_secret = listed(&lake, &["READ_PUBLIC", "READ_PROTECTED_SECRET"]).await;
    assert_eq!(
        with_secret,
        [
            "default.sales.orders",
            "default.sales.orders@v1",
            "default.secret.payroll"
        ]
    );
}

#[tokio::test]
async fn a_permission_taken_away_applies_at_the_next_refresh() {
    let lake = lake();
    let tables = SqlTables::new(
        (lake.catalog.clone(), lake.storage.clone()),
        Arc::default(),
        "datafusion",
    );
    let ctx = test_pools().sql_session(Arc::new(tables.clone()), "datafusion");
    let query = "SELECT count(*) FROM \"default\".\"sales\".\"orders\"";
    tables.refresh(&subject(&["READ_ALL"])).unwrap();
    let rows = ctx.sql(query).await.unwrap().collect().await.unwrap();
    assert_eq!(rows[0].num_rows(), 1);
    tables.refresh(&subject(&["WRITE_ALL"])).unwrap();
    assert!(ctx.sql(query).await.is_err());
}

#[tokio::test]
async fn a_statement_reads_the_schemas_of_the_tables_it_names_only() {
    let lake = lake();
    let tables = SqlTables::new(
        (lake.catalog.clone(), lake.storage.clone()),
        Arc::default(),
        "datafusion",
    );
    let ctx = test_pools().sql_session(Arc::new(tables.clone()), "datafusion");
    tables.refresh(&subject(&["READ_ALL"])).unwrap();
    let made = || tables.inner.made.lock().unwrap().len();
    assert_eq!(made(), 0, "a refresh reads no schema");
    ctx.sql("SELECT count(*) FROM \"default\".\"sales\".\"orders@v1\"")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(made(), 1, "one table named, one schema read");
    // Names that are no readable version: the latest's own `@v`, one past it, nonsense.
    for name in [
        "orders@v2",
        "orders@v3",
        "orders@v0",
        "orders@vx",
        "orders@v01",
    ] {
        let sql = format!("SELECT * FROM \"default\".\"sales\".\"{name}\"");
        let e = ctx.sql(&sql).await.unwrap_err();
        assert!(e.to_string().contains("not found"), "{name}: {e}");
    }
    assert_eq!(made(), 1);
}

/// `default/sales/people`: `id` and `name` not nullable, `note` nullable; `name` masked to NULL
/// for everyone.
fn with_people(lake: &Lake) -> DatasetRecord {
    let schema: Schema = serde_json::from_value(json!({
        "metadata": {"domain": "sales", "dataset": "people", "sensitivity": "PUBLIC",
                     "owners": [{"name": "T", "email": "t@example.com"}]},
        "columns": [
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "name", "data_type": "string", "allow_null": false},
            {"name": "note", "data_type": "string", "allow_null": true}
        ]
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let protected = ["secret".to_string()].into_iter().collect();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &protected,
    };
    let mut schema = validate(&schema, &ctx).unwrap();
    schema.set_version(1);
    let key = DatasetKey::new("default", "sales", "people");
    let v1 = stored_version(&schema).unwrap();
    let catalog = &lake.catalog;
    catalog
        .create_dataset(&key, "people", Sensitivity::Public, &v1)
        .unwrap();
    let record = catalog.find_dataset(&key).unwrap().unwrap();
    let mask = r#"{"column_masks": [{"column": "name", "mask": "null", "applies_to": ["*"]}]}"#;
    assert!(catalog.put_policy(record.id, 1, mask).unwrap());
    record
}

#[tokio::test]
async fn a_tables_not_null_columns_are_those_its_schema_refuses_null_in_and_not_masked_to_null() {
    let lake = lake();
    let people = with_people(&lake);
    let tables = SqlTables::new(
        (lake.catalog.clone(), lake.storage.clone()),
        Arc::default(),
        "datafusion",
    );
    tables.refresh(&subject(&["READ_ALL"])).unwrap();
    let table = tables.table(&people, 1, AsOf::Latest).unwrap().unwrap();
    let not_null = super::super::not_null_columns(table.as_ref());
    assert_eq!(not_null, Some(vec!["id".to_string()]));
    // The table's own schema stays nullable: reads are as before.
    assert!(table.schema().fields().iter().all(|f| f.is_nullable()));
    // Another table than a dataset's: none known.
    let other = datafusion::datasource::empty::EmptyTable::new(table.schema());
    assert_eq!(super::super::not_null_columns(&other), None);
}
