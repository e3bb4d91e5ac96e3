//! The query builder's view as one SQL statement (what "Ask in SQL" opens and the query page
//! shows): the same columns, filter, groups, condition, order and limit, over the version's table
//! (`"{layer}"."{domain}"."{dataset}"`, an older version `..."{dataset}@v{n}"`, docs/guide.md).

use crate::web::page::FormData;
use crate::web::query_form::{select_list, typed_limit};

/// Rows the statement asks for when the form types no limit (the SQL page shows a first page).
const FIRST_ROWS: u64 = 100;

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The table naming `version` of a dataset (`latest`: the plain name), as of commit `commit`
/// when given (`@c{N}`, docs/guide.md).
pub(super) fn table_name(key: [&str; 3], version: i64, latest: i64, commit: Option<i64>) -> String {
    let [layer, domain, dataset] = key;
    let mut name = match version == latest {
        true => dataset.to_string(),
        false => format!("{dataset}@v{version}"),
    };
    if let Some(c) = commit {
        name.push_str(&format!("@c{c}"));
    }
    let dataset = quote(&name);
    format!("{}.{}.{dataset}", quote(layer), quote(domain))
}

/// The form's view over `table`; `stored` the version's columns (quoted where named).
pub(super) fn view_sql(f: &FormData, table: &str, stored: &[String]) -> String {
    let named = |item: &str| match stored.iter().any(|c| c == item) {
        true => quote(item),
        false => item.to_string(),
    };
    let select = select_list(f);
    let select = match select.is_empty() {
        true => "*".to_string(),
        false => select
            .iter()
            .map(|s| named(s))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let mut sql = format!("SELECT {select} FROM {table}");
    let typed = |k: &str| f.get(k).map(str::trim).filter(|v| !v.is_empty());
    if let Some(filter) = typed("filter") {
        sql.push_str(&format!(" WHERE {filter}"));
    }
    let group = f.all("group");
    if !group.is_empty() {
        let cols: Vec<String> = group.iter().map(|c| quote(c)).collect();
        sql.push_str(&format!(" GROUP BY {}", cols.join(", ")));
    }
    if let Some(having) = typed("having") {
        sql.push_str(&format!(" HAVING {having}"));
    }
    if let Some(order) = typed("order") {
        let direction = match f.get("direction") {
            Some("DESC") => "DESC",
            _ => "ASC",
        };
        sql.push_str(&format!(
            " ORDER BY {} {direction} NULLS LAST",
            named(order)
        ));
    }
    let limit = typed_limit(f).ok().flatten().unwrap_or(FIRST_ROWS);
    sql.push_str(&format!(" LIMIT {limit}"));
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_keeps_its_filter_groups_order_and_limit() {
        let f = FormData(
            [
                ("group", "region"),
                ("expressions", "count(*) AS n"),
                ("filter", "price > 10"),
                ("having", "count(*) > 1"),
                ("order", "n"),
                ("direction", "DESC"),
                ("limit", "5"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        let stored = ["region".to_string(), "price".to_string()];
        let table = table_name(["default", "shop", "sales"], 1, 2, None);
        let as_of = table_name(["default", "shop", "sales"], 2, 2, Some(7));
        assert_eq!(as_of, "\"default\".\"shop\".\"sales@c7\"");
        assert_eq!(table, "\"default\".\"shop\".\"sales@v1\"");
        assert_eq!(
            view_sql(&f, &table, &stored),
            "SELECT \"region\", count(*) AS n FROM \"default\".\"shop\".\"sales@v1\" \
             WHERE price > 10 GROUP BY \"region\" HAVING count(*) > 1 ORDER BY n DESC NULLS LAST LIMIT 5"
        );
        let plain = view_sql(&FormData(vec![]), "t", &stored);
        assert_eq!(plain, "SELECT * FROM t LIMIT 100");
    }
}
