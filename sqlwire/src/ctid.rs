//! `ctid BETWEEN '(a,0)'::tid AND '(b,0)'::tid`: DuckDB's `postgres` extension, with its
//! defaults, reads a table in page ranges of PostgreSQL's row addresses (`ctid`), which a
//! dataset does not have. Here every row of a table is on page 0 (`pg_class.relpages` is 1), at
//! offsets from 1: a range holds all of them when it starts on page 0 and ends past `(0,0)`, and
//! none otherwise, so the reader's ranges, which follow each other from page 0, read each row
//! once. The predicate becomes that truth value.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{DataType, Expr, Statement, Value};
use rapid_actors::sql_walk::rewrite_expressions;

/// Replaces each `ctid BETWEEN tid AND tid` of `statements`; whether any.
pub(crate) fn ranges(statements: &mut Vec<Statement>) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        if let Expr::Between {
            expr: column,
            negated,
            low,
            high,
        } = expr
        {
            let is_ctid = match column.as_ref() {
                Expr::Identifier(i) => i.value.eq_ignore_ascii_case("ctid"),
                Expr::CompoundIdentifier(parts) => parts
                    .last()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case("ctid")),
                _ => false,
            };
            if let (true, Some(low), Some(high)) = (is_ctid, tid(low), tid(high)) {
                let holds = low <= (0, 1) && high >= (0, 1);
                *expr = Expr::value(Value::Boolean(holds != *negated));
                changed = true;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    changed
}

/// `'(page,offset)'::tid` as (page, offset).
fn tid(expr: &Expr) -> Option<(u64, u64)> {
    let Expr::Cast {
        expr, data_type, ..
    } = expr
    else {
        return None;
    };
    let named_tid = match data_type {
        DataType::Custom(name, _) => name.to_string().eq_ignore_ascii_case("tid"),
        _ => false,
    };
    let Expr::Value(v) = expr.as_ref() else {
        return None;
    };
    let Value::SingleQuotedString(text) = &v.value else {
        return None;
    };
    let (page, offset) = text
        .trim()
        .strip_prefix('(')?
        .strip_suffix(')')?
        .split_once(',')?;
    let parsed = (page.trim().parse().ok()?, offset.trim().parse().ok()?);
    named_tid.then_some(parsed)
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn ranged(sql: &str) -> Option<String> {
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        super::ranges(&mut statements).then(|| statements[0].to_string())
    }

    #[test]
    fn a_range_from_page_zero_holds_every_row_and_a_later_one_none() {
        let from_zero = "SELECT a FROM t WHERE ctid BETWEEN '(0,0)'::tid AND '(4294967295,0)'::tid";
        assert_eq!(ranged(from_zero).unwrap(), "SELECT a FROM t WHERE true");
        let later = "SELECT a FROM t WHERE t.ctid BETWEEN '(1000,0)'::tid AND '(2000,0)'::tid";
        assert_eq!(ranged(later).unwrap(), "SELECT a FROM t WHERE false");
        let not = "SELECT a FROM t WHERE ctid NOT BETWEEN '(0,0)'::tid AND '(9,0)'::tid";
        assert_eq!(ranged(not).unwrap(), "SELECT a FROM t WHERE false");
        assert_eq!(ranged("SELECT a FROM t WHERE a BETWEEN 1 AND 2"), None);
    }
}
