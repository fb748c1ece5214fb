//! OpenAI Codex (ChatGPT Plus/Pro): authorization code with PKCE through the loopback
//! callback on port 1455 (shared with the Codex CLI; the pasted redirect URL when taken), or
//! OpenAI's device code. The credential keeps the ChatGPT account id read from the token.

use serde_json::{json, Value};

use crate::callback::{self, Arrival, CallbackOptions};
use crate::device::{poll_device_flow, Poll};
use crate::http::{self, str_field, token_fields};
use crate::ui::{LoginEvent, LoginUi, Prompt, SelectOption};
use crate::{pkce, Config, Credential, OAuthError};

const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const DEVICE_USER_CODE_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/usercode";
const DEVICE_TOKEN_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/token";
const DEVICE_VERIFICATION_URI: &str = "https://auth.openai.com/codex/device";
const DEVICE_REDIRECT_URI: &str = "https://auth.openai.com/deviceauth/callback";
const DEVICE_CODE_TIMEOUT_SECONDS: u64 = 15 * 60;
const SCOPE: &str = "openid profile email offline_access";
const JWT_CLAIM_PATH: &str = "https://api.openai.com/auth";

pub(crate) const NAME: &str = "OpenAI (ChatGPT Plus/Pro)";

/// The ChatGPT account id in an access token's `https://api.openai.com/auth` claim.
pub fn account_id_from_token(access: &str) -> Option<String> {
    let payload = crate::decode_jwt_payload(access)?;
    let id = payload.get(JWT_CLAIM_PATH)?.get("chatgpt_account_id")?.as_str()?;
    (!id.is_empty()).then(|| id.to_string())
}

fn credential(json: &Value, what: &str) -> Result<Credential, OAuthError> {
    let (access, refresh, expires_in) = token_fields(json, None, what)?;
    let account_id = account_id_from_token(&access)
        .ok_or_else(|| OAuthError::Invalid("Failed to extract accountId from token".into()))?;
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("access".into(), access.into());
    out.insert("refresh".into(), refresh.into());
    out.insert("expires".into(), (crate::now_ms() + expires_in).into());
    out.insert("accountId".into(), account_id.into());
    Ok(out)
}

async fn exchange(config: &Config, code: &str, verifier: &str, redirect_uri: &str) -> Result<Credential, OAuthError> {
    let what = "OpenAI Codex token exchange";
    let pairs = [
        ("grant_type", "authorization_code"),
        ("client_id", CLIENT_ID),
        ("code", code),
        ("code_verifier", verifier),
        ("redirect_uri", redirect_uri),
    ];
    let reply = http::post_form(&config.endpoint(TOKEN_URL), &[], &pairs, what).await?;
    credential(&reply.require_ok(what)?, what)
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let method = ui
        .prompt(Prompt::Select {
            message: "Select OpenAI Codex login method:".into(),
            options: vec![
                SelectOption::new("browser", "Browser login (default)"),
                SelectOption::new("device_code", "Device code login (headless)"),
            ],
        })
        .await?;
    match method.as_str() {
        "browser" => login_browser(config, ui).await,
        "device_code" => login_device(config, ui).await,
        other => Err(OAuthError::Invalid(format!(
            "Unknown OpenAI Codex login method: {other}"
        ))),
    }
}

fn authorize_url(config: &Config, redirect_uri: &str, challenge: &str, state: &str) -> String {
    let mut url = config.endpoint(AUTHORIZE_URL);
    url.push('?');
    url.push_str(
        &url::form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", CLIENT_ID)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", SCOPE)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", state)
            .append_pair("id_token_add_organizations", "true")
            .append_pair("codex_cli_simplified_flow", "true")
            .append_pair("originator", config.originator.as_deref().unwrap_or("pi"))
            .finish(),
    );
    url
}

async fn login_browser(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let pkce = pkce::generate()?;
    let state = pkce::random_hex_state()?;
    let mut server = callback::start(CallbackOptions {
        provider_name: "OpenAI",
        host: config.host(),
        port: config.callback_port.unwrap_or(CALLBACK_PORT),
        path: CALLBACK_PATH,
        redirect_host: "localhost",
        state: Some(state.clone()),
    })
    .await
    .ok();
    let redirect_uri = server.as_ref().map_or_else(
        || format!("http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"),
        |s| s.redirect_uri.clone(),
    );
    ui.notify(LoginEvent::AuthUrl {
        url: authorize_url(config, &redirect_uri, &pkce.challenge, &state),
        instructions: "A browser window should open. Complete login to finish.".into(),
    });
    let arrival = callback::wait_for_code(
        ui,
        server.as_mut(),
        "Complete login in your browser, or paste the authorization code / redirect URL here:",
        redirect_uri.clone(),
    )
    .await?;
    drop(server);
    let code = match arrival {
        Arrival::Callback(callback) => callback.code,
        Arrival::Manual(input) => callback::code_from_manual(&input, &state)?.0,
    };
    exchange(config, &code, &pkce.verifier, &redirect_uri).await
}

async fn login_device(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let what = "OpenAI Codex device code request";
    let reply = http::post_json(
        &config.endpoint(DEVICE_USER_CODE_URL),
        &[],
        &json!({"client_id": CLIENT_ID}),
        what,
    )
    .await?;
    if reply.status == 404 {
        return Err(OAuthError::Invalid(
            "OpenAI Codex device code login is not enabled for this server. Use browser login or verify the server URL."
                .into(),
        ));
    }
    let device = reply.require_ok(what)?;
    let interval = match device.get("interval") {
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(v) => v.as_f64(),
        None => None,
    };
    let (Some(device_auth_id), Some(user_code), Some(interval)) = (
        str_field(&device, "device_auth_id"),
        str_field(&device, "user_code"),
        interval.filter(|i| i.is_finite() && *i >= 0.0),
    ) else {
        return Err(OAuthError::Invalid("Invalid OpenAI Codex device code response".into()));
    };
    ui.notify(LoginEvent::DeviceCode {
        user_code: user_code.to_string(),
        verification_uri: config.endpoint(DEVICE_VERIFICATION_URI),
        interval_seconds: Some(interval as u64),
        expires_in_seconds: Some(DEVICE_CODE_TIMEOUT_SECONDS),
    });
    let poll_url = config.endpoint(DEVICE_TOKEN_URL);
    let body = json!({"device_auth_id": device_auth_id, "user_code": user_code});
    let (code, verifier) = poll_device_flow(
        Some(interval as u64),
        Some(DEVICE_CODE_TIMEOUT_SECONDS),
        false,
        || async {
            let what = "OpenAI Codex device auth";
            let reply = http::post_json(&poll_url, &[], &body, what).await?;
            if reply.ok() {
                return Ok(
                    match (
                        str_field(&reply.json, "authorization_code"),
                        str_field(&reply.json, "code_verifier"),
                    ) {
                        (Some(c), Some(v)) => Poll::Complete((c.to_string(), v.to_string())),
                        _ => Poll::Failed("Invalid OpenAI Codex device auth token response".into()),
                    },
                );
            }
            if reply.status == 403 || reply.status == 404 {
                return Ok(Poll::Pending);
            }
            let code = match reply.json.get("error") {
                Some(Value::Object(o)) => o.get("code").and_then(Value::as_str),
                Some(Value::String(s)) => Some(s.as_str()),
                _ => None,
            };
            Ok(match code {
                Some("deviceauth_authorization_pending") => Poll::Pending,
                Some("slow_down") => Poll::SlowDown(None),
                _ => Poll::Failed(format!(
                    "OpenAI Codex device auth failed with status {}{}",
                    reply.status,
                    reply.detail()
                )),
            })
        },
    )
    .await?;
    exchange(config, &code, &verifier, DEVICE_REDIRECT_URI).await
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let what = "OpenAI Codex token refresh";
    let refresh_token = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("client_id", CLIENT_ID),
    ];
    let reply = http::post_form(&config.endpoint(TOKEN_URL), &[], &pairs, what).await?;
    let mut fresh = stored.clone();
    fresh.extend(credential(&reply.require_ok(what)?, what)?);
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;

    #[test]
    fn the_account_id_comes_from_the_token_claim() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"https://api.openai.com/auth":{"chatgpt_account_id":"acc-1"}}"#);
        assert_eq!(
            account_id_from_token(&format!("h.{payload}.s")).as_deref(),
            Some("acc-1")
        );
        let empty = URL_SAFE_NO_PAD.encode(br#"{"sub":"x"}"#);
        assert_eq!(account_id_from_token(&format!("h.{empty}.s")), None);
        assert_eq!(account_id_from_token("opaque"), None);
    }

    #[test]
    fn the_authorize_url_names_the_codex_flow() {
        let url = authorize_url(&Config::default(), "http://localhost:1455/auth/callback", "c", "s");
        assert!(url.starts_with("https://auth.openai.com/oauth/authorize?response_type=code&client_id="));
        assert!(url.contains("codex_cli_simplified_flow=true"));
        assert!(url.contains("originator=pi"));
        assert!(url.contains("redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fauth%2Fcallback"));
    }
}
