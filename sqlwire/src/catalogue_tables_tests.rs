//! The views this listener puts over the emulation's `pg_catalog` tables.

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::roles::SubjectRole;

/// A session in database `default` with the catalogue as the listener sets it up.
fn session() -> SessionContext {
    let config = SessionConfig::new().with_default_catalog_and_schema("default", "public");
    let ctx = SessionContext::new_with_config(config);
    super::setup(&ctx, "default", SubjectRole("reader".into())).unwrap();
    ctx
}

async fn answer(ctx: &SessionContext, sql: &str) -> String {
    crate::test_answers::answer(ctx, sql).await.unwrap()
}

#[tokio::test]
async fn pg_class_has_no_storage_options() {
    let ctx = session();
    let options = "SELECT count(*) = count(relname) AS every_row, count(reloptions) AS options, \
                   arrow_typeof(reloptions) AS t FROM pg_catalog.pg_class GROUP BY 3";
    let out = answer(&ctx, options).await;
    assert!(out.contains("| true      | 0       | List("), "{out}");
}

/// Every table a plan scans once its views are inlined (as a prepared statement's plan is
/// checked before it runs): the views' own scans exist under the names they carry.
#[tokio::test]
async fn the_views_scans_name_tables_the_session_has() {
    let ctx = session();
    for view in ["pg_database", "pg_class"] {
        let sql = format!("SELECT * FROM pg_catalog.{view}");
        let plan = ctx.state().create_logical_plan(&sql).await.unwrap();
        let analyzed = ctx.state().optimize(&plan).unwrap();
        let mut scans = Vec::new();
        let _ = analyzed.apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node {
                scans.push(scan.table_name.clone());
            }
            Ok(TreeNodeRecursion::Continue)
        });
        assert!(!scans.is_empty(), "{view}");
        for name in scans {
            assert!(ctx.table_exist(name.clone()).unwrap(), "{view}: {name}");
        }
    }
}
