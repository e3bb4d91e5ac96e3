//! `SAVEPOINT`, `RELEASE` and `ROLLBACK TO`, which clients send inside their transactions
//! (psycopg's nested `transaction()`, SQLAlchemy's `begin_nested()` and its hstore probe) and the
//! library does not answer. A session here only reads, so a savepoint has nothing to keep or undo:
//! inside a transaction they are answered as done; the transaction stays open.

use datafusion::sql::sqlparser::ast::Statement;
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion_postgres::pgwire::api::results::{Response, Tag};
use datafusion_postgres::pgwire::error::PgWireResult;
use datafusion_postgres::pgwire::messages::response::TransactionStatus;

use crate::errors::pg_error;

/// The answer to `sql` when it is one savepoint statement; None for anything else.
pub(crate) fn answer(sql: &str, status: TransactionStatus) -> Option<PgWireResult<Vec<Response>>> {
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    if statements.len() != 1 {
        return None;
    }
    let tag = match statements.pop()? {
        Statement::Savepoint { .. } => "SAVEPOINT",
        Statement::ReleaseSavepoint { .. } => "RELEASE",
        Statement::Rollback {
            savepoint: Some(_), ..
        } => "ROLLBACK",
        _ => return None,
    };
    Some(match status {
        TransactionStatus::Transaction => Ok(vec![Response::Execution(Tag::new(tag))]),
        TransactionStatus::Idle => Err(pg_error(
            "25P01",
            format!("{tag} can only be used in transaction blocks"),
        )),
        // Undoing the failed statement would mean leaving the error state, which the protocol
        // library keeps until the transaction ends: the client rolls the transaction back.
        TransactionStatus::Error => Err(pg_error(
            "25P02",
            "current transaction is aborted: roll the whole transaction back (ROLLBACK), \
             savepoints cannot restore it here",
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn savepoints_are_done_inside_a_transaction_only() {
        let inside = TransactionStatus::Transaction;
        for sql in [
            "SAVEPOINT a",
            "RELEASE SAVEPOINT a",
            "release a",
            "ROLLBACK TO SAVEPOINT a",
        ] {
            let answer = answer(sql, inside).expect(sql).expect(sql);
            assert!(matches!(answer[..], [Response::Execution(_)]), "{sql}");
        }
        assert!(answer("SAVEPOINT a", TransactionStatus::Idle)
            .unwrap()
            .is_err());
        assert!(answer("ROLLBACK TO a", TransactionStatus::Error)
            .unwrap()
            .is_err());
        for other in ["ROLLBACK", "SELECT 1", "SAVEPOINT a; SELECT 1", "nonsense"] {
            assert!(answer(other, inside).is_none(), "{other}");
        }
    }
}
