//! Credentials: generation, storage form and comparison.
//!
//! Client secrets are 256-bit random values, so a plain SHA-256 digest is as strong as a slow hash
//! and costs microseconds (the SDK asks for a token before every call). User passwords are chosen by
//! people and low in entropy, so they are stored as argon2id hashes and checked off the actor thread.

use argon2::password_hash::PasswordHash;
use argon2::{Algorithm, Argon2, Block, Params, Version};
use base64::engine::general_purpose::{STANDARD_NO_PAD as PHC_B64, URL_SAFE_NO_PAD as B64};
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

/// Hashes a password with argon2id (default parameters) and a random salt, in `memory` (a hash
/// pool thread's buffer). Slow on purpose: run it on the [`HashPool`](super::hash_pool::HashPool).
pub fn hash_password_in(password: &str, memory: &mut [Block]) -> Result<String> {
    let salt = random_bytes::<16>();
    let params = Params::DEFAULT;
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone())
        .hash_password_into_with_memory(password.as_bytes(), &salt, &mut out, memory)
        .map_err(|e| Error::internal(format!("hashing a password: {e}")))?;
    // The PHC string form, as argon2's own PasswordHasher writes it.
    Ok(format!(
        "$argon2id$v=19$m={},t={},p={}${}${}",
        params.m_cost(),
        params.t_cost(),
        params.p_cost(),
        PHC_B64.encode(salt),
        PHC_B64.encode(out)
    ))
}

/// Hashes a password with its own working memory (tests and tools; the service uses the pool).
pub fn hash_password(password: &str) -> Result<String> {
    let mut memory = vec![Block::default(); Params::DEFAULT.block_count()];
    hash_password_in(password, &mut memory)
}

/// A hash no password matches, with the parameters real hashes have: checking a password against
/// it costs what checking a real user's does, so an unknown user name cannot be told by timing.
pub fn decoy_hash() -> String {
    let params = Params::DEFAULT;
    format!(
        "$argon2id$v=19$m={},t={},p={}${}${}",
        params.m_cost(),
        params.t_cost(),
        params.p_cost(),
        PHC_B64.encode(random_bytes::<16>()),
        PHC_B64.encode(random_bytes::<32>())
    )
}

/// Checks a password against its argon2 PHC hash in `memory` (a hash pool thread's buffer); the
/// comparison of the outputs is constant-time. A hash needing more memory than `memory` gets a
/// temporary buffer, up to 4 times the default; beyond that it is treated as not matching.
pub fn password_matches_in(password: &str, stored_hash: &str, memory: &mut [Block]) -> bool {
    let Ok(hash) = PasswordHash::new(stored_hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(params), Some(salt), Some(expected)) = (
        Algorithm::try_from(hash.algorithm),
        Params::try_from(&hash),
        hash.salt,
        hash.hash,
    ) else {
        return false;
    };
    let version = hash
        .version
        .map_or(Ok(Version::V0x13), Version::try_from)
        .unwrap_or(Version::V0x13);
    let mut salt_buf = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_buf) else {
        return false;
    };
    let mut out = vec![0u8; expected.len()];
    let blocks = params.block_count();
    let argon = Argon2::new(algorithm, version, params);
    let computed = if blocks <= memory.len() {
        argon.hash_password_into_with_memory(password.as_bytes(), salt, &mut out, memory)
    } else if blocks <= 4 * Params::DEFAULT.block_count() {
        let mut own = vec![Block::default(); blocks];
        argon.hash_password_into_with_memory(password.as_bytes(), salt, &mut out, &mut own[..])
    } else {
        tracing::error!(blocks, "a stored password hash asks for too much memory");
        return false;
    };
    computed.is_ok() && bool::from(out.ct_eq(expected.as_bytes()))
}

/// Checks a password with its own working memory (tests and tools; the service uses the pool).
pub fn password_matches(password: &str, stored_hash: &str) -> bool {
    let mut memory = vec![Block::default(); Params::DEFAULT.block_count()];
    password_matches_in(password, stored_hash, &mut memory)
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
    fn our_hashes_and_argon2s_own_verify_each_other() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier, SaltString};
        let ours = hash_password("tr0ub4dor").unwrap();
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(Argon2::default()
            .verify_password(b"tr0ub4dor", &parsed)
            .is_ok());
        let salt = SaltString::encode_b64(&random_bytes::<16>()).unwrap();
        let theirs = Argon2::default()
            .hash_password(b"tr0ub4dor", &salt)
            .unwrap()
            .to_string();
        assert!(password_matches("tr0ub4dor", &theirs));
        assert!(!password_matches("tr0ub4dox", &theirs));
    }

    #[test]
    fn the_decoy_has_real_parameters_and_matches_nothing() {
        let decoy = decoy_hash();
        let real = hash_password("x").unwrap();
        let params = |h: &str| h.split('$').nth(3).unwrap().to_string();
        assert_eq!(params(&decoy), params(&real));
        assert!(!password_matches("", &decoy));
        assert!(!password_matches("decoy", &decoy));
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
