//! The query object (docs/API.md, Queries) and its checked form.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::check::{check_column, check_expr, check_select_item, Scope};
pub use super::filter_group::{FilterCondition, FilterGroup};
use crate::error::{Error, Result};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueryRequest {
    #[serde(default)]
    pub select_columns: Option<Vec<String>>,
    #[serde(default)]
    pub filter: Option<Condition>,
    #[serde(default)]
    pub group_by_columns: Option<Vec<String>>,
    #[serde(default)]
    pub aggregation_conditions: Option<Condition>,
    #[serde(default)]
    pub order_by_columns: Option<Vec<OrderBy>>,
    #[serde(default)]
    pub limit: Option<Limit>,
}

/// A condition as SQL text (what the rAPId SDK sends) or as rAPId's JSON filter group.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Condition {
    Sql(String),
    Group(FilterGroup),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrderBy {
    pub column: String,
    #[serde(default)]
    pub direction: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Limit {
    Number(i64),
    Text(String),
}

/// Every part checked, ready to be rendered for the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedQuery {
    pub select: Vec<String>,
    pub filter: Option<String>,
    pub group_by: Vec<String>,
    pub having: Option<String>,
    pub order_by: Vec<String>,
    pub limit: Option<u64>,
}

impl QueryRequest {
    /// Checks every part against `columns` (the dataset's, in schema order).
    pub fn check(&self, columns: &[String]) -> Result<CheckedQuery> {
        let known: HashSet<String> = columns.iter().cloned().collect();
        let rows = Scope {
            columns: &known,
            aggregates: false,
        };
        let groups = Scope {
            columns: &known,
            aggregates: true,
        };

        let select = match self.select_columns.as_deref().map(non_empty) {
            Some(items) if !items.is_empty() => items
                .iter()
                .map(|s| check_select_item(s, &groups))
                .collect::<Result<Vec<_>>>()?,
            _ => columns.iter().map(|c| format!("\"{c}\"")).collect(),
        };
        let filter = condition_text("filter", self.filter.as_ref())?
            .map(|text| check_expr("filter", &text, &rows))
            .transpose()?;
        let group_by = non_empty(self.group_by_columns.as_deref().unwrap_or_default())
            .iter()
            .map(|c| check_column("group_by_columns", c, &known))
            .collect::<Result<Vec<_>>>()?;
        let having = condition_text(
            "aggregation_conditions",
            self.aggregation_conditions.as_ref(),
        )?
        .map(|text| check_expr("aggregation_conditions", &text, &groups))
        .transpose()?;

        // ORDER BY may name a column, an alias of the select list, or an (aggregate) expression.
        let mut sortable = known.clone();
        sortable.extend(self.aliases());
        let order_scope = Scope {
            columns: &sortable,
            aggregates: true,
        };
        let outputs = selected_outputs(self.select_columns.as_deref(), &select, &groups);
        let mut order_by = Vec::new();
        for o in self
            .order_by_columns
            .iter()
            .flatten()
            .filter(|o| !o.column.trim().is_empty())
        {
            let direction = order_direction(o.direction.as_deref())?;
            let expr = check_expr("order_by_columns", &o.column, &order_scope)?;
            let key = outputs.get(&expr).cloned().unwrap_or(expr);
            order_by.push(format!("{key} {direction}"));
        }
        Ok(CheckedQuery {
            select,
            filter,
            group_by,
            having,
            order_by,
            limit: self.limit()?,
        })
    }

    fn aliases(&self) -> Vec<String> {
        self.select_columns
            .iter()
            .flatten()
            .filter_map(|s| {
                let lower = s.to_ascii_lowercase();
                lower
                    .rfind(" as ")
                    .map(|i| s[i + 4..].trim().to_ascii_lowercase())
            })
            .collect()
    }

    fn limit(&self) -> Result<Option<u64>> {
        let bad = |v: &dyn std::fmt::Display| {
            Error::invalid(format!(
                "Invalid limit: [{v}] must be a whole number of 0 or more"
            ))
        };
        match &self.limit {
            None => Ok(None),
            Some(Limit::Number(n)) => u64::try_from(*n).map(Some).map_err(|_| bad(n)),
            Some(Limit::Text(t)) if t.trim().is_empty() => Ok(None),
            Some(Limit::Text(t)) => t.trim().parse::<u64>().map(Some).map_err(|_| bad(t)),
        }
    }
}

/// `ASC` or `DESC`, NULLs last either way (as rAPId on Athena), unless the direction itself
/// says `NULLS FIRST` or `NULLS LAST`.
fn order_direction(direction: Option<&str>) -> Result<String> {
    let words: Vec<String> = direction
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_ascii_uppercase)
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let (way, nulls) = match words.as_slice() {
        [] => ("ASC", "LAST"),
        [way @ ("ASC" | "DESC")] => (*way, "LAST"),
        [way @ ("ASC" | "DESC"), "NULLS", nulls @ ("FIRST" | "LAST")] => (*way, *nulls),
        ["NULLS", nulls @ ("FIRST" | "LAST")] => ("ASC", *nulls),
        _ => {
            return Err(Error::invalid(format!(
                "Invalid order_by_columns: direction [{}] must be ASC or DESC \
                 (optionally followed by NULLS FIRST or NULLS LAST)",
                direction.unwrap_or("")
            )))
        }
    };
    Ok(format!("{way} NULLS {nulls}"))
}

fn non_empty(items: &[String]) -> Vec<&String> {
    items.iter().filter(|s| !s.trim().is_empty()).collect()
}

/// Each unnamed select expression (as checked) and the quoted name of its output column. An ORDER
/// BY on the same expression sorts by that column: DataFusion's planner otherwise rewrites parts
/// of the sort expression into select-list columns (`0.0` in `854.375 BETWEEN 2.0 AND 0.0` beside
/// a selected `0.0`), and such a half-rewritten key failed its plan sanity check (found by the
/// differential test, seed 404).
fn selected_outputs(
    items: Option<&[String]>,
    select: &[String],
    scope: &Scope<'_>,
) -> HashMap<String, String> {
    let mut outputs = HashMap::new();
    for (raw, sql) in non_empty(items.unwrap_or_default()).into_iter().zip(select) {
        let Ok(expr) = check_expr("select_columns", raw, scope) else {
            continue; // an aliased item: ORDER BY names the alias itself
        };
        if let Some(name) = sql.strip_prefix(&expr).and_then(|r| r.strip_prefix(" AS ")) {
            outputs.insert(expr, name.to_string());
        }
    }
    outputs
}

/// A condition as SQL text: strings as given, JSON groups rendered with quoted literals.
fn condition_text(part: &str, condition: Option<&Condition>) -> Result<Option<String>> {
    match condition {
        None => Ok(None),
        Some(Condition::Sql(s)) if s.trim().is_empty() => Ok(None),
        Some(Condition::Sql(s)) => Ok(Some(s.clone())),
        Some(Condition::Group(g)) => {
            let text = super::filter_group::render(part, g)?;
            Ok((!text.is_empty()).then_some(text))
        }
    }
}

impl CheckedQuery {
    /// The statement the engine runs, printed from checked trees. `cap` bounds the rows asked for.
    pub fn to_sql(&self, table: &str, cap: Option<u64>) -> String {
        let mut sql = format!("SELECT {} FROM {table}", self.select.join(", "));
        if let Some(f) = &self.filter {
            sql.push_str(&format!(" WHERE {f}"));
        }
        if !self.group_by.is_empty() {
            let cols: Vec<String> = self.group_by.iter().map(|c| format!("\"{c}\"")).collect();
            sql.push_str(&format!(" GROUP BY {}", cols.join(", ")));
        }
        if let Some(h) = &self.having {
            sql.push_str(&format!(" HAVING {h}"));
        }
        if !self.order_by.is_empty() {
            sql.push_str(&format!(" ORDER BY {}", self.order_by.join(", ")));
        }
        let limit = match (self.limit, cap) {
            (Some(l), Some(c)) => Some(l.min(c)),
            (l, c) => l.or(c),
        };
        if let Some(l) = limit {
            sql.push_str(&format!(" LIMIT {l}"));
        }
        sql
    }
}
