//! Column checks (docs/SPEC.md 2.2): reading a [`CheckSpec`] into a typed [`Check`], refusing what could
//! never work (docs/API.md: checks are validated when the schema is stored).
//!
//! Semantics, as rAPId's checks (pandera) have them: `in_range` and `str_length` include both ends;
//! `greater_than` and `less_than` are strict; `str_length` counts characters, not bytes;
//! `str_matches` matches at the start of the value (not necessarily the whole value); nulls are
//! never checked (nullability is `allow_null`'s business).
//!
//! Which checks fit which column type:
//! - `in_range`, `greater_than`, `less_than`: `int` and `double` only (comparing strings, dates or
//!   booleans numerically is meaningless).
//! - `str_length`, `str_matches`: `string` only.
//! - `isin`: `int`, `double`, `string`, `boolean`, with every allowed value of the column's type
//!   (an `int` column takes integers; a `double` column any number). Not `date`: the allowed values
//!   would have to be written in the column's format and compared as dates, and an author meaning a
//!   range of dates is better served by a separate column.

use std::fmt;

use regex::Regex;
use serde_json::Value;

use super::model::{CheckSpec, DataType};

/// A check of a column's values.
#[derive(Debug, Clone)]
pub enum Check {
    /// `min <= value <= max`.
    InRange { min: f64, max: f64 },
    /// The value is one of these (each of the column's type, never null).
    IsIn { allowed_values: Vec<Value> },
    /// `min <= character count <= max`.
    StrLength { min: usize, max: usize },
    /// `value > min`.
    GreaterThan { min: f64 },
    /// `value < max`.
    LessThan { max: f64 },
    /// `pattern` (compiled anchored at the start) matches; `source` is the pattern as written.
    StrMatches { pattern: Regex, source: String },
}

/// The accepted `check_type` names, for messages.
pub const CHECK_TYPES: &str = "in_range, isin, str_length, greater_than, less_than, str_matches";

/// Longest accepted `str_matches` pattern, in bytes.
pub const MAX_PATTERN_LEN: usize = 1000;

impl Check {
    /// The `check_type` this check was written with.
    pub fn check_type(&self) -> &'static str {
        match self {
            Check::InRange { .. } => "in_range",
            Check::IsIn { .. } => "isin",
            Check::StrLength { .. } => "str_length",
            Check::GreaterThan { .. } => "greater_than",
            Check::LessThan { .. } => "less_than",
            Check::StrMatches { .. } => "str_matches",
        }
    }
}

/// The check in rAPId's style, for upload error messages: `in_range(2000, 2030)`,
/// `isin(["a", "b"])`, `str_matches('^[a-z]+$')`.
impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Check::InRange { min, max } => write!(f, "in_range({min}, {max})"),
            Check::IsIn { allowed_values } => {
                let values: Vec<String> = allowed_values.iter().map(Value::to_string).collect();
                write!(f, "isin([{}])", values.join(", "))
            }
            Check::StrLength { min, max } => write!(f, "str_length({min}, {max})"),
            Check::GreaterThan { min } => write!(f, "greater_than({min})"),
            Check::LessThan { max } => write!(f, "less_than({max})"),
            Check::StrMatches { source, .. } => write!(f, "str_matches('{source}')"),
        }
    }
}

/// Reads the check `name` of `column`. `data_type` is `None` when the column's own type is invalid
/// (already reported), so only the check's own shape is judged. Every problem goes to `problems`,
/// each naming the column and the check; `None` when there was one.
pub fn parse_check(
    column: &str,
    data_type: Option<DataType>,
    name: &str,
    spec: &CheckSpec,
    problems: &mut Vec<String>,
) -> Option<Check> {
    let at = format!("Column [{column}] check [{name}]");
    if name.trim().is_empty() {
        problems.push(format!("Column [{column}] has a check with an empty name"));
        return None;
    }
    let before = problems.len();
    let mut p = Params {
        at: format!("{at} ({})", spec.check_type),
        spec,
        problems,
    };
    let check = match spec.check_type.as_str() {
        "in_range" => in_range(&mut p),
        "isin" => isin(&mut p, data_type),
        "str_length" => str_length(&mut p),
        "greater_than" => p
            .only(&["min_value"])
            .and(p.number("min_value"))
            .map(|min| Check::GreaterThan { min }),
        "less_than" => p
            .only(&["max_value"])
            .and(p.number("max_value"))
            .map(|max| Check::LessThan { max }),
        "str_matches" => str_matches(&mut p),
        other => {
            problems.push(format!(
                "{at} has an unknown check_type [{other}]. Accepted: {CHECK_TYPES}"
            ));
            return None;
        }
    };
    if let (Some(c), Some(t)) = (&check, data_type) {
        if !applies_to(c, t) {
            problems.push(format!(
                "{at}: check_type [{}] does not apply to {t} columns, only to {}",
                c.check_type(),
                applicable_types(c)
            ));
        }
    }
    check.filter(|_| problems.len() == before)
}

fn applies_to(check: &Check, t: DataType) -> bool {
    match check {
        Check::InRange { .. } | Check::GreaterThan { .. } | Check::LessThan { .. } => {
            t.is_numeric()
        }
        Check::StrLength { .. } | Check::StrMatches { .. } => t == DataType::String,
        Check::IsIn { .. } => t != DataType::Date,
    }
}

fn applicable_types(check: &Check) -> &'static str {
    match check {
        Check::InRange { .. } | Check::GreaterThan { .. } | Check::LessThan { .. } => {
            "int and double columns"
        }
        Check::StrLength { .. } | Check::StrMatches { .. } => "string columns",
        Check::IsIn { .. } => "int, double, string and boolean columns",
    }
}

fn in_range(p: &mut Params) -> Option<Check> {
    let only = p.only(&["min_value", "max_value"]);
    let (min, max) = (p.number("min_value"), p.number("max_value"));
    let (min, max) = (only.and(min)?, max?);
    p.ordered(min, max).then_some(Check::InRange { min, max })
}

fn str_length(p: &mut Params) -> Option<Check> {
    let only = p.only(&["min_value", "max_value"]);
    let (min, max) = (p.count("min_value"), p.count("max_value"));
    let (min, max) = (only.and(min)?, max?);
    p.ordered(min, max).then_some(Check::StrLength { min, max })
}

fn str_matches(p: &mut Params) -> Option<Check> {
    let only = p.only(&["pattern"]);
    let source = only.and(p.string("pattern"))?;
    if source.len() > MAX_PATTERN_LEN {
        p.problem(format!(
            "parameter [pattern] is longer than {MAX_PATTERN_LEN} characters"
        ));
        return None;
    }
    match Regex::new(&format!("^(?:{source})")) {
        Ok(pattern) => Some(Check::StrMatches { pattern, source }),
        Err(e) => {
            let reason = e.to_string().replace('\n', " ");
            let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
            p.problem(format!("has an invalid pattern [{source}]: {reason}"));
            None
        }
    }
}

fn isin(p: &mut Params, data_type: Option<DataType>) -> Option<Check> {
    let only = p.only(&["allowed_values"]);
    let values = match p.spec.parameters.get("allowed_values") {
        None => return p.missing("allowed_values"),
        Some(Value::Array(v)) if !v.is_empty() => v.clone(),
        Some(_) => {
            p.problem("parameter [allowed_values] must be a non-empty list".to_owned());
            return None;
        }
    };
    let fits = |v: &Value| match data_type {
        Some(DataType::Int) => v.is_i64(),
        Some(DataType::Double) => v.is_number(),
        Some(DataType::String) => v.is_string(),
        Some(DataType::Boolean) => v.is_boolean(),
        // A date column gets the applicability message; an invalid type, nothing more.
        Some(DataType::Date) | None => !v.is_null() && !v.is_array() && !v.is_object(),
    };
    if let Some(bad) = values.iter().find(|v| !fits(v)) {
        let kind = data_type.map_or("scalar".to_owned(), |t| t.to_string());
        p.problem(format!(
            "parameter [allowed_values] must hold only {kind} values; {bad} is not one"
        ));
        return None;
    }
    only.map(|_| Check::IsIn {
        allowed_values: values,
    })
}

/// The parameters of one check, with the prefix of its messages.
struct Params<'a> {
    at: String,
    spec: &'a CheckSpec,
    problems: &'a mut Vec<String>,
}

impl Params<'_> {
    fn problem(&mut self, what: String) {
        self.problems.push(format!("{} {what}", self.at));
    }

    fn missing<T>(&mut self, key: &str) -> Option<T> {
        self.problem(format!("needs parameter [{key}]"));
        None
    }

    /// `Some(())` when every parameter is one of `accepted`.
    fn only(&mut self, accepted: &[&str]) -> Option<()> {
        let unknown: Vec<String> = (self.spec.parameters.keys())
            .filter(|k| !accepted.contains(&k.as_str()))
            .map(|k| format!("[{k}]"))
            .collect();
        if unknown.is_empty() {
            return Some(());
        }
        self.problem(format!(
            "has unknown parameters {}. Accepted: {}",
            unknown.join(", "),
            accepted.join(", ")
        ));
        None
    }

    fn number(&mut self, key: &str) -> Option<f64> {
        match self.spec.parameters.get(key) {
            None => self.missing(key),
            Some(v) => match v.as_f64() {
                Some(n) => Some(n),
                None => {
                    self.problem(format!("parameter [{key}] must be a number, not {v}"));
                    None
                }
            },
        }
    }

    fn count(&mut self, key: &str) -> Option<usize> {
        match self.spec.parameters.get(key) {
            None => self.missing(key),
            Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) => Some(n),
                None => {
                    self.problem(format!(
                        "parameter [{key}] must be a non-negative integer, not {v}"
                    ));
                    None
                }
            },
        }
    }

    fn string(&mut self, key: &str) -> Option<String> {
        match self.spec.parameters.get(key) {
            None => self.missing(key),
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => {
                self.problem(format!("parameter [{key}] must be a string, not {v}"));
                None
            }
        }
    }

    /// True when `min <= max`; otherwise reports it.
    fn ordered<T: PartialOrd + fmt::Display>(&mut self, min: T, max: T) -> bool {
        if min <= max {
            return true;
        }
        self.problem(format!(
            "has min_value [{min}] greater than max_value [{max}]"
        ));
        false
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
