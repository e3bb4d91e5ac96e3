//! Signed, expiring bearer tokens: JWT-shaped (`header.claims.signature`, HS256) so generic tools
//! can read them, signed with an HMAC-SHA256 key kept in the catalog.
//!
//! Only our fixed header is accepted, so `alg: none` and algorithm-confusion tricks fail at the
//! first comparison. The signature is checked (constant time, by ring) before the claims are parsed.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use ring::hmac;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

const HEADER_JSON: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The subject id (a client id or a user id).
    pub sub: String,
    /// Issued at, seconds since the epoch.
    pub iat: i64,
    /// Expires at, seconds since the epoch.
    pub exp: i64,
}

pub struct TokenSigner {
    key: hmac::Key,
    header_b64: String,
}

impl TokenSigner {
    pub fn new(key_bytes: &[u8]) -> Self {
        TokenSigner {
            key: hmac::Key::new(hmac::HMAC_SHA256, key_bytes),
            header_b64: B64.encode(HEADER_JSON),
        }
    }

    pub fn issue(&self, subject_id: &str, now: i64, ttl_seconds: i64) -> String {
        let claims = Claims {
            sub: subject_id.to_string(),
            iat: now,
            exp: now + ttl_seconds,
        };
        // unwrap: serialising a struct of strings and integers cannot fail.
        let payload = B64.encode(serde_json::to_vec(&claims).unwrap());
        let signing_input = format!("{}.{}", self.header_b64, payload);
        let tag = hmac::sign(&self.key, signing_input.as_bytes());
        format!("{signing_input}.{}", B64.encode(tag.as_ref()))
    }

    /// A signature over `data` (URL-safe base64 of an HMAC-SHA256 tag).
    pub fn sign_bytes(&self, data: &[u8]) -> String {
        B64.encode(hmac::sign(&self.key, data).as_ref())
    }

    /// Checks a signature made by [`TokenSigner::sign_bytes`], in constant time.
    pub fn verify_bytes(&self, data: &[u8], signature: &str) -> bool {
        B64.decode(signature)
            .map(|tag| hmac::verify(&self.key, data, &tag).is_ok())
            .unwrap_or(false)
    }

    /// Returns the claims of a token that is ours, untampered and unexpired at `now`.
    pub fn verify(&self, token: &str, now: i64) -> Result<Claims> {
        let malformed =
            || Error::unauthenticated("The token is malformed or its signature is invalid");
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(sig), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed());
        };
        if header != self.header_b64 {
            return Err(malformed());
        }
        let sig = B64.decode(sig).map_err(|_| malformed())?;
        let signing_input = &token[..header.len() + 1 + payload.len()];
        hmac::verify(&self.key, signing_input.as_bytes(), &sig).map_err(|_| malformed())?;
        let claims: Claims = B64
            .decode(payload)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(malformed)?;
        if claims.exp <= now {
            return Err(Error::unauthenticated("The token has expired"));
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn signer() -> TokenSigner {
        TokenSigner::new(&[7u8; 32])
    }

    #[test]
    fn issued_token_verifies_until_expiry() {
        let s = signer();
        let t = s.issue("abc", 1000, 60);
        assert_eq!(s.verify(&t, 1059).unwrap().sub, "abc");
        let err = s.verify(&t, 1060).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unauthenticated);
    }

    #[test]
    fn tampered_claims_are_rejected() {
        let s = signer();
        let t = s.issue("abc", 1000, 60);
        let parts: Vec<&str> = t.split('.').collect();
        let forged_claims = B64.encode(r#"{"sub":"admin","iat":1000,"exp":99999999999}"#);
        let forged = format!("{}.{}.{}", parts[0], forged_claims, parts[2]);
        assert!(s.verify(&forged, 1001).is_err());
    }

    #[test]
    fn token_from_another_key_is_rejected() {
        let t = TokenSigner::new(&[8u8; 32]).issue("abc", 1000, 60);
        assert!(signer().verify(&t, 1001).is_err());
    }

    #[test]
    fn alg_none_and_garbage_are_rejected() {
        let s = signer();
        let none_header = B64.encode(r#"{"alg":"none","typ":"JWT"}"#);
        let claims = B64.encode(r#"{"sub":"abc","iat":1000,"exp":99999999999}"#);
        for bad in [
            format!("{none_header}.{claims}."),
            "not-a-token".to_string(),
            String::new(),
            "a.b.c.d".to_string(),
        ] {
            assert!(s.verify(&bad, 1001).is_err(), "{bad}");
        }
    }
}
