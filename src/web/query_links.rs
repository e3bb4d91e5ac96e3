//! Links that keep the query builder's form: a page of the preview, a header's sort, a value
//! clicked into the filter.

use rapid_actors::engine::Cell;

use crate::web::page::FormData;
use crate::web::query_form::QUERY_FIELDS;

/// The form's query fields as a URL query string, `page` replaced by `page` when given.
pub(super) fn query_string(f: &FormData, page: Option<u64>) -> String {
    let mut pairs: Vec<(String, String)> =
        f.0.iter()
            .filter(|(k, _)| QUERY_FIELDS.contains(&k.as_str()) && k != "page")
            .cloned()
            .collect();
    if let Some(p) = page {
        pairs.push(("page".into(), p.to_string()));
    }
    serde_urlencoded::to_string(pairs).unwrap_or_default()
}

/// The form with `action=preview`, `order` and `direction` set (a header's sort link).
pub(super) fn sorted_by(f: &FormData, column: &str, direction: &str) -> String {
    let mut pairs: Vec<(String, String)> =
        f.0.iter()
            .filter(|(k, _)| QUERY_FIELDS.contains(&k.as_str()))
            .filter(|(k, _)| !matches!(k.as_str(), "order" | "direction" | "page"))
            .cloned()
            .collect();
    pairs.push(("order".into(), column.to_string()));
    pairs.push(("direction".into(), direction.to_string()));
    pairs.push(("action".into(), "preview".into()));
    serde_urlencoded::to_string(pairs).unwrap_or_default()
}

/// A SQL literal for `value` in a filter (`'text'` with quotes doubled, numbers as they are).
fn literal(value: &Cell) -> Option<String> {
    match value {
        Cell::Text(s) => Some(format!("'{}'", s.replace('\'', "''"))),
        Cell::Int(i) => Some(i.to_string()),
        Cell::UInt(u) => Some(u.to_string()),
        Cell::Float(f) => Some(f.to_string()),
        Cell::Bool(b) => Some(b.to_string()),
        Cell::Null => None,
    }
}

/// The form's query string with `column = value` added to the filter (a value clicked).
pub(super) fn filtered_by(f: &FormData, column: &str, value: &Cell) -> Option<String> {
    let condition = match value {
        Cell::Null => format!("{column} IS NULL"),
        v => format!("{column} = {}", literal(v)?),
    };
    let current = f.get("filter").map(str::trim).unwrap_or("");
    let filter = match current.is_empty() {
        true => condition,
        false => format!("({current}) AND {condition}"),
    };
    let mut pairs: Vec<(String, String)> =
        f.0.iter()
            .filter(|(k, _)| QUERY_FIELDS.contains(&k.as_str()))
            .filter(|(k, _)| !matches!(k.as_str(), "filter" | "page"))
            .cloned()
            .collect();
    pairs.push(("filter".into(), filter));
    pairs.push(("action".into(), "preview".into()));
    serde_urlencoded::to_string(pairs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::query_form::answer_name;

    fn form(pairs: &[(&str, &str)]) -> FormData {
        FormData(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn a_value_clicked_is_added_to_the_filter_quoted() {
        let f = form(&[("filter", "qty > 1"), ("page", "3")]);
        let q = filtered_by(&f, "region", &Cell::Text("O'Hara".into())).unwrap();
        let back = FormData::parse(q.as_bytes()).unwrap();
        assert_eq!(back.get("filter"), Some("(qty > 1) AND region = 'O''Hara'"));
        assert_eq!(back.get("page"), None);
        assert_eq!(answer_name("sum(x) AS total"), "total");
        assert_eq!(answer_name("upper(city)"), "upper(city)");
    }
}
