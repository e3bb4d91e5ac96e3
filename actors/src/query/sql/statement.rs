//! The gate before planning. Statements are parsed with DataFusion's parser in PostgreSQL's
//! dialect, bounded in size and depth, and allowed only when they read: anything that writes,
//! defines tables, copies, or changes the engine's own settings is refused, with the SQLSTATE a
//! PostgreSQL client expects.

use std::ops::ControlFlow;

use datafusion::sql::parser::{DFParserBuilder, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::{Expr, Statement, TableFactor, Visitor};
use datafusion::sql::sqlparser::parser::Parser;

use crate::error::Error;
use crate::query::language::limits::QueryLimits;
use crate::query::sql::parse_budget::{budget_for, BudgetedPostgres};
use crate::sql_walk::Tree;

/// The longest statement accepted, in bytes (clients' catalog queries are a few kilobytes).
pub(crate) const MAX_SQL_BYTES: usize = 100_000;

/// Expressions allowed in one statement, as a multiple of the query object's term limit:
/// clients' catalog queries are larger than any JSON query.
const NODES_PER_TERM_LIMIT: usize = 10;

/// Table functions that only compute rows (none reaches a file or a URL).
const TABLE_FUNCTIONS: &[&str] = &["generate_series", "range", "unnest", "pg_get_keywords"];

/// A statement refused before planning, with its PostgreSQL SQLSTATE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// `42601` syntax, `54000` too large or deep, `25006` not read-only, `42501` a setting or
    /// function out of reach.
    pub sqlstate: &'static str,
    pub message: String,
}

impl Refused {
    pub(crate) fn new(sqlstate: &'static str, message: impl Into<String>) -> Refused {
        Refused {
            sqlstate,
            message: message.into(),
        }
    }
}

/// Over HTTP every refusal is the client's mistake (400).
impl From<Refused> for Error {
    fn from(r: Refused) -> Error {
        Error::invalid(r.message)
    }
}

/// Refuses a statement longer than [`MAX_SQL_BYTES`] before any parser sees it.
pub(crate) fn check_size(sql: &str) -> Result<(), Refused> {
    if sql.len() > MAX_SQL_BYTES {
        return Err(Refused::new(
            "54000",
            format!("The statement is longer than the limit of {MAX_SQL_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Refuses a statement whose parse would take more than its budget of work (see
/// [`parse_budget`](super::parse_budget)), before a parser without a budget sees it: the
/// PostgreSQL front's parsers are the library's own. Nothing else is decided here.
pub(crate) fn check_parse_cost(sql: &str) -> Result<(), Refused> {
    check_size(sql)?;
    let budget = budget_for(sql.len());
    let dialect = BudgetedPostgres::new(budget);
    let _ = Parser::new(&dialect)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements());
    match dialect.spent() {
        true => Err(too_complex(budget)),
        false => Ok(()),
    }
}

fn too_complex(budget: u64) -> Refused {
    Refused::new(
        "54001",
        format!(
            "The statement is too complex to parse: its nesting needs more than {budget} parser \
             steps (each level of nested function calls doubles them; about 16 levels fit)"
        ),
    )
}

/// Parses `sql` (one or more statements) and checks each; the statements when all may run.
pub(crate) fn check_sql(sql: &str, limits: &QueryLimits) -> Result<Vec<DfStatement>, Refused> {
    check_size(sql)?;
    let budget = budget_for(sql.len());
    let dialect = BudgetedPostgres::new(budget);
    let statements = DFParserBuilder::new(sql)
        .with_dialect(&dialect)
        .with_recursion_limit(limits.max_depth + 20)
        .build()
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| {
            if dialect.spent() {
                return too_complex(budget);
            }
            // The parser's own depth guard: a statement nested too deep, not a typo.
            let code = match e.to_string().contains("recursion limit") {
                true => "54000",
                false => "42601",
            };
            Refused::new(code, format!("The statement does not parse: {e}"))
        })?;
    let statements: Vec<DfStatement> = statements.into_iter().collect();
    for statement in &statements {
        check_statement(statement, limits)?;
    }
    Ok(statements)
}

/// Checks statements another parser made (the PostgreSQL front's, which rewrites clients'
/// catalog queries): the same rules as [`check_sql`].
pub(crate) fn check_parsed(statements: &[Statement], limits: &QueryLimits) -> Result<(), Refused> {
    statements
        .iter()
        .try_for_each(|s| check_sql_statement(s, limits))
}

/// `sql` when it is exactly one SELECT (or EXPLAIN of one), checked, its unaliased expressions
/// named as written (`POST /api/sql`).
pub(crate) fn one_select(sql: &str, limits: &QueryLimits) -> crate::error::Result<DfStatement> {
    // Over HTTP only a SELECT runs: a write's refusal says so (the wire's message also names
    // SHOW, SET and transactions, which run there only).
    let mut statements = check_sql(sql, limits).map_err(|r| match r.sqlstate {
        "25006" => Error::invalid(r.message.replace(
            "Only reading statements run here (SELECT, EXPLAIN, SHOW, SET, transactions)",
            "Only one SELECT (or EXPLAIN of one) runs here",
        )),
        _ => Error::from(r),
    })?;
    let select = |s: &DfStatement| match s {
        DfStatement::Statement(s) => matches!(**s, Statement::Query(_)),
        DfStatement::Explain(_) => true,
        _ => false,
    };
    if statements.len() != 1 || !select(&statements[0]) {
        return Err(Error::invalid(
            "The body's sql must be exactly one SELECT (or EXPLAIN) statement",
        ));
    }
    let mut statement = statements.remove(0);
    if let DfStatement::Statement(s) = &mut statement {
        super::naming::name_as_written(std::slice::from_mut(&mut **s));
        super::datetime_formats::chrono_patterns(std::slice::from_mut(&mut **s));
    }
    Ok(statement)
}

fn check_statement(statement: &DfStatement, limits: &QueryLimits) -> Result<(), Refused> {
    match statement {
        DfStatement::Statement(s) => check_sql_statement(s, limits),
        DfStatement::Explain(e) => check_statement(&e.statement, limits),
        _ => Err(read_only("CREATE EXTERNAL TABLE, COPY and RESET")),
    }
}

fn check_sql_statement(statement: &Statement, limits: &QueryLimits) -> Result<(), Refused> {
    match statement {
        Statement::Query(_) => check_parts(statement, limits),
        Statement::Explain { statement, .. } => check_sql_statement(statement, limits),
        Statement::Set(_) => check_setting(statement),
        Statement::ShowVariable { .. }
        | Statement::ShowVariables { .. }
        | Statement::ShowStatus { .. }
        | Statement::ShowTables { .. }
        | Statement::ShowColumns { .. }
        | Statement::ShowSchemas { .. }
        | Statement::ShowDatabases { .. }
        | Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Discard { .. }
        | Statement::Deallocate { .. } => Ok(()),
        other => Err(read_only(statement_kind(other))),
    }
}

fn read_only(what: &str) -> Refused {
    Refused::new(
        "25006",
        format!("Only reading statements run here (SELECT, EXPLAIN, SHOW, SET, transactions): {what} is refused"),
    )
}

/// The statement's first words, for the message.
fn statement_kind(statement: &Statement) -> &'static str {
    match statement {
        Statement::Insert(_) => "INSERT",
        Statement::Update { .. } => "UPDATE",
        Statement::Delete(_) => "DELETE",
        Statement::Copy { .. } => "COPY",
        Statement::CreateTable(_) | Statement::CreateView { .. } => "CREATE",
        Statement::Drop { .. } => "DROP",
        _ => "this statement",
    }
}

/// Client settings (DateStyle, search_path, ...) are the session's; the engine's own
/// (`datafusion.*`: memory, threads, files) are the server's and stay as configured.
fn check_setting(statement: &Statement) -> Result<(), Refused> {
    if statement
        .to_string()
        .to_ascii_lowercase()
        .contains("datafusion.")
    {
        return Err(Refused::new(
            "42501",
            "The engine's settings (datafusion.*) cannot be changed from a session",
        ));
    }
    Ok(())
}

/// Bounds the expressions' depth and number, and allows only table functions that compute rows.
fn check_parts(statement: &Statement, limits: &QueryLimits) -> Result<(), Refused> {
    let mut walk = Walk {
        now: 0,
        deepest: 0,
        nodes: 0,
        refused: None,
    };
    let _ = statement.walk(&mut walk);
    if let Some(r) = walk.refused {
        return Err(r);
    }
    if walk.deepest > limits.max_depth {
        return Err(Refused::new(
            "54000",
            format!(
                "The statement nests expressions {} deep; the limit is {} (RAPID_QUERY_MAX_DEPTH)",
                walk.deepest, limits.max_depth
            ),
        ));
    }
    let most = limits.max_nodes * NODES_PER_TERM_LIMIT;
    if walk.nodes > most {
        return Err(Refused::new(
            "54000",
            format!("The statement has more than {most} expressions (RAPID_QUERY_MAX_NODES x {NODES_PER_TERM_LIMIT})"),
        ));
    }
    Ok(())
}

struct Walk {
    now: usize,
    deepest: usize,
    nodes: usize,
    refused: Option<Refused>,
}

impl Visitor for Walk {
    type Break = ();

    fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
        self.now += 1;
        self.nodes += 1;
        self.deepest = self.deepest.max(self.now);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
        self.now -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        let function = match factor {
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            } => Some(name.to_string()),
            TableFactor::Function { name, .. } => Some(name.to_string()),
            TableFactor::TableFunction { .. } => Some("TABLE(...)".to_string()),
            _ => None,
        };
        match function {
            Some(f) if !TABLE_FUNCTIONS.contains(&f.to_ascii_lowercase().as_str()) => {
                self.refused = Some(Refused::new(
                    "42501",
                    format!(
                        "The table function {f} is not available here; these are: {}",
                        TABLE_FUNCTIONS.join(", ")
                    ),
                ));
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

#[cfg(test)]
#[path = "statement_tests.rs"]
mod tests;
