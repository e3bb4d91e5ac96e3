//! The file's own problems, named: a file in another encoding, a delimiter other than a comma, a
//! first row of data instead of a header, a file whose columns are not the schema's. Without these
//! a Latin-1 file reads as type errors full of U+FFFD, a UTF-16 file as garbled names
//! (`a_m_o_u_n_t`), and a `;`-separated file as one column, with no hint at the cause.

use std::fmt::Write as _;

use crate::schema::ValidColumn;

/// The delimiters a spreadsheet may have saved instead of a comma, with their names.
const OTHER_DELIMITERS: [(char, &str); 3] = [(';', "';'"), ('\t', "tabs"), ('|', "'|'")];

/// Why a CSV header cannot be read as text at all, if so: UTF-16 (a byte order mark, or the NUL
/// bytes of its ASCII characters) or bytes that are not UTF-8.
pub fn header_encoding(fields: &[&[u8]]) -> Option<String> {
    let first = fields.first().copied().unwrap_or_default();
    let utf16 = first.starts_with(&[0xFF, 0xFE])
        || first.starts_with(&[0xFE, 0xFF])
        || fields.iter().any(|f| f.contains(&0));
    if utf16 {
        return Some(
            "The file is encoded as UTF-16, not UTF-8 (its header starts with a UTF-16 byte order \
             mark or holds NUL bytes): save it as CSV UTF-8 and upload it again"
                .into(),
        );
    }
    let bad = fields.iter().find(|f| std::str::from_utf8(f).is_err())?;
    Some(format!(
        "The file is not UTF-8: its header has {}, which is not UTF-8 text (the file may be \
         Latin-1 or Windows-1252): save it as CSV UTF-8 and upload it again",
        escaped(bad)
    ))
}

/// A value that is not UTF-8, in a message that says so (instead of a type error).
pub(super) fn value_not_utf8(column: &str, raw: &[u8], row: u64) -> String {
    format!(
        "Column [{column}] has text that is not UTF-8 in row {row}: {}; the file may be Latin-1 \
         or Windows-1252: save it as CSV UTF-8 and upload it again",
        escaped(raw)
    )
}

/// What to add to "Expected columns ..., received ..." so the uploader knows what to fix: another
/// delimiter, a missing header, or which columns are missing and which are not in the schema.
/// `cleaned` are the received names as cleaned for matching, `raw` as received.
pub(super) fn mismatch_hint(raw: &[String], cleaned: &[String], columns: &[ValidColumn]) -> String {
    if let Some(hint) = delimiter_hint(raw, columns.len()) {
        return hint;
    }
    if looks_like_data(raw, cleaned, columns) {
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        return format!(
            "The first row looks like data, not a header ({}): the file needs a first row naming \
             its columns: {}",
            shown_list(raw),
            names.join(",")
        );
    }
    names_hint(cleaned, columns)
}

/// A header of one field holding another delimiter, splitting into about the schema's columns.
fn delimiter_hint(raw: &[String], expected: usize) -> Option<String> {
    if raw.len() != 1 || expected < 2 {
        return None;
    }
    let (delimiter, name) = OTHER_DELIMITERS
        .iter()
        .find(|(d, _)| raw[0].split(*d).count() >= 2)?;
    Some(format!(
        "The file seems to separate its columns with {name}, not commas (its header is one \
         field, {}, that splits into {} names at {name}): save it with commas as separators \
         and upload it again",
        shown_list(raw),
        raw[0].split(*delimiter).count()
    ))
}

/// No received name is a column, and most received names are numbers or dates.
fn looks_like_data(raw: &[String], cleaned: &[String], columns: &[ValidColumn]) -> bool {
    let known = cleaned.iter().any(|h| columns.iter().any(|c| c.name == *h));
    let data_like = raw.iter().filter(|h| is_number_or_date(h.trim())).count();
    !known && !raw.is_empty() && data_like * 2 >= raw.len()
}

fn is_number_or_date(text: &str) -> bool {
    if text.is_empty() {
        return false;
    }
    let numeric = text.parse::<f64>().is_ok();
    // Dates and times in any of the usual shapes: digits with `-`, `/`, `.` or `:` between.
    let date_like = text.chars().any(|c| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '/' | '.' | ':' | ' ' | 'T'));
    numeric || date_like
}

/// The columns the file lacks and the names the schema does not have.
fn names_hint(cleaned: &[String], columns: &[ValidColumn]) -> String {
    let missing: Vec<&str> = columns
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| !cleaned.iter().any(|h| h == n))
        .collect();
    let mut extra: Vec<&str> = cleaned
        .iter()
        .map(String::as_str)
        .filter(|h| !columns.iter().any(|c| c.name == *h))
        .collect();
    extra.sort_unstable();
    extra.dedup();
    let mut seen = std::collections::HashSet::new();
    let mut doubled: Vec<&str> = cleaned
        .iter()
        .map(String::as_str)
        .filter(|h| !seen.insert(*h))
        .collect();
    doubled.sort_unstable();
    doubled.dedup();
    let mut out = String::new();
    for (label, names) in [
        ("Missing columns", &missing),
        ("columns the schema does not have", &extra),
        ("columns named twice", &doubled),
    ] {
        if !names.is_empty() {
            let sep = if out.is_empty() { "" } else { "; " };
            let _ = write!(out, "{sep}{label}: [{}]", names.join(", "));
        }
    }
    if out.is_empty() {
        out.push_str("The file's columns do not match the schema's");
    }
    out
}

/// A few received names, quoted.
fn shown_list(raw: &[String]) -> String {
    let mut shown: Vec<String> = raw.iter().take(5).map(|h| format!("\"{h}\"")).collect();
    if raw.len() > 5 {
        shown.push("...".into());
    }
    shown.join(", ")
}

/// Bytes as text, each byte outside printable ASCII written `\xNN`, cut to 60 bytes.
fn escaped(raw: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in raw.iter().take(60) {
        if (0x20..0x7F).contains(&b) && b != b'"' && b != b'\\' {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    if raw.len() > 60 {
        out.push('…');
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "file_problems_tests.rs"]
mod tests;
