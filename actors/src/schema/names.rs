//! Column names: the rule a schema's names must follow (SPEC.md 2.1), and turning a sample file's
//! headers into names that follow it (schema generation).

use std::collections::BTreeSet;

/// Longest accepted column name. SPEC.md sets none; names become partition directory names
/// (`name=value`) and SQL identifiers, so they are capped like domain and dataset names.
pub const MAX_COLUMN_NAME_LEN: usize = 128;

/// The SPEC.md rule: only lower-case ASCII letters, digits and underscores; not only underscores;
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
/// distinct headers may give the same name, which [`sanitise_column_names`] resolves.
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

/// Names for a whole header row, unique and valid: each header through [`sanitise_column_name`],
/// except that a header with nothing usable becomes `column_<position>` (1-based), and a name
/// already taken by an earlier header gets the first free suffix `_2`, `_3`, ...
pub fn sanitise_column_names<S: AsRef<str>>(headers: &[S]) -> Vec<String> {
    let mut taken = BTreeSet::new();
    let mut names = Vec::with_capacity(headers.len());
    for (i, header) in headers.iter().enumerate() {
        let mut base = sanitise_column_name(header.as_ref());
        if !header.as_ref().chars().any(|c| c.is_ascii_alphanumeric()) {
            base = format!("column_{}", i + 1);
        }
        let mut name = base.clone();
        let mut n = 2;
        while taken.contains(&name) {
            let suffix = format!("_{n}");
            let mut stem = base.clone();
            stem.truncate(MAX_COLUMN_NAME_LEN - suffix.len());
            name = stem + &suffix;
            n += 1;
        }
        taken.insert(name.clone());
        names.push(name);
    }
    names
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
    fn a_header_row_gets_unique_names_and_numbered_blanks() {
        let names = sanitise_column_names(&["Name", "name", "", "NAME", "name_2", "  "]);
        assert_eq!(
            names,
            ["name", "name_2", "column_3", "name_3", "name_2_2", "column_6"]
        );
    }

    #[test]
    fn deduplicated_long_names_stay_within_the_limit() {
        let long = "a".repeat(MAX_COLUMN_NAME_LEN + 10);
        let names = sanitise_column_names(&[long.clone(), long]);
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| is_valid_column_name(n)), "{names:?}");
    }
}
