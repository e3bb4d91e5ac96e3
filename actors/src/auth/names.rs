//! Validation of subject names, e-mail addresses, protected domain names and new passwords,
//! with messages that name the value and the rule.

use std::str::FromStr;
use std::sync::LazyLock;

use email_address::EmailAddress;
use regex::Regex;

use crate::error::{Error, Result};

/// A client or user name; the API document states the same pattern (tests/api/openapi.rs).
pub const SUBJECT_NAME_PATTERN: &str = r"^[a-zA-Z][a-zA-Z0-9@._-]{2,127}$";
/// A protected domain name (at most [`MAX_DOMAIN_LEN`] characters), also a dataset domain's rule.
pub const DOMAIN_NAME_PATTERN: &str = r"^[a-zA-Z][_a-zA-Z0-9]*$";
pub const MAX_DOMAIN_LEN: usize = 128;

// unwrap: constant patterns, checked by the tests below.
static SUBJECT_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(SUBJECT_NAME_PATTERN).unwrap());
static DOMAIN_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(DOMAIN_NAME_PATTERN).unwrap());

const NAME_RULE: &str =
    "3 to 128 characters, starting with a letter, using only letters, digits and . _ @ -";

pub fn validate_client_name(name: &str) -> Result<()> {
    if SUBJECT_NAME.is_match(name) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "Invalid client name provided: [{name}] must be {NAME_RULE}"
        )))
    }
}

pub fn validate_username(name: &str) -> Result<()> {
    if SUBJECT_NAME.is_match(name) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "This username is invalid: [{name}] must be {NAME_RULE}"
        )))
    }
}

/// Checks RFC 5322 structure and that the domain is exactly one of `allowed` (case-insensitive).
/// Returns the address with its domain lower-cased, the form stored and compared for uniqueness.
pub fn validate_email(email: &str, allowed: &[String]) -> Result<String> {
    let addr = EmailAddress::from_str(email).map_err(|e| {
        Error::invalid(format!(
            "Invalid email provided: [{email}] is not a valid address ({e})"
        ))
    })?;
    let domain = addr.domain().to_ascii_lowercase();
    if !allowed.iter().any(|d| d.eq_ignore_ascii_case(&domain)) {
        return Err(Error::invalid(format!(
            "Invalid email provided: the domain [{domain}] of [{email}] is not an allowed email domain"
        )));
    }
    Ok(format!("{}@{}", addr.local_part(), domain))
}

/// A protected domain name; returned lower-case, the form it is stored in.
pub fn validate_protected_domain(domain: &str) -> Result<String> {
    let trimmed = domain.trim();
    if DOMAIN_NAME.is_match(trimmed) && trimmed.len() <= MAX_DOMAIN_LEN {
        Ok(trimmed.to_ascii_lowercase())
    } else {
        Err(Error::invalid(format!(
            "The value set for domain [{domain}] can only contain alphanumeric and underscore `_` \
             characters and must start with an alphabetic character"
        )))
    }
}

pub const MIN_PASSWORD_CHARS: usize = 12;

pub fn validate_new_password(password: &str) -> Result<()> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err(Error::invalid(format!(
            "The new password is too short: at least {MIN_PASSWORD_CHARS} characters are required"
        )));
    }
    if n > 1024 {
        return Err(Error::invalid(
            "The new password is too long: at most 1024 characters",
        ));
    }
    Ok(())
}

/// Parses the instance setting `ALLOWED_EMAIL_DOMAINS` as a comma list (spaces ignored).
pub fn parse_domain_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(|d| d.trim().to_ascii_lowercase())
        .filter(|d| !d.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_names_follow_the_rule() {
        for ok in ["abc", "a.b_c@d-e", "Client1", &"a".repeat(128)] {
            assert!(validate_client_name(ok).is_ok(), "{ok}");
            assert!(validate_username(ok).is_ok(), "{ok}");
        }
        for bad in [
            "ab",
            "1abc",
            "_abc",
            "a b c",
            "abc!",
            &"a".repeat(129),
            "",
            "ünï",
        ] {
            assert!(validate_client_name(bad).is_err(), "{bad}");
            assert!(validate_username(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn client_name_message_names_the_value() {
        let err = validate_client_name("x").unwrap_err();
        assert!(err.to_string().contains("[x]"));
    }

    #[test]
    fn email_domain_must_match_exactly_not_as_substring() {
        let allowed = parse_domain_list("example.com, Other.org");
        assert_eq!(
            validate_email("a@example.com", &allowed).unwrap(),
            "a@example.com"
        );
        assert_eq!(
            validate_email("a@EXAMPLE.com", &allowed).unwrap(),
            "a@example.com"
        );
        assert!(validate_email("a@other.org", &allowed).is_ok());
        assert!(validate_email("a@ample.com", &allowed).is_err());
        assert!(validate_email("a@sub.example.com", &allowed).is_err());
        assert!(validate_email("a@example.co", &allowed).is_err());
    }

    #[test]
    fn malformed_emails_are_refused() {
        let allowed = parse_domain_list("example.com");
        for bad in [
            "plainaddress",
            "@example.com",
            "a@",
            "a b@example.com",
            "a@@example.com",
        ] {
            assert!(validate_email(bad, &allowed).is_err(), "{bad}");
        }
    }

    #[test]
    fn no_allowed_domains_refuses_every_email() {
        assert!(validate_email("a@example.com", &parse_domain_list("")).is_err());
    }

    #[test]
    fn protected_domain_names() {
        assert_eq!(validate_protected_domain("Land_1").unwrap(), "land_1");
        for bad in ["1land", "_land", "la-nd", "", "../x"] {
            assert!(validate_protected_domain(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn short_passwords_are_refused() {
        assert!(validate_new_password("short").is_err());
        assert!(validate_new_password("long enough pw").is_ok());
    }
}
