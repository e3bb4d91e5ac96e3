//! The engine's messages as the pages show them: where a message speaks the query engine's
//! language ("Arrow error: Cast error ...") or an API route ("use POST /api/..."), a sentence
//! saying what to do on the page instead. Other messages are already in words and stay as sent.

/// Engine prefixes that say nothing to a user.
const PREFIXES: [&str; 6] = [
    "Query failed to execute: ",
    "Arrow error: ",
    "Cast error: ",
    "Execution error: ",
    "Error during planning: ",
    "Optimizer rule ",
];

/// The type in an Arrow cast message ("Int64", "Date32", ...) as a user calls it.
fn type_words(arrow: &str) -> &'static str {
    let t = arrow.to_ascii_lowercase();
    if t.starts_with("int") || t.starts_with("uint") {
        "a whole number"
    } else if t.starts_with("float") || t.starts_with("decimal") {
        "a number"
    } else if t.starts_with("date") || t.starts_with("timestamp") {
        "a date (such as 2024-01-31)"
    } else if t.starts_with("bool") {
        "true or false"
    } else {
        "the column's type"
    }
}

/// "Cannot cast string 'abc' to value of Int64 type": the value and the type.
fn cast(message: &str) -> Option<String> {
    let rest = message.split("Cannot cast string '").nth(1)?;
    let (value, rest) = rest.split_once("' to value of ")?;
    let arrow = rest.split_whitespace().next()?;
    Some(format!(
        "The value '{value}' in the query cannot be read as {}. Compare each column with a \
         value of its type: numbers without quotes, text and dates in single quotes.",
        type_words(arrow)
    ))
}

/// The text between the first `start` and the next `end` after it.
fn between<'a>(m: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = m.split_once(start)?.1;
    Some(rest.split_once(end)?.0)
}

/// The query engine's planning refusals, in words: a column neither grouped nor aggregated, a
/// function given a type it does not take.
fn planning(m: &str) -> Option<String> {
    let column = || {
        let c = between(m, "column \"", "\"")?;
        Some(c.rsplit('.').next().unwrap_or(c).to_string())
    };
    if m.contains("Column in SELECT must be in GROUP BY") {
        let c = column()?;
        return Some(format!(
            "The column {c} is in the answer but neither grouped nor summarised: tick it under \
             Group by, or select it inside an aggregate such as count({c}) or max({c})."
        ));
    }
    if m.contains("Column in ORDER BY must be in GROUP BY") {
        let c = column()?;
        return Some(format!(
            "The answer is ordered by {c}, which is neither grouped nor summarised: order by a \
             grouped column or by an aggregate's name (its alias)."
        ));
    }
    let function = between(m, "Function '", "' failed to match any signature")?;
    let text = m.contains("received String") || m.contains("Utf8");
    Some(match text {
        true => format!(
            "The function {function} does not take text: use it on a number column (count, \
             min and max also take text)."
        ),
        false => {
            format!("The function {function} does not take the type of the column given to it.")
        }
    })
}

/// The query checks' refusals, with what to do: a bare word taken for a column, an expression
/// that does not parse.
fn checked(m: &str) -> Option<String> {
    if let Some(name) = between(m, "Invalid filter: unknown column [", "]") {
        return Some(format!(
            "The filter names [{name}], which is not a column of this dataset. If it is a value, \
             put it in single quotes: column = '{name}'."
        ));
    }
    let (field, rest) = m.strip_prefix("Invalid ")?.split_once(": [")?;
    let (expression, why) = rest.split_once("] is not a valid expression (sql parser error: ")?;
    let why = why.trim_end_matches(')');
    Some(format!(
        "The {} [{expression}] is not a complete expression ({why}). Write it like \
         region = 'Wales' AND quantity > 1.",
        field.replace('_', " ")
    ))
}

/// A SQL statement the parser could not read, in words: `SQL error: ParserError("Expected: an SQL
/// statement, found: SELEC at Line: 1, Column: 1")` becomes "expected an SQL statement but found
/// SELEC (line 1, column 1)".
fn unparsed(m: &str) -> Option<String> {
    let rest = m.strip_prefix("The statement does not parse: ")?;
    let inner = match rest.find("ParserError(\"") {
        Some(at) => rest[at + 13..].trim_end_matches(')').trim_end_matches('"'),
        None => rest.trim_start_matches("SQL error: "),
    };
    let words = inner
        .replace("Expected: ", "expected ")
        .replace(", found: ", " but found ")
        .replace(" at Line: ", " (line ")
        .replace(", Column: ", ", column ");
    let close = if words.contains(" (line ") { ")" } else { "" };
    Some(format!(
        "The statement could not be read: {words}{close}. Write one SELECT, e.g. \
         SELECT * FROM \"default\".\"shop\".\"sales\" LIMIT 10."
    ))
}

/// The message `m` as the pages show it.
pub(super) fn plain(m: &str) -> String {
    if let Some(sentence) = unparsed(m) {
        return sentence;
    }
    if m.contains("/query/large") && m.contains("rows") {
        let limit = m.split_whitespace().find_map(|w| w.parse::<u64>().ok());
        let limit = limit.map_or("100,000".into(), crate::web::format::count);
        return format!(
            "The answer has more than {limit} rows, too many to show or download at once: \
             run the query as a job (below), or narrow it with a filter or a limit."
        );
    }
    if m.contains("/query/large") && m.contains("seconds") {
        return "The query took longer than the time allowed here and was stopped: run it \
                as a job (below), or narrow it with a filter or a limit."
            .into();
    }
    if let Some(sentence) = cast(m).or_else(|| planning(m)).or_else(|| checked(m)) {
        return sentence;
    }
    if m.contains("Divide by zero") {
        return "The query divides by zero for some rows: leave those rows out with the \
                filter, or divide by a column that is never 0."
            .into();
    }
    if !m.starts_with("Query failed to execute: ") {
        return m.to_string();
    }
    let mut rest = m;
    while let Some(p) = PREFIXES.iter().find(|p| rest.starts_with(*p)) {
        rest = &rest[p.len()..];
    }
    format!("The query could not be run: {rest}. Check the filter, the expressions and the types of the columns they use.")
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn engine_messages_become_sentences_and_others_stay() {
        let cast = "Query failed to execute: Arrow error: Cast error: Cannot cast string 'many' to value of Int64 type";
        assert!(plain(cast)
            .starts_with("The value 'many' in the query cannot be read as a whole number."));
        let large = "The result has more than 100000 rows: use POST /api/datasets/a/b/c/query/large, or narrow the query (filter, limit)";
        assert!(plain(large).starts_with("The answer has more than 100,000 rows"));
        assert!(!plain(large).contains("/api/"));
        let grouped = "Query failed to execute: Error during planning: Column in SELECT must be in GROUP BY or an aggregate function: While expanding wildcard, column \"dataset.region\" must appear in the GROUP BY clause";
        assert!(plain(grouped)
            .starts_with("The column region is in the answer but neither grouped nor summarised"));
        assert_eq!(
            plain("Invalid client credentials"),
            "Invalid client credentials"
        );
        let unread = "The statement does not parse: SQL error: ParserError(\"Expected: an SQL statement, found: SELEC at Line: 1, Column: 1\")";
        assert!(plain(unread).starts_with(
            "The statement could not be read: expected an SQL statement but found SELEC (line 1, column 1)."
        ));
        assert!(!plain(unread).contains("ParserError"));
        let other = "Query failed to execute: Arrow error: something new";
        assert_eq!(plain(other), "The query could not be run: something new. Check the filter, the expressions and the types of the columns they use.");
    }
}
