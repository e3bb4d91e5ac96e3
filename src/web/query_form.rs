//! The query builder's form read into the API's query object: the same object for the preview,
//! every download and the job, so each runs the query the form shows. Grouped columns are added
//! to the answer; the preview reads one page of it (offset paging over the query's `limit`).

use serde_json::{json, Map, Value};

use crate::web::page::{FormData, PageError};

/// Rows a preview page shows when no limit is typed.
pub const PAGE_ROWS: u64 = 50;
/// The most rows one preview page shows, whatever limit is typed.
pub const PAGE_CAP: u64 = 1000;
/// The furthest row a preview reaches (the synchronous query's limit); past it, a job.
pub const PREVIEW_REACH: u64 = 100_000;

/// The fields of the builder that make the query (not the action, page or token).
pub const QUERY_FIELDS: [&str; 12] = [
    "version",
    "as_of_commit",
    "columns",
    "expressions",
    "filter",
    "group",
    "having",
    "order",
    "direction",
    "limit",
    "page",
    "index",
];

/// The extra select expressions typed, split on `;`.
pub fn expressions(f: &FormData) -> Vec<String> {
    let typed = f.get("expressions").unwrap_or("");
    let parts = typed.split(';').map(str::trim).filter(|e| !e.is_empty());
    parts.map(String::from).collect()
}

/// The name the answer gives an expression: its alias (`sum(x) AS total`), else as written.
pub fn answer_name(expression: &str) -> String {
    let lower = expression.to_ascii_lowercase();
    match lower.rfind(" as ") {
        Some(at) => {
            let alias = expression[at + 4..].trim().trim_matches('"');
            let plain =
                !alias.is_empty() && alias.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            match plain {
                true => alias.to_string(),
                false => expression.to_string(),
            }
        }
        None => expression.to_string(),
    }
}

/// The query's limit as typed, if any.
pub fn typed_limit(f: &FormData) -> Result<Option<u64>, PageError> {
    match f.get("limit").map(str::trim).filter(|s| !s.is_empty()) {
        Some(l) => match l.parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(PageError::invalid(format!(
                "The limit [{l}] is not a whole number above 0: type how many rows you want, \
                 or leave it empty for every row."
            ))),
        },
        None => Ok(None),
    }
}

/// The select list: the grouped columns first (so each group is labelled), then the ticked
/// columns and the expressions, each once.
pub fn select_list(f: &FormData) -> Vec<String> {
    let mut select: Vec<String> = vec![];
    let wanted = f.all("group").into_iter().chain(f.all("columns"));
    for c in wanted.chain(expressions(f)) {
        if !select.contains(&c) {
            select.push(c);
        }
    }
    select
}

/// The API's query object for the form as it stands, with `limit` as given (None: every row).
pub fn query_body(f: &FormData, limit: Option<u64>) -> Value {
    let mut q = Map::new();
    let select = select_list(f);
    if !select.is_empty() {
        q.insert("select_columns".into(), json!(select));
    }
    if let Some(filter) = f.get("filter").map(str::trim).filter(|s| !s.is_empty()) {
        q.insert("filter".into(), json!(filter));
    }
    let group = f.all("group");
    if !group.is_empty() {
        q.insert("group_by_columns".into(), json!(group));
    }
    if let Some(having) = f.get("having").map(str::trim).filter(|s| !s.is_empty()) {
        q.insert("aggregation_conditions".into(), json!(having));
    }
    if let Some(order) = f.get("order").filter(|s| !s.is_empty()) {
        let direction = match f.get("direction") {
            Some("DESC") => "DESC",
            _ => "ASC",
        };
        q.insert(
            "order_by_columns".into(),
            json!([{ "column": order, "direction": direction }]),
        );
    }
    if let Some(l) = limit {
        q.insert("limit".into(), json!(l));
    }
    Value::Object(q)
}

/// The whole query as the form asks for it (downloads and the job).
pub fn whole_query(f: &FormData) -> Result<Value, PageError> {
    Ok(query_body(f, typed_limit(f)?))
}

/// The answer's columns as `order_by_columns` can name them: the group's columns (unique per
/// group), else every output column (the ticked ones and the expressions, or every stored
/// column), an expression by its alias or its text.
fn tiebreak_keys(f: &FormData, stored: &[String]) -> Vec<String> {
    let group = f.all("group");
    if !group.is_empty() {
        return group;
    }
    let select = select_list(f);
    if select.is_empty() {
        return stored.to_vec();
    }
    let ticked = f.all("columns");
    let key = |item: &String| match ticked.contains(item) {
        true => Some(item.clone()),
        false => {
            let name = answer_name(item);
            let plain = name != *item || !item.to_ascii_lowercase().contains(" as ");
            plain.then_some(name)
        }
    };
    select.iter().filter_map(key).collect()
}

/// `body` ordered by its own sort, then by every output column: one total order over the
/// answer's rows (rows equal in every column are alike wherever they fall), so the preview's
/// pages, each a slice of that order, show each row once whatever the sort or its ties.
fn with_tiebreak(f: &FormData, body: Value, stored: &[String]) -> Value {
    let Value::Object(mut q) = body else {
        return body;
    };
    let mut order: Vec<Value> = match q.remove("order_by_columns") {
        Some(Value::Array(o)) => o,
        _ => vec![],
    };
    let sorted = f.get("order").unwrap_or("").to_string();
    for key in tiebreak_keys(f, stored)
        .into_iter()
        .filter(|k| *k != sorted)
    {
        order.push(json!({ "column": key, "direction": "ASC" }));
    }
    if !order.is_empty() {
        q.insert("order_by_columns".into(), Value::Array(order));
    }
    Value::Object(q)
}

/// One page of the preview: rows `offset..offset + size` of the query.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// 1-based.
    pub page: u64,
    pub size: u64,
    pub offset: u64,
    /// The query's own limit, if typed.
    pub limit: Option<u64>,
}

impl Window {
    /// The page asked for (`page`, 1 when absent) of the typed limit's size (capped).
    pub fn of(f: &FormData) -> Result<Window, PageError> {
        let limit = typed_limit(f)?;
        let size = limit.unwrap_or(PAGE_ROWS).min(PAGE_CAP);
        let page = f.get("page").and_then(|p| p.trim().parse::<u64>().ok());
        let page = page.unwrap_or(1).max(1);
        let last_reachable = PREVIEW_REACH.div_ceil(size);
        let page = page.min(last_reachable);
        Ok(Window {
            page,
            size,
            offset: (page - 1) * size,
            limit,
        })
    }

    /// The rows to ask the engine for: up to this page's end (one more, to know a next page
    /// exists), within the query's limit and the preview's reach.
    pub fn fetch(&self) -> u64 {
        let end = self.offset + self.size + 1;
        let end = self.limit.map_or(end, |l| end.min(l));
        end.min(PREVIEW_REACH)
    }
}

/// The query object of one preview page: the rows up to its end in the view's total order.
pub fn page_body(f: &FormData, window: &Window, stored: &[String]) -> Value {
    with_tiebreak(f, query_body(f, Some(window.fetch())), stored)
}

/// A query counting the rows of the whole answer: `count(*)` under the filter, or, grouped,
/// the groups themselves (counted by the caller).
pub fn count_body(f: &FormData) -> Value {
    let mut q = match query_body(f, None) {
        Value::Object(q) => q,
        _ => Map::new(),
    };
    q.remove("order_by_columns");
    let group = f.all("group");
    let select = match group.is_empty() {
        true => json!(["count(*) AS rows_in_answer"]),
        false => json!(group),
    };
    q.insert("select_columns".into(), select);
    Value::Object(q)
}

/// The form's query fields as a URL query string, `page` replaced by `page` when given.
pub fn query_string(f: &FormData, page: Option<u64>) -> String {
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
pub fn sorted_by(f: &FormData, column: &str, direction: &str) -> String {
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

/// The API's CSV without its first column (the row index): the index is a bare number (empty
/// in the header), so each record loses everything up to its first comma.
pub fn without_index(csv: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(csv.len());
    let (mut quoted, mut in_index) = (false, true);
    for &b in csv {
        if in_index {
            in_index = b != b',' && b != b'\n';
            if b == b'\n' {
                out.push(b);
            }
            continue;
        }
        if b == b'"' {
            quoted = !quoted;
        }
        out.push(b);
        if b == b'\n' && !quoted {
            in_index = true;
        }
    }
    out
}

/// A SQL literal for `value` in a filter (`'text'` with quotes doubled, numbers as they are).
fn literal(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(format!("'{}'", s.replace('\'', "''"))),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The form's query string with `column = value` added to the filter (a value clicked).
pub fn filtered_by(f: &FormData, column: &str, value: &Value) -> Option<String> {
    let condition = match value {
        Value::Null => format!("{column} IS NULL"),
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

    fn form(pairs: &[(&str, &str)]) -> FormData {
        FormData(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn the_csv_loses_its_index_column_and_keeps_quoted_line_ends() {
        let csv = b",a,b\n0,x,\"two\nlines, and a comma\"\n1,y,z\n";
        let out = String::from_utf8(without_index(csv)).unwrap();
        assert_eq!(out, "a,b\nx,\"two\nlines, and a comma\"\ny,z\n");
    }

    #[test]
    fn grouped_columns_come_first_in_the_answer_once() {
        let f = form(&[
            ("group", "region"),
            ("columns", "region"),
            ("expressions", "avg(price) AS p"),
        ]);
        let q = query_body(&f, None);
        assert_eq!(q["select_columns"], json!(["region", "avg(price) AS p"]));
        assert_eq!(q["group_by_columns"], json!(["region"]));
    }

    #[test]
    fn a_value_clicked_is_added_to_the_filter_quoted() {
        let f = form(&[("filter", "qty > 1"), ("page", "3")]);
        let q = filtered_by(&f, "region", &json!("O'Hara")).unwrap();
        let back = FormData::parse(q.as_bytes()).unwrap();
        assert_eq!(back.get("filter"), Some("(qty > 1) AND region = 'O''Hara'"));
        assert_eq!(back.get("page"), None);
        assert_eq!(answer_name("sum(x) AS total"), "total");
        assert_eq!(answer_name("upper(city)"), "upper(city)");
    }

    #[test]
    fn every_page_is_a_slice_of_one_total_order() {
        let stored = ["id".to_string(), "city".to_string()];
        let w = Window::of(&form(&[("page", "2")])).unwrap();
        let sorted = form(&[("order", "city"), ("direction", "DESC")]);
        let q = page_body(&sorted, &w, &stored);
        assert_eq!(
            q["order_by_columns"],
            json!([{"column": "city", "direction": "DESC"}, {"column": "id", "direction": "ASC"}])
        );
        let picked = form(&[
            ("columns", "city"),
            ("expressions", "upper(city); id * 2 AS d"),
        ]);
        let keys: Vec<Value> = page_body(&picked, &w, &stored)["order_by_columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["column"].clone())
            .collect();
        assert_eq!(keys, vec![json!("city"), json!("upper(city)"), json!("d")]);
        let grouped = form(&[("group", "city"), ("expressions", "count(*) AS n")]);
        let q = page_body(&grouped, &w, &stored);
        assert_eq!(
            q["order_by_columns"],
            json!([{"column": "city", "direction": "ASC"}])
        );
    }

    #[test]
    fn pages_stay_within_the_limit_and_the_reach() {
        let w = Window::of(&form(&[("limit", "120"), ("page", "1")])).unwrap();
        assert_eq!((w.size, w.offset, w.fetch()), (120, 0, 120));
        let w = Window::of(&form(&[("page", "2")])).unwrap();
        assert_eq!((w.size, w.offset, w.fetch()), (50, 50, 101));
        let w = Window::of(&form(&[("limit", "5000"), ("page", "999")])).unwrap();
        assert_eq!((w.size, w.offset), (1000, 99_000));
        assert!(Window::of(&form(&[("limit", "0")])).is_err());
    }
}
