//! The OAuth requests of a sign-in and a refresh: the client's identity (configured, registered
//! with RFC 7591, or pi's Client ID Metadata Document), the PKCE S256 authorization URL, the
//! code exchange and the refresh grant, with the client authentication the server supports.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::discovery::{is_loopback, ServerMetadata};
use super::http::OAuthHttp;
use super::settings::OAuthSettings;
use super::store::Tokens;
use super::OAuthError;

/// pi's Client ID Metadata Documents.
pub const CLIENT_METADATA_BASE: &str = "https://pi.dev/oauth";

/// `n` random bytes from the system.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], OAuthError> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; N];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| OAuthError::Failed("no random numbers available".into()))?;
    Ok(bytes)
}

/// A PKCE verifier (43 base64url characters) and its S256 challenge.
pub(crate) fn pkce() -> Result<(String, String), OAuthError> {
    let verifier = URL_SAFE_NO_PAD.encode(random_bytes::<32>()?);
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    Ok((verifier, challenge))
}

/// The `state` of an authorization request: 64 hex characters.
pub(crate) fn new_state() -> Result<String, OAuthError> {
    Ok(random_bytes::<32>()?.iter().map(|b| format!("{b:02x}")).collect())
}

/// 12 characters naming a server URL in server-specific callback paths and documents.
pub fn callback_id(server_url: &str) -> String {
    let mut url = match reqwest::Url::parse(server_url) {
        Ok(url) => url,
        Err(_) => return URL_SAFE_NO_PAD.encode(&Sha256::digest(server_url.as_bytes())[..9]),
    };
    url.set_fragment(None);
    URL_SAFE_NO_PAD.encode(&Sha256::digest(url.as_str().as_bytes())[..9])
}

/// The document to identify with, when the server supports documents for public clients: the
/// shared one when authorization responses carry `iss` (RFC 9207), else one of this server's own
/// with a server-specific redirect path.
pub(crate) fn client_metadata_document(
    server_url: &str,
    redirect_uri: &str,
    metadata: Option<&ServerMetadata>,
) -> Option<(String, String)> {
    let metadata = metadata?;
    if !metadata.flag("client_id_metadata_document_supported")
        || !metadata.list("token_endpoint_auth_methods_supported").contains(&"none")
    {
        return None;
    }
    if metadata.flag("authorization_response_iss_parameter_supported") {
        return Some((format!("{CLIENT_METADATA_BASE}/client.json"), redirect_uri.to_string()));
    }
    let id = callback_id(server_url);
    let mut redirect = reqwest::Url::parse(redirect_uri).ok()?;
    let path = format!("{}/{id}", redirect.path().trim_end_matches('/'));
    redirect.set_path(&path);
    Some((format!("{CLIENT_METADATA_BASE}/{id}/client.json"), redirect.to_string()))
}

/// Whether pi's documents list `redirect_uri`: loopback, path `/callback`, not `[::1]`.
pub(crate) fn documents_list(redirect_uri: &str) -> bool {
    reqwest::Url::parse(redirect_uri).is_ok_and(|u| u.host_str() != Some("[::1]") && u.path() == "/callback")
}

/// Whether this sign-in may identify with a document rather than register.
pub(crate) fn offers_document(settings: &OAuthSettings, redirect_uri: &str) -> bool {
    match settings.client_registration.as_str() {
        "cimd" => true,
        "dcr" => false,
        _ => settings.client_id.is_none() && settings.client_name.is_none() && documents_list(redirect_uri),
    }
}

fn application_type(redirect_uri: &str) -> &'static str {
    match reqwest::Url::parse(redirect_uri) {
        Ok(url) if !matches!(url.scheme(), "http" | "https") => "native",
        Ok(url) if url.host_str().is_some_and(is_loopback) => "native",
        _ => "web",
    }
}

fn endpoint(metadata: Option<&ServerMetadata>, key: &str, issuer: &str, fallback: &str) -> Result<String, OAuthError> {
    if let Some(url) = metadata.and_then(|m| m.str(key)) {
        return Ok(url.to_string());
    }
    reqwest::Url::parse(issuer)
        .and_then(|base| base.join(fallback))
        .map(|u| u.to_string())
        .map_err(|_| OAuthError::Failed(format!("Invalid authorization server {issuer}")))
}

/// Token requests go only to https, or http on loopback.
fn secure_endpoint(url: &str) -> Result<(), OAuthError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| OAuthError::Failed(format!("Invalid URL {url}")))?;
    if parsed.scheme() == "https" || (parsed.scheme() == "http" && parsed.host_str().is_some_and(is_loopback)) {
        return Ok(());
    }
    Err(OAuthError::Failed(format!(
        "Refusing to send OAuth credentials to the insecure endpoint {url}"
    )))
}

/// Register a client (RFC 7591) for `redirect_uri`.
pub(crate) async fn register_client(
    http: &OAuthHttp,
    issuer: &str,
    metadata: Option<&ServerMetadata>,
    client_name: &str,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<Map<String, Value>, OAuthError> {
    if metadata.is_some_and(|m| m.str("registration_endpoint").is_none()) {
        return Err(OAuthError::Failed(
            "Authorization server does not support dynamic client registration".into(),
        ));
    }
    let url = endpoint(metadata, "registration_endpoint", issuer, "/register")?;
    let mut body = json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": application_type(redirect_uri),
    });
    if let Some(scope) = scope {
        body["scope"] = json!(scope);
    }
    let (status, text) = http.post_json(&url, &body).await?;
    if !(200..300).contains(&status) {
        return Err(OAuthError::Failed(format!(
            "Dynamic client registration failed: HTTP {status} {text}"
        )));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut info))
            if info
                .get("client_id")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty()) =>
        {
            if !info.get("redirect_uris").is_some_and(Value::is_array) {
                info.insert("redirect_uris".into(), json!([]));
            }
            Ok(info)
        }
        _ => Err(OAuthError::Failed("Invalid OAuth client registration response".into())),
    }
}

/// The parameters of an authorization request.
pub(crate) struct AuthorizationRequest<'a> {
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub state: &'a str,
    pub challenge: &'a str,
    pub scope: Option<&'a str>,
    pub resource: Option<&'a str>,
}

pub(crate) fn authorization_url(
    issuer: &str,
    metadata: Option<&ServerMetadata>,
    request: &AuthorizationRequest<'_>,
) -> Result<String, OAuthError> {
    if let Some(m) = metadata {
        if !m.list("response_types_supported").contains(&"code") {
            return Err(OAuthError::Failed(
                "Authorization server does not support authorization codes".into(),
            ));
        }
        let methods = m.list("code_challenge_methods_supported");
        if m.0.contains_key("code_challenge_methods_supported") && !methods.contains(&"S256") {
            return Err(OAuthError::Failed(
                "Authorization server does not support PKCE S256".into(),
            ));
        }
    }
    let base = endpoint(metadata, "authorization_endpoint", issuer, "/authorize")?;
    let mut url = reqwest::Url::parse(&base)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| OAuthError::Failed(format!("Invalid authorization endpoint {base}")))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", request.client_id)
            .append_pair("code_challenge", request.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("redirect_uri", request.redirect_uri)
            .append_pair("state", request.state);
        if let Some(scope) = request.scope {
            query.append_pair("scope", scope);
            if scope.split_whitespace().any(|s| s == "offline_access") {
                query.append_pair("prompt", "consent");
            }
        }
        if let Some(resource) = request.resource {
            query.append_pair("resource", resource);
        }
    }
    Ok(url.to_string())
}

/// How the client authenticates at the token endpoint, as the MCP SDK chooses.
fn auth_method(client: &Map<String, Value>, supported: &[&str]) -> &'static str {
    let secret = client.get("client_secret").and_then(Value::as_str).is_some();
    let hinted = client.get("token_endpoint_auth_method").and_then(Value::as_str);
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        if hinted == Some(method) && (supported.is_empty() || supported.contains(&method)) {
            return method;
        }
    }
    if supported.is_empty() {
        return if secret { "client_secret_basic" } else { "none" };
    }
    if secret && supported.contains(&"client_secret_basic") {
        return "client_secret_basic";
    }
    if secret && supported.contains(&"client_secret_post") {
        return "client_secret_post";
    }
    if supported.contains(&"none") {
        return "none";
    }
    if secret {
        "client_secret_post"
    } else {
        "none"
    }
}

pub(crate) fn client_id(client: &Map<String, Value>) -> &str {
    client.get("client_id").and_then(Value::as_str).unwrap_or_default()
}

/// Send a token request; OAuth error answers become [`OAuthError::Grant`].
pub(crate) async fn token_request(
    http: &OAuthHttp,
    issuer: &str,
    metadata: Option<&ServerMetadata>,
    client: &Map<String, Value>,
    resource: Option<&str>,
    mut params: Vec<(String, String)>,
) -> Result<Tokens, OAuthError> {
    let url = endpoint(metadata, "token_endpoint", issuer, "/token")?;
    secure_endpoint(&url)?;
    if let Some(resource) = resource {
        params.push(("resource".into(), resource.into()));
    }
    let supported = metadata
        .map(|m| m.list("token_endpoint_auth_methods_supported"))
        .unwrap_or_default();
    let id = client_id(client);
    let secret = client.get("client_secret").and_then(Value::as_str);
    let method = auth_method(client, &supported);
    let basic = match (method, secret) {
        ("client_secret_basic", Some(secret)) => Some((id, secret)),
        ("client_secret_basic", None) => {
            return Err(OAuthError::Failed(
                "client_secret_basic requires a client secret".into(),
            ))
        }
        _ => {
            params.push(("client_id".into(), id.into()));
            if let ("client_secret_post", Some(secret)) = (method, secret) {
                params.push(("client_secret".into(), secret.into()));
            }
            None
        }
    };
    let (status, text) = http.post_form(&url, &params, basic).await?;
    let value = serde_json::from_str::<Value>(&text).ok();
    if let Some(code) = value.as_ref().and_then(|v| v.get("error")).and_then(Value::as_str) {
        let description = value
            .as_ref()
            .and_then(|v| v.get("error_description"))
            .and_then(Value::as_str)
            .unwrap_or(code);
        return Err(OAuthError::Grant {
            code: code.to_string(),
            description: description.to_string(),
        });
    }
    if !(200..300).contains(&status) {
        return Err(OAuthError::Grant {
            code: "server_error".into(),
            description: format!("HTTP {status}: {text}"),
        });
    }
    parse_tokens(value)
}

fn parse_tokens(value: Option<Value>) -> Result<Tokens, OAuthError> {
    let Some(Value::Object(mut map)) = value else {
        return Err(OAuthError::Failed("Invalid OAuth token response".into()));
    };
    // Servers send `null` or `""` for fields they have no value for.
    map.retain(|_, v| !v.is_null() && v != "");
    if let Some(expires) = map.get("expires_in") {
        let seconds = expires
            .as_f64()
            .or_else(|| expires.as_str().and_then(|s| s.parse().ok()))
            .ok_or_else(|| OAuthError::Failed("Invalid expires_in".into()))?;
        map.insert("expires_in".into(), json!(seconds));
    }
    serde_json::from_value::<Tokens>(Value::Object(map))
        .ok()
        .filter(|t| !t.access_token.is_empty())
        .ok_or_else(|| OAuthError::Failed("Invalid access_token".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_and_state_have_the_lengths_servers_expect() {
        let (verifier, challenge) = pkce().expect("pkce");
        assert_eq!(verifier.len(), 43);
        assert_eq!(challenge, URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())));
        let state = new_state().expect("state");
        assert_eq!(state.len(), 64);
        assert!(state.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn the_authorization_url_carries_pkce_state_scope_and_resource() {
        let url = authorization_url(
            "https://as.example/",
            None,
            &AuthorizationRequest {
                client_id: "c1",
                redirect_uri: "http://127.0.0.1:5/callback",
                state: "s",
                challenge: "ch",
                scope: Some("read offline_access"),
                resource: Some("https://x.example/mcp"),
            },
        )
        .expect("url");
        assert_eq!(url, "https://as.example/authorize?response_type=code&client_id=c1&code_challenge=ch&code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcallback&state=s&scope=read+offline_access&prompt=consent&resource=https%3A%2F%2Fx.example%2Fmcp");
    }

    #[test]
    fn documents_are_used_only_when_the_server_supports_public_ones() {
        let meta = |extra: Value| {
            let mut base = json!({"issuer": "https://as", "authorization_endpoint": "https://as/a", "token_endpoint": "https://as/t", "response_types_supported": ["code"], "client_id_metadata_document_supported": true, "token_endpoint_auth_methods_supported": ["none"]});
            base.as_object_mut()
                .expect("object")
                .extend(extra.as_object().cloned().unwrap_or_default());
            ServerMetadata::parse(base).expect("meta")
        };
        let shared = client_metadata_document(
            "https://x/mcp",
            "http://127.0.0.1:7/callback",
            Some(&meta(json!({"authorization_response_iss_parameter_supported": true}))),
        );
        assert_eq!(
            shared,
            Some((
                "https://pi.dev/oauth/client.json".into(),
                "http://127.0.0.1:7/callback".into()
            ))
        );
        let own = client_metadata_document("https://x/mcp", "http://127.0.0.1:7/callback", Some(&meta(json!({}))))
            .expect("doc");
        let id = callback_id("https://x/mcp");
        assert_eq!(id.len(), 12);
        assert_eq!(
            own,
            (
                format!("https://pi.dev/oauth/{id}/client.json"),
                format!("http://127.0.0.1:7/callback/{id}")
            )
        );
        assert_eq!(
            client_metadata_document(
                "https://x/mcp",
                "http://127.0.0.1:7/callback",
                Some(&meta(
                    json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]})
                ))
            ),
            None
        );
    }

    #[test]
    fn client_authentication_follows_the_supported_methods() {
        let public: Map<String, Value> = serde_json::from_value(json!({"client_id": "a"})).expect("map");
        let secret: Map<String, Value> =
            serde_json::from_value(json!({"client_id": "a", "client_secret": "s"})).expect("map");
        assert_eq!(auth_method(&public, &[]), "none");
        assert_eq!(auth_method(&secret, &[]), "client_secret_basic");
        assert_eq!(auth_method(&secret, &["client_secret_post"]), "client_secret_post");
        assert_eq!(auth_method(&public, &["client_secret_basic", "none"]), "none");
    }

    #[test]
    fn token_answers_are_checked() {
        assert!(parse_tokens(Some(
            json!({"access_token": "a", "token_type": "Bearer", "expires_in": "60", "scope": ""})
        ))
        .is_ok_and(|t| t.expires_in == Some(60.0) && t.scope.is_none()));
        assert!(parse_tokens(Some(json!({"token_type": "Bearer"}))).is_err());
        assert!(parse_tokens(Some(json!({"access_token": "a", "expires_in": "soon"}))).is_err());
    }
}
