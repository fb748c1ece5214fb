//! Sign in with ChatGPT for the `openai` provider: a public client registered per sign-in
//! (OpenAI returns the issued `client_id` in the callback), PKCE through the loopback callback
//! on port 1455, and a token that api.openai.com accepts directly (scope
//! `chatgpt.tokens.use.direct`). The installation is named by its device id.
//!
//! Unlike the Codex sign-in, a taken port is an error: the browser's callback would reach
//! whatever holds it (another pending sign-in or the Codex CLI).

use serde_json::Value;

use crate::callback::{self, Arrival, CallbackOptions};
use crate::http::{self, positive_number, str_field};
use crate::ui::{LoginEvent, LoginUi};
use crate::{pkce, Config, Credential, OAuthError};

pub(crate) const NAME: &str = "OpenAI (ChatGPT subscription)";
/// Every sign-in registers a new client under this id.
const DYNAMIC_CLIENT_ID: &str = "dynamic_agent_client";
const AGENT_NAME_HINT: &str = "Pi";
const AUTHORIZE_URL: &str = "https://auth.openai.com/api/accounts/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/api/accounts/oauth/token";
const RESOURCE: &str = "https://api.openai.com/v1";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const DIRECT_TOKEN_SCOPE: &str = "chatgpt.tokens.use.direct";
const SCOPE: &str = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
/// Stored expiry is this much earlier than OpenAI's.
const EXPIRY_MARGIN_MS: i64 = 3 * 60 * 1000;

/// `urn:uuid:<id>` for a device id that is a UUID.
fn agent_host_id(device_id: Option<&str>) -> Result<String, OAuthError> {
    device_id
        .filter(|id| uuid_shaped(id))
        .map(|id| format!("urn:uuid:{}", id.to_ascii_lowercase()))
        .ok_or_else(|| {
            OAuthError::Invalid("Sign in with ChatGPT requires a device ID (UUID) for this installation".into())
        })
}

fn uuid_shaped(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

fn credential(token: &Value, client_id: &str) -> Result<Credential, OAuthError> {
    let invalid = |field: &str| OAuthError::Invalid(format!("OpenAI OAuth token response has invalid {field}"));
    let text = |field: &str| {
        str_field(token, field)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| invalid(field))
    };
    let access = text("access_token")?;
    let refresh = text("refresh_token")?;
    let scope = text("scope")?;
    let expires_in = positive_number(token, "expires_in").ok_or_else(|| invalid("expires_in"))?;
    let scopes: Vec<Value> = scope.split_whitespace().map(|s| Value::from(s.to_string())).collect();
    if !scopes.iter().any(|s| s == DIRECT_TOKEN_SCOPE) {
        return Err(OAuthError::Invalid(format!(
            "OpenAI OAuth grant did not include {DIRECT_TOKEN_SCOPE}"
        )));
    }
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("access".into(), access.into());
    out.insert("refresh".into(), refresh.into());
    out.insert(
        "expires".into(),
        (crate::now_ms() + (expires_in * 1000.0) as i64 - EXPIRY_MARGIN_MS).into(),
    );
    out.insert("clientId".into(), client_id.into());
    out.insert("scopes".into(), Value::Array(scopes));
    Ok(out)
}

async fn request_token(config: &Config, pairs: &[(&str, &str)], what: &str) -> Result<Value, OAuthError> {
    let reply = http::post_form(&config.endpoint(TOKEN_URL), &[], pairs, what).await?;
    let json = reply.require_ok("OpenAI OAuth token request")?;
    if !json.is_object() {
        return Err(OAuthError::Invalid(
            "OpenAI OAuth token response must be an object".into(),
        ));
    }
    Ok(json)
}

/// The code and issued client id of a callback's query, whose state must be `expected`.
fn authorization(
    code: &str,
    state: Option<&str>,
    client_id: Option<&str>,
    expected: &str,
) -> Result<(String, String), OAuthError> {
    match state {
        None => return Err(OAuthError::Invalid("Missing OAuth state".into())),
        Some(s) if s != expected => return Err(OAuthError::StateMismatch),
        Some(_) => {}
    }
    let client_id = client_id.map(str::trim).filter(|c| !c.is_empty()).ok_or_else(|| {
        OAuthError::Invalid("OpenAI OAuth registration callback did not contain an issued client ID".into())
    })?;
    Ok((code.to_string(), client_id.to_string()))
}

/// A pasted callback URL: it must be the redirect URI's, with code, state and client id.
fn from_pasted(input: &str, redirect_uri: &str, expected: &str) -> Result<(String, String), OAuthError> {
    let url = url::Url::parse(input.trim())
        .map_err(|_| OAuthError::Invalid("Paste the full callback URL from the browser".into()))?;
    let wanted = url::Url::parse(redirect_uri).map_err(|e| OAuthError::Invalid(e.to_string()))?;
    if url.origin() != wanted.origin() || url.path() != wanted.path() {
        return Err(OAuthError::Invalid(format!(
            "The pasted callback URL must start with {redirect_uri}"
        )));
    }
    let get = |key: &str| url.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned());
    if let Some(error) = get("error") {
        return Err(OAuthError::Invalid(format!("ChatGPT authorization failed: {error}")));
    }
    let code = get("code").filter(|c| !c.is_empty()).ok_or(OAuthError::MissingCode)?;
    authorization(&code, get("state").as_deref(), get("client_id").as_deref(), expected)
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let host_id = agent_host_id(config.device_id.as_deref())?;
    let pkce = pkce::generate()?;
    let state = random_value()?;
    let nonce = random_value()?;
    let port = config.callback_port.unwrap_or(CALLBACK_PORT);
    let mut server = callback::start(CallbackOptions {
        provider_name: "ChatGPT",
        host: config.host(),
        port,
        path: CALLBACK_PATH,
        redirect_host: "127.0.0.1",
        state: Some(state.clone()),
    })
    .await
    .map_err(|_| {
        OAuthError::Callback(format!(
            "Port {port} is in use, probably by an unfinished login in another pi session or by the Codex CLI. Cancel that login and try again."
        ))
    })?;
    let redirect_uri = server.redirect_uri.clone();
    let mut url = config.endpoint(AUTHORIZE_URL);
    url.push('?');
    url.push_str(
        &url::form_urlencoded::Serializer::new(String::new())
            .append_pair("client_id", DYNAMIC_CLIENT_ID)
            .append_pair("agent_name_hint", AGENT_NAME_HINT)
            .append_pair("ext_agent_host_id", &host_id)
            .append_pair("response_type", "code")
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("resource", RESOURCE)
            .append_pair("scope", SCOPE)
            .append_pair("state", &state)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("nonce", &nonce)
            .finish(),
    );
    ui.notify(LoginEvent::AuthUrl {
        url,
        instructions:
            "Complete sign-in in your browser. If the callback does not complete, paste the final redirect URL here."
                .into(),
    });
    let arrival = callback::wait_for_code(
        ui,
        Some(&mut server),
        "Complete login in your browser, or paste the final redirect URL here:",
        redirect_uri.clone(),
    )
    .await?;
    drop(server);
    let (code, client_id) = match arrival {
        Arrival::Callback(callback) => {
            authorization(&callback.code, callback.get("state"), callback.get("client_id"), &state)?
        }
        Arrival::Manual(input) => from_pasted(&input, &redirect_uri, &state)?,
    };
    ui.notify(LoginEvent::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    let token = request_token(
        config,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", &client_id),
            ("code", &code),
            ("code_verifier", &pkce.verifier),
            ("redirect_uri", &redirect_uri),
            ("resource", RESOURCE),
        ],
        "OpenAI OAuth token exchange",
    )
    .await?;
    // The ID token is not used, but its presence is part of the answer's contract.
    if str_field(&token, "id_token").is_none_or(|t| t.trim().is_empty()) {
        return Err(OAuthError::Invalid(
            "OpenAI OAuth token response did not contain an ID token".into(),
        ));
    }
    credential(&token, &client_id)
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let client_id = stored
        .get("clientId")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| {
            OAuthError::Invalid(
                "Stored OpenAI OAuth credential does not contain an issued client ID; reconnect ChatGPT".into(),
            )
        })?;
    let refresh_token = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let token = request_token(
        config,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", client_id),
            ("refresh_token", refresh_token),
            ("resource", RESOURCE),
        ],
        "OpenAI OAuth token refresh",
    )
    .await?;
    let mut fresh = stored.clone();
    fresh.extend(credential(&token, client_id)?);
    Ok(fresh)
}

/// 32 random bytes, base64url (state and nonce).
fn random_value() -> Result<String, OAuthError> {
    use base64::Engine;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(pkce::random_bytes(32)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn device_ids_callbacks_and_grants() {
        assert_eq!(
            agent_host_id(Some("0190A1B2-C3D4-4E5F-8A9B-0123456789AB")).expect("uuid"),
            "urn:uuid:0190a1b2-c3d4-4e5f-8a9b-0123456789ab"
        );
        assert!(agent_host_id(Some("not-a-uuid")).is_err());
        assert!(agent_host_id(None).is_err());
        let redirect = "http://127.0.0.1:1455/auth/callback";
        assert_eq!(
            from_pasted(&format!("{redirect}?code=c&state=s&client_id=app_1"), redirect, "s").expect("ok"),
            ("c".to_string(), "app_1".to_string())
        );
        assert!(matches!(
            from_pasted(&format!("{redirect}?code=c&state=x&client_id=a"), redirect, "s"),
            Err(OAuthError::StateMismatch)
        ));
        assert!(from_pasted(&format!("{redirect}?code=c&state=s"), redirect, "s").is_err());
        assert!(from_pasted("http://127.0.0.1:9/other?code=c&state=s&client_id=a", redirect, "s").is_err());
        assert!(from_pasted("c#s", redirect, "s").is_err());
        let grant = json!({"access_token": "a", "refresh_token": "r", "expires_in": 600,
                           "scope": "openid chatgpt.tokens.use.direct"});
        let c = credential(&grant, "app_1").expect("credential");
        assert_eq!(c["clientId"], "app_1");
        assert_eq!(c["scopes"], json!(["openid", "chatgpt.tokens.use.direct"]));
        let narrow = json!({"access_token": "a", "refresh_token": "r", "expires_in": 600, "scope": "openid"});
        assert!(credential(&narrow, "app_1").is_err());
    }
}
