//! OpenRouter: PKCE through a loopback callback on a free port, whose code OpenRouter
//! exchanges for a permanent API key (not a token pair). The key is stored as an OAuth
//! credential that never expires; "refreshing" it returns it unchanged.
//!
//! OpenRouter sends no `state`: the callback path carries a random id instead, so a stray
//! request cannot complete the sign-in. A browser on another machine pastes the redirect URL.

use serde_json::{json, Value};

use crate::callback::{self, Arrival, CallbackOptions};
use crate::http::{self, str_field};
use crate::ui::{LoginEvent, LoginUi};
use crate::{pkce, Config, Credential, OAuthError};

pub(crate) const NAME: &str = "OpenRouter OAuth";
const AUTHORIZE_URL: &str = "https://openrouter.ai/auth";
const TOKEN_URL: &str = "https://openrouter.ai/api/v1/auth/keys";
/// JavaScript's `Number.MAX_SAFE_INTEGER`: the expiry 1.6 stores for a key that never expires.
const NEVER_EXPIRES: i64 = 9_007_199_254_740_991;

/// The code of a pasted redirect URL, query string or bare code.
fn pasted_code(input: &str) -> Option<String> {
    let value = input.trim();
    if value.is_empty() {
        return None;
    }
    if let Ok(url) = url::Url::parse(value) {
        if url.has_host() {
            return url
                .query_pairs()
                .find(|(k, _)| k == "code")
                .map(|(_, v)| v.into_owned());
        }
    }
    if value.contains("code=") {
        return url::form_urlencoded::parse(value.as_bytes())
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned());
    }
    Some(value.to_string())
}

fn error_detail(json: &Value) -> String {
    let text = str_field(json, "error_description")
        .or_else(|| str_field(json, "message"))
        .or_else(|| str_field(json, "error"))
        .or_else(|| json.get("error").and_then(|e| str_field(e, "message")));
    text.map_or_else(String::new, |t| format!(": {t}"))
}

async fn exchange(config: &Config, code: &str, verifier: &str) -> Result<Credential, OAuthError> {
    let body = json!({"code": code, "code_verifier": verifier, "code_challenge_method": "S256"});
    let reply = http::post_json(&config.endpoint(TOKEN_URL), &[], &body, "OpenRouter OAuth key exchange").await?;
    if !reply.ok() {
        return Err(OAuthError::Invalid(format!(
            "OpenRouter OAuth key exchange failed (HTTP {}){}",
            reply.status,
            error_detail(&reply.json)
        )));
    }
    let key = str_field(&reply.json, "key")
        .ok_or_else(|| OAuthError::Invalid("OpenRouter OAuth response carries no \"key\"".into()))?;
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("access".into(), key.into());
    out.insert("refresh".into(), "".into());
    out.insert("expires".into(), NEVER_EXPIRES.into());
    Ok(out)
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let pkce = pkce::generate()?;
    let path = format!("/oauth/callback/{}", uuid_like()?);
    let mut server = callback::start(CallbackOptions {
        provider_name: "OpenRouter",
        host: config.host(),
        // A free port: OpenRouter accepts any loopback callback.
        port: config.callback_port.unwrap_or(0),
        path: &path,
        redirect_host: config.host(),
        state: None,
    })
    .await?;
    let redirect_uri = server.redirect_uri.clone();
    let mut url = config.endpoint(AUTHORIZE_URL);
    url.push('?');
    url.push_str(
        &url::form_urlencoded::Serializer::new(String::new())
            .append_pair("callback_url", &redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .finish(),
    );
    ui.notify(LoginEvent::Progress(format!(
        "Listening for OpenRouter OAuth callback on {redirect_uri}"
    )));
    ui.notify(LoginEvent::AuthUrl {
        url,
        instructions:
            "Complete sign-in in your browser. If the browser is on another machine, paste the final redirect URL here."
                .into(),
    });
    let arrival = callback::wait_for_code(
        ui,
        Some(&mut server),
        "Complete sign-in in your browser, or paste the authorization code / redirect URL here:",
        redirect_uri,
    )
    .await?;
    drop(server);
    let code = match arrival {
        Arrival::Callback(callback) => callback.code,
        Arrival::Manual(input) => pasted_code(&input).ok_or(OAuthError::MissingCode)?,
    };
    ui.notify(LoginEvent::Progress(
        "Exchanging authorization code for an API key...".into(),
    ));
    exchange(config, &code, &pkce.verifier).await
}

/// A random version-4 UUID in its text form (the callback path's secret part).
fn uuid_like() -> Result<String, OAuthError> {
    let mut b = pkce::random_bytes(16)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_codes_and_the_callback_path() {
        assert_eq!(
            pasted_code("http://127.0.0.1:5/oauth/callback/x?code=abc").as_deref(),
            Some("abc")
        );
        assert_eq!(pasted_code("code=def").as_deref(), Some("def"));
        assert_eq!(pasted_code(" ghi ").as_deref(), Some("ghi"));
        assert_eq!(pasted_code("  "), None);
        let id = uuid_like().expect("random");
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
    }
}
