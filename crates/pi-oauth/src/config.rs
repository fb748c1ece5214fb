//! Where the flows send their requests and where the loopback callback listens.

/// Settings shared by every flow.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Replaces the scheme, host and port of every OAuth endpoint (authorize, token, device
    /// code, Copilot's token and model APIs), keeping the path: a local authorization server.
    pub origin: Option<String>,
    /// The address the callback server binds (pi 1.6's `PI_OAUTH_CALLBACK_HOST`, default
    /// `127.0.0.1`).
    pub callback_host: Option<String>,
    /// The callback port instead of the provider's registered one (0 = any free port).
    pub callback_port: Option<u16>,
    /// The `originator` the OpenAI sign-in reports (pi).
    pub originator: Option<String>,
    /// This installation's id (a UUID, settings.json's `deviceId`): Sign in with ChatGPT
    /// names the installation with it.
    pub device_id: Option<String>,
    /// Kimi Code's authorization server instead of `https://auth.kimi.com` (pi 1.6's
    /// `KIMI_CODE_OAUTH_HOST`, else `KIMI_OAUTH_HOST`).
    pub kimi_host: Option<String>,
    /// A Radius gateway of models.json (`"oauth": "radius"`) instead of the built-in one;
    /// [`Config::origin`] does not apply to it.
    pub radius_gateway: Option<RadiusGateway>,
}

/// A self-hosted Radius gateway: where its sign-in lives and the name its prompts show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RadiusGateway {
    /// The gateway's URL (the provider's `baseUrl` without a trailing `/v1`).
    pub url: String,
    /// The provider's display name.
    pub name: String,
}

impl Config {
    /// The configuration the environment asks for: `PI_OAUTH_ORIGIN`, `PI_OAUTH_CALLBACK_HOST`
    /// and `PI_OAUTH_CALLBACK_PORT`.
    pub fn from_env() -> Config {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Config {
            origin: var("PI_OAUTH_ORIGIN"),
            callback_host: var("PI_OAUTH_CALLBACK_HOST"),
            callback_port: var("PI_OAUTH_CALLBACK_PORT").and_then(|p| p.parse().ok()),
            originator: None,
            device_id: None,
            kimi_host: var("KIMI_CODE_OAUTH_HOST").or_else(|| var("KIMI_OAUTH_HOST")),
            radius_gateway: None,
        }
    }

    /// `url` with its origin replaced by [`Config::origin`], if set.
    pub fn endpoint(&self, url: &str) -> String {
        let Some(origin) = &self.origin else {
            return url.to_string();
        };
        let path_start = url
            .find("://")
            .and_then(|scheme_end| url[scheme_end + 3..].find('/').map(|i| scheme_end + 3 + i))
            .unwrap_or(url.len());
        format!("{}{}", origin.trim_end_matches('/'), &url[path_start..])
    }

    pub(crate) fn host(&self) -> &str {
        self.callback_host.as_deref().unwrap_or("127.0.0.1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_replaces_scheme_host_and_port_only() {
        let plain = Config::default();
        assert_eq!(plain.endpoint("https://a.example/x/y?z=1"), "https://a.example/x/y?z=1");
        let local = Config {
            origin: Some("http://127.0.0.1:9/".into()),
            ..Config::default()
        };
        assert_eq!(
            local.endpoint("https://a.example/x/y?z=1"),
            "http://127.0.0.1:9/x/y?z=1"
        );
        assert_eq!(local.endpoint("https://a.example"), "http://127.0.0.1:9");
    }
}
