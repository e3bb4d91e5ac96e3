//! Values written for people, shared by every page: answer cells in words, counts and numbers
//! with their thousands grouped. Imports nothing of the pages.

use rapid_actors::engine::Cell;

/// An answer's cell in words: numbers for people, text bare, booleans yes or no, null a dash.
pub(super) fn words(c: &Cell) -> String {
    match c {
        Cell::Null => "—".into(),
        Cell::Text(s) => s.clone(),
        Cell::Bool(true) => "yes".into(),
        Cell::Bool(false) => "no".into(),
        number => self::number(number),
    }
}

/// `1234567` as `1,234,567`.
fn grouped(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count for people: `1,120,000`.
pub(super) fn count(n: u64) -> String {
    grouped(&n.to_string())
}

/// A number for people: thousands grouped from 10,000 on (years stay as they are), and a
/// fraction's float noise gone (12 significant digits, trailing zeros dropped).
pub(super) fn number(n: &Cell) -> String {
    let text = match *n {
        Cell::Int(i) => i.to_string(),
        Cell::UInt(u) => u.to_string(),
        // Tiny fractions keep their digits in scientific notation (1.5e-9).
        Cell::Float(f) if f != 0.0 && f.abs() < 1e-6 => return format!("{f:e}"),
        Cell::Float(f) if f.is_finite() => {
            let digits = 12 - (f.abs().log10().floor() as i64 + 1).clamp(-12, 12);
            let text = format!("{:.*}", digits.clamp(0, 15) as usize, f);
            match text.contains('.') {
                true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
                false => text,
            }
        }
        Cell::Float(_) | Cell::Null => return "—".into(),
        Cell::Text(ref t) => t.clone(),
        Cell::Bool(b) => b.to_string(),
    };
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (unsigned, None),
    };
    let whole = match whole.len() > 4 && whole.bytes().all(|b| b.is_ascii_digit()) {
        true => grouped(whole),
        false => whole.to_string(),
    };
    match fraction {
        Some(f) => format!("{sign}{whole}.{f}"),
        None => format!("{sign}{whole}"),
    }
}

/// A time the engine wrote (`2026-11-29T02:06:53.636Z`, `2026-11-29 02:06:53+00:00`) as every
/// page shows times: `2026-11-29 02:06:53 UTC`. Text that is no such time is kept as it is.
pub(super) fn when(text: &str) -> String {
    let head: String = text.chars().take(19).collect();
    let b = head.as_bytes();
    let is_time = b.len() == 19 && b[4] == b'-' && (b[10] == b'T' || b[10] == b' ');
    let utc = text.ends_with('Z') || text.ends_with("+00:00") || text.len() == 19;
    match is_time && utc {
        true => format!("{} UTC", head.replacen('T', " ", 1)),
        false => text.to_string(),
    }
}

/// `seconds` since 1970 as `YYYYMMDDTHHMMSSZ` (UTC), for file names.
pub(super) fn utc_stamp(seconds: i64) -> String {
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // The proleptic Gregorian date of a day count, in 400-year eras of 146,097 days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    format!("{year:04}{month:02}{day:02}T{h:02}{m:02}{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(v: f64) -> String {
        match v.fract() == 0.0 && v.abs() < 1e15 {
            true => number(&Cell::Int(v as i64)),
            false => number(&Cell::Float(v)),
        }
    }

    #[test]
    fn numbers_lose_float_noise_and_group_thousands_from_ten_thousand() {
        assert_eq!(shown(11053469.159999978), "11,053,469.16");
        assert_eq!(shown(0.30000000000000004), "0.3");
        assert_eq!(shown(2024.0), "2024");
        assert_eq!(shown(16050.0), "16,050");
        assert_eq!(shown(-1234567.0), "-1,234,567");
        assert_eq!(shown(-0.5), "-0.5");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(1.5e-9), "1.5e-9");
        assert_eq!(shown(1e20), "100,000,000,000,000,000,000");
        assert_eq!(count(1_120_000), "1,120,000");
        assert_eq!(count(999), "999");
        assert_eq!(when("2026-11-29T02:06:53.636Z"), "2026-11-29 02:06:53 UTC");
        assert_eq!(when("2026-11-29 02:06:53+00:00"), "2026-11-29 02:06:53 UTC");
        assert_eq!(when("Never updated"), "Never updated");
    }
}
