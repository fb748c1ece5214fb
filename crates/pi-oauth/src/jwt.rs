//! Reading (not verifying) the payload of a JWT access token: the OpenAI sign-in keeps the
//! ChatGPT account id there.

use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::Value;

/// The payload of a three-part JWT, or `None` when `token` is not one.
pub fn decode_jwt_payload(token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (_, payload, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .or_else(|_| URL_SAFE.decode(payload))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_decode_and_other_text_does_not() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"u1"}"#);
        let token = format!("h.{payload}.s");
        assert_eq!(decode_jwt_payload(&token), Some(serde_json::json!({"sub": "u1"})));
        assert_eq!(decode_jwt_payload("sk-plain"), None);
        assert_eq!(decode_jwt_payload("a.b.c.d"), None);
        assert_eq!(decode_jwt_payload("a.!!.c"), None);
    }
}
