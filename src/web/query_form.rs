//! The query builder's form read into the API's query (the engine's typed `QueryRequest`, not
//! JSON): the same query for the preview, every download and the job, so each runs the query
//! the form shows. Grouped columns are added
//! to the answer; the preview reads one page of it (offset paging over the query's `limit`).

use rapid_actors::engine::{Condition, Limit, OrderBy, QueryRequest};

use crate::web::page::{FormData, PageError};

/// Rows a preview page shows when no limit is typed.
pub(super) const PAGE_ROWS: u64 = 50;
/// The most rows one preview page shows, whatever limit is typed.
pub(super) const PAGE_CAP: u64 = 1000;
/// The furthest row a preview reaches (the synchronous query's limit); past it, a job.
pub(super) const PREVIEW_REACH: u64 = 100_000;

/// The fields of the builder that make the query (not the action, page or token).
pub(super) const QUERY_FIELDS: [&str; 12] = [
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
pub(super) fn expressions(f: &FormData) -> Vec<String> {
    let typed = f.get("expressions").unwrap_or("");
    let parts = typed.split(';').map(str::trim).filter(|e| !e.is_empty());
    parts.map(String::from).collect()
}

/// The name the answer gives an expression: its alias (`sum(x) AS total`), else as written.
pub(super) fn answer_name(expression: &str) -> String {
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
pub(super) fn typed_limit(f: &FormData) -> Result<Option<u64>, PageError> {
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
pub(super) fn select_list(f: &FormData) -> Vec<String> {
    let mut select: Vec<String> = vec![];
    let wanted = f.all("group").into_iter().chain(f.all("columns"));
    for c in wanted.chain(expressions(f)) {
        if !select.contains(&c) {
            select.push(c);
        }
    }
    select
}

fn typed<'a>(f: &'a FormData, k: &str) -> Option<&'a str> {
    f.get(k).map(str::trim).filter(|s| !s.is_empty())
}

fn order(column: &str, direction: &str) -> OrderBy {
    OrderBy {
        column: column.to_string(),
        direction: Some(direction.to_string()),
    }
}

/// The sort the form asks for: its column and direction.
fn sort(f: &FormData) -> Option<OrderBy> {
    let column = f.get("order").filter(|s| !s.is_empty())?;
    let direction = match f.get("direction") {
        Some("DESC") => "DESC",
        _ => "ASC",
    };
    Some(order(column, direction))
}

/// The API's query for the form as it stands, with `limit` as given (None: every row).
pub(super) fn query_body(f: &FormData, limit: Option<u64>) -> QueryRequest {
    let select = select_list(f);
    let group = f.all("group");
    let condition = |k: &str| typed(f, k).map(|c| Condition::Sql(c.to_string()));
    QueryRequest {
        select_columns: (!select.is_empty()).then_some(select),
        filter: condition("filter"),
        group_by_columns: (!group.is_empty()).then_some(group),
        aggregation_conditions: condition("having"),
        order_by_columns: sort(f).map(|o| vec![o]),
        limit: limit.map(|l| Limit::Number(l.min(i64::MAX as u64) as i64)),
    }
}

/// The whole query as the form asks for it (downloads and the job).
pub(super) fn whole_query(f: &FormData) -> Result<QueryRequest, PageError> {
    Ok(query_body(f, typed_limit(f)?))
}

/// The whole query in words, part by part (what a job runs), or why the form cannot be run.
pub(super) fn query_in_words(f: &FormData) -> Result<Vec<(&'static str, String)>, PageError> {
    let limit = typed_limit(f)?;
    let mut parts = vec![];
    let select = select_list(f);
    parts.push((
        "columns",
        match select.is_empty() {
            true => "every column".to_string(),
            false => select.join(", "),
        },
    ));
    for (k, label) in [("filter", "filter"), ("having", "aggregation condition")] {
        if let Some(v) = typed(f, k) {
            parts.push((label, v.to_string()));
        }
    }
    let group = f.all("group");
    if !group.is_empty() {
        parts.push(("grouped by", group.join(", ")));
    }
    if let Some(o) = sort(f) {
        let way = o.direction.as_deref().unwrap_or("ASC");
        parts.push(("ordered by", format!("{} {way}", o.column)));
    }
    parts.push((
        "rows",
        limit.map_or("every row".to_string(), |l| format!("at most {l}")),
    ));
    Ok(parts)
}

/// The answer's columns as `order_by_columns` can name them: the group's columns (unique per
/// group), else every output column (the ticked ones and the expressions, or every stored
/// column), an expression by its alias or its text.
pub(super) fn tiebreak_keys(f: &FormData, stored: &[String]) -> Vec<String> {
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

/// `query` ordered by its own sort, then by every output column: one total order over the
/// answer's rows (rows equal in every column are alike wherever they fall), so the preview's
/// pages, each a slice of that order, show each row once whatever the sort or its ties; a
/// download or a job of the view reads its rows in the same order.
pub(super) fn with_tiebreak(
    f: &FormData,
    mut query: QueryRequest,
    stored: &[String],
) -> QueryRequest {
    let mut order = query.order_by_columns.take().unwrap_or_default();
    let sorted = f.get("order").unwrap_or("").to_string();
    for key in tiebreak_keys(f, stored)
        .into_iter()
        .filter(|k| *k != sorted)
    {
        order.push(self::order(&key, "ASC"));
    }
    query.order_by_columns = (!order.is_empty()).then_some(order);
    query
}

/// One page of the preview: rows `offset..offset + size` of the query.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    /// 1-based.
    pub page: u64,
    pub size: u64,
    pub offset: u64,
    /// The query's own limit, if typed.
    pub limit: Option<u64>,
}

impl Window {
    /// The page asked for (`page`, 1 when absent) of the typed limit's size (capped).
    pub(super) fn of(f: &FormData) -> Result<Window, PageError> {
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
    pub(super) fn fetch(&self) -> u64 {
        let end = self.offset + self.size + 1;
        let end = self.limit.map_or(end, |l| end.min(l));
        end.min(PREVIEW_REACH)
    }
}

/// The query of one preview page: the rows up to its end in the view's total order.
pub(super) fn page_body(f: &FormData, window: &Window, stored: &[String]) -> QueryRequest {
    with_tiebreak(f, query_body(f, Some(window.fetch())), stored)
}

/// The whole query of a download or a job: the form's, in the view's total order.
pub(super) fn ordered_whole_query(
    f: &FormData,
    stored: &[String],
) -> Result<QueryRequest, PageError> {
    Ok(with_tiebreak(f, whole_query(f)?, stored))
}

/// The name of the count in [`count_body`]'s answer.
pub(super) const COUNTED_ROWS: &str = "rows_in_answer";

/// A query counting the rows of the whole answer: `count(*)` under the filter, or, grouped,
/// the groups themselves (counted by the caller).
pub(super) fn count_body(f: &FormData) -> QueryRequest {
    let mut q = query_body(f, None);
    q.order_by_columns = None;
    let group = f.all("group");
    q.select_columns = Some(match group.is_empty() {
        true => vec![format!("count(*) AS {COUNTED_ROWS}")],
        false => group,
    });
    q
}

/// The API's CSV without its first column (the row index): the index is a bare number (empty
/// in the header), so each record loses everything up to its first comma.
pub(super) fn without_index(csv: &[u8]) -> Vec<u8> {
    IndexCut::default().cut(csv)
}

/// [`without_index`] over a CSV read in pieces (a job's result streamed): where it is between
/// pieces.
#[derive(Debug, Clone, Copy)]
pub(super) struct IndexCut {
    quoted: bool,
    in_index: bool,
}

impl Default for IndexCut {
    fn default() -> Self {
        IndexCut {
            quoted: false,
            in_index: true,
        }
    }
}

impl IndexCut {
    /// The next piece without its records' index cells.
    pub(super) fn cut(&mut self, piece: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(piece.len());
        for &b in piece {
            if self.in_index {
                self.in_index = b != b',' && b != b'\n';
                if b == b'\n' {
                    out.push(b);
                }
                continue;
            }
            if b == b'"' {
                self.quoted = !self.quoted;
            }
            out.push(b);
            if b == b'\n' && !self.quoted {
                self.in_index = true;
            }
        }
        out
    }
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
        // In pieces cut anywhere, the same.
        for at in 0..csv.len() {
            let mut cut = IndexCut::default();
            let mut pieces = cut.cut(&csv[..at]);
            pieces.extend(cut.cut(&csv[at..]));
            assert_eq!(String::from_utf8(pieces).unwrap(), out, "cut at {at}");
        }
    }

    #[test]
    fn grouped_columns_come_first_in_the_answer_once() {
        let f = form(&[
            ("group", "region"),
            ("columns", "region"),
            ("expressions", "avg(price) AS p"),
        ]);
        let q = query_body(&f, None);
        assert_eq!(q.select_columns.unwrap(), ["region", "avg(price) AS p"]);
        assert_eq!(q.group_by_columns.unwrap(), ["region"]);
    }

    fn keys(q: &QueryRequest) -> Vec<(String, String)> {
        let order = q.order_by_columns.iter().flatten();
        let key = |o: &OrderBy| (o.column.clone(), o.direction.clone().unwrap_or_default());
        order.map(key).collect()
    }

    #[test]
    fn every_page_is_a_slice_of_one_total_order() {
        let stored = ["id".to_string(), "city".to_string()];
        let w = Window::of(&form(&[("page", "2")])).unwrap();
        let pair = |c: &str, d: &str| (c.to_string(), d.to_string());
        let sorted = form(&[("order", "city"), ("direction", "DESC")]);
        let q = page_body(&sorted, &w, &stored);
        assert_eq!(keys(&q), [pair("city", "DESC"), pair("id", "ASC")]);
        assert_eq!(
            keys(&ordered_whole_query(&sorted, &stored).unwrap()),
            keys(&q)
        );
        let picked = form(&[
            ("columns", "city"),
            ("expressions", "upper(city); id * 2 AS d"),
        ]);
        let q = page_body(&picked, &w, &stored);
        let names: Vec<String> = keys(&q).into_iter().map(|k| k.0).collect();
        assert_eq!(names, ["city", "upper(city)", "d"]);
        let grouped = form(&[("group", "city"), ("expressions", "count(*) AS n")]);
        let q = page_body(&grouped, &w, &stored);
        assert_eq!(keys(&q), [pair("city", "ASC")]);
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
