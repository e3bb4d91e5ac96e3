//! A bound on the SQL parser's work, not only on its depth. sqlparser reads some constructs more
//! than one way (`maybe_parse` rewinds and tries the next reading): in PostgreSQL's dialect every
//! function argument is first tried as the name of a named argument, so `upper(upper(…(x)…))`
//! parses each level twice and the work doubles with each level of nesting. Twenty-five levels
//! take about a minute; the fuzz target found a 600-byte statement of unclosed brackets that took
//! 30 seconds (fuzz/README.md). The parser's recursion limit bounds only the depth.
//!
//! [`BudgetedPostgres`] is PostgreSQL's dialect counting the expressions the parser starts. Past
//! its budget it answers `RecursionLimitExceeded`, the one error `maybe_parse` passes on instead
//! of trying the next reading, so every reading still being tried ends at its next expression.

use std::any::TypeId;
use std::cell::Cell;

use datafusion::sql::sqlparser::ast::{Expr, Statement};
use datafusion::sql::sqlparser::dialect::{Dialect, PostgreSqlDialect, Precedence};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};

/// Expressions any statement may start: function calls nest 16 deep within it (each level
/// doubles the work), and a statement reads in a few tens of milliseconds at most.
const BASE_STEPS: u64 = 150_000;
/// Further expressions per byte of the statement, for long statements that nest nothing (an
/// `IN` list of ten thousand values starts ten thousand expressions).
const STEPS_PER_BYTE: u64 = 2;

/// The budget of a statement of `len` bytes.
pub(crate) fn budget_for(len: usize) -> u64 {
    BASE_STEPS + STEPS_PER_BYTE * len as u64
}

/// PostgreSQL's dialect with a budget of expressions (see the module's comment).
#[derive(Debug)]
pub(crate) struct BudgetedPostgres {
    inner: PostgreSqlDialect,
    left: Cell<u64>,
    spent: Cell<bool>,
}

impl BudgetedPostgres {
    pub(crate) fn new(budget: u64) -> BudgetedPostgres {
        BudgetedPostgres {
            inner: PostgreSqlDialect {},
            left: Cell::new(budget),
            spent: Cell::new(false),
        }
    }

    /// Whether the parse ran out of budget (its error then says "recursion limit").
    pub(crate) fn spent(&self) -> bool {
        self.spent.get()
    }

    /// Expressions started so far (the tests measure parses with it).
    #[cfg(test)]
    pub(crate) fn steps(&self, budget: u64) -> u64 {
        budget - self.left.get()
    }
}

/// Methods PostgreSQL's dialect answers itself, passed to it unchanged.
macro_rules! as_postgres {
    ($($name:ident),* $(,)?) => {
        $(fn $name(&self) -> bool { self.inner.$name() })*
    };
}

impl Dialect for BudgetedPostgres {
    /// The parser's `dialect_of!(… is PostgreSqlDialect)` checks hold.
    fn dialect(&self) -> TypeId {
        TypeId::of::<PostgreSqlDialect>()
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        match self.left.get() {
            0 => {
                self.spent.set(true);
                Some(Err(ParserError::RecursionLimitExceeded))
            }
            n => {
                self.left.set(n - 1);
                self.inner.parse_prefix(parser)
            }
        }
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        self.inner.parse_infix(parser, expr, precedence)
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.inner.parse_statement(parser)
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        self.inner.get_next_precedence(parser)
    }

    fn prec_value(&self, prec: Precedence) -> u8 {
        self.inner.prec_value(prec)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.inner.identifier_quote_style(identifier)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.inner.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.inner.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.inner.is_identifier_part(ch)
    }

    fn is_custom_operator_part(&self, ch: char) -> bool {
        self.inner.is_custom_operator_part(ch)
    }

    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        self.inner.is_reserved_for_identifier(kw)
    }

    // Every `fn … (&self) -> bool` PostgreSqlDialect overrides in sqlparser 0.62
    // (`dialect/postgresql.rs`); the test `same_statements_as_postgres` compares the two.
    as_postgres!(
        supports_unicode_string_literal,
        supports_filter_during_aggregation,
        supports_group_by_expr,
        allow_extract_custom,
        allow_extract_single_quotes,
        supports_create_index_with_clause,
        supports_explain_with_utility_options,
        supports_listen_notify,
        supports_factorial_operator,
        supports_bitwise_shift_operators,
        supports_comment_on,
        supports_load_extension,
        supports_named_fn_args_with_colon_operator,
        supports_named_fn_args_with_expr_name,
        supports_empty_projections,
        supports_nested_comments,
        supports_string_escape_constant,
        supports_numeric_literal_underscores,
        supports_array_typedef_with_brackets,
        supports_geometric_types,
        supports_set_names,
        supports_alter_column_type_using,
        supports_notnull_operator,
        supports_interval_options,
        supports_insert_table_alias,
        supports_create_table_like_parenthesized,
        supports_select_wildcard_with_alias,
        supports_comma_separated_trim,
        supports_xml_expressions,
        supports_comment_optimizer_hint,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(dialect: &dyn Dialect, sql: &str) -> String {
        format!("{:?}", Parser::parse_sql(dialect, sql))
    }

    /// The budgeted dialect reads PostgreSQL's syntax as PostgreSqlDialect does, its own
    /// constructs included: a method the wrapper failed to pass on would show here.
    #[test]
    fn same_statements_as_postgres() {
        for sql in [
            "SELECT a::int, b->>'k', c #> '{a}', d @> e, E'x\\n', U&'d\\0061t', 'a' || 'b'",
            "SELECT f(name => 1, other := 2), x COLLATE \"C\", 5!, 1 << 2, a NOTNULL",
            "SELECT ARRAY[1, 2][1], '{1}'::int[], INTERVAL '1 day', 1_000, $1, \"Quoted\"",
            "SELECT * FROM t WHERE a ILIKE 'x%' AND b IS DISTINCT FROM c OR d ~ 'r' /* /* */ */",
            "SELECT (information_schema._pg_expandarray(i.indkey)).n FROM pg_catalog.pg_index i",
            "SELECT t.* AS x, EXTRACT('year' FROM d), TRIM(BOTH 'x' FROM y), xmlelement(name a)",
            "SET NAMES 'utf8'; SHOW search_path; LISTEN c; COMMENT ON TABLE t IS 'x'",
            "SELECT 1 +", // an error
        ] {
            let budgeted = BudgetedPostgres::new(budget_for(sql.len()));
            assert_eq!(
                parse(&budgeted, sql),
                parse(&PostgreSqlDialect {}, sql),
                "{sql}"
            );
            assert!(!budgeted.spent(), "{sql}");
        }
    }

    #[test]
    fn the_budget_ends_a_parse_that_doubles_per_level() {
        let nested = |depth: usize| format!("SELECT {}1{}", "f(".repeat(depth), ")".repeat(depth));
        let steps = |sql: &str| {
            let dialect = BudgetedPostgres::new(u64::MAX);
            let _ = Parser::parse_sql(&dialect, sql);
            dialect.steps(u64::MAX)
        };
        // Each level doubles the expressions started: what the budget is sized by.
        assert_eq!(steps(&nested(10)), 2 * steps(&nested(9)) + 1);
        assert!(steps(&nested(16)) < budget_for(nested(16).len()));
        let deep = nested(40);
        let dialect = BudgetedPostgres::new(budget_for(deep.len()));
        let err = Parser::parse_sql(&dialect, &deep).expect_err("over budget");
        assert!(dialect.spent());
        assert_eq!(err, ParserError::RecursionLimitExceeded);
        assert_eq!(
            dialect.steps(budget_for(deep.len())),
            budget_for(deep.len())
        );
    }
}
