//! The DataFusion session every query runs in, set up so answers follow docs/API.md's query
//! semantics rather than the engine's defaults:
//! - AND/OR/NOT are rewritten so that the expression simplifier cannot lose a NULL
//!   ([`super::three_valued`]);
//! - integer arithmetic and sums are checked, integer medians exact ([`super::checked`]);
//! - `-0.0` compares, groups and counts as `0.0` ([`super::signed_zero`]);
//! - NULLs sort last for ASC and DESC (as rAPId on Athena) unless a query says otherwise;
//! - no aggregate dynamic filters (below);
//! - partial group-bys over text by [`super::small_groups`], for every statement;
//! - an interval times a number ([`super::interval_times`]).

use std::sync::Arc;

use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProvider, MemoryCatalogProviderList,
    MemorySchemaProvider,
};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};

use super::checked::CheckedIntegers;
use super::signed_zero::SignedZero;
use super::small_groups::SmallGroupsRule;
use super::three_valued::ThreeValuedLogic;

/// A context on `env` (the query engine's memory pool and spill folder).
pub fn new_context(mut config: SessionConfig, env: Arc<RuntimeEnv>) -> SessionContext {
    config.options_mut().sql_parser.default_null_ordering = "nulls_last".to_string();
    // MIN/MAX aggregates push their running bounds into the Parquet scan; with two of them the
    // bound of one pruned rows the other still needed, depending on which partition set it
    // first: `max(ceil(price)), min(cat)` answered the max of a few files now and then under
    // load (the differential test, seed 303; DataFusion has fixed such races upstream since).
    config
        .options_mut()
        .optimizer
        .enable_aggregate_dynamic_filter_pushdown = false;
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(env)
        .with_default_features()
        .with_physical_optimizer_rule(Arc::new(SmallGroupsRule))
        .build();
    let mut state = state;
    // Interval times number (Superset's time grains): DataFusion refuses it at planning.
    datafusion::execution::FunctionRegistry::register_expr_planner(
        &mut state,
        Arc::new(super::interval_times::IntervalTimes),
    )
    .expect("a session state takes expression planners");
    let ctx = SessionContext::new_with_state(state);
    // Both run after the built-in type coercion, so they see the final operand types.
    ctx.add_analyzer_rule(Arc::new(ThreeValuedLogic));
    ctx.add_analyzer_rule(Arc::new(CheckedIntegers));
    ctx.add_analyzer_rule(Arc::new(SignedZero));
    ctx
}

/// Plans `ctx`'s TopK sorts with their running bound kept to themselves, not pushed into the
/// scan: such a plan can be kept and run again (see plan_cache).
pub fn keep_topk_bounds_in_sorts(ctx: &SessionContext) {
    ctx.state_ref()
        .write()
        .config_mut()
        .options_mut()
        .optimizer
        .enable_topk_dynamic_filter_pushdown = false;
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

/// A fresh context from `template` (a context's state, built once): the functions and rules
/// are shared, only the catalog is new, so one query's table is never seen by another. Building
/// a context registers every built-in function again, a tenth of a small query's server time.
pub fn from_template(template: &SessionState) -> SessionContext {
    let mut state = template.clone();
    let options = state.config().options();
    let (catalog_name, schema_name) = (
        options.catalog.default_catalog.clone(),
        options.catalog.default_schema.clone(),
    );
    let catalog = MemoryCatalogProvider::new();
    // A memory catalog accepts any schema: the result (a replaced schema) is always None.
    let _ = catalog.register_schema(&schema_name, Arc::new(MemorySchemaProvider::new()));
    let catalogs = MemoryCatalogProviderList::new();
    catalogs.register_catalog(catalog_name, Arc::new(catalog));
    state.register_catalog_list(Arc::new(catalogs));
    SessionContext::new_with_state(state)
}
