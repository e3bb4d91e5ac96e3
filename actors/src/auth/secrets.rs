//! Credentials: generation, storage form and comparison.
//!
//! Client secrets are 256-bit random values, so a plain SHA-256 digest is as strong as a slow hash
//! and costs microseconds (the SDK asks for a token before every call). User passwords are chosen by
//! people and low in entropy, so they are stored as argon2id hashes and checked off the actor thread.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use ring::digest;
use ring::rand::{SecureRandom, SystemRandom};
use subtle::ConstantTimeEq;

use crate::error::{Error, Result};

pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    // unwrap: the OS random source failing is unrecoverable; refusing to issue weak secrets is right.
    SystemRandom::new().fill(&mut buf).unwrap();
    buf
}

/// A new client secret: 32 random bytes, URL-safe base64.
pub fn new_client_secret() -> String {
    B64.encode(random_bytes::<32>())
}

/// A new client id: 26 lower-case letters and digits (the shape of a Cognito app client id).
pub fn new_client_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    random_bytes::<26>()
        .iter()
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect()
}

/// A one-time password for a new user: 24 characters from 18 random bytes.
pub fn new_temporary_password() -> String {
    B64.encode(random_bytes::<18>())
}

pub fn secret_digest(secret: &str) -> Vec<u8> {
    digest::digest(&digest::SHA256, secret.as_bytes())
        .as_ref()
        .to_vec()
}

/// Constant-time check of a presented client secret against its stored digest.
pub fn secret_matches(secret: &str, stored_digest: &[u8]) -> bool {
    secret_digest(secret).ct_eq(stored_digest).into()
}

/// Hashes a password with argon2id and a random salt (slow on purpose: call off the actor).
pub fn hash_password(password: &str) -> Result<String> {
    let salt = SaltString::encode_b64(&random_bytes::<16>())
        .map_err(|e| Error::internal(format!("encoding a salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::internal(format!("hashing a password: {e}")))
}

/// Checks a password against its argon2 hash (constant time inside argon2).
pub fn password_matches(password: &str, stored_hash: &str) -> bool {
    PasswordHash::new(stored_hash)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_digest_matches_only_the_same_secret() {
        let s = new_client_secret();
        let d = secret_digest(&s);
        assert!(secret_matches(&s, &d));
        assert!(!secret_matches(&format!("{s}x"), &d));
        assert!(!secret_matches(&s, &d[..31]));
    }

    #[test]
    fn password_hash_is_argon2id_and_verifies() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(!h.contains("correct horse"));
        assert!(password_matches("correct horse", &h));
        assert!(!password_matches("wrong horse", &h));
        assert!(!password_matches("correct horse", "not a hash"));
    }

    #[test]
    fn generated_ids_and_secrets_are_distinct_and_well_formed() {
        let (a, b) = (new_client_id(), new_client_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 26);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        assert_eq!(new_client_secret().len(), 43);
        assert_eq!(new_temporary_password().len(), 24);
    }
}
