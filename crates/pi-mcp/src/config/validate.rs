//! Validation of one `mcpServers` entry: the shared fields (stdio, HTTP, OAuth) and pi's own
//! (`exposure`, `toolExposure`, `auth`), with the messages users see in `pi mcp list`.

use serde_json::{Map, Value};

/// How a server's tools reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    Codemode,
    Deferred,
    Direct,
    Hidden,
}

impl Exposure {
    pub const ALL: [Exposure; 4] = [
        Exposure::Codemode,
        Exposure::Deferred,
        Exposure::Direct,
        Exposure::Hidden,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Codemode => "codemode",
            Exposure::Deferred => "deferred",
            Exposure::Direct => "direct",
            Exposure::Hidden => "hidden",
        }
    }

    pub fn parse(text: &str) -> Option<Exposure> {
        Exposure::ALL.into_iter().find(|e| e.as_str() == text)
    }
}

/// Older exposure names, replaced by their current name when an entry is validated.
fn resolve_exposure_alias(value: &Value) -> Value {
    match value.as_str() {
        Some("codemode-deferred") => Value::String("codemode".into()),
        _ => value.clone(),
    }
}

/// How pi talks to a server.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportConfig {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// The `oauth` object as configured (sign-in is not implemented yet; kept for `pi mcp`).
        oauth: Option<Map<String, Value>>,
        /// `auth.provider`: send that provider's token as the bearer token.
        auth_provider: Option<String>,
    },
}

/// A validated server entry. `raw` is the entry as written to files (aliases resolved, unknown
/// fields kept); the other fields are its typed view.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub raw: Map<String, Value>,
    pub transport: TransportConfig,
    pub enabled: bool,
    /// Per-request timeout in seconds, when configured.
    pub timeout_secs: Option<f64>,
    pub description: Option<String>,
    pub exposure: Exposure,
    /// `toolExposure` in file order: exact names and `*` patterns.
    pub tool_exposure: Vec<(String, Exposure)>,
}

impl ServerConfig {
    pub fn is_http(&self) -> bool {
        matches!(self.transport, TransportConfig::Http { .. })
    }

    /// `url` for HTTP servers, `command args…` for stdio servers, as `pi mcp list` shows them.
    pub fn describe_transport(&self) -> String {
        match &self.transport {
            TransportConfig::Http { url, .. } => url.clone(),
            TransportConfig::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The provider whose login token this server uses, if any.
    pub fn auth_provider(&self) -> Option<&str> {
        match &self.transport {
            TransportConfig::Http { auth_provider, .. } => auth_provider.as_deref(),
            TransportConfig::Stdio { .. } => None,
        }
    }

    /// HTTP servers without an `Authorization` header and without `auth` sign in with OAuth.
    pub fn uses_oauth(&self) -> bool {
        match &self.transport {
            TransportConfig::Http {
                headers, auth_provider, ..
            } => auth_provider.is_none() && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization")),
            TransportConfig::Stdio { .. } => false,
        }
    }

    /// The exposure of one tool: its exact `toolExposure` entry, else the first matching pattern,
    /// else the server's exposure.
    pub fn tool_exposure(&self, tool: &str) -> Exposure {
        if let Some((_, e)) = self.tool_exposure.iter().find(|(name, _)| name == tool) {
            return *e;
        }
        self.tool_exposure
            .iter()
            .find(|(pattern, _)| pattern.contains('*') && crate::naming::pattern_matches(pattern, tool))
            .map(|(_, e)| *e)
            .unwrap_or(self.exposure)
    }
}

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

fn is_valid_server_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn parse_url(text: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(text).ok()
}

fn host_of(url: &reqwest::Url) -> String {
    url.host_str().unwrap_or("").to_string()
}

fn string_pairs(value: &Value) -> Option<Vec<(String, String)>> {
    let map = value.as_object()?;
    map.iter()
        .map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect()
}

fn check_base_fields(entry: &Map<String, Value>) -> Option<&'static str> {
    if entry.get("enabled").is_some_and(|v| !v.is_boolean()) {
        return Some("enabled must be a boolean");
    }
    if entry.get("description").is_some_and(|v| !v.is_string()) {
        return Some("description must be a string");
    }
    if let Some(timeout) = entry.get("timeout") {
        if !timeout.as_f64().is_some_and(|t| t > 0.0) {
            return Some("timeout must be a positive number of seconds");
        }
    }
    None
}

fn is_loopback_redirect(text: &str) -> bool {
    parse_url(text).is_some_and(|url| {
        url.scheme() == "http"
            && LOOPBACK_HOSTS.contains(&host_of(&url).as_str())
            && url.query().is_none_or(str::is_empty)
            && url.fragment().is_none_or(str::is_empty)
    })
}

/// pi's Client ID Metadata Documents list `/callback` on localhost and 127.0.0.1 (any port).
fn is_metadata_document_callback(callback_url: Option<&str>) -> bool {
    match callback_url.and_then(parse_url) {
        None => true,
        Some(url) => host_of(&url) != "[::1]" && url.path() == "/callback",
    }
}

fn check_oauth(value: &Value) -> Option<String> {
    let Some(oauth) = value.as_object() else {
        return Some("oauth must be an object".into());
    };
    let not_string = |key: &str| oauth.get(key).is_some_and(|v| !v.is_string());
    if not_string("clientId") {
        return Some("oauth.clientId must be a string".into());
    }
    if not_string("clientSecret") {
        return Some("oauth.clientSecret must be a string".into());
    }
    let port = oauth.get("callbackPort");
    if let Some(port) = port {
        let ok = port
            .as_f64()
            .is_some_and(|p| p.fract() == 0.0 && (1.0..=65535.0).contains(&p));
        if !ok {
            return Some("oauth.callbackPort must be a port number".into());
        }
    }
    if let Some(callback) = oauth.get("callbackUrl") {
        let text = callback.as_str().filter(|t| is_loopback_redirect(t));
        let Some(text) = text else {
            return Some(
                "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment"
                    .into(),
            );
        };
        let url_port = parse_url(text).and_then(|u| u.port());
        if let (Some(url_port), Some(port)) = (url_port, port.and_then(Value::as_f64)) {
            if f64::from(url_port) != port {
                return Some("oauth.callbackUrl and oauth.callbackPort name different ports".into());
            }
        }
    }
    if not_string("scope") {
        return Some("oauth.scope must be a string".into());
    }
    if let Some(name) = oauth.get("clientName") {
        if name.as_str().is_none_or(|n| n.trim().is_empty()) {
            return Some("oauth.clientName must be a non-empty string".into());
        }
    }
    if let Some(registration) = oauth.get("clientRegistration") {
        match registration.as_str() {
            Some("auto" | "dcr") => {}
            Some("cimd") => {
                if oauth.contains_key("clientId") || oauth.contains_key("clientName") {
                    return Some(
                        "oauth.clientRegistration \"cimd\" cannot be combined with oauth.clientId or oauth.clientName"
                            .into(),
                    );
                }
                if !is_metadata_document_callback(oauth.get("callbackUrl").and_then(Value::as_str)) {
                    return Some("oauth.clientRegistration \"cimd\" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback".into());
                }
            }
            _ => return Some("oauth.clientRegistration must be \"auto\", \"dcr\", or \"cimd\"".into()),
        }
    }
    if let Some(metadata) = oauth.get("authServerMetadataUrl") {
        let ok = metadata.as_str().and_then(parse_url).is_some_and(|u| {
            u.scheme() == "https" || (u.scheme() == "http" && LOOPBACK_HOSTS.contains(&host_of(&u).as_str()))
        });
        if !ok {
            return Some(
                "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]".into(),
            );
        }
    }
    None
}

fn check_http_fields(entry: &Map<String, Value>, url: &str) -> Option<String> {
    if !parse_url(url).is_some_and(|u| u.scheme() == "http" || u.scheme() == "https") {
        return Some("url must be an http or https URL".into());
    }
    if entry.get("headers").is_some_and(|h| string_pairs(h).is_none()) {
        return Some("headers must map names to strings".into());
    }
    entry.get("oauth").and_then(check_oauth)
}

fn check_stdio_fields(entry: &Map<String, Value>) -> Option<&'static str> {
    if let Some(args) = entry.get("args") {
        if !args.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
            return Some("args must be an array of strings");
        }
    }
    if entry.get("env").is_some_and(|e| string_pairs(e).is_none()) {
        return Some("env must map names to strings");
    }
    if entry.get("cwd").is_some_and(|c| !c.is_string()) {
        return Some("cwd must be a string");
    }
    None
}

fn exposure_list() -> String {
    Exposure::ALL
        .iter()
        .map(|e| format!("\"{}\"", e.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_exposures(entry: &Map<String, Value>) -> Option<String> {
    if let Some(exposure) = entry.get("exposure") {
        if exposure.as_str().and_then(Exposure::parse).is_none() {
            return Some(format!("exposure must be one of {}", exposure_list()));
        }
    }
    if let Some(tool_exposure) = entry.get("toolExposure") {
        let Some(map) = tool_exposure.as_object() else {
            return Some("toolExposure must map tool names to exposures".into());
        };
        for (tool, value) in map {
            if value.as_str().and_then(Exposure::parse).is_none() {
                return Some(format!("toolExposure \"{tool}\" must be one of {}", exposure_list()));
            }
        }
    }
    None
}

fn check_auth(auth: &Value, url: &str) -> Option<String> {
    let provider_ok = auth
        .get("provider")
        .and_then(Value::as_str)
        .is_some_and(|p| !p.is_empty());
    if !auth.is_object() || !provider_ok {
        return Some("auth.provider must be a provider name".into());
    }
    let parsed = parse_url(url)?;
    if parsed.scheme() != "https" && !LOOPBACK_HOSTS.contains(&host_of(&parsed).as_str()) {
        return Some("auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]".into());
    }
    None
}

/// Validate one server entry. The error is the message pi shows, without the file name.
pub fn validate_server_config(name: &str, raw: &Value) -> Result<ServerConfig, String> {
    if !is_valid_server_name(name) {
        return Err(format!(
            "invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"
        ));
    }
    let Some(object) = raw.as_object() else {
        return Err(format!("server \"{name}\" must be an object"));
    };
    let mut entry = object.clone();
    if let Some(exposure) = entry.get("exposure").map(resolve_exposure_alias) {
        entry.insert("exposure".into(), exposure);
    }
    if let Some(Value::Object(tools)) = entry.get_mut("toolExposure") {
        for value in tools.values_mut() {
            *value = resolve_exposure_alias(value);
        }
    }
    let fail = |message: &str| Err(format!("server \"{name}\": {message}"));
    if let Some(message) = check_base_fields(&entry) {
        return fail(message);
    }
    let kind = entry.get("type");
    let kind_str = kind.and_then(Value::as_str);
    if kind_str == Some("sse") {
        return fail("legacy SSE transport is not supported; use the streamable HTTP URL");
    }
    let transport = if let (Some(url), true) = (
        entry.get("url").and_then(Value::as_str),
        kind.is_none() || matches!(kind_str, Some("http" | "streamable-http")),
    ) {
        if let Some(message) = check_http_fields(&entry, url) {
            return fail(&message);
        }
        TransportConfig::Http {
            url: url.to_string(),
            headers: entry.get("headers").and_then(string_pairs).unwrap_or_default(),
            oauth: entry.get("oauth").and_then(Value::as_object).cloned(),
            auth_provider: None,
        }
    } else if let (Some(command), true) = (
        entry.get("command").and_then(Value::as_str),
        kind.is_none() || kind_str == Some("stdio"),
    ) {
        if let Some(message) = check_stdio_fields(&entry) {
            return fail(message);
        }
        TransportConfig::Stdio {
            command: command.to_string(),
            args: entry
                .get("args")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
            env: entry.get("env").and_then(string_pairs).unwrap_or_default(),
            cwd: entry.get("cwd").and_then(Value::as_str).map(str::to_string),
        }
    } else {
        return Err(format!(
            "server \"{name}\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
        ));
    };
    if let Some(message) = check_exposures(&entry) {
        return fail(&message);
    }
    let transport = match transport {
        TransportConfig::Http {
            url, headers, oauth, ..
        } => {
            let auth_provider = match entry.get("auth") {
                None => None,
                Some(auth) => {
                    if let Some(message) = check_auth(auth, &url) {
                        return fail(&message);
                    }
                    auth.get("provider").and_then(Value::as_str).map(str::to_string)
                }
            };
            TransportConfig::Http {
                url,
                headers,
                oauth,
                auth_provider,
            }
        }
        stdio => stdio,
    };
    let exposure = entry
        .get("exposure")
        .and_then(Value::as_str)
        .and_then(Exposure::parse)
        .unwrap_or(Exposure::Codemode);
    let tool_exposure = entry
        .get("toolExposure")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), Exposure::parse(v.as_str()?)?)))
                .collect()
        })
        .unwrap_or_default();
    Ok(ServerConfig {
        transport,
        enabled: entry.get("enabled").and_then(Value::as_bool).unwrap_or(true),
        timeout_secs: entry.get("timeout").and_then(Value::as_f64),
        description: entry.get("description").and_then(Value::as_str).map(str::to_string),
        exposure,
        tool_exposure,
        raw: entry,
    })
}

/// An entry without `command`, `url` and `type` overrides a server defined in another file.
pub fn is_override(entry: &Map<String, Value>) -> bool {
    !entry.contains_key("command") && !entry.contains_key("url") && !entry.contains_key("type")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(name: &str, value: Value) -> String {
        match validate_server_config(name, &value) {
            Err(e) => e,
            Ok(c) => panic!("expected an error, got {c:?}"),
        }
    }

    #[test]
    fn rejects_with_the_messages_users_see() {
        assert_eq!(
            err("bad name", json!({"command": "x"})),
            "invalid server name \"bad name\" (use letters, digits, \"_\" and \"-\")"
        );
        assert_eq!(err("s", json!(3)), "server \"s\" must be an object");
        assert_eq!(
            err("sse", json!({"type": "sse", "url": "http://x"})),
            "server \"sse\": legacy SSE transport is not supported; use the streamable HTTP URL"
        );
        assert_eq!(
            err("t", json!({"command": "x", "timeout": 0})),
            "server \"t\": timeout must be a positive number of seconds"
        );
        assert_eq!(
            err("t", json!({"command": "x", "timeout": "5"})),
            "server \"t\": timeout must be a positive number of seconds"
        );
        assert_eq!(
            err("e", json!({"command": "x", "enabled": "no"})),
            "server \"e\": enabled must be a boolean"
        );
        assert_eq!(
            err("n", json!({"args": []})),
            "server \"n\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
        );
        assert_eq!(
            err("n", json!({"type": "stdio", "url": "http://x"})),
            "server \"n\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
        );
        assert_eq!(
            err("a", json!({"command": "x", "args": [1]})),
            "server \"a\": args must be an array of strings"
        );
        assert_eq!(
            err("a", json!({"command": "x", "env": {"A": 1}})),
            "server \"a\": env must map names to strings"
        );
        assert_eq!(
            err("u", json!({"url": "ftp://x"})),
            "server \"u\": url must be an http or https URL"
        );
        assert_eq!(
            err("u", json!({"url": "not a url"})),
            "server \"u\": url must be an http or https URL"
        );
        assert_eq!(
            err("h", json!({"url": "http://x", "headers": {"A": true}})),
            "server \"h\": headers must map names to strings"
        );
        assert_eq!(
            err("x", json!({"command": "x", "exposure": "loud"})),
            "server \"x\": exposure must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\""
        );
        assert_eq!(
            err("x", json!({"command": "x", "toolExposure": {"t": "no"}})),
            "server \"x\": toolExposure \"t\" must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\""
        );
        assert_eq!(
            err(
                "authproj",
                json!({"url": "http://example.com/mcp", "auth": {"provider": "p"}})
            ),
            "server \"authproj\": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]"
        );
        assert_eq!(
            err("a", json!({"url": "https://x", "auth": {}})),
            "server \"a\": auth.provider must be a provider name"
        );
    }

    #[test]
    fn oauth_fields_are_checked() {
        let e = |oauth: Value| err("o", json!({"url": "https://x/mcp", "oauth": oauth}));
        assert_eq!(
            e(json!({"callbackPort": 0})),
            "server \"o\": oauth.callbackPort must be a port number"
        );
        assert_eq!(e(json!({"callbackUrl": "http://example.com/cb"})), "server \"o\": oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment");
        assert_eq!(
            e(json!({"callbackUrl": "http://localhost:5000/cb", "callbackPort": 5001})),
            "server \"o\": oauth.callbackUrl and oauth.callbackPort name different ports"
        );
        assert_eq!(
            e(json!({"clientName": " "})),
            "server \"o\": oauth.clientName must be a non-empty string"
        );
        assert_eq!(
            e(json!({"clientRegistration": "x"})),
            "server \"o\": oauth.clientRegistration must be \"auto\", \"dcr\", or \"cimd\""
        );
        assert_eq!(e(json!({"clientRegistration": "cimd", "clientId": "c"})), "server \"o\": oauth.clientRegistration \"cimd\" cannot be combined with oauth.clientId or oauth.clientName");
        assert_eq!(e(json!({"clientRegistration": "cimd", "callbackUrl": "http://localhost:1/other"})), "server \"o\": oauth.clientRegistration \"cimd\" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback");
        assert_eq!(
            e(json!({"authServerMetadataUrl": "http://example.com/m"})),
            "server \"o\": oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]"
        );
        assert!(validate_server_config(
            "o",
            &json!({"url": "https://x/mcp", "oauth": {"callbackUrl": "http://[::1]:7/cb", "callbackPort": 7}})
        )
        .is_ok());
    }

    #[test]
    fn accepts_other_clients_shapes_and_resolves_aliases() {
        let c = validate_server_config(
            "claude",
            &json!({"type": "stdio", "command": "npx", "args": ["-y", "srv"], "env": {"K": "v"}, "extra": 1}),
        )
        .expect("valid");
        assert_eq!(c.describe_transport(), "npx -y srv");
        assert_eq!(c.raw.get("extra"), Some(&json!(1)));
        let h = validate_server_config("h", &json!({"type": "streamable-http", "url": "https://x/mcp", "exposure": "codemode-deferred", "toolExposure": {"add-*": "direct", "fail": "hidden", "x": "codemode-deferred"}})).expect("valid");
        assert_eq!(h.exposure, Exposure::Codemode);
        assert_eq!(h.raw["exposure"], json!("codemode"));
        assert_eq!(h.raw["toolExposure"]["x"], json!("codemode"));
        assert_eq!(h.tool_exposure("add-numbers"), Exposure::Direct);
        assert_eq!(h.tool_exposure("fail"), Exposure::Hidden);
        assert_eq!(h.tool_exposure("echo"), Exposure::Codemode);
        assert!(h.uses_oauth());
        let bearer = validate_server_config(
            "b",
            &json!({"url": "https://x", "headers": {"authorization": "Bearer 1"}}),
        )
        .expect("valid");
        assert!(!bearer.uses_oauth());
    }
}
