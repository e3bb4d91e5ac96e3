//! The column rules of a schema (docs/SPEC.md 2.1, 2.2): names, data types, date formats, partitions
//! and checks. Every problem is collected, each naming the column it concerns.

use std::collections::BTreeMap;

use super::check::parse_check;
use super::date_format::DateFormat;
use super::model::{Column, DataType};
use super::names::{is_valid_column_name, MAX_COLUMN_NAME_LEN};
use super::valid::{NamedCheck, ValidColumn};

/// The typed columns (meaningful only when no problem was added) and the partition order.
pub(super) struct Columns {
    pub columns: Vec<ValidColumn>,
    pub partitions: Vec<usize>,
}

pub(super) fn check_columns(columns: &[Column], problems: &mut Vec<String>) -> Columns {
    if columns.is_empty() {
        problems.push("You need to define at least one column".to_owned());
    }
    check_names(columns, problems);
    let typed: Vec<ValidColumn> = columns.iter().filter_map(|c| typed(c, problems)).collect();
    let partitions = check_partitions(columns, problems);
    Columns {
        columns: typed,
        partitions,
    }
}

fn check_names(columns: &[Column], problems: &mut Vec<String>) {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in columns.iter().enumerate() {
        let name = c.name.as_str();
        if name.is_empty() {
            problems.push(format!(
                "Column number {} has an empty name; every column needs a name",
                i + 1
            ));
        } else if name.len() > MAX_COLUMN_NAME_LEN {
            problems.push(format!(
                "Column name [{name}] is longer than {MAX_COLUMN_NAME_LEN} characters"
            ));
        } else if !is_valid_column_name(name) {
            problems.push(format!(
                "Column name [{name}] must be lower case letters, digits and underscores, \
                 not only digits or underscores"
            ));
        }
        let count = seen.entry(name).or_default();
        *count += 1;
        if *count == 2 && !name.is_empty() {
            problems.push(format!(
                "Column name [{name}] is used more than once; column names must be unique"
            ));
        }
    }
}

/// The typed column, after its data type, format and checks are judged.
fn typed(c: &Column, problems: &mut Vec<String>) -> Option<ValidColumn> {
    let name = &c.name;
    let data_type = c.data_type();
    if data_type.is_none() {
        problems.push(format!(
            "Column [{name}] has an unaccepted data type [{}]. Accepted: {}",
            c.data_type,
            DataType::ALL.map(DataType::as_str).join(", ")
        ));
    }
    let format = data_type.and_then(|t| check_format(c, t, problems));
    let mut checks = Vec::with_capacity(c.checks.len());
    for (check_name, spec) in &c.checks {
        if let Some(check) = parse_check(name, data_type, check_name, spec, problems) {
            checks.push(NamedCheck {
                name: check_name.clone(),
                check,
            });
        }
    }
    Some(ValidColumn {
        name: name.clone(),
        data_type: data_type?,
        allow_null: c.allow_null,
        partition_index: c.partition_index.and_then(|i| usize::try_from(i).ok()),
        format,
        unique: c.unique,
        checks,
    })
}

/// The date format of a date column. Other columns must have none; an empty string counts as none.
fn check_format(c: &Column, t: DataType, problems: &mut Vec<String>) -> Option<DateFormat> {
    let name = &c.name;
    let given = c.format.as_deref().filter(|f| !f.is_empty());
    match (t, given) {
        (DataType::Date, None) => {
            problems.push(format!(
                "Column [{name}] has data type date and needs a format. Accepted formats: {}",
                DateFormat::accepted_list()
            ));
            None
        }
        (DataType::Date, Some(f)) => {
            let parsed = DateFormat::parse(f);
            if parsed.is_none() {
                problems.push(format!(
                    "Column [{name}] has an invalid date format [{f}]. Accepted formats: {}",
                    DateFormat::accepted_list()
                ));
            }
            parsed
        }
        (_, Some(f)) => {
            problems.push(format!(
                "Column [{name}] has data type {t} and cannot have a format [{f}]; \
                 only date columns take a format"
            ));
            None
        }
        (_, None) => None,
    }
}

/// Partition indexes must be exactly 0..N-1 for the N partition columns, which must not allow
/// nulls; at least one column must not be a partition. Returns column positions in index order.
fn check_partitions(columns: &[Column], problems: &mut Vec<String>) -> Vec<usize> {
    let partitioned: Vec<(usize, i64)> = (columns.iter().enumerate())
        .filter_map(|(i, c)| c.partition_index.map(|p| (i, p)))
        .collect();
    let n = partitioned.len();
    let mut by_index: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for &(i, p) in &partitioned {
        let name = &columns[i].name;
        if p < 0 {
            problems.push(format!(
                "Column [{name}] has a negative partition index [{p}]; partition indexes start at 0"
            ));
        } else if !usize::try_from(p).is_ok_and(|p| p < n) {
            problems.push(format!(
                "Column [{name}] has partition index [{p}], but with {n} partition column{} the \
                 indexes must run from 0 to {} without gaps",
                if n == 1 { "" } else { "s" },
                n - 1
            ));
        }
        if columns[i].allow_null {
            problems.push(format!(
                "Partition column [{name}] cannot allow null values"
            ));
        }
        by_index.entry(p).or_default().push(i);
    }
    for (p, holders) in &by_index {
        if holders.len() > 1 {
            let names: Vec<String> = holders
                .iter()
                .map(|&i| format!("[{}]", columns[i].name))
                .collect();
            problems.push(format!(
                "Partition index [{p}] is used by more than one column: {}",
                names.join(", ")
            ));
        }
    }
    if !columns.is_empty() && n == columns.len() {
        problems.push("At least one column must not be a partition".to_owned());
    }
    by_index.into_values().flatten().collect()
}

#[cfg(test)]
#[path = "columns_tests.rs"]
mod tests;
