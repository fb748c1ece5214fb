//! Anthropic (Claude Pro/Max): authorization code with PKCE, through a loopback callback on
//! port 53692 (any free port when taken) or the code Anthropic shows (headless).

use serde_json::{json, Value};

use crate::callback::{self, Arrival, CallbackOptions};
use crate::http::{self, token_fields};
use crate::ui::{LoginEvent, LoginUi, Prompt, SelectOption};
use crate::{pkce, Config, Credential, OAuthError};

const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const CALLBACK_PORT: u16 = 53692;
const CALLBACK_PATH: &str = "/callback";
const COPY_CODE_REDIRECT_URI: &str = "https://platform.claude.com/oauth/code/callback";
const SCOPES: &str =
    "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";

pub(crate) const NAME: &str = "Anthropic (Claude Pro/Max)";

fn authorize_url(config: &Config, redirect_uri: &str, challenge: &str, state: &str) -> String {
    let mut url = config.endpoint(AUTHORIZE_URL);
    url.push('?');
    url.push_str(
        &url::form_urlencoded::Serializer::new(String::new())
            .append_pair("code", "true")
            .append_pair("client_id", CLIENT_ID)
            .append_pair("response_type", "code")
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", SCOPES)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", state)
            .finish(),
    );
    url
}

/// The credential of a token answer; the stored expiry is five minutes early, as pi 1.6
/// stores it.
fn credential(json: &Value, what: &str, now: i64) -> Result<Credential, OAuthError> {
    let (access, refresh, expires_in) = token_fields(json, None, what)?;
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("refresh".into(), refresh.into());
    out.insert("access".into(), access.into());
    out.insert("expires".into(), (now + expires_in - crate::REFRESH_MARGIN_MS).into());
    Ok(out)
}

async fn exchange(
    config: &Config,
    code: &str,
    state: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<Credential, OAuthError> {
    let what = "Anthropic token exchange";
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    });
    let reply = http::post_json(&config.endpoint(TOKEN_URL), &[], &body, what).await?;
    credential(&reply.require_ok(what)?, what, crate::now_ms())
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let method = ui
        .prompt(Prompt::Select {
            message: "Select Anthropic login method:".into(),
            options: vec![
                SelectOption::new("browser", "Browser login (default)"),
                SelectOption::new("copy_code", "Copy code login (headless)"),
            ],
        })
        .await?;
    match method.as_str() {
        "browser" => login_browser(config, ui).await,
        "copy_code" => login_copy_code(config, ui).await,
        other => Err(OAuthError::Invalid(format!("Unknown Anthropic login method: {other}"))),
    }
}

async fn login_browser(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let pkce = pkce::generate()?;
    // The verifier doubles as the state, as Anthropic's own client sends it.
    let state = pkce.verifier.clone();
    let options = |port| CallbackOptions {
        provider_name: "Anthropic",
        host: config.host(),
        port,
        path: CALLBACK_PATH,
        redirect_host: "localhost",
        state: Some(state.clone()),
    };
    let preferred = config.callback_port.unwrap_or(CALLBACK_PORT);
    let mut server = match callback::start(options(preferred)).await {
        Ok(s) => Some(s),
        Err(_) => callback::start(options(0)).await.ok(),
    };
    let redirect_uri = server.as_ref().map_or_else(
        || format!("http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"),
        |s| s.redirect_uri.clone(),
    );
    ui.notify(LoginEvent::AuthUrl {
        url: authorize_url(config, &redirect_uri, &pkce.challenge, &state),
        instructions:
            "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here."
                .into(),
    });
    let arrival = callback::wait_for_code(
        ui,
        server.as_mut(),
        "Complete login in your browser, or paste the authorization code / redirect URL here:",
        redirect_uri.clone(),
    )
    .await?;
    drop(server);
    let (code, sent_state) = match arrival {
        Arrival::Callback(callback) => (callback.code, state.clone()),
        Arrival::Manual(input) => {
            let (code, pasted_state) = callback::code_from_manual(&input, &state)?;
            (code, pasted_state.unwrap_or_else(|| state.clone()))
        }
    };
    ui.notify(LoginEvent::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    exchange(config, &code, &sent_state, &pkce.verifier, &redirect_uri).await
}

async fn login_copy_code(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let pkce = pkce::generate()?;
    let state = pkce.verifier.clone();
    ui.notify(LoginEvent::AuthUrl {
        url: authorize_url(config, COPY_CODE_REDIRECT_URI, &pkce.challenge, &state),
        instructions: "Complete login in your browser, then copy the code Anthropic shows and paste it here.".into(),
    });
    let input = ui
        .prompt(Prompt::ManualCode {
            message: "Paste the code Anthropic shows after you sign in:".into(),
            placeholder: "code#state".into(),
        })
        .await?;
    let (code, pasted_state) = callback::code_from_manual(&input, &state)?;
    ui.notify(LoginEvent::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    let sent_state = pasted_state.unwrap_or_else(|| state.clone());
    exchange(config, &code, &sent_state, &pkce.verifier, COPY_CODE_REDIRECT_URI).await
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let what = "Anthropic token refresh";
    let refresh_token = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let body = json!({
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "refresh_token": refresh_token,
    });
    let reply = http::post_json(&config.endpoint(TOKEN_URL), &[], &body, what).await?;
    let mut fresh = stored.clone();
    fresh.extend(credential(&reply.require_ok(what)?, what, crate::now_ms())?);
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorize_url_carries_pkce_and_the_redirect() {
        let url = authorize_url(&Config::default(), "http://localhost:53692/callback", "chal", "st");
        let parsed = url::Url::parse(&url).expect("url");
        let get = |k: &str| parsed.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
        assert_eq!(parsed.host_str(), Some("claude.ai"));
        assert_eq!(get("code_challenge").as_deref(), Some("chal"));
        assert_eq!(get("code_challenge_method").as_deref(), Some("S256"));
        assert_eq!(get("redirect_uri").as_deref(), Some("http://localhost:53692/callback"));
        assert_eq!(get("state").as_deref(), Some("st"));
        assert_eq!(get("scope").as_deref(), Some(SCOPES));
    }

    #[test]
    fn stored_expiry_is_five_minutes_early() {
        let c = credential(
            &json!({"access_token": "a", "refresh_token": "r", "expires_in": 3600}),
            "t",
            1_000,
        )
        .expect("credential");
        assert_eq!(c["expires"], json!(1_000 + 3_600_000 - 300_000));
        assert!(credential(&json!({"access_token": "a"}), "t", 0).is_err());
    }
}
