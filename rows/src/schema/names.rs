//! Column names: the rule a schema's names must follow (docs/SPEC.md 2.1), and turning a sample file's
//! headers into names that follow it (schema generation).

use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};

/// Longest accepted column name. docs/SPEC.md sets none; names become partition directory names
/// (`name=value`) and SQL identifiers, so they are capped like domain and dataset names.
pub const MAX_COLUMN_NAME_LEN: usize = 128;

/// The docs/SPEC.md rule: only lower-case ASCII letters, digits and underscores; not only underscores;
/// not only digits (`2020_total` and `col_` are fine, `2020` and `__` are not); at most
/// [`MAX_COLUMN_NAME_LEN`] characters. The empty name is not valid either.
pub fn is_valid_column_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_COLUMN_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.bytes().all(|b| b == b'_')
        && !name.bytes().all(|b| b.is_ascii_digit())
}

/// A valid column name made from a file header.
///
/// Lower-cases, keeps ASCII letters and digits, turns every run of anything else (spaces,
/// punctuation, underscores, non-ASCII letters) into one underscore, and drops leading and trailing
/// underscores: `" My Col "` gives `my_col`, `"Col-Name!4"` gives `col_name_4`, `"a__b"` gives
/// `a_b`, `"Café"` gives `caf`. A header left with nothing becomes `column`; one left with only
/// digits gets the prefix `col_` (`"2020"` gives `col_2020`). The result is cut to
/// [`MAX_COLUMN_NAME_LEN`] characters. The result always satisfies [`is_valid_column_name`];
/// distinct headers may give the same name, which [`column_names_from_headers`] refuses.
pub fn sanitise_column_name(header: &str) -> String {
    let mut out = String::with_capacity(header.len());
    let mut gap = false;
    for ch in header.chars().flat_map(char::to_lowercase) {
        if ch.is_ascii_alphanumeric() {
            if gap && !out.is_empty() {
                out.push('_');
            }
            gap = false;
            out.push(ch);
        } else {
            gap = true;
        }
    }
    if out.is_empty() {
        return "column".to_owned();
    }
    if out.bytes().all(|b| b.is_ascii_digit()) {
        out.insert_str(0, "col_");
    }
    // Only ASCII was pushed, so any byte index is a character boundary.
    out.truncate(MAX_COLUMN_NAME_LEN);
    let kept = out.trim_end_matches('_').len();
    out.truncate(kept);
    out
}

/// Names for a whole header row, for schema generation: each header through
/// [`sanitise_column_name`]. A header with nothing usable (empty, only punctuation, or pandas'
/// `Unnamed: 3` for a blank one) or one whose name an earlier header already gives is refused
/// (400) with the column's 1-based position: inventing names would hide a broken header, and
/// uploads match headers to columns by those names.
pub fn column_names_from_headers<S: AsRef<str>>(headers: &[S]) -> Result<Vec<String>> {
    let mut first_at: BTreeMap<String, usize> = BTreeMap::new();
    let mut names = Vec::with_capacity(headers.len());
    let mut problems = Vec::new();
    for (i, header) in headers.iter().enumerate() {
        let (header, position) = (header.as_ref(), i + 1);
        if !header.chars().any(|c| c.is_ascii_alphanumeric()) || is_pandas_unnamed(header) {
            problems.push(format!(
                "Column {position} has an empty name in the header ({header:?}): every column needs a name"
            ));
            continue;
        }
        let name = sanitise_column_name(header);
        match first_at.get(&name) {
            Some(&earlier) => problems.push(format!(
                "Columns {earlier} and {position} of the header both give the column name [{name}]: column names must be unique"
            )),
            None => {
                first_at.insert(name.clone(), position);
            }
        }
        names.push(name);
    }
    match problems.len() {
        0 => Ok(names),
        1 => Err(Error::invalid(problems.remove(0))),
        _ => Err(Error::many(ErrorKind::Invalid, problems)),
    }
}

/// pandas' name for a blank header: `Unnamed: 3` (or `Unnamed: 3_level_0` in a multi-row header).
fn is_pandas_unnamed(header: &str) -> bool {
    let Some(rest) = header.strip_prefix("Unnamed: ") else {
        return false;
    };
    let digits = rest.split_once("_level_").map_or(rest, |(n, _)| n);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_case_letters_digits_and_underscores_are_valid_names() {
        for n in ["year", "col_", "a1", "2020_total", "_x", "a__b"] {
            assert!(is_valid_column_name(n), "{n}");
        }
    }

    #[test]
    fn names_with_capitals_spaces_or_punctuation_are_invalid() {
        for n in ["Year", "my col", "a-b", "a.b", "é", "a\tb", ""] {
            assert!(!is_valid_column_name(n), "{n:?}");
        }
    }

    #[test]
    fn names_made_only_of_digits_or_only_of_underscores_are_invalid() {
        for n in ["2020", "0", "_", "___"] {
            assert!(!is_valid_column_name(n), "{n}");
        }
    }

    #[test]
    fn names_longer_than_the_limit_are_invalid() {
        assert!(is_valid_column_name(&"a".repeat(MAX_COLUMN_NAME_LEN)));
        assert!(!is_valid_column_name(&"a".repeat(MAX_COLUMN_NAME_LEN + 1)));
    }

    #[test]
    fn sanitising_lower_cases_and_collapses_punctuation_runs() {
        assert_eq!(sanitise_column_name(" My Col "), "my_col");
        assert_eq!(sanitise_column_name("Col-Name!4"), "col_name_4");
        assert_eq!(sanitise_column_name("a__b"), "a_b");
        assert_eq!(sanitise_column_name("__Year__"), "year");
        assert_eq!(sanitise_column_name("Café Owner"), "caf_owner");
        assert_eq!(sanitise_column_name("already_fine"), "already_fine");
    }

    #[test]
    fn sanitising_an_empty_header_gives_column() {
        assert_eq!(sanitise_column_name(""), "column");
        assert_eq!(sanitise_column_name(" -!- "), "column");
    }

    #[test]
    fn sanitising_a_digits_only_header_adds_a_prefix() {
        assert_eq!(sanitise_column_name("2020"), "col_2020");
        assert_eq!(sanitise_column_name(" 1 2 "), "1_2");
    }

    #[test]
    fn sanitised_names_are_cut_to_the_limit_without_trailing_underscore() {
        let long = format!("{}-b", "a".repeat(MAX_COLUMN_NAME_LEN - 1));
        let name = sanitise_column_name(&long);
        assert_eq!(name, "a".repeat(MAX_COLUMN_NAME_LEN - 1));
        assert!(is_valid_column_name(&sanitise_column_name(
            &"9".repeat(300)
        )));
    }

    #[test]
    fn sanitised_names_are_always_valid() {
        for h in [
            "",
            "_",
            "2020",
            "A B",
            "%%",
            "Ünïcödé",
            "x".repeat(500).as_str(),
            "1-2",
        ] {
            let n = sanitise_column_name(h);
            assert!(is_valid_column_name(&n), "{h:?} -> {n:?}");
        }
    }

    #[test]
    fn a_header_row_gets_its_sanitised_names() {
        let names = column_names_from_headers(&["Order Date", "qty", "Unnamed Col"]).unwrap();
        assert_eq!(names, ["order_date", "qty", "unnamed_col"]);
    }

    #[test]
    fn empty_headers_are_refused_with_their_position() {
        for header in ["", "  ", "-!-", "Unnamed: 1", "Unnamed: 1_level_0"] {
            let err = column_names_from_headers(&["a", header]).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Invalid);
            assert!(
                err.to_string().contains("Column 2 has an empty name"),
                "{header:?}: {err}"
            );
        }
    }

    #[test]
    fn duplicated_names_are_refused_naming_both_positions() {
        let err = column_names_from_headers(&["Name", "x", "name "]).unwrap_err();
        assert!(
            err.to_string()
                .contains("Columns 1 and 3 of the header both give the column name [name]"),
            "{err}"
        );
        // Every problem at once.
        let err = column_names_from_headers(&["", "a", "A"]).unwrap_err();
        assert!(
            matches!(err.details, crate::error::Details::Many(ref m) if m.len() == 2),
            "{err}"
        );
    }
}
