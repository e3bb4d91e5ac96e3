use arrow::datatypes::{DataType, Field, Schema};
use datafusion::logical_expr::{col, lit};
use datafusion::prelude::SessionContext;

use super::*;

fn fields() -> (SchemaRef, Vec<FieldRef>, Vec<FieldRef>) {
    let file: Vec<FieldRef> = vec![
        Arc::new(Field::new("id", DataType::Int64, true)),
        Arc::new(Field::new("name", DataType::Utf8View, true)),
        Arc::new(Field::new("x", DataType::Float64, true)),
    ];
    let partition: Vec<FieldRef> = vec![Arc::new(Field::new("category", DataType::Utf8, true))];
    let all: Vec<FieldRef> = file.iter().chain(&partition).cloned().collect();
    (Arc::new(Schema::new(all)), file, partition)
}

/// Which of four files a conjunction of `filters` keeps: ids 0..=9 in `a` (names "a".."c"),
/// ids 10..=19 with 3 null names in `b`, a file recorded without bounds (`a`), and one whose
/// ids are all null (`b`).
fn kept(filters: &[Expr]) -> Vec<bool> {
    let (schema, file_fields, partition_fields) = fields();
    let a = [ScalarValue::Utf8(Some("a".into()))];
    let b = [ScalarValue::Utf8(Some("b".into()))];
    let candidates = [
        Candidate {
            rows: 10,
            partition_values: &a,
            stats: Some(r#"{"id": [0, 9, 0], "name": ["a", "c", 0]}"#),
        },
        Candidate {
            rows: 10,
            partition_values: &b,
            stats: Some(r#"{"id": [10, 19, 0], "name": ["a", "z", 3]}"#),
        },
        Candidate {
            rows: 10,
            partition_values: &a,
            stats: None,
        },
        Candidate {
            rows: 4,
            partition_values: &b,
            stats: Some(r#"{"id": [null, null, 4]}"#),
        },
    ];
    let table = TableColumns {
        schema: &schema,
        file_fields: &file_fields,
        partition_fields: &partition_fields,
    };
    let state = SessionContext::new().state();
    let filters: Vec<&Expr> = filters.iter().collect();
    may_match(&state, &table, &filters, &candidates)
}

#[test]
fn bounds_rule_out_files_no_row_of_which_can_match() {
    assert_eq!(kept(&[col("id").eq(lit(5i64))]), [true, false, true, false]);
    assert_eq!(kept(&[col("id").gt(lit(9i64))]), [false, true, true, false]);
    assert_eq!(
        kept(&[col("id").lt(lit(0i64))]),
        [false, false, true, false]
    );
    assert_eq!(kept(&[col("name").eq(lit("d"))]), [false, true, true, true]);
    // Every filter must hold: the second rules out what the first kept.
    assert_eq!(
        kept(&[col("id").gt_eq(lit(5i64)), col("category").eq(lit("b"))]),
        [false, true, false, false]
    );
    // Null counts: a file without nulls holds no `IS NULL` row, one of nulls only no other.
    assert_eq!(kept(&[col("id").is_null()]), [false, false, true, true]);
    assert_eq!(kept(&[col("name").is_null()]), [false, true, true, true]);
}

#[test]
fn what_the_bounds_cannot_decide_keeps_every_file() {
    assert_eq!(kept(&[]), [true; 4]);
    // Doubles have no recorded bounds.
    assert_eq!(kept(&[col("x").gt(lit(1.0))]), [true; 4]);
    // A function of the column is not rewritten into a test on its bounds.
    let absolute = datafusion::functions::math::expr_fn::abs(col("id"));
    assert_eq!(kept(&[absolute.eq(lit(50i64))]), [true; 4]);
    // A filter that cannot be planned prunes nothing (the engine reports it).
    assert_eq!(kept(&[col("missing").eq(lit(1i64))]), [true; 4]);
}

/// `p IS NOT DISTINCT FROM value`, as the query's three-valued analyzer writes filters.
fn is(p: Expr, value: bool) -> Expr {
    Expr::BinaryExpr(BinaryExpr::new(
        Box::new(p),
        Operator::IsNotDistinctFrom,
        Box::new(lit(value)),
    ))
}

#[test]
fn filters_in_three_valued_form_prune_as_their_comparisons_do() {
    assert_eq!(
        kept(&[is(col("id").eq(lit(5i64)), true)]),
        [true, false, true, false]
    );
    // `NOT (id >= 10)`: rows where `id >= 10` is FALSE, that is `id < 10`.
    assert_eq!(
        kept(&[is(col("id").gt_eq(lit(10i64)), false)]),
        [true, false, true, false]
    );
    let between = col("id").between(lit(12i64), lit(30i64));
    assert_eq!(
        kept(&[is(between.clone(), true).and(is(col("category").eq(lit("b")), true))]),
        [false, true, false, false]
    );
    assert_eq!(
        kept(&[is(col("id").lt(lit(0i64)), true).or(is(col("name").eq(lit("b")), true))]),
        [true, true, true, true]
    );
    // A NOT BETWEEN that is FALSE is not rewritten: every file stays.
    assert_eq!(kept(&[is(between, false)]), [true; 4]);
}
