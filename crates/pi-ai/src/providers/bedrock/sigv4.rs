//! AWS Signature Version 4 for one request: the canonical request, the string to sign, the
//! derived signing key and the `Authorization` header, as the AWS SDK signs non-S3 services
//! (the path is URI-encoded once more for the canonical form; the payload hash is sent as
//! `x-amz-content-sha256`). HMAC and SHA-256 come from `ring`, already built for TLS.

use ring::{digest, hmac};

/// Static credentials (long-term keys, or temporary ones with a session token).
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret or the token.
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("has_session_token", &self.session_token.is_some())
            .finish_non_exhaustive()
    }
}

/// What is signed: the method, the path (already percent-encoded as sent, no query), the
/// headers (names in any case) and the body.
pub struct SigningInput<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
}

/// Headers the SDK never signs (they may change in transit).
const UNSIGNED_HEADERS: &[&str] = &[
    "authorization",
    "user-agent",
    "x-amzn-trace-id",
    "expect",
    "connection",
    "cache-control",
    "transfer-encoding",
];

/// Lowercase hex of SHA-256.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, data).as_ref())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

fn hmac_sha256(key: &[u8], data: &str) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::sign(&key, data.as_bytes()).as_ref().to_vec()
}

/// RFC 3986 encoding of everything but the unreserved characters.
pub fn uri_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path as the canonical request holds it: each segment encoded again.
fn canonical_uri(path: &str) -> String {
    if path.is_empty() {
        return "/".to_string();
    }
    path.split('/').map(uri_encode).collect::<Vec<_>>().join("/")
}

/// The signed headers' names (sorted, `;`-joined) and their canonical lines.
fn canonical_headers(headers: &[(String, String)]) -> (String, String) {
    let mut pairs: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| {
            (
                n.to_ascii_lowercase(),
                v.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .filter(|(n, _)| !UNSIGNED_HEADERS.contains(&n.as_str()))
        .collect();
    pairs.sort();
    let names = pairs.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(";");
    let lines: String = pairs.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    (names, lines)
}

/// The `Authorization` header value for `input` signed with `credentials`.
pub fn authorization(input: &SigningInput<'_>, credentials: &AwsCredentials) -> String {
    let (signed, lines) = canonical_headers(input.headers);
    let canonical = format!(
        "{}\n{}\n\n{lines}\n{signed}\n{}",
        input.method,
        canonical_uri(input.path),
        sha256_hex(input.body)
    );
    let date = &input.amz_date[..input.amz_date.len().min(8)];
    let scope = format!("{date}/{}/{}/aws4_request", input.region, input.service);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        input.amz_date,
        sha256_hex(canonical.as_bytes())
    );
    let k_date = hmac_sha256(format!("AWS4{}", credentials.secret_access_key).as_bytes(), date);
    let k_region = hmac_sha256(&k_date, input.region);
    let k_service = hmac_sha256(&k_region, input.service);
    let k_signing = hmac_sha256(&k_service, "aws4_request");
    let signature = hex(&hmac_sha256(&k_signing, &to_sign));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
        credentials.access_key_id
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `get-vanilla` case of AWS's published SigV4 test suite.
    #[test]
    fn signs_the_aws_test_suite_vanilla_request() {
        let headers = vec![
            ("Host".to_string(), "example.amazonaws.com".to_string()),
            ("X-Amz-Date".to_string(), "20150830T123600Z".to_string()),
        ];
        let input = SigningInput {
            method: "GET",
            path: "/",
            headers: &headers,
            body: b"",
            region: "us-east-1",
            service: "service",
            amz_date: "20150830T123600Z",
        };
        let creds = AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        };
        assert_eq!(
            authorization(&input, &creds),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }

    #[test]
    fn encoded_path_segments_are_encoded_again_and_user_agent_is_not_signed() {
        assert_eq!(
            canonical_uri("/model/a%3A0/converse-stream"),
            "/model/a%253A0/converse-stream"
        );
        let (names, _) = canonical_headers(&[
            ("User-Agent".into(), "x".into()),
            ("X-Amz-Date".into(), "d".into()),
            ("host".into(), "h".into()),
        ]);
        assert_eq!(names, "host;x-amz-date");
    }

    #[test]
    fn credentials_debug_hides_secrets() {
        let creds = AwsCredentials {
            access_key_id: "AKID".into(),
            secret_access_key: "very-secret".into(),
            session_token: Some("token-xyz".into()),
        };
        let text = format!("{creds:?}");
        assert!(!text.contains("very-secret") && !text.contains("token-xyz"), "{text}");
    }
}
