//! A column check in words, both ways: its values as people write them ("0 to 100", "north,
//! south", a pattern) and one sentence saying what it accepts, for the pages; and a check built
//! from such values. The parameters stay the API's (SPEC.md 2.2); only this module turns them
//! into words and back.

use serde_json::{json, Map, Value};

use super::model::CheckSpec;

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// A number as typed: an integer where it is one, else a decimal; `None` if neither.
fn number(text: &str) -> Option<Value> {
    let t = text.trim();
    t.parse::<i64>()
        .map(Value::from)
        .ok()
        .or_else(|| t.parse::<f64>().ok().map(|f| json!(f)))
}

/// "a to b" as the two numbers (either may be left out, not both).
fn range(text: &str) -> Option<(Option<Value>, Option<Value>)> {
    let (a, b) = text.split_once(" to ").unwrap_or((text, ""));
    let side = |s: &str| match s.trim() {
        "" => Ok(None),
        s => number(s).map(Some).ok_or(()),
    };
    match (side(a).ok()?, side(b).ok()?) {
        (None, None) => None,
        both => Some(both),
    }
}

impl CheckSpec {
    /// The check's values as the editor writes them.
    pub fn values_in_words(&self) -> String {
        let p = &self.parameters;
        match self.check_type.as_str() {
            "in_range" | "str_length" => format!(
                "{} to {}",
                text_of(p.get("min_value")),
                text_of(p.get("max_value"))
            )
            .trim()
            .to_string(),
            "greater_than" => text_of(p.get("min_value")),
            "less_than" => text_of(p.get("max_value")),
            "isin" => match p.get("allowed_values") {
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| text_of(Some(v)))
                    .collect::<Vec<_>>()
                    .join(", "),
                other => text_of(other),
            },
            "str_matches" => text_of(p.get("pattern")),
            _ => Value::Object(p.clone()).to_string(),
        }
    }

    /// What the check accepts, in one phrase ("more than 0 (0 itself fails)").
    pub fn sentence(&self) -> String {
        let values = self.values_in_words();
        let p = &self.parameters;
        let (min, max) = (text_of(p.get("min_value")), text_of(p.get("max_value")));
        let between = |what: &str| match (min.is_empty(), max.is_empty()) {
            (false, false) => format!("{what} from {min} to {max}"),
            (false, true) => format!("{what} of at least {min}"),
            (true, false) => format!("{what} of at most {max}"),
            (true, true) => format!("{what}: any"),
        };
        match self.check_type.as_str() {
            "in_range" => between("values"),
            "str_length" => between("lengths"),
            "greater_than" => format!("more than {values} ({values} itself fails)"),
            "less_than" => format!("less than {values} ({values} itself fails)"),
            "isin" => format!("one of {values}"),
            "str_matches" => format!("matches {values}"),
            other => format!("{other}: {values}"),
        }
    }

    /// A check of `kind` from its values in words, for a column of `data_type`; `None` when the
    /// values do not read as that kind's.
    pub fn from_words(kind: &str, values: &str, data_type: &str) -> Option<CheckSpec> {
        let mut p = Map::new();
        match kind {
            "in_range" | "str_length" => {
                let (min, max) = range(values)?;
                if let Some(v) = min {
                    p.insert("min_value".into(), v);
                }
                if let Some(v) = max {
                    p.insert("max_value".into(), v);
                }
            }
            "greater_than" => drop(p.insert("min_value".into(), number(values)?)),
            "less_than" => drop(p.insert("max_value".into(), number(values)?)),
            "isin" => {
                let listed = values.split(',').map(str::trim).filter(|v| !v.is_empty());
                let numeric = matches!(data_type, "int" | "integer" | "double");
                let parsed: Option<Vec<Value>> = match numeric {
                    true => listed.map(number).collect(),
                    false => Some(listed.map(|v| json!(v)).collect()),
                };
                p.insert("allowed_values".into(), Value::Array(parsed?));
            }
            "str_matches" if !values.is_empty() => drop(p.insert("pattern".into(), json!(values))),
            _ => return None,
        }
        Some(CheckSpec {
            check_type: kind.to_string(),
            parameters: p,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_in_words_become_the_api_s_parameters_and_back() {
        let range = CheckSpec::from_words("in_range", "0 to 100", "int").unwrap();
        assert_eq!(
            json!(range.parameters),
            json!({"min_value": 0, "max_value": 100})
        );
        assert_eq!(range.values_in_words(), "0 to 100");
        assert_eq!(range.sentence(), "values from 0 to 100");
        let isin = CheckSpec::from_words("isin", "1, 2", "int").unwrap();
        assert_eq!(json!(isin.parameters), json!({"allowed_values": [1, 2]}));
        assert_eq!(isin.values_in_words(), "1, 2");
        let more = CheckSpec::from_words("greater_than", "0", "int").unwrap();
        assert_eq!(more.sentence(), "more than 0 (0 itself fails)");
        assert!(CheckSpec::from_words("greater_than", "lots", "string").is_none());
    }
}
