//! Tests of the catalogue rewrites (catalog_rewrites.rs).

use super::{array_subqueries, catalogue_lookups, empty_catalogue_selects};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

fn rewritten(
    sql: &str,
    f: fn(&mut Vec<datafusion::sql::sqlparser::ast::Statement>) -> bool,
) -> Option<String> {
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
    f(&mut statements).then(|| statements[0].to_string())
}

#[test]
fn an_array_of_a_subquery_becomes_an_aggregate() {
    let out = rewritten(
        "SELECT r.rolname, ARRAY(SELECT b.rolname FROM m JOIN b ON m.x = b.oid \
         WHERE m.member = r.oid ORDER BY 1) AS memberof FROM r",
        array_subqueries,
    )
    .unwrap();
    assert_eq!(
        out,
        "SELECT r.rolname, (SELECT array_agg(b.rolname ORDER BY (b.rolname)) FROM m \
         JOIN b ON m.x = b.oid WHERE m.member = r.oid) AS memberof FROM r"
    );
}

#[test]
fn a_lookup_in_the_catalogue_is_aggregated_and_other_subqueries_are_not() {
    let sql = "SELECT (SELECT t.typcollation FROM pg_catalog.pg_type t WHERE t.oid = a.x), \
               (SELECT y FROM s.t WHERE t.id = a.id) FROM pg_attribute a";
    let out = rewritten(sql, catalogue_lookups).unwrap();
    assert_eq!(
        out,
        "SELECT (SELECT max(t.typcollation) FROM pg_catalog.pg_type t WHERE t.oid = a.x), \
         (SELECT y FROM s.t WHERE t.id = a.id) FROM pg_attribute a"
    );
}

#[test]
fn a_select_over_an_empty_catalogue_table_has_no_rows_and_keeps_its_names() {
    let sql = "SELECT pubname, NULL AS \"NULL\" FROM pg_catalog.pg_publication p \
               JOIN pg_catalog.pg_class c ON true UNION SELECT pubname, x FROM t ORDER BY 1";
    let out = rewritten(sql, empty_catalogue_selects).unwrap();
    assert_eq!(
        out,
        "SELECT NULL AS pubname, NULL AS \"NULL\" WHERE false \
         UNION SELECT pubname, x FROM t ORDER BY 1"
    );
    // The parameters of the dropped parts are still bound.
    let bound = "SELECT x FROM pg_catalog.pg_sequence WHERE a = $2::VARCHAR AND b = $3";
    assert_eq!(
        rewritten(bound, empty_catalogue_selects).unwrap(),
        "SELECT NULL AS x WHERE false AND ($2::VARCHAR IS NULL OR true) \
         AND ($3 IS NULL OR true)"
    );
    // Counted, or only left-joined: rows remain.
    let counted = "SELECT count(*) FROM pg_catalog.pg_policy";
    assert_eq!(rewritten(counted, empty_catalogue_selects), None);
    let left = "SELECT c.relname FROM pg_class c LEFT JOIN pg_inherits i ON true";
    assert_eq!(rewritten(left, empty_catalogue_selects), None);
}
