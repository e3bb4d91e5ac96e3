//! PostgreSQL's date and time format patterns in `to_date(text, format)` and
//! `to_timestamp(text, format)`, which DataFusion reads as chrono's (`%Y-%m-%d`): a literal
//! pattern becomes chrono's spelling of it. Superset writes every time range of a chart so
//! (`TO_DATE('2024-01-01', 'YYYY-MM-DD')`, `TO_TIMESTAMP('2024-01-01 00:00:00.000000',
//! 'YYYY-MM-DD HH24:MI:SS.US')`, its PostgreSQL engine spec's `convert_dttm`), and DataFusion
//! refused both ("Error parsing timestamp ... input contains invalid characters"). A pattern with
//! a `%` (already chrono's) or a field this rewrite does not know is left as written. Both SQL
//! fronts apply it (`/api/sql` in `statement::one_select`, the listener in its rewrites).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Statement, Value,
};

use crate::sql_walk::rewrite_expressions;

/// PostgreSQL's fields, longest first where one is the start of another, with chrono's.
const FIELDS: &[(&str, &str)] = &[
    ("HH24", "%H"),
    ("HH12", "%I"),
    ("HH", "%I"),
    ("MI", "%M"),
    ("SS", "%S"),
    ("MS", "%3f"),
    ("US", "%6f"),
    ("YYYY", "%Y"),
    ("YY", "%y"),
    ("MONTH", "%B"),
    ("MON", "%b"),
    ("MM", "%m"),
    ("DDD", "%j"),
    ("DD", "%d"),
    ("DAY", "%A"),
    ("DY", "%a"),
    ("AM", "%p"),
    ("PM", "%p"),
    ("TZH:TZM", "%:z"),
];

/// Rewrites the format of each `to_date` / `to_timestamp` call with a literal PostgreSQL
/// pattern; whether any.
pub fn chrono_patterns(statements: &mut [Statement]) -> bool {
    let mut changed = false;
    let _ = rewrite_expressions(statements, &mut |expr| {
        if let Expr::Function(f) = expr {
            let name = f.name.0.last().and_then(|p| p.as_ident());
            let parses = name.is_some_and(|n| {
                n.value.eq_ignore_ascii_case("to_date")
                    || n.value.eq_ignore_ascii_case("to_timestamp")
            });
            if let (true, FunctionArguments::List(list)) = (parses, &mut f.args) {
                if let [_, FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] =
                    list.args.as_mut_slice()
                {
                    if let Value::SingleQuotedString(pattern) = &mut v.value {
                        if let Some(chrono) = chrono_pattern(pattern) {
                            *pattern = chrono;
                            changed = true;
                        }
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    changed
}

/// chrono's spelling of PostgreSQL's `pattern`; None when it has a `%` or a field not in
/// [`FIELDS`]. `FM` (no padding) is dropped: chrono reads numbers with or without it.
fn chrono_pattern(pattern: &str) -> Option<String> {
    if pattern.contains('%') {
        return None;
    }
    let mut out = String::new();
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        let upper = rest.to_ascii_uppercase();
        if c == '"' {
            // Quoted text stands for itself.
            let end = rest[1..].find('"')?;
            out.push_str(&rest[1..1 + end]);
            rest = &rest[end + 2..];
        } else if upper.starts_with("FM") {
            rest = &rest[2..];
        } else if c.is_ascii_alphabetic() {
            let (field, chrono) = FIELDS.iter().find(|(f, _)| upper.starts_with(f))?;
            out.push_str(chrono);
            rest = &rest[field.len()..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{chrono_pattern, chrono_patterns};
    use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    #[test]
    fn postgresql_patterns_get_chronos_spelling() {
        for (pg, chrono) in [
            ("YYYY-MM-DD", "%Y-%m-%d"),
            ("YYYY-MM-DD HH24:MI:SS.US", "%Y-%m-%d %H:%M:%S.%6f"),
            ("yyyy/mm/dd hh12:mi am", "%Y/%m/%d %I:%M %p"),
            ("DD Mon YYYY", "%d %b %Y"),
            ("FMDD Month YYYY", "%d %B %Y"),
            ("YYYY-MM-DD\"T\"HH24:MI:SS.MS", "%Y-%m-%dT%H:%M:%S.%3f"),
        ] {
            assert_eq!(chrono_pattern(pg).as_deref(), Some(chrono), "{pg}");
        }
        // chrono's own, a field not known, an unclosed quote: left as written.
        for kept in ["%Y-%m-%d", "YYYY-WW", "YYYY \"T"] {
            assert_eq!(chrono_pattern(kept), None, "{kept}");
        }
    }

    #[test]
    fn superset_time_filters_read_as_chronos_patterns() {
        let sql = "SELECT 1 FROM t WHERE d >= TO_DATE('2024-01-01', 'YYYY-MM-DD') \
                   AND ts < TO_TIMESTAMP('2025-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') \
                   AND e = to_timestamp(1700000000)";
        let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        assert!(chrono_patterns(&mut statements));
        let out = statements[0].to_string();
        assert!(out.contains("TO_DATE('2024-01-01', '%Y-%m-%d')"), "{out}");
        assert!(out.contains("'%Y-%m-%d %H:%M:%S.%6f')"), "{out}");
        assert!(out.contains("to_timestamp(1700000000)"), "{out}");
        let mut chrono =
            Parser::parse_sql(&PostgreSqlDialect {}, "SELECT to_date(d, '%Y')").unwrap();
        assert!(!chrono_patterns(&mut chrono));
    }
}
