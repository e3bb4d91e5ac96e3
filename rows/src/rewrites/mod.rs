//! The DataFusion session queries run in, with the plan rewrites and functions that keep answers
//! to the query semantics, and the faster group-by over one text column.

mod checked;
mod checked_udf;
mod interval_times;
pub mod session;
mod signed_zero;
mod small_groups;
mod text_groups;
mod three_valued;

use datafusion::common::{DFSchema, Result as DfResult};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::LogicalPlan;

/// The columns the expressions of one plan node may name: its inputs' and, for a scan, its
/// table's, since a scan's pushed-down filters name the table's columns and a scan has no input.
/// The rules meet such filters when the analyzer runs again over an optimised plan, as the
/// PostgreSQL protocol's prepared statements do.
fn expression_schema(plan: &LogicalPlan) -> DfResult<DFSchema> {
    let mut schema = merge_schema(&plan.inputs());
    if let LogicalPlan::TableScan(scan) = plan {
        schema.merge(&DFSchema::try_from_qualified_schema(
            scan.table_name.clone(),
            &scan.source.schema(),
        )?);
    }
    Ok(schema)
}
