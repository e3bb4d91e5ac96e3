//! `COPY (SELECT ...) TO STDOUT` and `COPY table TO STDOUT`, in the text, CSV and binary formats
//! (DuckDB's `postgres` extension and the ADBC driver read every result so). The query inside
//! passes the same gate, rewrites, slot, time limit and row guard as any statement; `COPY ... TO
//! 'file'`, `TO PROGRAM` and `COPY ... FROM` are not this and stay refused by the gate.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::Schema;
use datafusion::error::DataFusionError;
use datafusion::execution::context::SQLOptions;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion_postgres::arrow_pg::datatypes::arrow_schema_to_pg_fields;
use datafusion_postgres::arrow_pg::encoder::encode_value;
use datafusion_postgres::pgwire::api::portal::Format;
use datafusion_postgres::pgwire::api::results::{
    CopyCsvOptions, CopyEncoder, CopyResponse, CopyTextOptions, FieldInfo, Response,
};
use datafusion_postgres::pgwire::error::{PgWireError, PgWireResult};
use rapid_actors::engine::sql::within_row_cap;

use crate::errors::too_many_rows;
use datafusion_postgres::pgwire::messages::copy::CopyData;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Csv,
    Binary,
}

/// One `COPY ... TO STDOUT`: the query it copies and how it writes the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CopyOut {
    pub(crate) query: String,
    kind: Kind,
    header: bool,
    delimiter: Option<char>,
    null: Option<String>,
}

/// The copy `sql` asks for, when it is one `COPY ... TO STDOUT` (anything else: None, left to
/// the gate).
pub(crate) fn parse(sql: &str) -> Option<CopyOut> {
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    if statements.len() != 1 {
        return None;
    }
    let Statement::Copy {
        source,
        to: true,
        target: CopyTarget::Stdout,
        options,
        legacy_options,
        ..
    } = statements.remove(0)
    else {
        return None;
    };
    let query = match source {
        CopySource::Query(q) => q.to_string(),
        CopySource::Table {
            table_name,
            columns,
        } => {
            let columns = match columns.is_empty() {
                true => "*".to_string(),
                false => columns
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            format!("SELECT {columns} FROM {table_name}")
        }
    };
    let mut copy = CopyOut {
        query,
        kind: Kind::Text,
        header: false,
        delimiter: None,
        null: None,
    };
    for option in options {
        match option {
            CopyOption::Format(f) => {
                copy.kind = match f.value.to_lowercase().as_str() {
                    "csv" => Kind::Csv,
                    "binary" => Kind::Binary,
                    _ => Kind::Text,
                }
            }
            CopyOption::Header(h) => copy.header = h,
            CopyOption::Delimiter(d) => copy.delimiter = Some(d),
            CopyOption::Null(n) => copy.null = Some(n),
            _ => {}
        }
    }
    for option in legacy_options {
        match option {
            CopyLegacyOption::Binary => copy.kind = Kind::Binary,
            CopyLegacyOption::Csv(csv) => {
                copy.kind = Kind::Csv;
                copy.header |= csv.contains(&CopyLegacyCsvOption::Header);
            }
            CopyLegacyOption::Header => copy.header = true,
            CopyLegacyOption::Delimiter(d) => copy.delimiter = Some(d),
            CopyLegacyOption::Null(n) => copy.null = Some(n),
            _ => {}
        }
    }
    Some(copy)
}

/// Runs `query` (already through the gate and the rewrites) in `ctx` as `copy` asks; the
/// caller bounds it as any statement.
pub(crate) async fn run(
    ctx: SessionContext,
    query: String,
    copy: CopyOut,
) -> PgWireResult<Vec<Response>> {
    let only_queries = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    let api = |e: DataFusionError| PgWireError::ApiError(Box::new(e));
    let frame = ctx
        .sql_with_options(&query, only_queries)
        .await
        .map_err(api)?;
    let schema = frame.schema().as_arrow().clone();
    let batches = frame.collect().await.map_err(api)?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    within_row_cap(rows as u64).map_err(too_many_rows)?;
    response(&copy, &schema, &batches).map(|r| vec![r])
}

/// The copy's answer: `batches` of the query (of `schema`) encoded in its format.
pub(crate) fn response(
    copy: &CopyOut,
    schema: &Schema,
    batches: &[RecordBatch],
) -> PgWireResult<Response> {
    let fields = Arc::new(arrow_schema_to_pg_fields(
        schema,
        &Format::UnifiedText,
        None,
    )?);
    let mut encoder = encoder(copy, fields.clone());
    let mut out: Vec<PgWireResult<CopyData>> = Vec::new();
    if copy.header && copy.kind == Kind::Csv {
        let names: Vec<String> = fields.iter().map(|f| csv_quoted(f.name())).collect();
        let line = format!(
            "{}\n",
            names.join(&copy.delimiter.unwrap_or(',').to_string())
        );
        out.push(Ok(CopyData::new(line.into_bytes().into())));
    }
    // Binary rows of the common types straight from their columns; the rest by the library.
    let typed = (copy.kind == Kind::Binary)
        .then(|| crate::copy_binary::rows(schema, batches))
        .flatten();
    let by_library = match typed {
        Some(rows) => {
            out.extend(rows.into_iter().map(Ok));
            &[][..]
        }
        None => batches,
    };
    out.reserve(by_library.iter().map(|b| b.num_rows()).sum());
    for batch in by_library {
        for row in 0..batch.num_rows() {
            // Columns by position: `fields` is the schema's, in its order (a lookup by name per
            // value was a tenth of a binary copy's time).
            for ((column, field), pg_field) in batch
                .columns()
                .iter()
                .zip(schema.fields())
                .zip(fields.iter())
            {
                encode_value(&mut encoder, column, row, field, pg_field)?;
            }
            out.push(Ok(encoder.take_copy()));
        }
    }
    // Binary with no row: the header the encoder writes with the first row, alone. (The -1
    // trailer is the library's: `CopyResponse::new` appends it to a binary copy.)
    if copy.kind == Kind::Binary && out.is_empty() {
        let mut header = b"PGCOPY\n\xff\r\n\0".to_vec();
        header.extend_from_slice(&[0; 8]);
        out.push(Ok(CopyData::new(header.into())));
    }
    let format = i8::from(copy.kind == Kind::Binary);
    let stream = futures_util::stream::iter(out);
    Ok(Response::CopyOut(CopyResponse::new(
        format,
        fields.len(),
        stream,
    )))
}

/// The library's encoder of the copy's format and options.
fn encoder(copy: &CopyOut, fields: Arc<Vec<FieldInfo>>) -> CopyEncoder {
    match copy.kind {
        Kind::Binary => CopyEncoder::new_binary(fields.clone()),
        Kind::Text => {
            let mut options = CopyTextOptions::default();
            if let Some(d) = copy.delimiter {
                options.delimiter = d.to_string().into();
            }
            if let Some(n) = &copy.null {
                options.null_string = n.as_str().into();
            }
            CopyEncoder::new_text(fields.clone(), options)
        }
        Kind::Csv => {
            let mut options = CopyCsvOptions::default();
            if let Some(d) = copy.delimiter {
                options.delimiter = d.to_string().into();
            }
            if let Some(n) = &copy.null {
                options.null_string = n.as_str().into();
            }
            CopyEncoder::new_csv(fields.clone(), options)
        }
    }
}

/// A CSV header's name, quoted when it needs to be.
fn csv_quoted(name: &str) -> String {
    if name.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, Kind};

    #[test]
    fn copies_to_stdout_are_read_and_other_copies_are_not() {
        let copy = parse("COPY (SELECT a FROM t) TO STDOUT (FORMAT csv, HEADER)").unwrap();
        assert_eq!(
            (copy.query.as_str(), &copy.kind, copy.header),
            ("SELECT a FROM t", &Kind::Csv, true)
        );
        let copy = parse("COPY s.t (a, b) TO STDOUT WITH BINARY").unwrap();
        assert_eq!(
            (copy.query.as_str(), &copy.kind),
            ("SELECT a, b FROM s.t", &Kind::Binary)
        );
        assert_eq!(parse("COPY (SELECT 1) TO STDOUT").unwrap().kind, Kind::Text);
        assert_eq!(parse("COPY (SELECT 1) TO '/tmp/x'"), None);
        assert_eq!(parse("COPY t FROM STDIN"), None);
        assert_eq!(parse("SELECT 1"), None);
    }
}
