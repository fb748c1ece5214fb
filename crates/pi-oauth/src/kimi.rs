//! Kimi Code (subscription): the device-code grant (RFC 8628) at `auth.kimi.com`, whose host
//! `KIMI_CODE_OAUTH_HOST` / `KIMI_OAUTH_HOST` replace ([`Config::kimi_host`]). The access
//! token is the bearer of `api.kimi.com/coding`; a refresh is retried on 429 and 5xx.

use std::time::Duration;

use serde_json::Value;

use crate::device::{poll_device_flow, Poll};
use crate::http::{self, positive_number, str_field, trusted_http_url};
use crate::ui::{LoginEvent, LoginUi};
use crate::{Config, Credential, OAuthError};

pub(crate) const NAME: &str = "Kimi Code (subscription)";
const CLIENT_ID: &str = "17e5f671-d194-4dfb-9706-5516cb48c098";
const DEFAULT_HOST: &str = "https://auth.kimi.com";
const DEVICE_CODE_TIMEOUT_SECONDS: f64 = 15.0 * 60.0;
const DEFAULT_INTERVAL_SECONDS: f64 = 5.0;
/// Attempts after the first for a refresh the server failed (429, 5xx, no answer).
const REFRESH_RETRIES: u32 = 3;

fn host(config: &Config) -> String {
    let host = config.kimi_host.as_deref().unwrap_or(DEFAULT_HOST);
    config.endpoint(host.trim_end_matches('/'))
}

fn headers() -> Vec<(&'static str, String)> {
    vec![("Accept", "application/json".to_string())]
}

/// The server's `error` and `error_description`, as `": error: description"`.
fn oauth_detail(json: &Value) -> String {
    match (str_field(json, "error"), str_field(json, "error_description")) {
        (Some(e), Some(d)) => format!(": {e}: {d}"),
        (Some(e), None) => format!(": {e}"),
        _ => String::new(),
    }
}

fn credential(json: &Value, operation: &str) -> Result<Credential, OAuthError> {
    let (Some(access), Some(refresh), Some(expires_in)) = (
        str_field(json, "access_token"),
        str_field(json, "refresh_token"),
        positive_number(json, "expires_in"),
    ) else {
        return Err(OAuthError::Invalid(format!(
            "Kimi Code token {operation} response is missing access_token, refresh_token or expires_in"
        )));
    };
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("access".into(), access.into());
    out.insert("refresh".into(), refresh.into());
    out.insert(
        "expires".into(),
        (crate::now_ms() + (expires_in * 1000.0) as i64).into(),
    );
    Ok(out)
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let host = host(config);
    let what = "Kimi Code device authorization";
    let reply = http::post_form(
        &format!("{host}/api/oauth/device_authorization"),
        &headers(),
        &[("client_id", CLIENT_ID)],
        what,
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Invalid(format!(
            "Kimi Code device authorization failed with status {}{}",
            reply.status,
            oauth_detail(&reply.json)
        )));
    }
    let device = &reply.json;
    let (Some(device_code), Some(user_code), Some(_), Some(complete_uri)) = (
        str_field(device, "device_code"),
        str_field(device, "user_code"),
        trusted_http_url(str_field(device, "verification_uri")),
        trusted_http_url(str_field(device, "verification_uri_complete")),
    ) else {
        return Err(OAuthError::Invalid(
            "Invalid Kimi Code device authorization response".into(),
        ));
    };
    let interval = positive_number(device, "interval").unwrap_or(DEFAULT_INTERVAL_SECONDS);
    let expires_in = positive_number(device, "expires_in").unwrap_or(DEVICE_CODE_TIMEOUT_SECONDS);
    ui.notify(LoginEvent::DeviceCode {
        user_code: user_code.to_string(),
        verification_uri: complete_uri,
        interval_seconds: Some(interval as u64),
        expires_in_seconds: Some(expires_in as u64),
    });
    let token_url = format!("{host}/api/oauth/token");
    poll_device_flow(Some(interval as u64), Some(expires_in as u64), true, || async {
        let pairs = [
            ("client_id", CLIENT_ID),
            ("device_code", device_code),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ];
        let reply = http::post_form(&token_url, &headers(), &pairs, "Kimi Code device token").await?;
        if reply.status >= 500 {
            return Ok(Poll::Failed(format!(
                "Kimi Code device token request failed with status {}",
                reply.status
            )));
        }
        if reply.ok() && str_field(&reply.json, "access_token").is_some() {
            return Ok(match credential(&reply.json, "poll") {
                Ok(c) => Poll::Complete(c),
                Err(e) => Poll::Failed(e.to_string()),
            });
        }
        Ok(match str_field(&reply.json, "error") {
            Some("authorization_pending") => Poll::Pending,
            Some("slow_down") => Poll::SlowDown(reply.json.get("interval").and_then(Value::as_u64)),
            Some("expired_token") => {
                Poll::Failed("Kimi Code device authorization expired. Please restart login.".into())
            }
            Some("access_denied") => Poll::Failed("Kimi Code login was denied.".into()),
            _ => Poll::Failed(format!(
                "Kimi Code device token request failed (status {}){}",
                reply.status,
                oauth_detail(&reply.json)
            )),
        })
    })
    .await
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let url = format!("{}/api/oauth/token", host(config));
    let refresh_token = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let pairs = [
        ("client_id", CLIENT_ID),
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
    ];
    let mut last_error = None;
    for attempt in 0..=REFRESH_RETRIES {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(1000 << (attempt - 1))).await;
        }
        let reply = match http::post_form(&url, &headers(), &pairs, "Kimi Code token refresh").await {
            Ok(r) => r,
            Err(e) => {
                last_error = Some(e);
                continue;
            }
        };
        if reply.ok() {
            let mut fresh = stored.clone();
            fresh.extend(credential(&reply.json, "refresh")?);
            return Ok(fresh);
        }
        // A dead login: only a new sign-in helps.
        if matches!(reply.status, 401 | 403) || str_field(&reply.json, "error") == Some("invalid_grant") {
            return Err(OAuthError::Invalid(format!(
                "Kimi Code token refresh unauthorized (status {}){}",
                reply.status,
                oauth_detail(&reply.json)
            )));
        }
        let error = OAuthError::Invalid(format!(
            "Kimi Code token refresh failed with status {}{}",
            reply.status,
            oauth_detail(&reply.json)
        ));
        if reply.status == 429 || reply.status >= 500 {
            last_error = Some(error);
            continue;
        }
        return Err(error);
    }
    Err(last_error.unwrap_or_else(|| OAuthError::Invalid("Kimi Code token refresh failed".into())))
}
