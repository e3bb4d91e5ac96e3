//! PostgreSQL's `format(formatstr, args...)`, which catalog queries use to build names
//! (Metabase: `format('%I.%I', schema, table)::regclass`, `format('%s', udt_name)`). DataFusion
//! has no `format`. `%s` is the value as text (NULL: empty), `%I` an identifier quoted when it
//! needs it, `%L` a literal quoted (NULL: `NULL`), `%%` a percent sign; positions (`%1$s`) and
//! widths are refused, as this server's clients do not use them.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

pub(crate) fn udf() -> ScalarUDF {
    ScalarUDF::new_from_impl(Format {
        signature: Signature::variadic_any(Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Format {
    signature: Signature,
}

impl ScalarUDFImpl for Format {
    fn name(&self) -> &str {
        "format"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let texts: Vec<ArrayRef> = args
            .args
            .iter()
            .map(|a| Ok(cast(&a.to_array(rows)?, &DataType::Utf8)?))
            .collect::<DfResult<_>>()?;
        let Some((template, values)) = texts.split_first() else {
            return exec_err!("format takes a format string");
        };
        let template = template.as_string::<i32>();
        let values: Vec<_> = values.iter().map(|v| v.as_string::<i32>()).collect();
        let mut out = StringBuilder::new();
        for row in 0..rows {
            if template.is_null(row) {
                out.append_null();
                continue;
            }
            let arg = |i: usize| {
                values
                    .get(i)
                    .map(|v| (!v.is_null(row)).then(|| v.value(row)))
            };
            out.append_value(format_row(template.value(row), arg)?);
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

/// One row's `format`: `arg(i)` is the i-th value (`Some(None)` for NULL, `None` past the end).
fn format_row<'a>(
    template: &str,
    arg: impl Fn(usize) -> Option<Option<&'a str>>,
) -> DfResult<String> {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars();
    let mut next = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let spec = chars.next();
        if spec == Some('%') {
            out.push('%');
            continue;
        }
        let Some(value) = arg(next) else {
            return exec_err!("too few arguments for format()");
        };
        next += 1;
        match (spec, value) {
            (Some('s'), v) => out.push_str(v.unwrap_or("")),
            (Some('I'), Some(v)) => out.push_str(&quote_ident(v)),
            (Some('I'), None) => {
                return exec_err!("null values cannot be formatted as an SQL identifier")
            }
            (Some('L'), Some(v)) => out.push_str(&format!("'{}'", v.replace('\'', "''"))),
            (Some('L'), None) => out.push_str("NULL"),
            _ => return exec_err!("format() supports %s, %I, %L and %% only"),
        }
    }
    Ok(out)
}

/// An identifier as PostgreSQL's `quote_ident` writes it: as it is when it is lower case letters,
/// digits and underscores not starting with a digit, double-quoted otherwise.
fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    match plain {
        true => name.to_string(),
        false => format!("\"{}\"", name.replace('"', "\"\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(template: &str, args: &[Option<&'static str>]) -> DfResult<String> {
        format_row(template, |i| args.get(i).copied())
    }

    #[test]
    fn formats_as_postgresql_does() {
        assert_eq!(
            run("%I.%I", &[Some("travel"), Some("trips")]).unwrap(),
            "travel.trips"
        );
        assert_eq!(
            run("%I", &[Some("Odd \"name\"")]).unwrap(),
            "\"Odd \"\"name\"\"\""
        );
        assert_eq!(run("%s-%s", &[Some("a"), None]).unwrap(), "a-");
        assert_eq!(
            run("%L and %L", &[Some("it's"), None]).unwrap(),
            "'it''s' and NULL"
        );
        assert_eq!(run("100%%", &[]).unwrap(), "100%");
        assert!(run("%s %s", &[Some("one")]).is_err());
        assert!(run("%1$s", &[Some("x")]).is_err());
        assert!(run("%I", &[None]).is_err());
    }
}
