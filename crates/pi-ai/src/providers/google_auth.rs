//! Google application default credentials (ADC) for Vertex AI: a service-account key (a JWT
//! signed RS256 and exchanged for an access token) or a gcloud user login (a refresh token),
//! read from `GOOGLE_APPLICATION_CREDENTIALS` or gcloud's default file. Tokens are kept per
//! credentials file until a minute before they expire.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::{json, Value};

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The credentials file ADC names: `GOOGLE_APPLICATION_CREDENTIALS`, else
/// `~/.config/gcloud/application_default_credentials.json`.
pub fn credentials_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = env("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.trim().is_empty()) {
        return Some(PathBuf::from(path));
    }
    let home = env("HOME")?;
    Some(Path::new(&home).join(".config/gcloud/application_default_credentials.json"))
}

/// The signed JWT a service account exchanges for a token (`iat` = `now_s`, one hour).
pub fn service_account_assertion(
    client_email: &str,
    private_key_pem: &str,
    token_uri: &str,
    now_s: i64,
) -> Result<String, String> {
    let der = pem_body(private_key_pem).ok_or("the service account's private_key is not a PEM private key")?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|e| format!("the service account's private_key is not a PKCS#8 RSA key: {e}"))?;
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = json!({"iss": client_email, "scope": SCOPE, "aud": token_uri, "iat": now_s, "exp": now_s + 3600});
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signing_input = format!("{header}.{payload}");
    let mut signature = vec![0u8; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "signing the service account assertion failed".to_string())?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

fn pem_body(pem: &str) -> Option<Vec<u8>> {
    let start = pem.find("-----BEGIN PRIVATE KEY-----")? + "-----BEGIN PRIVATE KEY-----".len();
    let end = pem[start..].find("-----END PRIVATE KEY-----")? + start;
    let text: String = pem[start..end].chars().filter(|c| !c.is_whitespace()).collect();
    STANDARD.decode(text).ok()
}

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

static TOKENS: Mutex<Option<HashMap<PathBuf, (String, i64)>>> = Mutex::new(None);

/// An access token for the ADC file at `path` (cached until a minute before it expires).
pub async fn access_token(path: &Path) -> Result<String, String> {
    let now = crate::now_ms();
    if let Ok(guard) = TOKENS.lock() {
        if let Some((token, expires)) = guard.as_ref().and_then(|m| m.get(path)) {
            if now + 60_000 < *expires {
                return Ok(token.clone());
            }
        }
    }
    let text = tokio::task::spawn_blocking({
        let path = path.to_path_buf();
        move || std::fs::read_to_string(path)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("Cannot read Google credentials {}: {e}", path.display()))?;
    let creds: Value =
        serde_json::from_str(&text).map_err(|e| format!("Google credentials {} are not JSON: {e}", path.display()))?;
    let field = |k: &str| creds.get(k).and_then(Value::as_str).unwrap_or_default();
    let token_uri = Some(field("token_uri"))
        .filter(|u| !u.is_empty())
        .unwrap_or(DEFAULT_TOKEN_URI);
    let body = match field("type") {
        "service_account" => {
            let assertion =
                service_account_assertion(field("client_email"), field("private_key"), token_uri, now / 1000)?;
            form(&[("grant_type", JWT_BEARER_GRANT), ("assertion", &assertion)])
        }
        "authorized_user" => form(&[
            ("grant_type", "refresh_token"),
            ("client_id", field("client_id")),
            ("client_secret", field("client_secret")),
            ("refresh_token", field("refresh_token")),
        ]),
        other => return Err(format!("Google credentials of type \"{other}\" are not supported")),
    };
    let response = crate::http::client()
        .post(token_uri)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("Google token request failed: {}", e.without_url()))?;
    let status = response.status().as_u16();
    let reply: Value = match response.bytes().await {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    if !(200..300).contains(&status) {
        let error = reply.get("error").and_then(Value::as_str).unwrap_or("error");
        let description = reply
            .get("error_description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(format!("Google token request failed ({status}): {error} {description}")
            .trim()
            .to_string());
    }
    let token = reply
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("Google token response has no access_token")?
        .to_string();
    let expires_in = reply.get("expires_in").and_then(Value::as_i64).unwrap_or(3600);
    if let Ok(mut guard) = TOKENS.lock() {
        guard
            .get_or_insert_with(HashMap::new)
            .insert(path.to_path_buf(), (token.clone(), now + expires_in * 1000));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_are_percent_encoded() {
        assert_eq!(form(&[("a b", "x/y=z"), ("k", "~.-_")]), "a%20b=x%2Fy%3Dz&k=~.-_");
    }

    #[test]
    fn the_default_file_is_gclouds() {
        let env = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
        assert_eq!(
            credentials_path(&env),
            Some(PathBuf::from(
                "/home/u/.config/gcloud/application_default_credentials.json"
            ))
        );
        let explicit = |k: &str| (k == "GOOGLE_APPLICATION_CREDENTIALS").then(|| "/k.json".to_string());
        assert_eq!(credentials_path(&explicit), Some(PathBuf::from("/k.json")));
    }
}

#[cfg(test)]
mod token_tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A key made for these tests only.
    const TEST_KEY: &str = include_str!("../../tests/golden/test-service-account-key.pem");

    fn verify(jwt: &str) -> Value {
        let der = pem_body(TEST_KEY).expect("pem");
        let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).expect("key");
        let (input, signature) = jwt.rsplit_once('.').expect("three parts");
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            pair.public().as_ref().to_vec(),
        );
        public
            .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(signature).expect("b64"))
            .expect("the signature verifies with the key's public half");
        let payload = input.split('.').nth(1).expect("payload");
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("b64")).expect("json")
    }

    #[tokio::test]
    async fn a_service_account_exchanges_a_signed_assertion_once() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let token_uri = format!("http://{}/token", listener.local_addr().expect("addr"));
        let bodies = std::sync::Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = std::sync::Arc::clone(&bodies);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = vec![0u8; 65536];
                let mut got = Vec::new();
                loop {
                    let n = stream.read(&mut buf).await.unwrap_or(0);
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).to_string();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let len = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().to_string())
                            })
                            .and_then(|v| v.parse::<usize>().ok())
                            .unwrap_or(0);
                        if body.len() >= len || n == 0 {
                            seen.lock().expect("lock").push(body.to_string());
                            break;
                        }
                    }
                    if n == 0 {
                        break;
                    }
                }
                let reply = r#"{"access_token":"ya29.test","expires_in":3600,"token_type":"Bearer"}"#;
                let _ = stream
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                            reply.len()
                        )
                        .as_bytes(),
                    )
                    .await;
            }
        });
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("sa.json");
        let creds = json!({"type": "service_account", "client_email": "pi@test.iam.gserviceaccount.com",
            "private_key": TEST_KEY, "token_uri": token_uri});
        std::fs::write(&path, creds.to_string()).expect("write");
        assert_eq!(access_token(&path).await.expect("token"), "ya29.test");
        assert_eq!(access_token(&path).await.expect("cached"), "ya29.test");
        let bodies = bodies.lock().expect("lock").clone();
        assert_eq!(bodies.len(), 1, "the second call uses the cached token");
        let pairs: HashMap<String, String> = bodies[0]
            .split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_string(), v.replace("%3A", ":")))
            .collect();
        assert_eq!(pairs["grant_type"], JWT_BEARER_GRANT);
        let claims = verify(&pairs["assertion"]);
        assert_eq!(claims["iss"], "pi@test.iam.gserviceaccount.com");
        assert_eq!(claims["aud"], token_uri.as_str());
        assert_eq!(claims["scope"], SCOPE);
        assert_eq!(
            claims["exp"].as_i64().expect("exp") - claims["iat"].as_i64().expect("iat"),
            3600
        );
    }
}
