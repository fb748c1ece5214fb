//! Finding a server's authorization server: the `WWW-Authenticate` challenge, protected-resource
//! metadata (RFC 9728: the challenge's URL, else the path-inserted well-known URL, else the root
//! one) and authorization-server metadata (RFC 8414 and the OpenID variants), whose `issuer` must
//! be the server it was looked up for. Only `http:`/`https:` URLs are accepted from metadata.

use serde_json::{Map, Value};

use super::http::OAuthHttp;
use super::store::DiscoveryState;
use super::OAuthError;
use crate::client::LATEST_PROTOCOL_VERSION;

/// What a 401 (or 403) said in `WWW-Authenticate`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata_url: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl Challenge {
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

fn field(header: &str, name: &str) -> Option<String> {
    let lower = header.to_ascii_lowercase();
    let needle = format!("{name}=");
    let mut from = 0;
    while let Some(found) = lower[from..].find(&needle) {
        let start = from + found;
        from = start + needle.len();
        let boundary = start == 0 || matches!(lower.as_bytes()[start - 1], b',' | b' ' | b'\t');
        if !boundary {
            continue;
        }
        let rest = &header[from..];
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.split('"').next().unwrap_or_default()
        } else {
            rest.split([',', ' ', '\t']).next().unwrap_or_default()
        };
        return (!value.is_empty()).then(|| value.to_string());
    }
    None
}

/// Parse a `Bearer` (or `DPoP`) challenge; other schemes carry nothing pi uses.
pub fn parse_www_authenticate(header: Option<&str>) -> Challenge {
    let Some(header) = header else {
        return Challenge::default();
    };
    let scheme = header
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if scheme != "bearer" && scheme != "dpop" {
        return Challenge::default();
    }
    Challenge {
        resource_metadata_url: field(header, "resource_metadata").filter(|u| reqwest::Url::parse(u).is_ok()),
        scope: field(header, "scope"),
        error: field(header, "error"),
        error_description: field(header, "error_description"),
    }
}

pub(crate) fn is_loopback(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "::1")
}

fn is_http(url: &reqwest::Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

/// An http(s) URL from metadata, or an error naming the field.
fn safe_url(value: Option<&Value>, name: &str) -> Result<String, OAuthError> {
    value
        .and_then(Value::as_str)
        .and_then(|s| reqwest::Url::parse(s).ok())
        .filter(is_http)
        .map(|u| u.to_string())
        .ok_or_else(|| OAuthError::Failed(format!("Invalid {name}")))
}

/// The authorization server metadata fields the flow reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerMetadata(pub Map<String, Value>);

impl ServerMetadata {
    /// Check the fields pi relies on, as 1.6 checks them.
    pub fn parse(value: Value) -> Result<Self, OAuthError> {
        let Value::Object(map) = value else {
            return Err(OAuthError::Failed("Invalid authorization server metadata".into()));
        };
        safe_url(map.get("issuer"), "authorization server issuer")?;
        safe_url(map.get("authorization_endpoint"), "authorization endpoint")?;
        safe_url(map.get("token_endpoint"), "token endpoint")?;
        if map
            .get("registration_endpoint")
            .is_some_and(|v| !v.is_null() && v != "")
        {
            safe_url(map.get("registration_endpoint"), "registration endpoint")?;
        }
        if !map.get("response_types_supported").is_some_and(Value::is_array) {
            return Err(OAuthError::Failed("Invalid response_types_supported".into()));
        }
        Ok(Self(map))
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
    }

    pub fn list(&self, key: &str) -> Vec<&str> {
        self.0
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    pub fn flag(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    pub fn issuer(&self) -> &str {
        self.str("issuer").unwrap_or_default()
    }
}

/// 4xx and 502 mean "not here": try the next candidate.
fn is_miss(status: u16) -> bool {
    (400..500).contains(&status) || status == 502
}

fn path_suffix(path: &str) -> &str {
    path.strip_suffix('/').unwrap_or(path)
}

fn origin(url: &reqwest::Url) -> String {
    url.origin().ascii_serialization()
}

async fn protected_resource_metadata(
    http: &OAuthHttp,
    server_url: &str,
    resource_metadata_url: Option<&str>,
) -> Result<Option<Value>, OAuthError> {
    let server = reqwest::Url::parse(server_url).map_err(|e| OAuthError::Failed(e.to_string()))?;
    let first = match resource_metadata_url {
        Some(url) => url.to_string(),
        None => format!(
            "{}/.well-known/oauth-protected-resource{}",
            origin(&server),
            path_suffix(server.path())
        ),
    };
    let (mut status, mut body) = http.get_json(&first, LATEST_PROTOCOL_VERSION).await?;
    if resource_metadata_url.is_none() && server.path() != "/" && is_miss(status) {
        let root = format!("{}/.well-known/oauth-protected-resource", origin(&server));
        (status, body) = http.get_json(&root, LATEST_PROTOCOL_VERSION).await?;
    }
    // Servers without metadata fall back to the server's origin as the authorization server.
    if !(200..300).contains(&status) {
        return Ok(None);
    }
    let Some(Value::Object(map)) = body else {
        return Ok(None);
    };
    if safe_url(map.get("resource"), "OAuth protected resource metadata resource").is_err() {
        return Ok(None);
    }
    Ok(Some(Value::Object(map)))
}

/// The well-known URLs of an issuer, in the order they are tried.
pub fn authorization_server_urls(issuer: &str) -> Result<Vec<String>, OAuthError> {
    let url = reqwest::Url::parse(issuer).map_err(|e| OAuthError::Failed(e.to_string()))?;
    let origin = origin(&url);
    let path = path_suffix(url.path());
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    Ok(urls)
}

fn trim_slash(s: &str) -> &str {
    s.strip_suffix('/').unwrap_or(s)
}

pub(crate) async fn authorization_server_metadata(
    http: &OAuthHttp,
    issuer: &str,
) -> Result<Option<ServerMetadata>, OAuthError> {
    for url in authorization_server_urls(issuer)? {
        let (status, body) = http.get_json(&url, LATEST_PROTOCOL_VERSION).await?;
        if !(200..300).contains(&status) {
            if is_miss(status) {
                continue;
            }
            return Err(OAuthError::Failed(format!(
                "HTTP {status} loading authorization server metadata from {url}"
            )));
        }
        let metadata = ServerMetadata::parse(body.unwrap_or(Value::Null))?;
        if trim_slash(metadata.issuer()) != trim_slash(issuer) {
            return Err(OAuthError::Failed(format!(
                "Authorization server issuer {} does not match {issuer}",
                metadata.issuer()
            )));
        }
        return Ok(Some(metadata));
    }
    Ok(None)
}

/// Discover the authorization server of `server_url`, or read its metadata from the configured URL.
pub(crate) async fn discover(
    http: &OAuthHttp,
    server_url: &str,
    resource_metadata_url: Option<&str>,
    configured_metadata_url: Option<&str>,
) -> Result<DiscoveryState, OAuthError> {
    let resource_metadata = protected_resource_metadata(http, server_url, resource_metadata_url).await?;
    if let Some(url) = configured_metadata_url {
        let (status, body) = http.get_json(url, LATEST_PROTOCOL_VERSION).await?;
        if !(200..300).contains(&status) {
            return Err(OAuthError::Failed(format!(
                "HTTP {status} loading authorization server metadata from {url}"
            )));
        }
        let metadata = ServerMetadata::parse(body.unwrap_or(Value::Null))?;
        return Ok(DiscoveryState {
            authorization_server_url: metadata.issuer().to_string(),
            authorization_server_metadata: Some(Value::Object(metadata.0)),
            resource_metadata,
            resource_metadata_url: None,
        });
    }
    let first_server = resource_metadata
        .as_ref()
        .and_then(|m| m.get("authorization_servers"))
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .map(str::to_string);
    let issuer = match first_server {
        Some(issuer) => issuer,
        None => {
            let url = reqwest::Url::parse(server_url).map_err(|e| OAuthError::Failed(e.to_string()))?;
            format!("{}/", origin(&url))
        }
    };
    let metadata = authorization_server_metadata(http, &issuer).await?;
    Ok(DiscoveryState {
        authorization_server_url: issuer,
        authorization_server_metadata: metadata.map(|m| Value::Object(m.0)),
        resource_metadata,
        resource_metadata_url: resource_metadata_url.map(str::to_string),
    })
}

/// The RFC 8707 `resource` to request: the metadata's resource, which must contain the server URL.
pub fn select_resource(server_url: &str, resource_metadata: Option<&Value>) -> Result<Option<String>, OAuthError> {
    let Some(resource) = resource_metadata
        .and_then(|m| m.get("resource"))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let mismatch = || {
        OAuthError::Failed(format!(
            "Protected resource {resource} does not match MCP server {server_url}"
        ))
    };
    let mut requested = reqwest::Url::parse(server_url).map_err(|_| mismatch())?;
    requested.set_fragment(None);
    let configured = reqwest::Url::parse(resource).map_err(|_| mismatch())?;
    if requested.origin() != configured.origin() {
        return Err(mismatch());
    }
    let with_slash = |p: &str| {
        if p.ends_with('/') {
            p.to_string()
        } else {
            format!("{p}/")
        }
    };
    if !with_slash(requested.path()).starts_with(&with_slash(configured.path())) {
        return Err(mismatch());
    }
    Ok(Some(resource.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn challenges_are_read_with_quoted_and_bare_values() {
        let c = parse_www_authenticate(Some(
            r#"Bearer error="invalid_token", error_description="expired", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="read write""#,
        ));
        assert_eq!(
            c.resource_metadata_url.as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("read write"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            parse_www_authenticate(Some("Bearer scope=a,error=insufficient_scope"))
                .scope
                .as_deref(),
            Some("a")
        );
        assert!(parse_www_authenticate(Some("Bearer error=insufficient_scope")).insufficient_scope());
        assert_eq!(parse_www_authenticate(Some("Basic realm=x")), Challenge::default());
        assert_eq!(parse_www_authenticate(Some(r#"Bearer scope="""#)).scope, None);
    }

    #[test]
    fn issuer_urls_follow_rfc_8414_and_openid() {
        assert_eq!(
            authorization_server_urls("https://as.example/tenant/").expect("urls"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant",
                "https://as.example/.well-known/openid-configuration/tenant",
                "https://as.example/tenant/.well-known/openid-configuration"
            ]
        );
        assert_eq!(authorization_server_urls("https://as.example").expect("urls").len(), 2);
    }

    #[test]
    fn the_resource_must_contain_the_server_url() {
        let meta = json!({"resource": "https://x.example/mcp"});
        assert_eq!(
            select_resource("https://x.example/mcp", Some(&meta))
                .expect("ok")
                .as_deref(),
            Some("https://x.example/mcp")
        );
        assert!(select_resource("https://x.example/mcp/sub", Some(&meta)).is_ok());
        assert!(select_resource("https://x.example/other", Some(&meta)).is_err());
        assert!(select_resource("https://y.example/mcp", Some(&meta)).is_err());
        assert_eq!(select_resource("https://x.example/mcp", None).expect("ok"), None);
    }

    #[test]
    fn metadata_with_unsafe_endpoints_is_refused() {
        let ok = json!({"issuer": "https://as", "authorization_endpoint": "https://as/a", "token_endpoint": "https://as/t", "response_types_supported": ["code"]});
        assert!(ServerMetadata::parse(ok.clone()).is_ok());
        let mut bad = ok;
        bad["authorization_endpoint"] = json!("file:///etc/passwd");
        assert!(ServerMetadata::parse(bad).is_err());
    }
}
