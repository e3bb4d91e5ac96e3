//! Files a query's filters rule out, found at planning time from the manifest alone: each file's
//! partition values and the column bounds recorded at its commit (`manifest::stats`), so a
//! query over many files opens only those that may hold a matching row. DataFusion's
//! `PruningPredicate` turns each filter into a test on the bounds (`id = 5` keeps a file when
//! `min <= 5 <= max`); a filter it cannot rewrite keeps every file. The engine still applies
//! every filter to the rows it reads.

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::{FieldRef, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, DFSchema, ScalarValue};
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};
use datafusion::physical_optimizer::pruning::PruningPredicateBuilder;

use crate::manifest::stats::{decode, ColumnBounds};

/// What pruning knows of one file.
pub(super) struct Candidate<'a> {
    pub rows: u64,
    /// In the order of the table's partition fields.
    pub partition_values: &'a [ScalarValue],
    /// The manifest's bounds of the file, when recorded.
    pub stats: Option<&'a str>,
}

/// The candidates' statistics as `PruningPredicate` reads them: one container per file.
struct Containers<'a> {
    file_fields: &'a [FieldRef],
    partition_fields: &'a [FieldRef],
    rows: Vec<u64>,
    partition_values: Vec<&'a [ScalarValue]>,
    /// Per file, per file field.
    bounds: Vec<Vec<Option<ColumnBounds>>>,
}

enum Found {
    File(usize),
    Partition(usize),
}

impl Containers<'_> {
    fn find(&self, column: &Column) -> Option<Found> {
        let named = |f: &FieldRef| f.name() == &column.name;
        if let Some(i) = self.file_fields.iter().position(named) {
            return Some(Found::File(i));
        }
        self.partition_fields
            .iter()
            .position(named)
            .map(Found::Partition)
    }

    /// Minimums (`max` false) or maximums of `column`, a null where a file's is unknown.
    fn bound(&self, column: &Column, max: bool) -> Option<ArrayRef> {
        let values: Vec<ScalarValue> = match self.find(column)? {
            Found::Partition(p) => self.partition_values.iter().map(|v| v[p].clone()).collect(),
            Found::File(i) => {
                let unknown = ScalarValue::try_from(self.file_fields[i].data_type()).ok()?;
                let values: Vec<ScalarValue> = self
                    .bounds
                    .iter()
                    .map(|file| match &file[i] {
                        Some(b) if max => b.max.clone(),
                        Some(b) => b.min.clone(),
                        None => unknown.clone(),
                    })
                    .collect();
                if values.iter().all(ScalarValue::is_null) {
                    return None;
                }
                values
            }
        };
        ScalarValue::iter_to_array(values).ok()
    }
}

impl PruningStatistics for Containers<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bound(column, false)
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bound(column, true)
    }

    fn num_containers(&self) -> usize {
        self.rows.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        let counts: UInt64Array = match self.find(column)? {
            Found::Partition(_) => self.rows.iter().map(|_| Some(0)).collect(),
            Found::File(i) => self
                .bounds
                .iter()
                .map(|file| file[i].as_ref().and_then(|b| b.nulls))
                .collect(),
        };
        Some(Arc::new(counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        Some(Arc::new(UInt64Array::from(self.rows.clone())))
    }

    #[allow(clippy::mutable_key_type)] // the trait's own signature
    fn contained(&self, _: &Column, _: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}

/// `filter` as pruning can read it. The query's analyzer keeps SQL's three-valued logic by
/// writing each filter as AND/OR over atoms `p IS NOT DISTINCT FROM TRUE` (p is TRUE) or `...
/// FALSE` (`three_valued`), which `PruningPredicate` cannot rewrite. A file may hold a row where
/// `p` is TRUE exactly when it may hold one where `p` holds, and one where `p` is FALSE when it
/// may hold one where the negated comparison holds (both sides non-null), so the atoms are
/// turned back into those. Only the filter's top AND/OR structure is walked: deeper down the
/// comparisons keep their meaning.
fn two_valued(filter: &Expr) -> Expr {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = filter else {
        return filter.clone();
    };
    match (op, right.as_ref()) {
        (Operator::And | Operator::Or, _) => Expr::BinaryExpr(BinaryExpr::new(
            Box::new(two_valued(left)),
            *op,
            Box::new(two_valued(right)),
        )),
        (Operator::IsNotDistinctFrom, Expr::Literal(ScalarValue::Boolean(Some(true)), _)) => {
            holds(left)
        }
        (Operator::IsNotDistinctFrom, Expr::Literal(ScalarValue::Boolean(Some(false)), _)) => {
            match left.as_ref() {
                Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op.negate() {
                    Some(negated) => {
                        Expr::BinaryExpr(BinaryExpr::new(left.clone(), negated, right.clone()))
                    }
                    None => filter.clone(),
                },
                _ => filter.clone(),
            }
        }
        _ => filter.clone(),
    }
}

/// An atom that is TRUE, as a predicate: `a BETWEEN l AND h` spelled as the two comparisons
/// `PruningPredicate` reads.
fn holds(atom: &Expr) -> Expr {
    match atom {
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => expr
            .as_ref()
            .clone()
            .gt_eq(low.as_ref().clone())
            .and(expr.as_ref().clone().lt_eq(high.as_ref().clone())),
        other => other.clone(),
    }
}

/// The table's columns: those stored in the files, then the partition columns.
pub(super) struct TableColumns<'a> {
    pub schema: &'a SchemaRef,
    pub file_fields: &'a [FieldRef],
    pub partition_fields: &'a [FieldRef],
}

/// Which of `candidates` may hold a row every one of `filters` keeps (`false`: none can).
pub(super) fn may_match(
    state: &dyn Session,
    table: &TableColumns<'_>,
    filters: &[&Expr],
    candidates: &[Candidate<'_>],
) -> Vec<bool> {
    let keep = vec![true; candidates.len()];
    if filters.is_empty() || candidates.is_empty() {
        return keep;
    }
    let Ok(df_schema) = DFSchema::try_from(table.schema.as_ref().clone()) else {
        return keep;
    };
    // Skipping files only saves work: a filter that cannot be planned here prunes nothing
    // (the engine reports its error when it plans the filter itself).
    let predicates: Vec<_> = filters
        .iter()
        .filter_map(|f| state.create_physical_expr(two_valued(f), &df_schema).ok())
        .filter_map(|expr| {
            PruningPredicateBuilder::new()
                .with_file_schema(table.schema.clone())
                .build(expr)
        })
        .collect();
    if predicates.is_empty() {
        return keep;
    }
    let mut keep = keep;
    let containers = Containers {
        file_fields: table.file_fields,
        partition_fields: table.partition_fields,
        rows: candidates.iter().map(|c| c.rows).collect(),
        partition_values: candidates.iter().map(|c| c.partition_values).collect(),
        bounds: candidates
            .iter()
            .map(|c| match c.stats {
                Some(stats) => decode(stats, table.file_fields),
                None => vec![None; table.file_fields.len()],
            })
            .collect(),
    };
    for predicate in predicates {
        if let Ok(may) = predicate.prune(&containers) {
            for (k, may) in keep.iter_mut().zip(may) {
                *k &= may;
            }
        }
    }
    keep
}

#[cfg(test)]
#[path = "file_pruning_tests.rs"]
mod tests;
