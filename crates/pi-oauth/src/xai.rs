//! xAI sign-in (SuperGrok or X Premium): the OAuth device-code grant (RFC 8628) at
//! `auth.x.ai`, and refresh with a refresh token that xAI may or may not rotate.
//!
//! The verification URI a server returns is opened in a browser, so only `https` URIs are
//! accepted. Tokens are stored as expiring five minutes before xAI says they do.

use serde_json::Value;

use crate::device::{poll_device_flow, Poll};
use crate::http::{self, str_field};
use crate::ui::{LoginEvent, LoginUi};
use crate::{Config, Credential, OAuthError};

pub(crate) const NAME: &str = "xAI (Grok/X subscription)";
const CLIENT_ID: &str = "b1a00492-073a-47ea-816f-4c329264a828";
const SCOPE: &str = "openid profile email offline_access grok-cli:access api:access";
const DEVICE_CODE_URL: &str = "https://auth.x.ai/oauth2/device/code";
const TOKEN_URL: &str = "https://auth.x.ai/oauth2/token";
/// Stored expiry is this much earlier than xAI's, so a token does not die mid-request.
const EXPIRY_SKEW_MS: i64 = 5 * 60 * 1000;
/// Lifetime assumed when a token answer gives none.
const DEFAULT_LIFETIME_SECONDS: f64 = 3600.0;

fn headers() -> Vec<(&'static str, String)> {
    vec![("Accept", "application/json".to_string())]
}

/// `xAI OAuth <action> failed (HTTP <status>): <error>: <description>`.
fn failure(action: &str, reply: &http::Reply) -> OAuthError {
    let detail: Vec<&str> = ["error", "error_description"]
        .iter()
        .filter_map(|k| str_field(&reply.json, k))
        .collect();
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {}", detail.join(": "))
    };
    OAuthError::Invalid(format!("xAI OAuth {action} failed (HTTP {}){detail}", reply.status))
}

fn https_uri(raw: &str) -> Result<String, OAuthError> {
    url::Url::parse(raw)
        .ok()
        .filter(|u| u.scheme() == "https")
        .map(|u| u.to_string())
        .ok_or_else(|| OAuthError::Invalid("Untrusted verification URI in xAI OAuth response".into()))
}

fn credential(json: &Value, previous_refresh: Option<&str>, now: i64) -> Result<Credential, OAuthError> {
    let field_error = |f: &str| OAuthError::Invalid(format!("Invalid xAI OAuth response field: {f}"));
    let access = str_field(json, "access_token").ok_or_else(|| field_error("access_token"))?;
    // xAI may leave the refresh token out of a refresh answer when it does not rotate it.
    let refresh = match (json.get("refresh_token"), previous_refresh) {
        (None, Some(previous)) => previous,
        _ => str_field(json, "refresh_token").ok_or_else(|| field_error("refresh_token"))?,
    };
    let lifetime = match json.get("expires_in") {
        None => DEFAULT_LIFETIME_SECONDS,
        Some(v) => v
            .as_f64()
            .filter(|s| s.is_finite() && *s > 0.0)
            .ok_or_else(|| field_error("expires_in"))?,
    };
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("access".into(), access.into());
    out.insert("refresh".into(), refresh.into());
    out.insert(
        "expires".into(),
        (now + (lifetime * 1000.0) as i64 - EXPIRY_SKEW_MS).into(),
    );
    Ok(out)
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let what = "xAI device authorization";
    let reply = http::post_form(
        &config.endpoint(DEVICE_CODE_URL),
        &headers(),
        &[("client_id", CLIENT_ID), ("scope", SCOPE), ("referrer", "pi")],
        what,
    )
    .await?;
    if !reply.ok() {
        return Err(failure("device authorization", &reply));
    }
    let device = &reply.json;
    let field_error = |f: &str| OAuthError::Invalid(format!("Invalid xAI OAuth response field: {f}"));
    let device_code = str_field(device, "device_code").ok_or_else(|| field_error("device_code"))?;
    let user_code = str_field(device, "user_code").ok_or_else(|| field_error("user_code"))?;
    let verification_uri =
        https_uri(str_field(device, "verification_uri").ok_or_else(|| field_error("verification_uri"))?)?;
    let complete_uri = str_field(device, "verification_uri_complete")
        .map(https_uri)
        .transpose()?;
    let expires_in = device
        .get("expires_in")
        .and_then(Value::as_f64)
        .filter(|s| *s > 0.0)
        .ok_or_else(|| field_error("expires_in"))? as u64;
    // RFC 8628 allows an interval of 0; the poller's default applies then.
    let interval = device.get("interval").and_then(Value::as_u64).filter(|s| *s > 0);
    ui.notify(LoginEvent::DeviceCode {
        user_code: user_code.to_string(),
        verification_uri: complete_uri.unwrap_or(verification_uri),
        interval_seconds: interval,
        expires_in_seconds: Some(expires_in),
    });
    let token_url = config.endpoint(TOKEN_URL);
    poll_device_flow(interval, Some(expires_in), true, || async {
        let pairs = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("client_id", CLIENT_ID),
            ("device_code", device_code),
        ];
        let reply = http::post_form(&token_url, &headers(), &pairs, "xAI device token").await?;
        if reply.ok() {
            return credential(&reply.json, None, crate::now_ms()).map(Poll::Complete);
        }
        Ok(match str_field(&reply.json, "error") {
            Some("authorization_pending") => Poll::Pending,
            Some("slow_down") => Poll::SlowDown(reply.json.get("interval").and_then(Value::as_u64)),
            Some("access_denied" | "authorization_denied") => {
                Poll::Failed("xAI device authorization was denied".into())
            }
            Some("expired_token") => Poll::Failed("xAI device code expired".into()),
            _ => Poll::Failed(failure("device token polling", &reply).to_string()),
        })
    })
    .await
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let refresh_token = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let reply = http::post_form(
        &config.endpoint(TOKEN_URL),
        &headers(),
        &[
            ("grant_type", "refresh_token"),
            ("client_id", CLIENT_ID),
            ("refresh_token", refresh_token),
        ],
        "xAI token refresh",
    )
    .await?;
    if !reply.ok() {
        return Err(failure("token refresh", &reply));
    }
    let mut fresh = stored.clone();
    fresh.extend(credential(&reply.json, Some(refresh_token), crate::now_ms())?);
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_answers_become_credentials() {
        let c = credential(
            &json!({"access_token": "a", "refresh_token": "r", "expires_in": 600}),
            None,
            1_000_000,
        )
        .unwrap();
        assert_eq!(c["expires"], json!(1_000_000 + 600_000 - EXPIRY_SKEW_MS));
        let kept = credential(&json!({"access_token": "a2"}), Some("r"), 0).unwrap();
        assert_eq!(
            (kept["refresh"].as_str(), kept["expires"].as_i64()),
            (Some("r"), Some(3_600_000 - EXPIRY_SKEW_MS))
        );
        assert!(credential(&json!({"access_token": "a"}), None, 0).is_err());
        assert!(https_uri("http://x.ai/device").is_err());
        assert!(https_uri("javascript:alert(1)").is_err());
    }
}
