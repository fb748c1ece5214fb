//! The sign-in flows end to end against the mock authorization server: the test plays the
//! user and the browser, the mock checks PKCE, state, redirect URIs and refresh rotation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use async_trait::async_trait;
use pi_oauth::{Config, Credential, LoginEvent, LoginUi, OAuthError, Prompt, Provider};
use pi_test_support::oauth::{OAuthMock, MOCK_CHATGPT_ACCOUNT};
use serde_json::Value;

/// How the scripted user answers.
#[derive(Clone, Copy)]
enum Browser {
    /// Follow the authorize URL (the mock redirects into the loopback callback).
    Follow,
    /// Copy the code from the redirect and paste `code#state` (optionally with a wrong state).
    Paste { wrong_state: bool },
}

struct User {
    method: &'static str,
    browser: Browser,
    events: Mutex<Vec<LoginEvent>>,
    auth_url: Mutex<Option<String>>,
}

impl User {
    fn new(method: &'static str, browser: Browser) -> User {
        User {
            method,
            browser,
            events: Mutex::new(Vec::new()),
            auth_url: Mutex::new(None),
        }
    }
}

async fn redirect_location(url: &str) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client.get(url).send().await.unwrap();
    assert_eq!(
        response.status().as_u16(),
        302,
        "authorize refused: {:?}",
        response.text().await
    );
    response.headers()["location"].to_str().unwrap().to_string()
}

#[async_trait]
impl LoginUi for User {
    fn notify(&self, event: LoginEvent) {
        if let LoginEvent::AuthUrl { url, .. } = &event {
            *self.auth_url.lock().unwrap() = Some(url.clone());
            if let Browser::Follow = self.browser {
                let url = url.clone();
                tokio::spawn(async move {
                    let response = reqwest::get(&url).await.expect("browser");
                    assert_eq!(response.status().as_u16(), 200);
                });
            }
        }
        self.events.lock().unwrap().push(event);
    }

    async fn prompt(&self, prompt: Prompt) -> Result<String, OAuthError> {
        match prompt {
            Prompt::Select { options, .. } => {
                assert!(options.iter().any(|o| o.id == self.method));
                Ok(self.method.to_string())
            }
            Prompt::Text { .. } => Ok(String::new()),
            Prompt::ManualCode { .. } => match self.browser {
                Browser::Follow => std::future::pending().await,
                Browser::Paste { wrong_state } => {
                    let url = self
                        .auth_url
                        .lock()
                        .unwrap()
                        .clone()
                        .expect("URL shown before the prompt");
                    let location = url::Url::parse(&redirect_location(&url).await).unwrap();
                    let get = |k: &str| location.query_pairs().find(|(n, _)| n == k).unwrap().1.into_owned();
                    let state = if wrong_state {
                        "forged".to_string()
                    } else {
                        get("state")
                    };
                    Ok(format!("{}#{state}", get("code")))
                }
            },
        }
    }
}

fn config(mock: &OAuthMock) -> Config {
    Config {
        origin: Some(mock.url()),
        callback_port: Some(0),
        ..Config::default()
    }
}

fn field<'a>(c: &'a Credential, key: &str) -> &'a str {
    c.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn expires(c: &Credential) -> i64 {
    c["expires"].as_i64().unwrap()
}

#[tokio::test]
async fn anthropic_browser_login_passes_pkce_state_and_redirect_checks() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("browser", Browser::Follow);
    let before = pi_oauth::now_ms();
    let credential = Provider::Anthropic.login(&config(&mock), &user).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert_eq!(field(&credential, "type"), "oauth");
    assert!(field(&credential, "access").starts_with("sk-ant-oat01-"));
    assert!(!field(&credential, "refresh").is_empty());
    // Stored five minutes early, as pi 1.6 stores it.
    let expected = before + 3_600_000 - 300_000;
    assert!(
        (expires(&credential) - expected).abs() < 5_000,
        "{}",
        expires(&credential)
    );
    let exchange = mock
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/oauth/token")
        .unwrap();
    assert_eq!(exchange.header("content-type"), Some("application/json"));
    let redirect = exchange.field("redirect_uri").unwrap();
    assert!(
        redirect.starts_with("http://localhost:") && redirect.ends_with("/callback"),
        "{redirect}"
    );
    let auth = user.auth_url.lock().unwrap().clone().unwrap();
    assert!(auth.contains("code=true&client_id="), "{auth}");
}

#[tokio::test]
async fn anthropic_copy_code_login_and_a_forged_state() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("copy_code", Browser::Paste { wrong_state: false });
    let credential = Provider::Anthropic.login(&config(&mock), &user).await.unwrap();
    assert!(field(&credential, "access").starts_with("sk-ant-oat01-"));
    let exchange = mock
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/oauth/token")
        .unwrap();
    assert_eq!(
        exchange.field("redirect_uri").as_deref(),
        Some("https://platform.claude.com/oauth/code/callback")
    );
    assert_eq!(mock.violations(), Vec::<String>::new());

    let forged = User::new("copy_code", Browser::Paste { wrong_state: true });
    let err = Provider::Anthropic.login(&config(&mock), &forged).await.unwrap_err();
    assert!(matches!(err, OAuthError::StateMismatch), "{err}");
}

#[tokio::test]
async fn openai_codex_browser_login_keeps_the_account_id() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("browser", Browser::Follow);
    let credential = Provider::OpenAiCodex.login(&config(&mock), &user).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert_eq!(field(&credential, "accountId"), MOCK_CHATGPT_ACCOUNT);
    let exchange = mock.requests().into_iter().find(|r| r.path == "/oauth/token").unwrap();
    assert_eq!(
        exchange.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert!(exchange.field("redirect_uri").unwrap().ends_with("/auth/callback"));
    let auth = user.auth_url.lock().unwrap().clone().unwrap();
    assert!(
        auth.contains("codex_cli_simplified_flow=true") && auth.contains("originator=pi"),
        "{auth}"
    );
}

#[tokio::test]
async fn openai_codex_device_code_login() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("device_code", Browser::Follow);
    let credential = Provider::OpenAiCodex.login(&config(&mock), &user).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert_eq!(field(&credential, "accountId"), MOCK_CHATGPT_ACCOUNT);
    let events = user.events.lock().unwrap().clone();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, LoginEvent::DeviceCode { user_code, .. } if user_code == "ABCD-1234")),
        "{events:?}"
    );
    let polls = mock
        .requests()
        .iter()
        .filter(|r| r.path == "/api/accounts/deviceauth/token")
        .count();
    assert_eq!(polls, 2, "one pending answer, then the code");
}

#[tokio::test]
async fn github_copilot_device_login_exchanges_the_token_and_lists_models() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("", Browser::Follow);
    let credential = Provider::GitHubCopilot.login(&config(&mock), &user).await.unwrap();
    assert!(field(&credential, "refresh").starts_with("gho-"));
    assert!(field(&credential, "access").contains("proxy-ep=proxy.individual.githubcopilot.com"));
    let models: Vec<&str> = credential["availableModelIds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(models.contains(&"gpt-6.1-sol"), "{models:?}");
    assert!(!models.contains(&"embedding-only"), "{models:?}");
    let auth = Provider::GitHubCopilot.request_auth(&credential).unwrap();
    assert_eq!(
        auth.base_url.as_deref(),
        Some("https://api.individual.githubcopilot.com")
    );
    let token_request = mock
        .requests()
        .into_iter()
        .find(|r| r.path == "/copilot_internal/v2/token")
        .unwrap();
    assert_eq!(token_request.header("editor-version"), Some("vscode/1.107.0"));

    // A refresh exchanges the GitHub token again and keeps it.
    let refreshed = Provider::GitHubCopilot
        .refresh(&config(&mock), &credential)
        .await
        .unwrap();
    assert_eq!(field(&refreshed, "refresh"), field(&credential, "refresh"));
    assert_ne!(field(&refreshed, "access"), field(&credential, "access"));
}

#[tokio::test]
async fn refresh_tokens_rotate_and_failures_name_no_token() {
    let mock = OAuthMock::start().await.unwrap();
    let old = mock.issue_refresh_token();
    let mut stored = Credential::new();
    stored.insert("type".into(), "oauth".into());
    stored.insert("refresh".into(), old.clone().into());
    stored.insert("access".into(), "sk-ant-oat01-expired".into());
    stored.insert("expires".into(), 0.into());
    stored.insert("kept".into(), "field".into());
    let fresh = Provider::Anthropic.refresh(&config(&mock), &stored).await.unwrap();
    assert_ne!(field(&fresh, "refresh"), old);
    assert_eq!(field(&fresh, "kept"), "field", "unknown fields survive a refresh");
    assert!(!pi_oauth::needs_refresh(&fresh, pi_oauth::now_ms(), 0));
    // The old refresh token was used up.
    let err = Provider::Anthropic.refresh(&config(&mock), &stored).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("400") && text.contains("invalid_grant"), "{text}");
    assert!(!text.contains(&old) && !text.contains("sk-ant"), "{text}");
}

#[tokio::test]
async fn xai_device_login_polls_until_approved_and_refreshes() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("", Browser::Follow);
    let credential = Provider::Xai.login(&config(&mock), &user).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert_eq!(field(&credential, "type"), "oauth");
    assert!(
        field(&credential, "access").starts_with("sk-ant-oat01-access-"),
        "the mock's token"
    );
    // Stored as expiring five minutes before the server says (the mock's tokens live an hour).
    let lifetime = expires(&credential) - pi_oauth::now_ms();
    assert!((54 * 60_000..=55 * 60_000 + 1000).contains(&lifetime), "{lifetime}");
    let events = user.events.lock().unwrap().clone();
    assert!(
        events.iter().any(
            |e| matches!(e, LoginEvent::DeviceCode { user_code, verification_uri, .. }
            if user_code == "GROK-1234" && verification_uri == "https://accounts.x.ai/device?user_code=GROK-1234")
        ),
        "{events:?}"
    );
    let device_request = mock
        .requests()
        .into_iter()
        .find(|r| r.path == "/oauth2/device/code")
        .unwrap();
    assert_eq!(device_request.field("referrer").as_deref(), Some("pi"));
    assert!(device_request.field("scope").unwrap().contains("offline_access"));
    let polls = mock.requests().iter().filter(|r| r.path == "/oauth2/token").count();
    assert_eq!(polls, 2, "one pending answer, then the tokens");
    assert_eq!(Provider::from_id("xai"), Some(Provider::Xai));
    assert_eq!(
        Provider::Xai.request_auth(&credential).unwrap().api_key,
        field(&credential, "access")
    );

    let refreshed = Provider::Xai.refresh(&config(&mock), &credential).await.unwrap();
    assert_ne!(field(&refreshed, "refresh"), field(&credential, "refresh"), "rotated");
    // The used refresh token is refused the second time, naming no token.
    let err = Provider::Xai
        .refresh(&config(&mock), &credential)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("xAI OAuth token refresh failed (HTTP 400): invalid_grant"),
        "{err}"
    );
    assert!(!err.contains(field(&credential, "refresh")), "{err}");
}

#[tokio::test]
async fn sign_in_with_chatgpt_uses_the_issued_client_and_the_device_id() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("", Browser::Follow);
    let mut cfg = config(&mock);
    // Without a device id the flow refuses before any request.
    let err = Provider::OpenAi.login(&cfg, &user).await.unwrap_err();
    assert!(err.to_string().contains("device ID"), "{err}");
    cfg.device_id = Some("0190A1B2-C3D4-4E5F-8A9B-0123456789AB".into());
    let credential = Provider::OpenAi.login(&cfg, &user).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert_eq!(field(&credential, "clientId"), "app_issued_mock");
    assert!(credential["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "chatgpt.tokens.use.direct"));
    // Three minutes early.
    let lifetime = expires(&credential) - pi_oauth::now_ms();
    assert!((56 * 60_000..=57 * 60_000 + 1000).contains(&lifetime), "{lifetime}");
    let auth = user.auth_url.lock().unwrap().clone().unwrap();
    assert!(
        auth.contains("ext_agent_host_id=urn%3Auuid%3A0190a1b2-c3d4-4e5f-8a9b-0123456789ab"),
        "{auth}"
    );
    let refreshed = Provider::OpenAi.refresh(&cfg, &credential).await.unwrap();
    assert_ne!(field(&refreshed, "refresh"), field(&credential, "refresh"));
    assert_eq!(field(&refreshed, "clientId"), "app_issued_mock");
    let refresh_request = mock
        .requests()
        .into_iter()
        .rfind(|r| r.path == "/api/accounts/oauth/token")
        .unwrap();
    assert_eq!(refresh_request.field("client_id").as_deref(), Some("app_issued_mock"));
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn openrouter_trades_the_code_for_a_key_that_never_expires() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("", Browser::Follow);
    let credential = Provider::OpenRouter.login(&config(&mock), &user).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert!(field(&credential, "access").starts_with("sk-or-v1-"));
    assert_eq!(field(&credential, "refresh"), "");
    assert_eq!(expires(&credential), 9_007_199_254_740_991);
    let auth = url::Url::parse(&user.auth_url.lock().unwrap().clone().unwrap()).unwrap();
    let callback = auth
        .query_pairs()
        .find(|(k, _)| k == "callback_url")
        .unwrap()
        .1
        .into_owned();
    assert!(callback.contains("/oauth/callback/"), "{callback}");
    assert!(!auth.query_pairs().any(|(k, _)| k == "state"));
    // Refreshing keeps the key.
    let same = Provider::OpenRouter.refresh(&config(&mock), &credential).await.unwrap();
    assert_eq!(same, credential);
    assert!(!pi_oauth::needs_refresh(&credential, pi_oauth::now_ms(), 0));
}

#[tokio::test]
async fn kimi_and_meta_device_logins() {
    let mock = OAuthMock::start().await.unwrap();
    let user = User::new("", Browser::Follow);
    let kimi = Provider::KimiCoding.login(&config(&mock), &user).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert!(field(&kimi, "access").starts_with("kimi-access-"));
    assert!(user.events.lock().unwrap().iter().any(|e| matches!(e,
        LoginEvent::DeviceCode { user_code, verification_uri, .. }
        if user_code == "KIMI-0001" && verification_uri.ends_with("?user_code=KIMI-0001"))));
    let refreshed = Provider::KimiCoding.refresh(&config(&mock), &kimi).await.unwrap();
    assert_ne!(field(&refreshed, "access"), field(&kimi, "access"));
    let err = Provider::KimiCoding
        .refresh(&config(&mock), &kimi)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("Kimi Code token refresh unauthorized (status 400)"),
        "{err}"
    );
    // The Kimi host can be named on its own.
    let hosted = Config {
        kimi_host: Some(format!("{}/", mock.url())),
        ..Config::default()
    };
    assert!(Provider::KimiCoding.login(&hosted, &user).await.is_ok());

    let meta_mock = OAuthMock::start().await.unwrap();
    let meta = Provider::Meta.login(&config(&meta_mock), &user).await.unwrap();
    assert_eq!(meta_mock.violations(), Vec::<String>::new());
    assert!(field(&meta, "access").starts_with("meta-key-"));
    assert!(field(&meta, "refresh").starts_with("meta-identity-"));
    let lifetime = expires(&meta) - pi_oauth::now_ms();
    assert!((23 * 3_600_000..=24 * 3_600_000).contains(&lifetime), "{lifetime}");
    let mint = meta_mock
        .requests()
        .into_iter()
        .find(|r| r.path == "/muse-code/key")
        .unwrap();
    assert_eq!(
        mint.header("authorization").map(str::to_string),
        Some(format!("Bearer {}", field(&meta, "refresh")))
    );
    // A refresh mints a new key with the same identity; a dead identity says to sign in again.
    let again = Provider::Meta.refresh(&config(&meta_mock), &meta).await.unwrap();
    assert_ne!(field(&again, "access"), field(&meta, "access"));
    assert_eq!(field(&again, "refresh"), field(&meta, "refresh"));
    let mut dead = meta.clone();
    dead.insert("refresh".into(), "forgotten".into());
    let err = Provider::Meta
        .refresh(&config(&meta_mock), &dead)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("Meta session expired (status 401)"), "{err}");
    assert!(!err.contains("forgotten"), "{err}");
}

#[tokio::test]
async fn radius_browser_and_device_logins_on_the_gateway() {
    let mock = OAuthMock::start().await.unwrap();
    let browser = User::new("browser", Browser::Follow);
    let credential = Provider::Radius.login(&config(&mock), &browser).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert!(field(&credential, "access").starts_with("radius-access-"));
    assert_eq!(field(&credential, "scope"), "gateway offline_access");
    let lifetime = expires(&credential) - pi_oauth::now_ms();
    assert!((58 * 60_000..=59 * 60_000 + 1000).contains(&lifetime), "{lifetime}");
    let auth = browser.auth_url.lock().unwrap().clone().unwrap();
    assert!(auth.starts_with(&format!("{}/oauth/authorize?", mock.url())), "{auth}");
    assert!(
        auth.contains("client_id=pi-gateway") && auth.contains("handoff=url"),
        "{auth}"
    );

    let device = User::new("device-code", Browser::Follow);
    let from_device = Provider::Radius.login(&config(&mock), &device).await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert!(device.events.lock().unwrap().iter().any(|e| matches!(e,
        LoginEvent::DeviceCode { user_code, .. } if user_code == "RADI-0001")));
    let refreshed = Provider::Radius.refresh(&config(&mock), &from_device).await.unwrap();
    assert_ne!(field(&refreshed, "refresh"), field(&from_device, "refresh"));
}

#[test]
fn every_sign_in_of_pi_1_6_is_listed() {
    let ids: Vec<&str> = Provider::ALL.iter().map(|p| p.id()).collect();
    for id in [
        "anthropic",
        "github-copilot",
        "openai-codex",
        "openai",
        "xai",
        "openrouter",
        "kimi-coding",
        "meta",
        "radius",
    ] {
        assert!(ids.contains(&id), "{id}");
        assert_eq!(Provider::from_id(id).map(|p| p.id()), Some(id));
    }
}
