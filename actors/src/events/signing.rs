//! Standard Webhooks signatures (standardwebhooks.com): the secret is `whsec_` and a base64
//! key; a delivery's `webhook-signature` is `v1,` and the base64 HMAC-SHA256, under that key, of
//! `{webhook-id}.{webhook-timestamp}.{body}`. Receivers verify it with the specification's
//! libraries (the Python `standardwebhooks` package does so in CI).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

use crate::error::{Error, Result};

const PREFIX: &str = "whsec_";

/// A new secret: 32 random bytes.
pub fn new_secret() -> Result<String> {
    let mut key = [0u8; 32];
    SystemRandom::new()
        .fill(&mut key)
        .map_err(|_| Error::internal("no randomness for a webhook secret"))?;
    Ok(format!("{PREFIX}{}", STANDARD.encode(key)))
}

/// The `webhook-signature` header of one delivery.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String> {
    let encoded = secret.strip_prefix(PREFIX).unwrap_or(secret);
    let key = STANDARD
        .decode(encoded)
        .map_err(|_| Error::internal("a stored webhook secret is not base64"))?;
    let key = hmac::Key::new(hmac::HMAC_SHA256, &key);
    let mut ctx = hmac::Context::with_key(&key);
    ctx.update(id.as_bytes());
    ctx.update(b".");
    ctx.update(timestamp.to_string().as_bytes());
    ctx.update(b".");
    ctx.update(body);
    Ok(format!("v1,{}", STANDARD.encode(ctx.sign().as_ref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the specification's reference libraries: this secret, id, time and body
    /// sign to this value.
    #[test]
    fn signs_as_the_specification_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let got = signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap();
        assert_eq!(got, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_are_prefixed_random_keys() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert!(a.starts_with("whsec_") && a != b);
        assert_eq!(STANDARD.decode(&a[6..]).unwrap().len(), 32);
    }
}
