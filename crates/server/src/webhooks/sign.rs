//! Signing per the Standard Webhooks specification (<https://www.standardwebhooks.com>): a secret is
//! `whsec_` + base64 of 32 random bytes; each delivery carries `webhook-id`, `webhook-timestamp` (Unix
//! seconds) and `webhook-signature: v1,<base64 of HMAC-SHA256 over "{id}.{timestamp}.{body}">`, keyed
//! with the secret's decoded bytes. A receiver recomputes the HMAC and compares in constant time
//! (`docs/webhooks.md` has the recipe).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngExt;
use sha2::Sha256;

/// The prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// A fresh signing secret: `whsec_` + base64 of 32 random bytes.
pub fn new_secret() -> String {
    let mut key = [0u8; 32];
    rand::rng().fill(&mut key[..]);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The key bytes of a secret (`whsec_` prefix optional); `None` when it is not base64.
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD.decode(encoded).ok().filter(|k| !k.is_empty())
}

/// The `webhook-signature` value of `body` sent as message `id` at `timestamp` (Unix seconds):
/// `v1,<base64 HMAC-SHA256>`; `None` when the secret does not decode.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &str) -> Option<String> {
    let key = secret_key(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    Some(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification's reference libraries (the `webhook-id`,
    /// timestamp, body, secret and signature they test with).
    #[test]
    fn matches_the_specifications_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            signature(secret, id, 1614265330, body).as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
    }

    #[test]
    fn a_fresh_secret_is_32_random_bytes() {
        let (a, b) = (new_secret(), new_secret());
        assert!(a.starts_with(SECRET_PREFIX), "{a}");
        assert_eq!(secret_key(&a).map(|k| k.len()), Some(32));
        assert_ne!(a, b);
        assert_eq!(signature("whsec_!!", "i", 1, "b"), None);
    }
}
