//! The mock's routes for the sign-ins pi 1.x added: Sign in with ChatGPT (a client issued per
//! authorization, `resource` and the direct-use scope), OpenRouter (PKCE without state, a key
//! for a code), Kimi Code and Meta (device grants; Meta's key mint), and Radius (discovery,
//! PKCE, device code, all on the gateway's `/v1/oauth/*`).
//!
//! Each authorization code remembers its client, challenge and redirect URI, and each token
//! answer's refresh token is accepted once, as in the main mock.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{error, is_loopback_redirect, json_answer, lock, Answer, OAuthRequest, PendingCode, State};
use std::sync::Mutex;

/// The client id the ChatGPT authorize step issues (OpenAI registers one per sign-in).
pub const CHATGPT_ISSUED_CLIENT: &str = "app_issued_mock";
const CHATGPT_DYNAMIC_CLIENT: &str = "dynamic_agent_client";
const OPENAI_RESOURCE: &str = "https://api.openai.com/v1";
const RADIUS_CLIENT: &str = "pi-gateway";
const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

fn violation(state: &Mutex<State>, text: String) {
    lock(state).violations.push(text);
}

fn query<'a>(request: &'a OAuthRequest, key: &str) -> &'a str {
    request
        .query
        .iter()
        .find(|(k, _)| k == key)
        .map_or("", |(_, v)| v.as_str())
}

fn redirect(to: &str, pairs: &[(&str, &str)]) -> Answer {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        query.append_pair(k, v);
    }
    (
        302,
        vec![("location", format!("{to}?{}", query.finish()))],
        String::new(),
    )
}

/// Checks of an authorization code exchange: the code is known (and used up), the verifier
/// matches its challenge, and the redirect URI and client are those of the authorize step.
fn redeem(
    state: &Mutex<State>,
    what: &str,
    code: &str,
    verifier: &str,
    redirect_uri: Option<&str>,
    client_id: &str,
) -> Result<(), Answer> {
    let Some(pending) = lock(state).codes.remove(code) else {
        violation(state, format!("{what}: unknown or reused code"));
        return Err(error(400, "invalid_grant", "unknown code"));
    };
    let mut problems = Vec::new();
    if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != pending.challenge {
        problems.push("code_verifier does not match the challenge");
    }
    if redirect_uri.is_some_and(|r| r != pending.redirect_uri) {
        problems.push("redirect_uri differs from the authorize request");
    }
    if client_id != pending.client_id {
        problems.push("client_id differs");
    }
    if problems.is_empty() {
        Ok(())
    } else {
        violation(state, format!("{what}: {}", problems.join(", ")));
        Err(error(400, "invalid_grant", &problems.join(", ")))
    }
}

/// A refresh token issued earlier, used up now.
fn spend_refresh(state: &Mutex<State>, token: &str) -> Result<(), Answer> {
    if lock(state).refresh_tokens.remove(token) {
        lock(state).refreshes += 1;
        Ok(())
    } else {
        violation(state, "refresh: token unknown or already used".into());
        Err(error(
            400,
            "invalid_grant",
            "refresh token is invalid or was already used",
        ))
    }
}

/// A token pair with `extra` fields; the refresh token is accepted once.
fn tokens(state: &Mutex<State>, prefix: &str, extra: serde_json::Value) -> Answer {
    let mut s = lock(state);
    let access = s.next(prefix);
    let refresh = s.next("refresh");
    s.refresh_tokens.insert(refresh.clone());
    s.access_tokens.insert(access.clone());
    let mut body = json!({"access_token": access, "refresh_token": refresh,
                          "expires_in": s.access_ttl_seconds, "token_type": "Bearer"});
    if let (Some(body), serde_json::Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    json_answer(200, body)
}

/// The first poll of a mock instance's device grants is pending.
fn first_poll(state: &Mutex<State>) -> bool {
    let mut s = lock(state);
    s.device_polls += 1;
    s.device_polls == 1
}

fn pkce_problems(request: &OAuthRequest) -> Vec<&'static str> {
    [
        (
            query(request, "code_challenge_method") != "S256",
            "code_challenge_method must be S256",
        ),
        (query(request, "code_challenge").len() < 43, "code_challenge missing"),
    ]
    .into_iter()
    .filter(|(bad, _)| *bad)
    .map(|(_, m)| m)
    .collect()
}

/// The answer to `request` if it is one of these providers' routes.
pub(super) async fn answer(state: &Mutex<State>, request: &OAuthRequest) -> Option<Answer> {
    let f = |k: &str| request.field(k).unwrap_or_default();
    let radius_client = f("client_id") == RADIUS_CLIENT;
    Some(match (request.method.as_str(), request.path.as_str()) {
        // Sign in with ChatGPT.
        ("GET", "/api/accounts/authorize") => {
            let redirect_uri = query(request, "redirect_uri").to_string();
            let mut problems = pkce_problems(request);
            for (bad, message) in [
                (
                    query(request, "client_id") != CHATGPT_DYNAMIC_CLIENT,
                    "client_id must be the dynamic client",
                ),
                (query(request, "resource") != OPENAI_RESOURCE, "resource missing"),
                (
                    !query(request, "ext_agent_host_id").starts_with("urn:uuid:"),
                    "ext_agent_host_id missing",
                ),
                (
                    !query(request, "scope")
                        .split(' ')
                        .any(|s| s == "chatgpt.tokens.use.direct"),
                    "direct scope missing",
                ),
                (query(request, "state").is_empty(), "state missing"),
                (query(request, "nonce").is_empty(), "nonce missing"),
                (!is_loopback_redirect(&redirect_uri), "redirect_uri not allowed"),
            ] {
                if bad {
                    problems.push(message);
                }
            }
            if !problems.is_empty() {
                violation(state, format!("chatgpt authorize: {}", problems.join(", ")));
                return Some(error(400, "invalid_request", &problems.join(", ")));
            }
            let code = {
                let mut s = lock(state);
                let code = s.next("code");
                s.codes.insert(
                    code.clone(),
                    PendingCode {
                        client_id: CHATGPT_ISSUED_CLIENT.into(),
                        challenge: query(request, "code_challenge").into(),
                        redirect_uri: redirect_uri.clone(),
                        state: query(request, "state").into(),
                    },
                );
                code
            };
            redirect(
                &redirect_uri,
                &[
                    ("code", &code),
                    ("state", query(request, "state")),
                    ("client_id", CHATGPT_ISSUED_CLIENT),
                ],
            )
        }
        ("POST", "/api/accounts/oauth/token") => {
            if f("resource") != OPENAI_RESOURCE {
                violation(state, "chatgpt token: resource missing".into());
                return Some(error(400, "invalid_request", "resource missing"));
            }
            let grant = match f("grant_type").as_str() {
                "authorization_code" => redeem(
                    state,
                    "chatgpt token",
                    &f("code"),
                    &f("code_verifier"),
                    Some(&f("redirect_uri")),
                    &f("client_id"),
                ),
                "refresh_token" if f("client_id") == CHATGPT_ISSUED_CLIENT => spend_refresh(state, &f("refresh_token")),
                other => Err(error(400, "unsupported_grant_type", other)),
            };
            if let Err(answer) = grant {
                return Some(answer);
            }
            tokens(
                state,
                "chatgpt-access",
                json!({"id_token": "mock.id.token", "scope": "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct"}),
            )
        }
        // OpenRouter: no state, no client id; the callback URL is the redirect.
        ("GET", "/auth") => {
            let callback = query(request, "callback_url").to_string();
            let mut problems = pkce_problems(request);
            if !is_loopback_redirect(&callback) {
                problems.push("callback_url not allowed");
            }
            if !problems.is_empty() {
                violation(state, format!("openrouter authorize: {}", problems.join(", ")));
                return Some(error(400, "invalid_request", &problems.join(", ")));
            }
            let code = {
                let mut s = lock(state);
                let code = s.next("code");
                s.codes.insert(
                    code.clone(),
                    PendingCode {
                        client_id: String::new(),
                        challenge: query(request, "code_challenge").into(),
                        redirect_uri: callback.clone(),
                        state: String::new(),
                    },
                );
                code
            };
            redirect(&callback, &[("code", &code)])
        }
        ("POST", "/api/v1/auth/keys") => {
            if f("code_challenge_method") != "S256" {
                violation(state, "openrouter keys: code_challenge_method missing".into());
            }
            if let Err(answer) = redeem(state, "openrouter keys", &f("code"), &f("code_verifier"), None, "") {
                return Some(answer);
            }
            let key = lock(state).next("sk-or-v1");
            json_answer(200, json!({"key": key, "user_id": "user-mock"}))
        }
        // Kimi Code.
        ("POST", "/api/oauth/device_authorization") => json_answer(
            200,
            json!({"device_code": "kimi-device-1", "user_code": "KIMI-0001",
                   "verification_uri": "https://www.kimi.com/code/authorize_device",
                   "verification_uri_complete": "https://www.kimi.com/code/authorize_device?user_code=KIMI-0001",
                   "interval": 1, "expires_in": 600}),
        ),
        ("POST", "/api/oauth/token") => match f("grant_type").as_str() {
            DEVICE_GRANT if f("device_code") == "kimi-device-1" => {
                if first_poll(state) {
                    return Some(error(400, "authorization_pending", "waiting for the user"));
                }
                tokens(state, "kimi-access", json!({}))
            }
            "refresh_token" => match spend_refresh(state, &f("refresh_token")) {
                Ok(()) => tokens(state, "kimi-access", json!({})),
                Err(answer) => answer,
            },
            _ => {
                violation(state, "kimi token: wrong grant or device code".into());
                error(400, "invalid_grant", "unknown device code")
            }
        },
        // Meta: the device grant yields an identity token, the mint a key.
        ("POST", "/oidc/device/authorization/") => json_answer(
            200,
            json!({"device_code": "meta-device-1", "user_code": "META-0001",
                   "verification_uri": "https://www.meta.com/device",
                   "interval": 1, "expires_in": 600}),
        ),
        ("POST", "/oidc/device/token/") => {
            if f("device_code") != "meta-device-1" || f("grant_type") != DEVICE_GRANT {
                violation(state, "meta token: wrong grant or device code".into());
                return Some(error(400, "invalid_grant", "unknown device code"));
            }
            if first_poll(state) {
                return Some(error(400, "authorization_pending", "waiting for the user"));
            }
            let identity = {
                let mut s = lock(state);
                let identity = s.next("meta-identity");
                s.identity_tokens.insert(identity.clone());
                identity
            };
            json_answer(200, json!({"access_token": identity, "token_type": "Bearer"}))
        }
        ("POST", "/muse-code/key") => {
            let bearer = request
                .header("authorization")
                .and_then(|a| a.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_string();
            if request.header("x-api-version") != Some("1.0.0") {
                violation(state, "meta mint: x-api-version missing".into());
            }
            if !lock(state).identity_tokens.contains(&bearer) {
                return Some(json_answer(401, json!({"detail": "identity token not accepted"})));
            }
            let mut s = lock(state);
            s.refreshes += 1;
            let key = s.next("meta-key");
            json_answer(200, json!({"api_key": key}))
        }
        // Radius: discovery, device code and tokens on the gateway.
        ("GET", "/v1/oauth") => {
            let origin = lock(state).origin.clone();
            json_answer(
                200,
                json!({"authorizationEndpoint": format!("{origin}/oauth/authorize")}),
            )
        }
        ("POST", "/v1/oauth/device") => {
            if f("client_id") != RADIUS_CLIENT {
                violation(state, "radius device: wrong client".into());
            }
            json_answer(
                200,
                json!({"device_code": "radius-device-1", "user_code": "RADI-0001",
                       "verification_uri": "https://radius.pi.dev/device", "interval": 1, "expires_in": 600}),
            )
        }
        ("POST", "/v1/oauth/token") if radius_client => {
            let scope = json!({"scope": "gateway offline_access"});
            match f("grant_type").as_str() {
                "authorization_code" => {
                    match redeem(
                        state,
                        "radius token",
                        &f("code"),
                        &f("code_verifier"),
                        Some(&f("redirect_uri")),
                        RADIUS_CLIENT,
                    ) {
                        Ok(()) => tokens(state, "radius-access", scope),
                        Err(answer) => answer,
                    }
                }
                DEVICE_GRANT if f("device_code") == "radius-device-1" => {
                    if first_poll(state) {
                        error(400, "authorization_pending", "waiting for the user")
                    } else {
                        tokens(state, "radius-access", scope)
                    }
                }
                "refresh_token" => match spend_refresh(state, &f("refresh_token")) {
                    Ok(()) => tokens(state, "radius-access", scope),
                    Err(answer) => answer,
                },
                other => error(400, "unsupported_grant_type", other),
            }
        }
        _ => return None,
    })
}
