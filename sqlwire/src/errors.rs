//! Errors as PostgreSQL errors: an SQLSTATE a client can act on, and the connection kept. The
//! one map from the engine's errors to SQLSTATEs ([`sqlstate`], [`sign_in_refused`]); the
//! listener's own refusal of a connection is [`TOO_MANY_CONNECTIONS`].

use datafusion::error::DataFusionError;
use datafusion_postgres::pgwire::error::{ErrorInfo, PgWireError};
use rapid_actors::engine::sql::{Refused, TooManyRows};
use rapid_actors::{Error, ErrorKind};

/// An ERROR (the statement fails, the session goes on) with `code`.
pub fn pg_error(code: &str, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".to_string(),
        code.to_string(),
        message.into(),
    )))
}

/// A FATAL error of the sign-in: the client is told why, then the connection ends.
pub fn fatal(code: &str, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "FATAL".to_string(),
        code.to_string(),
        message.into(),
    )))
}

pub fn refused(r: Refused) -> PgWireError {
    pg_error(r.sqlstate, r.message)
}

/// The engine's time limit, as PostgreSQL words a statement timeout.
pub fn timed_out(limit: std::time::Duration) -> PgWireError {
    pg_error(
        "57014",
        format!(
            "canceling statement due to statement timeout: the limit is {} seconds \
             (RAPID_QUERY_TIMEOUT_SECONDS)",
            limit.as_secs()
        ),
    )
}

/// The engine's row cap: a program limit exceeded.
pub fn too_many_rows(e: TooManyRows) -> PgWireError {
    pg_error("54000", e.to_string())
}

/// A connection refused because its address (or the listener) holds its share of connections:
/// PostgreSQL's too_many_connections, which clients read as "connect later", and only that.
pub const TOO_MANY_CONNECTIONS: &str = "53300";

/// The SQLSTATE of an engine error's kind. `Busy` (a full pool: query slots, the sign-in's hash
/// pool) is 53000 insufficient_resources, PostgreSQL's class for "the server lacks a resource
/// now", not 53300, which PostgreSQL keeps for refusing a connection over its limit: a full pool
/// is no connection count, whether it meets a statement or a sign-in.
pub fn sqlstate(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Unauthenticated | ErrorKind::Throttled { .. } => "28000",
        ErrorKind::Forbidden => "42501",
        ErrorKind::NotFound => "42P01",
        ErrorKind::Busy => "53000",
        ErrorKind::TooLarge => "54000",
        ErrorKind::Invalid | ErrorKind::Unprocessable | ErrorKind::Conflict => "22023",
        ErrorKind::Internal => "XX000",
    }
}

/// A refused sign-in as a FATAL error: wrong credentials 28P01 (PostgreSQL's
/// invalid_password), a throttled subject 28000, a full hash pool by [`sqlstate`].
pub fn sign_in_refused(e: Error, user: &str) -> PgWireError {
    match e.kind {
        ErrorKind::Unauthenticated => fatal(
            "28P01",
            format!("password authentication failed for user \"{user}\""),
        ),
        ErrorKind::Throttled { .. } | ErrorKind::Busy => fatal(sqlstate(&e.kind), e.to_string()),
        _ => fatal("XX000", "sign-in failed (logged by the service)"),
    }
}

pub fn engine(e: Error) -> PgWireError {
    if e.kind == ErrorKind::Internal {
        tracing::error!(error = %e.report(), "PostgreSQL statement failed");
        return pg_error("XX000", "internal error (logged by the service)");
    }
    pg_error(sqlstate(&e.kind), e.to_string())
}

/// Gives the errors DataFusion and the library return their SQLSTATE; others pass as they are.
pub fn classify(e: PgWireError) -> PgWireError {
    let PgWireError::ApiError(inner) = e else {
        return e;
    };
    match inner.downcast::<DataFusionError>() {
        Ok(df) => datafusion_error(*df),
        Err(other) => pg_error("XX000", other.to_string()),
    }
}

fn datafusion_error(e: DataFusionError) -> PgWireError {
    let message = e.to_string();
    let code = match e.find_root() {
        DataFusionError::ResourcesExhausted(_) => "53200",
        DataFusionError::SQL(..) => "42601",
        DataFusionError::Plan(m) if m.contains("not found") => "42P01",
        DataFusionError::SchemaError(..) => "42703",
        DataFusionError::Plan(_) | DataFusionError::NotImplemented(_) => "42000",
        DataFusionError::Execution(_) | DataFusionError::ArrowError(..) => "22000",
        DataFusionError::External(inner) => match inner.downcast_ref::<Error>() {
            Some(engine) => sqlstate(&engine.kind),
            None => "XX000",
        },
        _ => "XX000",
    };
    pg_error(code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(e: PgWireError) -> (String, String) {
        match e {
            PgWireError::UserError(info) => (info.severity, info.code),
            other => panic!("not a user error: {other:?}"),
        }
    }

    #[test]
    fn a_full_pool_is_53000_in_a_statement_and_at_sign_in() {
        let full = || Error::busy("the pool is full");
        assert_eq!(code(engine(full())), ("ERROR".into(), "53000".into()));
        assert_eq!(
            code(sign_in_refused(full(), "u")),
            ("FATAL".into(), "53000".into())
        );
        let wrong = Error::unauthenticated("no");
        assert_eq!(code(sign_in_refused(wrong, "u")).1, "28P01");
        assert_eq!(TOO_MANY_CONNECTIONS, "53300");
    }
}
