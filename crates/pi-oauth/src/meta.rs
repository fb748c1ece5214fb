//! Meta (Muse subscription): the device-code grant at `auth.meta.com`, whose identity token is
//! then exchanged for a Model API key at `api.meta.ai/muse-code/key` (keys live about a day).
//!
//! The identity token cannot be renewed, so it is stored as `refresh` and the minted key as
//! `access`: a "refresh" mints a new key, and a 401/403 from the mint means signing in again.

use serde_json::{json, Value};

use crate::device::{poll_device_flow, Poll};
use crate::http::{self, first_detail, positive_number, str_field, trusted_http_url};
use crate::ui::{LoginEvent, LoginUi};
use crate::{Config, Credential, OAuthError};

pub(crate) const NAME: &str = "Meta (Muse subscription)";
const CLIENT_ID: &str = "1031625952748946";
const DEVICE_AUTHORIZATION_URL: &str = "https://auth.meta.com/oidc/device/authorization/";
const DEVICE_TOKEN_URL: &str = "https://auth.meta.com/oidc/device/token/";
const API_KEY_MINT_URL: &str = "https://api.meta.ai/muse-code/key";
const API_KEY_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;
const DETAIL_KEYS: &[&str] = &["error_description", "detail", "message", "error"];

fn headers() -> Vec<(&'static str, String)> {
    vec![("Accept", "application/json".to_string())]
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let reply = http::post_form(
        &config.endpoint(DEVICE_AUTHORIZATION_URL),
        &headers(),
        &[("client_id", CLIENT_ID)],
        "Meta device authorization",
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Invalid(format!(
            "Meta device authorization failed with status {}{}",
            reply.status,
            first_detail(&reply.json, DETAIL_KEYS)
        )));
    }
    let device = &reply.json;
    let verification_uri = trusted_http_url(str_field(device, "verification_uri_complete"))
        .or_else(|| trusted_http_url(str_field(device, "verification_uri")));
    let (Some(device_code), Some(user_code), Some(verification_uri)) = (
        str_field(device, "device_code"),
        str_field(device, "user_code"),
        verification_uri,
    ) else {
        return Err(OAuthError::Invalid("Invalid Meta device authorization response".into()));
    };
    let interval = positive_number(device, "interval").map(|s| s as u64);
    let expires_in = positive_number(device, "expires_in").map(|s| s as u64);
    ui.notify(LoginEvent::DeviceCode {
        user_code: user_code.to_string(),
        verification_uri,
        interval_seconds: interval,
        expires_in_seconds: expires_in,
    });
    let token_url = config.endpoint(DEVICE_TOKEN_URL);
    let identity: String = poll_device_flow(interval, expires_in, true, || async {
        let pairs = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("device_code", device_code),
            ("client_id", CLIENT_ID),
        ];
        let reply = http::post_form(&token_url, &headers(), &pairs, "Meta device token").await?;
        if reply.ok() {
            if let Some(token) = str_field(&reply.json, "access_token") {
                return Ok(Poll::Complete(token.to_string()));
            }
        }
        Ok(match str_field(&reply.json, "error") {
            Some("authorization_pending") => Poll::Pending,
            Some("slow_down") => Poll::SlowDown(positive_number(&reply.json, "interval").map(|s| s as u64)),
            Some("access_denied") => Poll::Failed("Meta login was denied.".into()),
            Some("expired_token") => Poll::Failed("Meta device authorization expired. Please restart login.".into()),
            _ => Poll::Failed(format!(
                "Meta device token request failed with status {}{}",
                reply.status,
                first_detail(&reply.json, DETAIL_KEYS)
            )),
        })
    })
    .await?;
    ui.notify(LoginEvent::Progress("Enabling Meta Model API access...".into()));
    mint_api_key(config, &identity).await
}

/// A Model API key for `identity`, as the credential to store.
async fn mint_api_key(config: &Config, identity: &str) -> Result<Credential, OAuthError> {
    let headers = vec![
        ("Accept", "application/json".to_string()),
        ("Authorization", format!("Bearer {identity}")),
        ("x-api-version", "1.0.0".to_string()),
    ];
    let reply = http::post_json(
        &config.endpoint(API_KEY_MINT_URL),
        &headers,
        &json!({}),
        "Meta API key mint",
    )
    .await?;
    let detail = first_detail(&reply.json, DETAIL_KEYS);
    if matches!(reply.status, 401 | 403) {
        return Err(OAuthError::Invalid(format!(
            "Meta session expired (status {}). Run `/login meta` to sign in again.{detail}",
            reply.status
        )));
    }
    if !reply.ok() {
        return Err(OAuthError::Invalid(format!(
            "Meta API key mint failed with status {}{detail}",
            reply.status
        )));
    }
    let Some(api_key) = str_field(&reply.json, "api_key") else {
        let setup = trusted_http_url(str_field(&reply.json, "action_url"))
            .map_or_else(String::new, |url| format!(" Complete setup at {url}"));
        return Err(OAuthError::Invalid(format!("Meta did not issue an API key.{setup}")));
    };
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("refresh".into(), identity.into());
    out.insert("access".into(), api_key.into());
    out.insert("expires".into(), (crate::now_ms() + API_KEY_LIFETIME_MS).into());
    Ok(out)
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let identity = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let mut fresh = stored.clone();
    fresh.extend(mint_api_key(config, identity).await?);
    Ok(fresh)
}
