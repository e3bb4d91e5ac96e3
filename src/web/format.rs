//! Values written for people, shared by every page: JSON values in words, counts and numbers
//! with their thousands grouped. Imports nothing of the pages.

use serde_json::Value;

/// A JSON value in words: strings bare, null as a dash.
pub fn words(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        // Owners: "Name <email>"; tags: "key=value"; lists comma separated.
        Value::Object(o) if o.contains_key("email") => {
            format!("{} <{}>", words(&o["name"]), words(&o["email"]))
        }
        Value::Object(o) if o.is_empty() => "—".into(),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}={}", words(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Array(a) if a.is_empty() => "—".into(),
        Value::Array(a) => a.iter().map(words).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
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
pub fn count(n: u64) -> String {
    grouped(&n.to_string())
}

/// A number for people: thousands grouped from 10,000 on (years stay as they are), and a
/// fraction's float noise gone (12 significant digits, trailing zeros dropped).
pub fn number(n: &serde_json::Number) -> String {
    let text = match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (None, Some(u), _) => u.to_string(),
        // Tiny fractions keep their digits in scientific notation (1.5e-9).
        (None, None, Some(f)) if f != 0.0 && f.abs() < 1e-6 => return format!("{f:e}"),
        (None, None, Some(f)) if f.is_finite() => {
            let digits = 12 - (f.abs().log10().floor() as i64 + 1).clamp(-12, 12);
            let text = format!("{:.*}", digits.clamp(0, 15) as usize, f);
            match text.contains('.') {
                true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
                false => text,
            }
        }
        _ => n.to_string(),
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

/// `seconds` since 1970 as `YYYYMMDDTHHMMSSZ` (UTC), for file names.
pub fn utc_stamp(seconds: i64) -> String {
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

    fn shown(v: serde_json::Value) -> String {
        match v {
            Value::Number(n) => number(&n),
            _ => unreachable!(),
        }
    }

    #[test]
    fn numbers_lose_float_noise_and_group_thousands_from_ten_thousand() {
        assert_eq!(
            shown(serde_json::json!(11053469.159999978)),
            "11,053,469.16"
        );
        assert_eq!(shown(serde_json::json!(0.30000000000000004)), "0.3");
        assert_eq!(shown(serde_json::json!(2024)), "2024");
        assert_eq!(shown(serde_json::json!(16050)), "16,050");
        assert_eq!(shown(serde_json::json!(-1234567)), "-1,234,567");
        assert_eq!(shown(serde_json::json!(-0.5)), "-0.5");
        assert_eq!(shown(serde_json::json!(0.0)), "0");
        assert_eq!(shown(serde_json::json!(1.5e-9)), "1.5e-9");
        assert_eq!(
            shown(serde_json::json!(1e20)),
            "100,000,000,000,000,000,000"
        );
        assert_eq!(count(1_120_000), "1,120,000");
        assert_eq!(count(999), "999");
    }
}
