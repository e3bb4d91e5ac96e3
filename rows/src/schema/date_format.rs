//! The ten date formats a `date` column may declare (docs/SPEC.md 2.1), and a fast strict parser for
//! values written in them.
//!
//! The year (`%Y`, exactly four digits) and month (`%m`) are required, the day (`%d`) optional, and
//! the separator is `/` or `-`. Month and day take one or two digits, as `strptime` does
//! (`2024-1-5` parses with `%Y-%m-%d`). Anything else is refused: a month or day out of range, a
//! day the month does not have (`2024-02-30`), a year `0000`, surrounding whitespace or trailing
//! characters. A format without a day gives the first of the month.
//!
//! Parsing runs on every value of every uploaded date column, so it is written by hand over bytes
//! (no allocation, no format-string interpretation) and ends in one `NaiveDate::from_ymd_opt`.

use std::fmt;

use chrono::NaiveDate;

/// One of the ten accepted date formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DateFormat {
    /// `%Y/%m/%d`
    YmdSlash,
    /// `%d/%m/%Y`
    DmySlash,
    /// `%m/%d/%Y`
    MdySlash,
    /// `%Y-%m-%d`
    YmdDash,
    /// `%d-%m-%Y`
    DmyDash,
    /// `%m-%d-%Y`
    MdyDash,
    /// `%Y/%m`
    YmSlash,
    /// `%m/%Y`
    MySlash,
    /// `%Y-%m`
    YmDash,
    /// `%m-%Y`
    MyDash,
}

/// A field of a format, in the order it appears.
#[derive(Clone, Copy)]
enum Field {
    Year,
    Month,
    Day,
}

use Field::{Day, Month, Year};

impl DateFormat {
    /// Every accepted format, in docs/SPEC.md's order. Schema generation tries them in this order, so
    /// for a sample that fits both, day-first (`%d/%m/%Y`) wins over month-first (`%m/%d/%Y`).
    pub const ALL: [DateFormat; 10] = [
        DateFormat::YmdSlash,
        DateFormat::DmySlash,
        DateFormat::MdySlash,
        DateFormat::YmdDash,
        DateFormat::DmyDash,
        DateFormat::MdyDash,
        DateFormat::YmSlash,
        DateFormat::MySlash,
        DateFormat::YmDash,
        DateFormat::MyDash,
    ];

    /// The format for a pattern, if it is exactly one of the ten.
    pub fn parse(pattern: &str) -> Option<DateFormat> {
        Self::ALL.into_iter().find(|f| f.as_str() == pattern)
    }

    /// The pattern, as written in schemas.
    pub fn as_str(self) -> &'static str {
        match self {
            DateFormat::YmdSlash => "%Y/%m/%d",
            DateFormat::DmySlash => "%d/%m/%Y",
            DateFormat::MdySlash => "%m/%d/%Y",
            DateFormat::YmdDash => "%Y-%m-%d",
            DateFormat::DmyDash => "%d-%m-%Y",
            DateFormat::MdyDash => "%m-%d-%Y",
            DateFormat::YmSlash => "%Y/%m",
            DateFormat::MySlash => "%m/%Y",
            DateFormat::YmDash => "%Y-%m",
            DateFormat::MyDash => "%m-%Y",
        }
    }

    /// All ten patterns as one comma-separated list, for error messages.
    pub fn accepted_list() -> String {
        Self::ALL.map(DateFormat::as_str).join(", ")
    }

    /// True when the format has no day: values parse to the first of the month.
    pub fn is_month_only(self) -> bool {
        self.fields().len() == 2
    }

    fn separator(self) -> u8 {
        match self {
            DateFormat::YmdSlash
            | DateFormat::DmySlash
            | DateFormat::MdySlash
            | DateFormat::YmSlash
            | DateFormat::MySlash => b'/',
            DateFormat::YmdDash
            | DateFormat::DmyDash
            | DateFormat::MdyDash
            | DateFormat::YmDash
            | DateFormat::MyDash => b'-',
        }
    }

    fn fields(self) -> &'static [Field] {
        match self {
            DateFormat::YmdSlash | DateFormat::YmdDash => &[Year, Month, Day],
            DateFormat::DmySlash | DateFormat::DmyDash => &[Day, Month, Year],
            DateFormat::MdySlash | DateFormat::MdyDash => &[Month, Day, Year],
            DateFormat::YmSlash | DateFormat::YmDash => &[Year, Month],
            DateFormat::MySlash | DateFormat::MyDash => &[Month, Year],
        }
    }

    /// The date a value denotes in this format, or `None` when the value is not exactly a valid
    /// date in it (see the module documentation for what "exactly" means).
    pub fn parse_value(self, value: &str) -> Option<NaiveDate> {
        let sep = self.separator();
        let mut rest = value.as_bytes();
        let (mut year, mut month, mut day) = (0u32, 0u32, 1u32);
        for (i, field) in self.fields().iter().enumerate() {
            if i > 0 {
                rest = rest.strip_prefix(&[sep])?;
            }
            let (width_min, width_max) = match field {
                Year => (4, 4),
                Month | Day => (1, 2),
            };
            let (n, tail) = take_digits(rest, width_min, width_max)?;
            rest = tail;
            match field {
                Year => year = n,
                Month => month = n,
                Day => day = n,
            }
        }
        if !rest.is_empty() || year == 0 {
            return None;
        }
        // The year has four digits, so it fits an i32.
        NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)
    }
}

/// Reads between `min` and `max` ASCII digits (as many as there are, up to `max`) from the start of
/// `bytes`; returns their value and what follows them.
fn take_digits(bytes: &[u8], min: usize, max: usize) -> Option<(u32, &[u8])> {
    let len = bytes
        .iter()
        .take(max)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if len < min {
        return None;
    }
    let value = bytes[..len]
        .iter()
        .fold(0u32, |acc, b| acc * 10 + u32::from(b - b'0'));
    Some((value, &bytes[len..]))
}

impl fmt::Display for DateFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// 1970-01-01 in chrono's count of days from the common era (0001-01-01 is day 1).
pub const EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// A date as Arrow's Date32 stores it: days since 1970-01-01.
pub fn date_to_days(d: NaiveDate) -> i32 {
    use chrono::Datelike;
    d.num_days_from_ce() - EPOCH_DAYS_FROM_CE
}

/// A Date32 value as `YYYY-MM-DD` (the number itself when out of chrono's range).
pub fn date32_to_string(days: i32) -> String {
    NaiveDate::from_num_days_from_ce_opt(days + EPOCH_DAYS_FROM_CE)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| days.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn exactly_the_ten_spec_patterns_are_accepted() {
        let spec = [
            "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%Y-%m-%d", "%d-%m-%Y", "%m-%d-%Y", "%Y/%m",
            "%m/%Y", "%Y-%m", "%m-%Y",
        ];
        for p in spec {
            assert_eq!(DateFormat::parse(p).map(DateFormat::as_str), Some(p));
        }
        assert_eq!(DateFormat::ALL.map(DateFormat::as_str), spec);
    }

    #[test]
    fn date_format_without_separator_is_rejected() {
        assert_eq!(DateFormat::parse("%Y%m%d"), None);
    }

    #[test]
    fn near_miss_patterns_are_rejected() {
        for p in [
            "%Y-%d-%m",
            "%Y/%m-%d",
            "%Y-%m-%d %H:%M",
            "%d/%m",
            "%y-%m-%d",
            "",
            "%Y-%m-",
            " %Y-%m-%d",
            "%Y.%m.%d",
        ] {
            assert_eq!(DateFormat::parse(p), None, "{p}");
        }
    }

    #[test]
    fn each_format_parses_its_own_example() {
        let d = date(2024, 3, 7);
        let m = date(2024, 3, 1);
        let cases = [
            (DateFormat::YmdSlash, "2024/03/07", d),
            (DateFormat::DmySlash, "07/03/2024", d),
            (DateFormat::MdySlash, "03/07/2024", d),
            (DateFormat::YmdDash, "2024-03-07", d),
            (DateFormat::DmyDash, "07-03-2024", d),
            (DateFormat::MdyDash, "03-07-2024", d),
            (DateFormat::YmSlash, "2024/03", m),
            (DateFormat::MySlash, "03/2024", m),
            (DateFormat::YmDash, "2024-03", m),
            (DateFormat::MyDash, "03-2024", m),
        ];
        for (f, v, want) in cases {
            assert_eq!(f.parse_value(v), Some(want), "{f} {v}");
        }
    }

    #[test]
    fn month_only_formats_give_the_first_of_the_month() {
        assert!(DateFormat::YmDash.is_month_only());
        assert!(!DateFormat::YmdDash.is_month_only());
        assert_eq!(
            DateFormat::MySlash.parse_value("12/1999"),
            Some(date(1999, 12, 1))
        );
    }

    #[test]
    fn single_digit_month_and_day_are_accepted() {
        assert_eq!(
            DateFormat::YmdDash.parse_value("2024-1-5"),
            Some(date(2024, 1, 5))
        );
        assert_eq!(
            DateFormat::DmySlash.parse_value("5/1/2024"),
            Some(date(2024, 1, 5))
        );
    }

    #[test]
    fn impossible_dates_are_rejected() {
        let f = DateFormat::YmdDash;
        for v in [
            "2024-13-01",
            "2024-02-30",
            "2023-02-29",
            "2024-00-10",
            "2024-01-00",
            "0000-01-01",
        ] {
            assert_eq!(f.parse_value(v), None, "{v}");
        }
        assert_eq!(f.parse_value("2024-02-29"), Some(date(2024, 2, 29)));
        assert_eq!(DateFormat::YmDash.parse_value("2024-13"), None);
    }

    #[test]
    fn junk_around_a_date_is_rejected() {
        let f = DateFormat::YmdDash;
        for v in [
            "2024-01-01x",
            "2024-01-01 ",
            " 2024-01-01",
            "2024-01-011",
            "2024-001-01",
            "24-01-01",
            "20240-01-01",
            "2024/01/01",
            "2024-01",
            "",
            "-",
            "2024--01",
            "+2024-01-01",
            "2024-1a-01",
            "２０２４-01-01",
        ] {
            assert_eq!(f.parse_value(v), None, "{v:?}");
        }
        assert_eq!(DateFormat::YmDash.parse_value("2024-01-01"), None);
    }

    #[test]
    fn the_separator_must_be_the_formats_own() {
        assert_eq!(DateFormat::DmyDash.parse_value("07/03/2024"), None);
        assert_eq!(DateFormat::DmySlash.parse_value("07-03-2024"), None);
    }

    #[test]
    fn accepted_list_names_every_format() {
        let list = DateFormat::accepted_list();
        assert!(list.starts_with("%Y/%m/%d, %d/%m/%Y"));
        assert!(list.ends_with("%Y-%m, %m-%Y"));
    }
}
