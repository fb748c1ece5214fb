//! PKCE (RFC 7636): a random verifier and its S256 challenge, and random `state` values.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

use crate::OAuthError;

/// `n` random bytes from the operating system.
pub fn random_bytes(n: usize) -> Result<Vec<u8>, OAuthError> {
    let mut out = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut out)
        .map_err(|_| OAuthError::Invalid("no randomness available from the operating system".into()))?;
    Ok(out)
}

/// A verifier (32 random bytes, base64url) and its challenge.
#[derive(Debug, Clone)]
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

/// A fresh verifier and challenge.
pub fn generate() -> Result<Pkce, OAuthError> {
    let verifier = URL_SAFE_NO_PAD.encode(random_bytes(32)?);
    let challenge = challenge_for(&verifier);
    Ok(Pkce { verifier, challenge })
}

/// The S256 challenge of `verifier`: base64url of its SHA-256, unpadded.
pub fn challenge_for(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 16 random bytes as hex (the OpenAI flow's `state`).
pub fn random_hex_state() -> Result<String, OAuthError> {
    Ok(random_bytes(16)?.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_the_rfc_7636_example() {
        // RFC 7636 appendix B.
        assert_eq!(
            challenge_for("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let a = generate().expect("pkce");
        let b = generate().expect("pkce");
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.verifier.len(), 43);
        assert_eq!(challenge_for(&a.verifier), a.challenge);
        assert_eq!(random_hex_state().expect("state").len(), 32);
    }
}
