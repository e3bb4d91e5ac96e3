use serde_json::json;

use super::super::test_schema;
use super::*;

fn columns() -> Vec<ValidColumn> {
    test_schema(
        "hints",
        json!([
            {"name": "city", "data_type": "string", "allow_null": true},
            {"name": "amount", "data_type": "int", "allow_null": true},
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true}
        ]),
    )
    .columns()
    .to_vec()
}

fn names(raw: &[&str]) -> (Vec<String>, Vec<String>) {
    let raw: Vec<String> = raw.iter().map(|s| s.to_string()).collect();
    let cleaned = raw.iter().map(|s| s.trim().to_lowercase()).collect();
    (raw, cleaned)
}

#[test]
fn utf16_and_other_encodings_are_told_apart() {
    let bom: &[u8] = &[0xFF, 0xFE, b'a', 0];
    assert!(header_encoding(&[bom]).unwrap().contains("UTF-16"));
    assert!(header_encoding(&[&[0xFE, 0xFF, 0, b'a']])
        .unwrap()
        .contains("UTF-16"));
    assert!(header_encoding(&[b"a", b"b\0"]).unwrap().contains("UTF-16"));
    let latin1 = header_encoding(&[b"city", &[b'd', 0xE9]]).unwrap();
    assert!(latin1.contains("not UTF-8"), "{latin1}");
    assert!(latin1.contains("\"d\\xE9\""), "{latin1}");
    assert_eq!(header_encoding(&[b"city", "día".as_bytes()]), None);
}

#[test]
fn a_value_not_utf8_is_shown_byte_by_byte() {
    let m = value_not_utf8("city", &[b'M', 0xE1, b'"'], 7);
    assert!(m.starts_with("Column [city] has text that is not UTF-8 in row 7: \"M\\xE1\\x22\""));
    let long = vec![0xE1; 100];
    assert!(value_not_utf8("c", &long, 1).contains("…"));
}

#[test]
fn hints_name_the_delimiter_the_data_row_or_the_columns() {
    let columns = columns();
    let (raw, cleaned) = names(&["city;amount;day"]);
    let hint = mismatch_hint(&raw, &cleaned, &columns);
    assert!(
        hint.starts_with("The file seems to separate its columns with ';'"),
        "{hint}"
    );
    assert!(hint.contains("splits into 3 names"), "{hint}");
    // One column expected: a single field is no sign of another delimiter.
    let one = &columns[..1];
    assert!(!mismatch_hint(&raw, &cleaned, one).contains("separate"));

    let (raw, cleaned) = names(&["Leeds", "3", "2026-01-02"]);
    let hint = mismatch_hint(&raw, &cleaned, &columns);
    assert!(hint.starts_with("The first row looks like data"), "{hint}");
    // A known name means it is a header, however many numbers it holds.
    let (raw, cleaned) = names(&["city", "3", "2026-01-02"]);
    assert!(!mismatch_hint(&raw, &cleaned, &columns).contains("looks like data"));

    let (raw, cleaned) = names(&["city", "city", "when"]);
    assert_eq!(
        mismatch_hint(&raw, &cleaned, &columns),
        "Missing columns: [amount, day]; columns the schema does not have: [when]; \
         columns named twice: [city]"
    );
}

#[test]
fn numbers_and_dates_look_like_data_and_names_do_not() {
    for data in ["3", "-2.5", "2026-01-02", "02/01/2026", "12:30", "1e5"] {
        assert!(is_number_or_date(data), "{data}");
    }
    for name in ["", "city", "2026_total", "amount 1a"] {
        assert!(!is_number_or_date(name), "{name}");
    }
}
