//! Column checks (docs/SPEC.md 2.2) and null rules, applied to typed Arrow arrays of one batch.

use std::collections::HashSet;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{Date32Type, Float64Type, Int64Type};

use super::problems::{Place, Problems};
use crate::schema::{Check, DataType, NamedCheck, ValidColumn};

/// A check made ready for fast evaluation (`isin` lists become hash sets).
pub(super) struct PreparedCheck {
    name: String,
    check: Check,
    strings: HashSet<String>,
    ints: HashSet<i64>,
    floats: Vec<f64>,
    bools: HashSet<bool>,
}

impl PreparedCheck {
    pub(super) fn new(named: &NamedCheck) -> PreparedCheck {
        let mut p = PreparedCheck {
            name: named.name.clone(),
            check: named.check.clone(),
            strings: HashSet::new(),
            ints: HashSet::new(),
            floats: Vec::new(),
            bools: HashSet::new(),
        };
        if let Check::IsIn { allowed_values } = &named.check {
            for v in allowed_values {
                if let Some(s) = v.as_str() {
                    p.strings.insert(s.to_string());
                }
                if let Some(i) = v.as_i64() {
                    p.ints.insert(i);
                }
                if let Some(f) = v.as_f64() {
                    p.floats.push(f);
                }
                if let Some(b) = v.as_bool() {
                    p.bools.insert(b);
                }
            }
        }
        p
    }

    fn passes_number(&self, v: f64) -> bool {
        match &self.check {
            Check::InRange { min, max } => v >= *min && v <= *max,
            Check::GreaterThan { min } => v > *min,
            Check::LessThan { max } => v < *max,
            Check::IsIn { .. } => self.floats.contains(&v),
            _ => true,
        }
    }

    fn passes_int(&self, v: i64) -> bool {
        match &self.check {
            Check::IsIn { .. } => self.ints.contains(&v) || self.floats.contains(&(v as f64)),
            _ => self.passes_number(v as f64),
        }
    }

    fn passes_str(&self, v: &str) -> bool {
        match &self.check {
            Check::StrLength { min, max } => {
                let n = v.chars().count();
                n >= *min && n <= *max
            }
            Check::StrMatches { pattern, .. } => pattern.is_match(v),
            Check::IsIn { .. } => self.strings.contains(v),
            _ => true,
        }
    }
}

/// Applies the column's checks to `array` (rows numbered from `first_row`).
pub(super) fn apply_checks(
    column: &ValidColumn,
    checks: &[PreparedCheck],
    array: &ArrayRef,
    first_row: u64,
    problems: &mut Problems,
) {
    for check in checks {
        let mut fail = |i: usize, value: String| {
            let place = Place::row(
                first_row + i as u64,
                &column.name,
                "check",
                Some(value.clone()),
            );
            problems.add_at(place, || {
                format!(
                    "Column [{}] failed check [{}] {}: value {value} in row {}",
                    column.name,
                    check.name,
                    check.check,
                    first_row + i as u64
                )
            })
        };
        match column.data_type {
            DataType::Int => {
                for (i, v) in array.as_primitive::<Int64Type>().iter().enumerate() {
                    if let Some(v) = v.filter(|v| !check.passes_int(*v)) {
                        fail(i, v.to_string());
                    }
                }
            }
            DataType::Double => {
                for (i, v) in array.as_primitive::<Float64Type>().iter().enumerate() {
                    if let Some(v) = v.filter(|v| !check.passes_number(*v)) {
                        fail(i, v.to_string());
                    }
                }
            }
            DataType::String => {
                for (i, v) in array.as_string::<i32>().iter().enumerate() {
                    if let Some(v) = v.filter(|v| !check.passes_str(v)) {
                        fail(i, format!("\"{v}\""));
                    }
                }
            }
            DataType::Boolean => {
                for (i, v) in array.as_boolean().iter().enumerate() {
                    if let Some(v) = v.filter(|v| !check.bools.contains(v)) {
                        fail(i, v.to_string());
                    }
                }
            }
            // Schema validation refuses checks on date columns.
            DataType::Date => {
                let _ = array.as_primitive::<Date32Type>();
            }
        }
    }
}

/// Reports every null in a column that does not allow them.
pub(super) fn check_nulls(
    column: &ValidColumn,
    array: &ArrayRef,
    first_row: u64,
    problems: &mut Problems,
) {
    if column.allow_null || array.null_count() == 0 {
        return;
    }
    for i in 0..array.len() {
        if array.is_null(i) {
            let place = Place::row(first_row + i as u64, &column.name, "null", None);
            problems.add_at(place, || {
                format!(
                    "Column [{}] does not allow null values: row {} is null",
                    column.name,
                    first_row + i as u64
                )
            });
        }
    }
}

/// Whether the example value `text` of a column of `data_type` fails the check `spec` as an
/// upload would check it (the schema editor warns before a sample's row is refused); `None` when
/// the check, the type or the value cannot be read as such.
pub fn example_fails(spec: &crate::schema::CheckSpec, data_type: &str, text: &str) -> Option<bool> {
    let data_type = data_type.parse::<DataType>().ok()?;
    let mut problems = vec![];
    let check =
        crate::schema::check::parse_check("c", Some(data_type), "check", spec, &mut problems)?;
    let named = NamedCheck {
        name: "check".into(),
        check,
    };
    let prepared = PreparedCheck::new(&named);
    let text = text.trim();
    match data_type {
        DataType::Int => Some(!prepared.passes_int(text.parse().ok()?)),
        DataType::Double => Some(!prepared.passes_number(text.parse().ok()?)),
        DataType::String => Some(!prepared.passes_str(text)),
        _ => None,
    }
}

#[cfg(test)]
mod example_tests {
    use super::example_fails;
    use crate::schema::CheckSpec;

    #[test]
    fn an_example_is_judged_as_an_upload_would_judge_it() {
        let more = CheckSpec::from_words("greater_than", "0", "int").unwrap();
        assert_eq!(example_fails(&more, "int", "0"), Some(true));
        assert_eq!(example_fails(&more, "int", "3"), Some(false));
        assert_eq!(example_fails(&more, "int", "many"), None);
        let isin = CheckSpec::from_words("isin", "north, south", "string").unwrap();
        assert_eq!(example_fails(&isin, "string", "east"), Some(true));
    }
}
