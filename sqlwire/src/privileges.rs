//! `has_table_privilege` and its kin as this service grants: reading only. The emulation answers
//! true for every privilege, so a client that asks which tables it may write (Metabase marks
//! them writable and offers its actions on them) was told it may update, insert and delete,
//! where every write is refused. A relation the subject cannot read is not in its catalogue at
//! all, so the object argument needs no check here.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, BooleanArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// The functions answered here, each `(user, object, privilege)` or `(object, privilege)`.
const NAMES: &[&str] = &[
    "has_table_privilege",
    "has_any_column_privilege",
    "has_column_privilege",
    "has_schema_privilege",
    "has_database_privilege",
];

/// What a reader holds: a table's or column's SELECT, a schema's USAGE, a database's CONNECT.
const HELD: &[&str] = &["select", "usage", "connect"];

/// The functions, replacing the emulation's.
pub(crate) fn all() -> Vec<ScalarUDF> {
    NAMES
        .iter()
        .map(|name| {
            ScalarUDF::new_from_impl(HasPrivilege {
                name,
                signature: Signature::variadic_any(Volatility::Stable),
            })
        })
        .collect()
}

/// Whether PostgreSQL's privilege text (`'SELECT'`, `'select, update'`, `'USAGE WITH GRANT
/// OPTION'`) names one a reader holds: as PostgreSQL, true when any listed privilege is held.
/// No grant option is held.
fn holds(privileges: &str) -> bool {
    privileges.split(',').any(|p| {
        let p = p.trim().to_ascii_lowercase();
        !p.ends_with("with grant option") && HELD.contains(&p.as_str())
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct HasPrivilege {
    name: &'static str,
    signature: Signature,
}

impl ScalarUDFImpl for HasPrivilege {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let Some(last) = args.args.last() else {
            return datafusion::common::exec_err!("{} takes an object and a privilege", self.name);
        };
        let privileges: ArrayRef = cast(&last.to_array(rows)?, &DataType::Utf8)?;
        let answers: BooleanArray = privileges
            .as_string::<i32>()
            .iter()
            .map(|p| p.map(holds))
            .collect();
        debug_assert_eq!(answers.len(), rows);
        Ok(ColumnarValue::Array(Arc::new(answers)))
    }
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn a_reader_holds_select_usage_and_connect_only() {
        for held in ["SELECT", "select", "USAGE", "connect", "update, SELECT"] {
            assert!(holds(held), "{held}");
        }
        for not in [
            "UPDATE",
            "insert",
            "DELETE",
            "TRUNCATE",
            "SELECT WITH GRANT OPTION",
            "",
        ] {
            assert!(!holds(not), "{not}");
        }
    }
}
