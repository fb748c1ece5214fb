//! The few HTTP calls the flows make: JSON or form POSTs and authorized GETs, with a timeout,
//! and failures described without the response body (it may hold a token).

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use crate::OAuthError;

const TIMEOUT: Duration = Duration::from_secs(30);

/// One client per call keeps the crate free of global state; flows make a handful of calls.
fn client() -> Result<reqwest::Client, OAuthError> {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| OAuthError::Network {
            what: "HTTP client".into(),
            message: e.to_string(),
        })
}

/// A request body.
pub(crate) enum Body<'a> {
    None,
    Json(&'a Value),
    Form(&'a [(&'a str, &'a str)]),
}

/// An answer: status and the body as JSON (`Value::Null` when it is not JSON).
pub(crate) struct Reply {
    pub status: u16,
    pub json: Value,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The server's `error` code (a string, or `error.code`/`error.type` of an object) and
    /// `error_description`, as `": code: description"`.
    pub fn detail(&self) -> String {
        let error = match self.json.get("error") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Object(o)) => o
                .get("code")
                .or_else(|| o.get("type"))
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        };
        let description = self
            .json
            .get("error_description")
            .or_else(|| self.json.get("error").and_then(|e| e.get("message")))
            .and_then(Value::as_str);
        match (error, description) {
            (Some(e), Some(d)) => format!(": {e}: {d}"),
            (Some(e), None) => format!(": {e}"),
            (None, Some(d)) => format!(": {d}"),
            (None, None) => String::new(),
        }
    }

    /// `Err` with the request's description unless the status is 2xx.
    pub fn require_ok(self, what: &str) -> Result<Value, OAuthError> {
        if self.ok() {
            Ok(self.json)
        } else {
            Err(OAuthError::Http {
                what: what.to_string(),
                status: self.status,
                detail: self.detail(),
            })
        }
    }
}

/// Send a request; `what` names it in errors ("Anthropic token exchange").
pub(crate) async fn send(
    method: reqwest::Method,
    url: &str,
    headers: &[(&str, String)],
    body: Body<'_>,
    what: &str,
) -> Result<Reply, OAuthError> {
    let mut map = HeaderMap::new();
    map.insert(ACCEPT, HeaderValue::from_static("application/json"));
    let payload = match body {
        Body::None => None,
        Body::Json(v) => {
            map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            Some(serde_json::to_vec(v).map_err(|e| OAuthError::Invalid(e.to_string()))?)
        }
        Body::Form(pairs) => {
            map.insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            );
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in pairs {
                form.append_pair(k, v);
            }
            Some(form.finish().into_bytes())
        }
    };
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| OAuthError::Invalid(e.to_string()))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| OAuthError::Invalid(format!("{what}: a header value is not valid")))?;
        map.insert(name, value);
    }
    let mut request = client()?.request(method, url).headers(map);
    if let Some(bytes) = payload {
        request = request.body(bytes);
    }
    let response = request.send().await.map_err(|e| OAuthError::Network {
        what: what.to_string(),
        // reqwest's text names the URL and the cause; no header or body is in it.
        message: e.without_url().to_string(),
    })?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await.map_err(|e| OAuthError::Network {
        what: what.to_string(),
        message: e.without_url().to_string(),
    })?;
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok(Reply { status, json })
}

pub(crate) async fn post_json(
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    what: &str,
) -> Result<Reply, OAuthError> {
    send(reqwest::Method::POST, url, headers, Body::Json(body), what).await
}

pub(crate) async fn post_form(
    url: &str,
    headers: &[(&str, String)],
    pairs: &[(&str, &str)],
    what: &str,
) -> Result<Reply, OAuthError> {
    send(reqwest::Method::POST, url, headers, Body::Form(pairs), what).await
}

pub(crate) async fn get(url: &str, headers: &[(&str, String)], what: &str) -> Result<Reply, OAuthError> {
    send(reqwest::Method::GET, url, headers, Body::None, what).await
}

/// A string field of a JSON object.
pub(crate) fn str_field<'a>(json: &'a Value, key: &str) -> Option<&'a str> {
    json.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `access_token`, `refresh_token` (or `fallback_refresh`) and `expires_in` of a token answer.
pub(crate) fn token_fields(
    json: &Value,
    fallback_refresh: Option<&str>,
    what: &str,
) -> Result<(String, String, i64), OAuthError> {
    let access = str_field(json, "access_token");
    let refresh = str_field(json, "refresh_token").or(fallback_refresh);
    let expires_in = json
        .get("expires_in")
        .and_then(|v| v.as_f64().or_else(|| v.as_str()?.parse().ok()));
    match (access, refresh, expires_in) {
        (Some(a), Some(r), Some(e)) => Ok((a.to_string(), r.to_string(), (e * 1000.0) as i64)),
        _ => {
            let missing: Vec<&str> = [
                ("access_token", access.is_none()),
                ("refresh_token", refresh.is_none()),
                ("expires_in", expires_in.is_none()),
            ]
            .into_iter()
            .filter(|(_, m)| *m)
            .map(|(n, _)| n)
            .collect();
            Err(OAuthError::Invalid(format!(
                "{what} response is missing {}",
                missing.join(", ")
            )))
        }
    }
}

/// `raw` as a normalized `http:` or `https:` URL, or `None`: flows open server-supplied URLs
/// in a browser, and the opener would also launch files and custom protocol handlers.
pub(crate) fn trusted_http_url(raw: Option<&str>) -> Option<String> {
    let url = url::Url::parse(raw?).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

/// A positive, finite number field.
pub(crate) fn positive_number(json: &Value, key: &str) -> Option<f64> {
    json.get(key)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0)
}

/// The first non-blank of `keys` that is a string, as `": text"`, else empty.
pub(crate) fn first_detail(json: &Value, keys: &[&str]) -> String {
    keys.iter()
        .filter_map(|k| json.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map_or_else(String::new, |s| format!(": {s}"))
}
