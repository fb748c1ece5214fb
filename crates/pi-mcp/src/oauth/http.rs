//! Requests to authorization servers: JSON metadata, form-encoded token requests and JSON
//! registrations, each bounded by 15 seconds so an unresponsive server cannot hold a refresh
//! lock or a sign-in. Only `http:` and `https:` URLs are ever requested.

use std::time::Duration;

use serde_json::Value;

use super::OAuthError;

/// Each request to an authorization server gives up after this long.
pub const OAUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Answers past this size are refused.
const MAX_BODY_BYTES: usize = 1024 * 1024;

#[derive(Clone, Default)]
pub struct OAuthHttp {
    client: reqwest::Client,
}

fn parse_http_url(url: &str) -> Result<reqwest::Url, OAuthError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| OAuthError::Failed(format!("Invalid URL {url}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(OAuthError::Failed(format!("Invalid URL {url}")));
    }
    Ok(parsed)
}

fn send_error(url: &str, error: reqwest::Error) -> OAuthError {
    if error.is_timeout() {
        return OAuthError::Failed(format!("The request to {url} timed out"));
    }
    let mut cause: &dyn std::error::Error = &error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    OAuthError::Failed(format!("fetch failed: {cause}"))
}

async fn body_text(url: &str, response: reqwest::Response) -> Result<String, OAuthError> {
    let bytes = response.bytes().await.map_err(|e| send_error(url, e))?;
    if bytes.len() > MAX_BODY_BYTES {
        return Err(OAuthError::Failed(format!("The answer of {url} is too large")));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl OAuthHttp {
    pub fn new(client: reqwest::Client) -> Self {
        Self { client }
    }

    /// GET JSON metadata: the status and the body when it parses.
    pub async fn get_json(&self, url: &str, protocol_version: &str) -> Result<(u16, Option<Value>), OAuthError> {
        let parsed = parse_http_url(url)?;
        let response = self
            .client
            .get(parsed)
            .header("accept", "application/json")
            .header("mcp-protocol-version", protocol_version)
            .timeout(OAUTH_REQUEST_TIMEOUT)
            .send()
            .await
            .map_err(|e| send_error(url, e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Ok((status, None));
        }
        let text = body_text(url, response).await?;
        Ok((status, serde_json::from_str(&text).ok()))
    }

    /// POST a form (token requests), with HTTP basic client authentication when given.
    pub async fn post_form(
        &self,
        url: &str,
        params: &[(String, String)],
        basic: Option<(&str, &str)>,
    ) -> Result<(u16, String), OAuthError> {
        let parsed = parse_http_url(url)?;
        let body = reqwest::Url::parse_with_params("http://x/", params)
            .ok()
            .and_then(|u| u.query().map(str::to_string))
            .unwrap_or_default();
        let mut request = self
            .client
            .post(parsed)
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded")
            .timeout(OAUTH_REQUEST_TIMEOUT)
            .body(body);
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        let response = request.send().await.map_err(|e| send_error(url, e))?;
        let status = response.status().as_u16();
        Ok((status, body_text(url, response).await?))
    }

    /// POST JSON (client registration).
    pub async fn post_json(&self, url: &str, body: &Value) -> Result<(u16, String), OAuthError> {
        let parsed = parse_http_url(url)?;
        let response = self
            .client
            .post(parsed)
            .header("accept", "application/json")
            .header("content-type", "application/json")
            .timeout(OAUTH_REQUEST_TIMEOUT)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| send_error(url, e))?;
        let status = response.status().as_u16();
        Ok((status, body_text(url, response).await?))
    }
}
