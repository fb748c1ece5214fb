//! A server's `oauth` settings (client id and secret, callback URL and port, scope, client name,
//! registration mode, metadata URL) and where its loopback callback listens.

use serde_json::{Map, Value};

use super::OAuthError;
use crate::config::resolve::{resolve_value, EnvSource};

/// The client pi registers as when no `clientName` is configured.
pub const CLIENT_NAME: &str = "pi";
const CALLBACK_HOST: &str = "127.0.0.1";
/// The redirect URI when the settings name none and no client is stored (the port is picked then).
pub const DEFAULT_REDIRECT_URL: &str = "http://127.0.0.1/callback";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub callback_port: Option<u16>,
    pub callback_url: Option<String>,
    pub scope: Option<String>,
    pub client_name: Option<String>,
    /// `auto`, `dcr` or `cimd`.
    pub client_registration: String,
    pub auth_server_metadata_url: Option<String>,
}

impl OAuthSettings {
    /// Read a validated `oauth` object; the client secret may use `${VAR}` and `!command`.
    pub fn from_config(oauth: Option<&Map<String, Value>>, server: &str, env: &EnvSource) -> Result<Self, OAuthError> {
        let Some(oauth) = oauth else {
            return Ok(Self {
                client_registration: "auto".into(),
                ..Self::default()
            });
        };
        let text = |key: &str| oauth.get(key).and_then(Value::as_str).map(str::to_string);
        let client_secret = match text("clientSecret") {
            Some(secret) => Some(
                resolve_value(&secret, &format!("MCP server \"{server}\" oauth.clientSecret"), env)
                    .map_err(OAuthError::Failed)?,
            ),
            None => None,
        };
        Ok(Self {
            client_id: text("clientId"),
            client_secret,
            callback_port: oauth
                .get("callbackPort")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok()),
            callback_url: text("callbackUrl"),
            scope: text("scope").filter(|s| !s.trim().is_empty()),
            client_name: text("clientName"),
            client_registration: text("clientRegistration").unwrap_or_else(|| "auto".into()),
            auth_server_metadata_url: text("authServerMetadataUrl"),
        })
    }
}

/// Where the callback server listens and which redirect URI it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loopback {
    /// The configured (or default) callback URL, port or not.
    pub url: String,
    /// The address bound: `localhost` is served on 127.0.0.1.
    pub host: String,
    /// The host written in the redirect URI.
    pub redirect_host: String,
    pub port: Option<u16>,
    pub path: String,
    /// The redirect URI when the port is fixed by the settings, sent exactly as written.
    pub fixed_redirect_url: Option<String>,
}

pub fn loopback(settings: &OAuthSettings) -> Loopback {
    let configured = settings
        .callback_url
        .clone()
        .unwrap_or_else(|| DEFAULT_REDIRECT_URL.to_string());
    let parsed = reqwest::Url::parse(&configured).ok();
    let host_str = parsed
        .as_ref()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| CALLBACK_HOST.into());
    let address = host_str.trim_start_matches('[').trim_end_matches(']').to_string();
    let url_port = parsed.as_ref().and_then(reqwest::Url::port);
    let port = url_port.or(settings.callback_port);
    let fixed_redirect_url = match (url_port, port, parsed.clone()) {
        (Some(_), _, _) => settings.callback_url.clone(),
        (None, Some(port), Some(mut url)) => {
            let _ = url.set_port(Some(port));
            Some(url.to_string())
        }
        _ => None,
    };
    Loopback {
        url: configured,
        host: if address == "localhost" {
            CALLBACK_HOST.into()
        } else {
            address.clone()
        },
        redirect_host: address,
        port,
        path: parsed.map_or_else(|| "/callback".into(), |u| u.path().to_string()),
        fixed_redirect_url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(oauth: Value) -> OAuthSettings {
        OAuthSettings::from_config(oauth.as_object(), "s", &EnvSource::Process).expect("settings")
    }

    #[test]
    fn the_default_callback_is_127_0_0_1_on_a_free_port() {
        let l = loopback(&settings(json!({})));
        assert_eq!(
            (l.host.as_str(), l.port, l.path.as_str()),
            ("127.0.0.1", None, "/callback")
        );
        assert_eq!(l.fixed_redirect_url, None);
    }

    #[test]
    fn configured_ports_and_urls_fix_the_redirect_uri() {
        let l = loopback(&settings(json!({"callbackPort": 8765})));
        assert_eq!(l.fixed_redirect_url.as_deref(), Some("http://127.0.0.1:8765/callback"));
        let l = loopback(&settings(json!({"callbackUrl": "http://localhost:9000/cb"})));
        assert_eq!(l.fixed_redirect_url.as_deref(), Some("http://localhost:9000/cb"));
        assert_eq!(
            (l.host.as_str(), l.redirect_host.as_str(), l.port),
            ("127.0.0.1", "localhost", Some(9000))
        );
        let l = loopback(&settings(json!({"callbackUrl": "http://[::1]/cb", "callbackPort": 7})));
        assert_eq!(
            (l.host.as_str(), l.fixed_redirect_url.as_deref()),
            ("::1", Some("http://[::1]:7/cb"))
        );
    }
}
