//! A mock OAuth authorization server for the sign-in flows of `pi-oauth`: it plays the
//! provider (authorize, token, device code, Copilot's token and model APIs, all on one
//! origin) and checks what a real one checks: PKCE S256, `state`, the redirect URI and the
//! client id of each code, and that a refresh token is used once (refresh tokens rotate, as
//! Anthropic's and OpenAI's do, so a second refresh with the same token fails
//! `invalid_grant`).
//!
//! The providers added in pi 1.x (Sign in with ChatGPT, OpenRouter, Kimi, Meta, Radius) are
//! answered by [`subscriptions`]; the Radius gateway's model list and `pi-messages` API by
//! [`radius_gateway`].
//!
//! The authorization server of an OAuth-protected MCP server is [`mcp`]'s.
//!
//! `GET /oauth/authorize?…` plays the browser as well: it answers `302` to the redirect URI
//! with a code and the state, so a test follows the redirect into the client's loopback
//! callback.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::http::{Conn, HttpRequest};
use crate::MockError;

mod mcp;
mod radius_gateway;
mod subscriptions;

pub use radius_gateway::{gateway_models as radius_gateway_models, MOCK_RADIUS_KEY};

/// One request the mock answered (the body as text).
#[derive(Debug, Clone)]
pub struct OAuthRequest {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl OAuthRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }
    /// A field of the body, read as JSON or as a form.
    pub fn field(&self, key: &str) -> Option<String> {
        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&self.body) {
            return o.get(key).and_then(Value::as_str).map(str::to_string);
        }
        url::form_urlencoded::parse(self.body.as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }
}

#[derive(Debug, Clone)]
struct PendingCode {
    client_id: String,
    challenge: String,
    redirect_uri: String,
    state: String,
}

#[derive(Default)]
struct State {
    requests: Vec<OAuthRequest>,
    codes: HashMap<String, PendingCode>,
    refresh_tokens: HashSet<String>,
    /// Access tokens issued by the token routes (the Radius gateway accepts them).
    access_tokens: HashSet<String>,
    /// Answer the Radius gateway's `/v1/config` with this status instead.
    radius_config_status: Option<u16>,
    github_tokens: HashSet<String>,
    counter: u64,
    refreshes: usize,
    refresh_delay: Duration,
    access_ttl_seconds: i64,
    device_polls: usize,
    /// Meta identity tokens the key mint accepts.
    identity_tokens: HashSet<String>,
    /// The mock's own origin (`http://127.0.0.1:<port>`), for discovery answers.
    origin: String,
    /// Errors worth a failed test: a check the client did not pass.
    violations: Vec<String>,
    /// MCP servers' sign-ins (`oauth/mcp.rs`).
    mcp: mcp::McpState,
}

impl State {
    fn next(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}-{}", self.counter)
    }
}

/// The running mock.
pub struct OAuthMock {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

impl Drop for OAuthMock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A JWT-shaped access token whose payload names a ChatGPT account (OpenAI's claim).
pub fn openai_access_token(id: &str, account: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD
        .encode(json!({"sub": id, "https://api.openai.com/auth": {"chatgpt_account_id": account}}).to_string());
    format!("{header}.{payload}.sig")
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_loopback_redirect(uri: &str) -> bool {
    ["http://localhost:", "http://127.0.0.1:", "http://[::1]:"]
        .iter()
        .any(|p| uri.starts_with(p))
        || uri == "https://platform.claude.com/oauth/code/callback"
}

/// The account every OpenAI token of the mock names.
pub const MOCK_CHATGPT_ACCOUNT: &str = "acct-mock";

impl OAuthMock {
    pub async fn start() -> Result<OAuthMock, MockError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|source| MockError::Bind { port: 0, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| MockError::Bind { port: 0, source })?;
        let state = Arc::new(Mutex::new(State {
            access_ttl_seconds: 3600,
            origin: format!("http://{addr}"),
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = Arc::clone(&shared);
                tokio::spawn(async move {
                    let mut conn = Conn::new(stream);
                    while let Ok(Some(request)) = conn.read_request().await {
                        let close = request.close;
                        let (status, headers, body) = answer(&state, request).await;
                        let headers: Vec<(&str, String)> = headers.iter().map(|(k, v)| (*k, v.clone())).collect();
                        if conn.write_response(status, &headers, body.as_bytes()).await.is_err() || close {
                            break;
                        }
                    }
                });
            }
        });
        Ok(OAuthMock { addr, state, task })
    }

    /// The origin to put in `PI_OAUTH_ORIGIN` / `Config::origin`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<OAuthRequest> {
        lock(&self.state).requests.clone()
    }

    /// Refresh grants answered with a new token (Copilot token exchanges included).
    pub fn refresh_count(&self) -> usize {
        lock(&self.state).refreshes
    }

    /// Checks the client failed (wrong verifier, state, redirect URI, reused refresh token).
    pub fn violations(&self) -> Vec<String> {
        lock(&self.state).violations.clone()
    }

    /// Bearer tokens the MCP server asked about (`/mcp/introspect`).
    pub fn introspection_count(&self) -> usize {
        lock(&self.state).mcp.introspections
    }

    /// Hold every refresh answer this long (widens a race between two clients).
    pub fn set_refresh_delay(&self, delay: Duration) {
        lock(&self.state).refresh_delay = delay;
    }

    /// The lifetime of issued access tokens.
    pub fn set_access_ttl_seconds(&self, seconds: i64) {
        lock(&self.state).access_ttl_seconds = seconds;
    }

    /// A refresh token the mock accepts once (as if issued by an earlier login).
    pub fn issue_refresh_token(&self) -> String {
        let mut s = lock(&self.state);
        let token = s.next("refresh");
        s.refresh_tokens.insert(token.clone());
        token
    }

    /// Answer the Radius gateway's `/v1/config` with `status` (`None`: serve it again).
    pub fn fail_radius_config(&self, status: Option<u16>) {
        lock(&self.state).radius_config_status = status;
    }

    /// A GitHub token the Copilot token endpoint accepts.
    pub fn issue_github_token(&self) -> String {
        let mut s = lock(&self.state);
        let token = s.next("gho");
        s.github_tokens.insert(token.clone());
        token
    }
}

type Answer = (u16, Vec<(&'static str, String)>, String);

fn json_answer(status: u16, body: Value) -> Answer {
    (
        status,
        vec![("content-type", "application/json".into())],
        body.to_string(),
    )
}

fn error(status: u16, code: &str, description: &str) -> Answer {
    json_answer(status, json!({"error": code, "error_description": description}))
}

async fn answer(state: &Mutex<State>, request: HttpRequest) -> Answer {
    let (path, query) = match request.target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (request.target.clone(), String::new()),
    };
    let recorded = OAuthRequest {
        method: request.method.clone(),
        path: path.clone(),
        query: url::form_urlencoded::parse(query.as_bytes()).into_owned().collect(),
        headers: request.headers.clone(),
        body: String::from_utf8_lossy(&request.body).into_owned(),
    };
    lock(state).requests.push(recorded.clone());
    let q = |k: &str| {
        recorded
            .query
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    if let Some(answer) = mcp::answer(state, &recorded).await {
        return answer;
    }
    if let Some(answer) = radius_gateway::answer(state, &recorded) {
        return answer;
    }
    if let Some(answer) = subscriptions::answer(state, &recorded).await {
        return answer;
    }
    let f = |k: &str| recorded.field(k).unwrap_or_default();
    match (recorded.method.as_str(), path.as_str()) {
        ("GET", "/oauth/authorize") => {
            let redirect_uri = q("redirect_uri");
            let problems: Vec<&str> = [
                (q("response_type") != "code", "response_type must be code"),
                (
                    q("code_challenge_method") != "S256",
                    "code_challenge_method must be S256",
                ),
                (q("code_challenge").len() < 43, "code_challenge missing"),
                (q("state").is_empty(), "state missing"),
                (q("client_id").is_empty(), "client_id missing"),
                (!is_loopback_redirect(&redirect_uri), "redirect_uri not allowed"),
            ]
            .into_iter()
            .filter(|(bad, _)| *bad)
            .map(|(_, m)| m)
            .collect();
            if !problems.is_empty() {
                lock(state)
                    .violations
                    .push(format!("authorize: {}", problems.join(", ")));
                return error(400, "invalid_request", &problems.join(", "));
            }
            let mut s = lock(state);
            let code = s.next("code");
            s.codes.insert(
                code.clone(),
                PendingCode {
                    client_id: q("client_id"),
                    challenge: q("code_challenge"),
                    redirect_uri: redirect_uri.clone(),
                    state: q("state"),
                },
            );
            let location = format!(
                "{redirect_uri}?{}",
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("code", &code)
                    .append_pair("state", &q("state"))
                    .finish()
            );
            (302, vec![("location", location)], String::new())
        }
        ("POST", "/v1/oauth/token") | ("POST", "/oauth/token") => {
            let openai = path == "/oauth/token";
            match f("grant_type").as_str() {
                "authorization_code" => {
                    let pending = lock(state).codes.remove(&f("code"));
                    let Some(pending) = pending else {
                        lock(state).violations.push("token: unknown or reused code".into());
                        return error(400, "invalid_grant", "unknown code");
                    };
                    let verifier = f("code_verifier");
                    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
                    let mut problems = Vec::new();
                    if challenge != pending.challenge {
                        problems.push("code_verifier does not match the challenge");
                    }
                    if f("redirect_uri") != pending.redirect_uri {
                        problems.push("redirect_uri differs from the authorize request");
                    }
                    if f("client_id") != pending.client_id {
                        problems.push("client_id differs");
                    }
                    if !openai && f("state") != pending.state {
                        problems.push("state differs");
                    }
                    if !problems.is_empty() {
                        lock(state).violations.push(format!("token: {}", problems.join(", ")));
                        return error(400, "invalid_grant", &problems.join(", "));
                    }
                    issue_tokens(state, openai)
                }
                "refresh_token" => {
                    let token = f("refresh_token");
                    let delay = lock(state).refresh_delay;
                    tokio::time::sleep(delay).await;
                    let valid = lock(state).refresh_tokens.remove(&token);
                    if !valid {
                        lock(state)
                            .violations
                            .push("refresh: token unknown or already used".into());
                        return error(400, "invalid_grant", "refresh token is invalid or was already used");
                    }
                    lock(state).refreshes += 1;
                    issue_tokens(state, openai)
                }
                other => error(400, "unsupported_grant_type", other),
            }
        }
        ("POST", "/api/accounts/deviceauth/usercode") => json_answer(
            200,
            json!({"device_auth_id": "dev-auth-1", "user_code": "ABCD-1234", "interval": "1"}),
        ),
        ("POST", "/api/accounts/deviceauth/token") => {
            let mut s = lock(state);
            s.device_polls += 1;
            if s.device_polls == 1 {
                return json_answer(403, json!({"error": {"code": "deviceauth_authorization_pending"}}));
            }
            let verifier = s.next("device-verifier-0123456789012345678901234567890");
            let code = s.next("device-code");
            s.codes.insert(
                code.clone(),
                PendingCode {
                    client_id: "app_EMoamEEZ73f0CkXaXp7hrann".into(),
                    challenge: URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())),
                    redirect_uri: "https://auth.openai.com/deviceauth/callback".into(),
                    state: String::new(),
                },
            );
            json_answer(200, json!({"authorization_code": code, "code_verifier": verifier}))
        }
        // xAI's device grant (RFC 8628: pending is a 400 with `authorization_pending`).
        ("POST", "/oauth2/device/code") => json_answer(
            200,
            json!({"device_code": "xai-device-1", "user_code": "GROK-1234",
                   "verification_uri": "https://accounts.x.ai/device",
                   "verification_uri_complete": "https://accounts.x.ai/device?user_code=GROK-1234",
                   "interval": 1, "expires_in": 600}),
        ),
        ("POST", "/oauth2/token") => match f("grant_type").as_str() {
            "urn:ietf:params:oauth:grant-type:device_code" => {
                if f("device_code") != "xai-device-1" || f("client_id").is_empty() {
                    lock(state)
                        .violations
                        .push("xai token: wrong device code or client".into());
                    return error(400, "invalid_grant", "unknown device code");
                }
                let first = {
                    let mut s = lock(state);
                    s.device_polls += 1;
                    s.device_polls == 1
                };
                if first {
                    return error(400, "authorization_pending", "waiting for the user");
                }
                issue_tokens(state, false)
            }
            "refresh_token" => {
                let token = f("refresh_token");
                let delay = lock(state).refresh_delay;
                tokio::time::sleep(delay).await;
                if !lock(state).refresh_tokens.remove(&token) {
                    lock(state)
                        .violations
                        .push("refresh: token unknown or already used".into());
                    return error(400, "invalid_grant", "refresh token is invalid or was already used");
                }
                lock(state).refreshes += 1;
                issue_tokens(state, false)
            }
            other => error(400, "unsupported_grant_type", other),
        },
        ("POST", "/login/device/code") => json_answer(
            200,
            json!({"device_code": "gh-device-1", "user_code": "WXYZ-9876",
                   "verification_uri": "https://github.com/login/device", "interval": 1, "expires_in": 900}),
        ),
        ("POST", "/login/oauth/access_token") => {
            let mut s = lock(state);
            s.device_polls += 1;
            if s.device_polls == 1 {
                return json_answer(200, json!({"error": "authorization_pending"}));
            }
            let token = s.next("gho");
            s.github_tokens.insert(token.clone());
            json_answer(200, json!({"access_token": token, "token_type": "bearer"}))
        }
        ("GET", "/copilot_internal/v2/token") => {
            let bearer = recorded
                .header("authorization")
                .and_then(|a| a.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_string();
            let mut s = lock(state);
            if !s.github_tokens.contains(&bearer) {
                return json_answer(401, json!({"message": "Bad credentials"}));
            }
            s.refreshes += 1;
            let id = s.next("tid");
            let expires_at = unix_now() + s.access_ttl_seconds;
            json_answer(
                200,
                json!({"token": format!("tid={id};exp={expires_at};proxy-ep=proxy.individual.githubcopilot.com;"),
                       "expires_at": expires_at}),
            )
        }
        ("GET", "/models") => json_answer(
            200,
            json!({"data": [
                {"id": "gpt-6.1-sol", "model_picker_enabled": true, "policy": {"state": "enabled"}},
                {"id": "claude-sonnet-5", "model_picker_enabled": true, "policy": {"state": "unconfigured"}},
                {"id": "embedding-only", "model_picker_enabled": true,
                 "capabilities": {"supports": {"tool_calls": false}}}
            ]}),
        ),
        ("POST", p) if p.starts_with("/models/") && p.ends_with("/policy") => json_answer(200, json!({})),
        _ => error(404, "not_found", &path),
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn issue_tokens(state: &Mutex<State>, openai: bool) -> Answer {
    let mut s = lock(state);
    let id = s.next("access");
    let access = if openai {
        openai_access_token(&id, MOCK_CHATGPT_ACCOUNT)
    } else {
        format!("sk-ant-oat01-{id}")
    };
    let refresh = s.next("refresh");
    s.refresh_tokens.insert(refresh.clone());
    let ttl = s.access_ttl_seconds;
    json_answer(
        200,
        json!({"access_token": access, "refresh_token": refresh, "expires_in": ttl, "token_type": "Bearer"}),
    )
}
