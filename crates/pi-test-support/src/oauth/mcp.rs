//! The authorization server of an OAuth-protected MCP server (pi-mcp's sign-in): RFC 8414
//! metadata on the mock's origin, dynamic client registration (RFC 7591), `/mcp/authorize`
//! (which plays the browser too: it redirects to the registered loopback URI with the code, the
//! state and `iss`), `/mcp/token` (code with PKCE S256, the registered redirect URI and the
//! `resource` of the authorization; refresh tokens used once), and `/mcp/introspect` (RFC 7662),
//! which the MCP server asks about each bearer token. Access tokens expire after
//! [`super::OAuthMock::set_access_ttl_seconds`]; a refresh is answered after
//! [`super::OAuthMock::set_refresh_delay`], its tokens already rotated.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{error, json_answer, lock, unix_now, Answer, OAuthRequest, State};

/// What the mock remembers of MCP sign-ins.
#[derive(Default)]
pub(super) struct McpState {
    /// Registered clients and their redirect URIs.
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Code>,
    /// Access token → (expiry, client, resource, scope).
    access: HashMap<String, (i64, String, String, String)>,
    /// Refresh token → (client, resource, scope).
    refresh: HashMap<String, (String, String, String)>,
    pub(super) introspections: usize,
}

struct Code {
    client_id: String,
    challenge: String,
    redirect_uri: String,
    resource: String,
    scope: String,
}

fn query(request: &OAuthRequest, key: &str) -> String {
    request
        .query
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

fn violation(state: &Mutex<State>, message: String) -> Answer {
    lock(state).violations.push(message.clone());
    error(400, "invalid_request", &message)
}

fn issue(state: &Mutex<State>, client: &str, resource: &str, scope: &str) -> Answer {
    let mut s = lock(state);
    let access = s.next("mcp-access");
    let refresh = s.next("mcp-refresh");
    let ttl = s.access_ttl_seconds;
    let expiry = unix_now() + ttl;
    s.mcp
        .access
        .insert(access.clone(), (expiry, client.into(), resource.into(), scope.into()));
    s.mcp
        .refresh
        .insert(refresh.clone(), (client.into(), resource.into(), scope.into()));
    json_answer(
        200,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": ttl, "refresh_token": refresh, "scope": scope}),
    )
}

pub(super) async fn answer(state: &Mutex<State>, request: &OAuthRequest) -> Option<Answer> {
    let origin = lock(state).origin.clone();
    let f = |k: &str| request.field(k).unwrap_or_default();
    let answer = match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/.well-known/oauth-authorization-server") => json_answer(
            200,
            json!({
                "issuer": origin,
                "authorization_endpoint": format!("{origin}/mcp/authorize"),
                "token_endpoint": format!("{origin}/mcp/token"),
                "registration_endpoint": format!("{origin}/mcp/register"),
                "introspection_endpoint": format!("{origin}/mcp/introspect"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["mcp:tools"],
                "authorization_response_iss_parameter_supported": true
            }),
        ),
        ("POST", "/mcp/register") => {
            let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
            let uris: Vec<String> = body["redirect_uris"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|u| u.as_str().map(str::to_string))
                .collect();
            if uris.is_empty() || body["client_name"].as_str().is_none() {
                return Some(violation(
                    state,
                    "register: redirect_uris and client_name are required".into(),
                ));
            }
            let mut s = lock(state);
            let id = s.next("mcp-client");
            s.mcp.clients.insert(id.clone(), uris.clone());
            let mut answer = body.clone();
            answer["client_id"] = json!(id);
            answer["client_id_issued_at"] = json!(unix_now());
            json_answer(201, answer)
        }
        ("GET", "/mcp/authorize") => {
            let client = query(request, "client_id");
            let redirect = query(request, "redirect_uri");
            let registered = lock(state).mcp.clients.get(&client).cloned();
            let mut problems = Vec::new();
            match registered {
                None => problems.push("unknown client_id".to_string()),
                Some(uris) if !uris.contains(&redirect) => {
                    problems.push(format!("redirect_uri {redirect} not registered"))
                }
                Some(_) => {}
            }
            for (key, expected) in [("response_type", "code"), ("code_challenge_method", "S256")] {
                if query(request, key) != expected {
                    problems.push(format!("{key} must be {expected}"));
                }
            }
            if query(request, "code_challenge").len() < 43 {
                problems.push("code_challenge missing".into());
            }
            if query(request, "state").len() != 64 {
                problems.push("state must be 64 characters".into());
            }
            if query(request, "resource").is_empty() {
                problems.push("resource missing (RFC 8707)".into());
            }
            if !problems.is_empty() {
                return Some(violation(state, format!("authorize: {}", problems.join(", "))));
            }
            let mut s = lock(state);
            let code = s.next("mcp-code");
            s.mcp.codes.insert(
                code.clone(),
                Code {
                    client_id: client,
                    challenge: query(request, "code_challenge"),
                    redirect_uri: redirect.clone(),
                    resource: query(request, "resource"),
                    scope: query(request, "scope"),
                },
            );
            let location = format!(
                "{redirect}?{}",
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("code", &code)
                    .append_pair("state", &query(request, "state"))
                    .append_pair("iss", &origin)
                    .finish()
            );
            (302, vec![("location", location)], String::new())
        }
        ("POST", "/mcp/token") => match f("grant_type").as_str() {
            "authorization_code" => {
                let Some(code) = lock(state).mcp.codes.remove(&f("code")) else {
                    return Some(violation(state, "token: unknown or reused code".into()));
                };
                let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(f("code_verifier").as_bytes()));
                let mut problems = Vec::new();
                if challenge != code.challenge {
                    problems.push("code_verifier does not match the challenge");
                }
                if f("redirect_uri") != code.redirect_uri {
                    problems.push("redirect_uri differs from the authorize request");
                }
                if f("client_id") != code.client_id {
                    problems.push("client_id differs");
                }
                if f("resource") != code.resource {
                    problems.push("resource differs");
                }
                if !problems.is_empty() {
                    lock(state).violations.push(format!("token: {}", problems.join(", ")));
                    return Some(error(400, "invalid_grant", &problems.join(", ")));
                }
                issue(state, &code.client_id, &code.resource, &code.scope)
            }
            "refresh_token" => {
                let grant = lock(state).mcp.refresh.remove(&f("refresh_token"));
                let Some((client, resource, scope)) = grant else {
                    lock(state)
                        .violations
                        .push("refresh: token unknown or already used".into());
                    return Some(error(
                        400,
                        "invalid_grant",
                        "refresh token is invalid or was already used",
                    ));
                };
                if f("client_id") != client {
                    return Some(violation(state, "refresh: client_id differs".into()));
                }
                lock(state).refreshes += 1;
                let answer = issue(state, &client, &resource, &scope);
                // The old refresh token is spent and the new one issued before the answer goes
                // out, as a rotating server does: a client that stops waiting loses the grant.
                let delay = lock(state).refresh_delay;
                tokio::time::sleep(delay).await;
                answer
            }
            other => error(400, "unsupported_grant_type", other),
        },
        ("POST", "/mcp/introspect") => {
            let mut s = lock(state);
            s.mcp.introspections += 1;
            match s.mcp.access.get(&f("token")) {
                Some((expiry, client, resource, scope)) if *expiry > unix_now() => json_answer(
                    200,
                    json!({"active": true, "client_id": client, "aud": resource, "scope": scope, "exp": expiry}),
                ),
                _ => json_answer(200, json!({"active": false})),
            }
        }
        _ => return None,
    };
    Some(answer)
}
