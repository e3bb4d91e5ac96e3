//! Errors as PostgreSQL errors: an SQLSTATE a client can act on, and the connection kept.

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

/// The SQLSTATE of an engine error's kind.
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
