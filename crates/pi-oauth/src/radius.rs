//! Radius (the pi-messages gateway): its OAuth client API lives on the gateway itself
//! (`/v1/oauth/token`, `/v1/oauth/device`); only the browser's authorization endpoint is
//! discovered (`GET /v1/oauth`). Two methods: PKCE through the loopback callback on port 1456,
//! or a device code for signing in from another device.

use serde_json::Value;

use crate::callback::{self, CallbackOptions};
use crate::device::{poll_device_flow, Poll};
use crate::http::{self, str_field, trusted_http_url};
use crate::ui::{LoginEvent, LoginUi, Prompt, SelectOption};
use crate::{pkce, Config, Credential, OAuthError};

pub(crate) const NAME: &str = "Radius";
/// The gateway of the built-in `radius` provider.
pub const DEFAULT_GATEWAY: &str = "https://radius.pi.dev";
const CALLBACK_HOST: &str = "127.0.0.1";
const CALLBACK_PORT: u16 = 1456;
const CALLBACK_PATH: &str = "/oauth/callback";
const CLIENT_ID: &str = "pi-gateway";
const SCOPE: &str = "gateway offline_access";
const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const EXPIRY_SKEW_MS: i64 = 60_000;

/// `value` with a scheme (https when it has none) and no trailing slash.
pub fn normalize_gateway_url(value: &str) -> String {
    let lower = value.to_ascii_lowercase();
    let with_scheme = if lower.starts_with("http://") || lower.starts_with("https://") {
        value.to_string()
    } else {
        format!("https://{value}")
    };
    with_scheme.trim_end_matches('/').to_string()
}

/// The gateway the flow talks to: a models.json gateway as configured (the user named it, so
/// [`Config::origin`] does not move it), else the built-in one, moved by the origin when set.
/// The gateway's model list (`/v1/config`) is fetched from the same place.
pub fn gateway(config: &Config) -> String {
    match &config.radius_gateway {
        Some(own) => normalize_gateway_url(&own.url),
        None => config.endpoint(&normalize_gateway_url(DEFAULT_GATEWAY)),
    }
}

/// The display name prompts use: the models.json provider's name, else "Radius".
fn display_name(config: &Config) -> &str {
    config.radius_gateway.as_ref().map_or(NAME, |g| g.name.as_str())
}

/// `path` (absolute) on `gateway`: as pi 1.6 resolves it, a path in the gateway's URL is
/// replaced, not extended.
pub fn endpoint(gateway: &str, path: &str) -> String {
    url::Url::parse(gateway)
        .and_then(|base| base.join(path))
        .map_or_else(|_| format!("{gateway}{path}"), |u| u.to_string())
}

/// An OAuth error answer: the `error` code (for the device poll) and the message.
struct TokenFailure {
    code: Option<String>,
    error: OAuthError,
}

fn failure(reply: &http::Reply, message: &str) -> TokenFailure {
    let code = str_field(&reply.json, "error").map(str::to_string);
    let description = str_field(&reply.json, "error_description");
    let detail = match (&code, description) {
        (Some(c), Some(d)) => format!("{c}: {d}"),
        (Some(c), None) => c.clone(),
        (None, Some(d)) => d.to_string(),
        (None, None) => reply.status.to_string(),
    };
    TokenFailure {
        code,
        error: OAuthError::Invalid(format!("{message}: {detail}")),
    }
}

async fn request_token(gateway: &str, pairs: &[(&str, &str)]) -> Result<Result<Credential, TokenFailure>, OAuthError> {
    let reply = http::post_form(
        &endpoint(gateway, "/v1/oauth/token"),
        &[],
        pairs,
        "Radius OAuth token request",
    )
    .await?;
    if !reply.ok() {
        return Ok(Err(failure(&reply, "Radius OAuth token request failed")));
    }
    let json = &reply.json;
    let expires_in = json.get("expires_in").and_then(Value::as_f64);
    let (Some(access), Some(refresh), Some(expires_in)) = (
        str_field(json, "access_token"),
        str_field(json, "refresh_token"),
        expires_in,
    ) else {
        return Err(OAuthError::Invalid(
            "Radius OAuth token response is missing access_token, refresh_token or expires_in".into(),
        ));
    };
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("access".into(), access.into());
    out.insert("refresh".into(), refresh.into());
    out.insert(
        "expires".into(),
        (crate::now_ms() + (expires_in * 1000.0) as i64 - EXPIRY_SKEW_MS).into(),
    );
    if let Some(scope) = json.get("scope") {
        out.insert("scope".into(), scope.clone());
    }
    Ok(Ok(out))
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let gateway = gateway(config);
    let method = ui
        .prompt(Prompt::Select {
            message: format!("Sign in to {}:", display_name(config)),
            options: vec![
                SelectOption::new("browser", "Sign in with browser (recommended)"),
                SelectOption::new(
                    "device-code",
                    "Sign in with device code (when signing in from another device)",
                ),
            ],
        })
        .await?;
    match method.as_str() {
        "browser" => login_browser(config, &gateway, ui).await,
        "device-code" => login_device(&gateway, ui).await,
        other => Err(OAuthError::Invalid(format!(
            "Unknown {} sign-in method: {other}",
            display_name(config)
        ))),
    }
}

async fn login_browser(config: &Config, gateway: &str, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let discovery = http::get(&endpoint(gateway, "/v1/oauth"), &[], "Radius OAuth config").await?;
    if !discovery.ok() {
        return Err(OAuthError::Invalid(format!(
            "Could not load Radius OAuth config from {gateway}: {}",
            discovery.status
        )));
    }
    let authorization_endpoint = trusted_http_url(str_field(&discovery.json, "authorizationEndpoint"))
        .ok_or_else(|| OAuthError::Invalid(format!("Invalid Radius OAuth config from {gateway}")))?;
    let pkce = pkce::generate()?;
    let state = uuid::Uuid::new_v4().to_string();
    let mut server = callback::start(CallbackOptions {
        provider_name: "Radius",
        host: CALLBACK_HOST,
        port: config.callback_port.unwrap_or(CALLBACK_PORT),
        path: CALLBACK_PATH,
        redirect_host: CALLBACK_HOST,
        state: Some(state.clone()),
    })
    .await?;
    let redirect_uri = server.redirect_uri.clone();
    let mut url = url::Url::parse(&authorization_endpoint).map_err(|e| OAuthError::Invalid(e.to_string()))?;
    url.query_pairs_mut()
        .clear()
        .append_pair("response_type", "code")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", SCOPE)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("handoff", "url")
        .append_pair("state", &state);
    ui.notify(LoginEvent::Progress(format!(
        "Listening for OAuth callback on {redirect_uri}"
    )));
    ui.notify(LoginEvent::AuthUrl {
        url: url.to_string(),
        instructions: "Continue in your browser.".into(),
    });
    let callback = callback::wait_for_callback(&mut server).await?;
    drop(server);
    let pairs = [
        ("grant_type", "authorization_code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", redirect_uri.as_str()),
        ("code", callback.code.as_str()),
        ("code_verifier", pkce.verifier.as_str()),
    ];
    request_token(gateway, &pairs).await?.map_err(|f| f.error)
}

async fn login_device(gateway: &str, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let reply = http::post_form(
        &endpoint(gateway, "/v1/oauth/device"),
        &[],
        &[("client_id", CLIENT_ID), ("scope", SCOPE)],
        "Radius OAuth device authorization",
    )
    .await?;
    if !reply.ok() {
        return Err(failure(&reply, "Radius OAuth device authorization failed").error);
    }
    let device = &reply.json;
    let expires_in = device.get("expires_in").and_then(Value::as_f64).filter(|e| *e > 0.0);
    let (Some(device_code), Some(user_code), Some(raw_uri), Some(expires_in)) = (
        str_field(device, "device_code"),
        str_field(device, "user_code"),
        str_field(device, "verification_uri"),
        expires_in,
    ) else {
        return Err(OAuthError::Invalid(
            "Radius OAuth device authorization response is missing required fields".into(),
        ));
    };
    let verification_uri = trusted_http_url(Some(raw_uri)).ok_or_else(|| {
        OAuthError::Invalid("Untrusted verification_uri in Radius OAuth device authorization response".into())
    })?;
    let interval = device.get("interval").and_then(Value::as_u64);
    ui.notify(LoginEvent::DeviceCode {
        user_code: user_code.to_string(),
        verification_uri,
        interval_seconds: interval,
        expires_in_seconds: Some(expires_in as u64),
    });
    let pairs = [
        ("grant_type", DEVICE_GRANT),
        ("client_id", CLIENT_ID),
        ("device_code", device_code),
    ];
    poll_device_flow(interval, Some(expires_in as u64), false, || async {
        Ok(match request_token(gateway, &pairs).await? {
            Ok(credential) => Poll::Complete(credential),
            Err(f) => match f.code.as_deref() {
                Some("authorization_pending") => Poll::Pending,
                Some("slow_down") => Poll::SlowDown(None),
                Some("expired_token") => Poll::Failed("Device authorization expired.".into()),
                Some("access_denied") => Poll::Failed("Device authorization was denied.".into()),
                _ => return Err(f.error),
            },
        })
    })
    .await
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let refresh_token = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let pairs = [
        ("grant_type", "refresh_token"),
        ("client_id", CLIENT_ID),
        ("refresh_token", refresh_token),
    ];
    let fresh = request_token(&gateway(config), &pairs).await?.map_err(|f| f.error)?;
    let mut out = stored.clone();
    out.extend(fresh);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateway_urls_are_normalized() {
        assert_eq!(normalize_gateway_url("radius.pi.dev/"), "https://radius.pi.dev");
        assert_eq!(normalize_gateway_url("HTTP://x:8/"), "HTTP://x:8");
        assert_eq!(
            gateway(&Config {
                origin: Some("http://127.0.0.1:9".into()),
                ..Config::default()
            }),
            "http://127.0.0.1:9"
        );
        let own = Config {
            origin: Some("http://127.0.0.1:9".into()),
            radius_gateway: Some(crate::RadiusGateway {
                url: "gw.example/team/".into(),
                name: "Team".into(),
            }),
            ..Config::default()
        };
        assert_eq!(gateway(&own), "https://gw.example/team");
        assert_eq!(display_name(&own), "Team");
        // The gateway's own path is replaced, as a URL resolved against it would be.
        assert_eq!(endpoint(&gateway(&own), "/v1/oauth"), "https://gw.example/v1/oauth");
        assert_eq!(
            endpoint("http://127.0.0.1:9", "/v1/oauth/token"),
            "http://127.0.0.1:9/v1/oauth/token"
        );
    }
}
