//! `/login` and `/logout` on a pseudo-terminal: the method menu, the provider lists with
//! their credential states, an account sign-in run against the mock authorization server
//! (a question, a device code, the saved result), API-key entry, going back on Escape, and
//! removing what was saved.

use std::time::Duration;

use pi_test_support::oauth::OAuthMock;
use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, Setup, ENTER, ESC};

const DOWN: &str = "\x1b[B";

fn pi_with_oauth(s: &Setup, oauth: &OAuthMock) -> Pty {
    let url = oauth.url();
    let pty = Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        // A browser that does nothing: nothing leaves the machine.
        &[("PI_OAUTH_ORIGIN", url.as_str()), ("BROWSER", "true")],
    );
    pty.wait_text("mock-model");
    pty
}

fn auth_json(s: &Setup) -> serde_json::Value {
    std::fs::read_to_string(s.agent.path().join("auth.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// Escape, and wait until `text` is gone (a key typed right after an Escape would be read
/// as Alt+key).
fn close(pty: &mut Pty, text: &str) {
    pty.send(ESC);
    pty.wait_for("the screen to close", Duration::from_secs(5), |c| !c.contains(text));
}

fn open_account_list(pty: &mut Pty) {
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    assert!(pty.contents().contains("→ Sign in with an account"));
    assert!(pty.contents().contains("Sign in with an API key"));
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
}

#[test]
fn an_account_sign_in_asks_shows_the_code_and_saves_then_logout_removes_it() {
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(OAuthMock::start()).expect("oauth mock");
    let mut pty = pi_with_oauth(&s, &oauth);
    open_account_list(&mut pty);
    for name in ["Anthropic", "GitHub Copilot", "OpenAI Codex"] {
        pty.wait_text(&format!("{name} • not configured"));
    }
    // Typing filters the list; the best match is highlighted.
    pty.type_text("copilot");
    pty.wait_text("→ GitHub Copilot • not configured");
    pty.send(ENTER);
    pty.wait_text("Login to GitHub Copilot");
    pty.wait_text("GitHub Enterprise URL/domain (blank for github.com)");
    assert!(pty.contents().contains("escape/ctrl+c to cancel, enter to submit"));
    pty.send(ENTER);
    pty.wait_for("the signed-in notice", Duration::from_secs(20), |c| {
        c.contains("Logged in to GitHub Copilot. Credentials saved to")
    });
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("WXYZ-9876"), "the device code was shown");
    assert!(raw.contains("Waiting for authentication..."));
    assert_eq!(auth_json(&s)["github-copilot"]["type"], "oauth");
    assert_eq!(oauth.violations(), Vec::<String>::new());

    // The list says what is configured now, and /logout removes it.
    open_account_list(&mut pty);
    pty.wait_text("GitHub Copilot ✓ stored");
    pty.send(ESC);
    pty.wait_text("Select authentication method:");
    close(&mut pty, "Select authentication method:");
    pty.type_text("/logout");
    pty.send(ENTER);
    pty.wait_text("Select provider to logout:");
    pty.wait_text("→ GitHub Copilot ✓ configured");
    pty.send(ENTER);
    pty.wait_text("Logged out of GitHub Copilot");
    assert!(auth_json(&s).get("github-copilot").is_none());
    quit(&mut pty);
}

#[test]
fn escape_on_a_sign_in_question_goes_back_to_the_list_and_saves_nothing() {
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(OAuthMock::start()).expect("oauth mock");
    let mut pty = pi_with_oauth(&s, &oauth);
    open_account_list(&mut pty);
    pty.type_text("copilot");
    pty.send(ENTER);
    pty.wait_text("GitHub Enterprise URL/domain");
    pty.send(ESC);
    pty.wait_for("the provider list again", Duration::from_secs(10), |c| {
        c.contains("Select provider to configure:") && !c.contains("Login to GitHub Copilot")
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pty.contents().contains("Failed to login"), "{}", pty.contents());
    assert!(auth_json(&s).get("github-copilot").is_none());
    pty.send(ESC);
    pty.wait_text("Select authentication method:");
    close(&mut pty, "Select authentication method:");
    quit(&mut pty);
}

#[test]
fn an_api_key_is_entered_saved_and_listed_as_configured() {
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(OAuthMock::start()).expect("oauth mock");
    let mut pty = pi_with_oauth(&s, &oauth);
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    // models.json's key is shown as such; the account-only providers are not offered.
    pty.type_text("mock-anthropic");
    pty.wait_text("→ mock-anthropic ✓ models_json_key");
    assert!(!pty.contents().contains("OpenAI Codex"));
    pty.send(ENTER);
    pty.wait_text("Login to mock-anthropic");
    pty.wait_text("Enter mock-anthropic API key");
    pty.type_text("sk-typed-key");
    pty.send(ENTER);
    pty.wait_text("Saved API key for mock-anthropic. Credentials saved to");
    let auth = auth_json(&s);
    assert_eq!(auth["mock-anthropic"]["type"], "api_key");
    assert_eq!(auth["mock-anthropic"]["key"], "sk-typed-key");
    // /login with the provider's name goes straight to its key entry; Escape closes it.
    // (Escape first closes the provider completions, on which Enter would only complete.)
    pty.type_text("/login mock-anthropic");
    let menu_open = |pty: &Pty| pty.rows().iter().any(|r| r.starts_with("→ mock-anthropic"));
    pty.wait_for("the completions", Duration::from_secs(5), |_| menu_open(&pty));
    pty.send(ESC);
    pty.wait_for("the completions closed", Duration::from_secs(5), |_| !menu_open(&pty));
    pty.send(ENTER);
    pty.wait_text("Enter mock-anthropic API key");
    pty.send(ESC);
    pty.wait_for("the key entry closed", Duration::from_secs(5), |c| {
        !c.contains("Enter mock-anthropic API key")
    });
    quit(&mut pty);
}

/// pi with the `oauth_login.ts` extension (a provider with its own sign-in), on `/login`'s
/// account list; `None` (a skip) without Node and the extension modules.
fn extension_sign_in_list(test: &str) -> Option<(Setup, Pty)> {
    let (node, modules) = super::extensions::extension_env(test)?;
    let s = setup(Script::sequential(vec![]));
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/oauth_login.ts");
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut pty = Pty::spawn_env(
        &["-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[
            ("PI_NODE", &node),
            ("PI_EXTENSION_MODULES", &modules),
            ("BROWSER", "true"),
        ],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    open_account_list(&mut pty);
    Some((s, pty))
}

#[test]
fn an_extension_providers_own_sign_in_runs_in_login_and_is_saved() {
    let test = "an_extension_providers_own_sign_in_runs_in_login_and_is_saved";
    let Some((s, mut pty)) = extension_sign_in_list(test) else {
        return;
    };
    // Listed with the other account sign-ins, under its sign-in's name.
    pty.type_text("Ext SSO");
    pty.wait_text("→ Ext SSO • not configured");
    pty.send(ENTER);
    pty.wait_text("Login to Ext SSO");
    // The extension's URL and instructions, then its question.
    pty.wait_text("Finish signing in in the browser");
    pty.wait_text("Paste the SSO code");
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("sso.example.test/authorize"), "the URL was shown");
    pty.type_text("c0de");
    pty.send(ENTER);
    pty.wait_for("the signed-in notice", Duration::from_secs(20), |c| {
        c.contains("Logged in to Ext SSO. Credentials saved to")
    });
    // Stored as pi stores a login: its type, then what the extension returned.
    let saved = auth_json(&s)["ext-sso"].clone();
    assert_eq!(
        saved,
        serde_json::json!({"type": "oauth", "refresh": "r-c0de", "access": "a-c0de", "expires": 4102444800000u64, "account": "ada"})
    );
    let keys: Vec<String> = saved.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys[0], "type");
    quit(&mut pty);
}

#[test]
fn escape_on_an_extension_sign_in_cancels_it_and_saves_nothing() {
    let test = "escape_on_an_extension_sign_in_cancels_it_and_saves_nothing";
    let Some((s, mut pty)) = extension_sign_in_list(test) else {
        return;
    };
    pty.type_text("Ext SSO");
    pty.wait_text("→ Ext SSO • not configured");
    pty.send(ENTER);
    pty.wait_text("Paste the SSO code");
    pty.send(ESC);
    pty.wait_for("the provider list again", Duration::from_secs(10), |c| {
        c.contains("Select provider to configure:") && !c.contains("Login to Ext SSO")
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pty.contents().contains("Failed to login"), "{}", pty.contents());
    assert!(auth_json(&s).get("ext-sso").is_none(), "{}", auth_json(&s));
    pty.send(ESC);
    pty.wait_text("Select authentication method:");
    close(&mut pty, "Select authentication method:");
    quit(&mut pty);
}

/// A models.json provider with `"oauth": "radius"` is offered under its name and signs in
/// to its own gateway (no `PI_OAUTH_ORIGIN` involved: its `baseUrl` names the mock).
#[test]
fn a_models_json_radius_gateway_is_listed_and_signs_in() {
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(OAuthMock::start()).expect("oauth mock");
    let models_path = s.agent.path().join("models.json");
    let mut models: serde_json::Value = std::fs::read_to_string(&models_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({"providers": {}}));
    models["providers"]["corp"] = serde_json::json!({
        "name": "Corp Gateway", "baseUrl": format!("{}/v1", oauth.url()), "oauth": "radius"
    });
    std::fs::write(&models_path, models.to_string()).unwrap();
    let mut pty = pi_with_oauth(&s, &oauth);
    open_account_list(&mut pty);
    pty.wait_text("Corp Gateway • not configured");
    pty.type_text("corp gateway");
    pty.wait_text("→ Corp Gateway • not configured");
    pty.send(ENTER);
    pty.wait_text("Sign in to Corp Gateway:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_for("the signed-in notice", Duration::from_secs(20), |c| {
        c.contains("Logged in to Corp Gateway. Credentials saved to")
    });
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(raw.contains("RADI-0001"), "the device code was shown");
    let saved = auth_json(&s);
    assert_eq!(saved["corp"]["type"], "oauth", "{saved}");
    assert_eq!(saved["corp"]["scope"], "gateway offline_access");
    assert_eq!(oauth.violations(), Vec::<String>::new());
    quit(&mut pty);
}

/// Online, signing in to a models.json Radius gateway fetches its model list with the new
/// token, and the model picker offers those models.
#[test]
fn an_online_gateway_sign_in_brings_the_gateway_s_models_to_the_picker() {
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(OAuthMock::start()).expect("oauth mock");
    let models_path = s.agent.path().join("models.json");
    let mut models: serde_json::Value = std::fs::read_to_string(&models_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({"providers": {}}));
    models["providers"]["corp"] = serde_json::json!({
        "name": "Corp Gateway", "baseUrl": format!("{}/v1", oauth.url()), "oauth": "radius"
    });
    std::fs::write(&models_path, models.to_string()).unwrap();
    let url = oauth.url();
    let mut pty = Pty::spawn_unset(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_OAUTH_ORIGIN", url.as_str()), ("BROWSER", "true")],
        // Online: without PI_OFFLINE (set at all, even empty, keeps catalogues offline).
        &["PI_OFFLINE"],
    );
    pty.wait_text("mock-model");
    open_account_list(&mut pty);
    pty.type_text("corp gateway");
    pty.wait_text("→ Corp Gateway • not configured");
    pty.send(ENTER);
    pty.wait_text("Sign in to Corp Gateway:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_for("the signed-in notice", Duration::from_secs(20), |c| {
        c.contains("Logged in to Corp Gateway. Credentials saved to")
    });
    let access = auth_json(&s)["corp"]["access"].as_str().unwrap_or_default().to_string();
    let fetched: Vec<_> = oauth
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/config")
        .collect();
    assert!(!fetched.is_empty(), "the sign-in fetched the list");
    assert_eq!(
        fetched[0].header("authorization"),
        Some(format!("Bearer {access}").as_str())
    );
    // `/model`'s completion offers the gateway's models; picking one selects it.
    pty.type_text("/model gw-");
    pty.wait_text("gw-deep");
    pty.send(ENTER);
    pty.wait_text("/model corp/gw-fast");
    pty.send(ENTER);
    pty.wait_text("(corp) gw-fast");
    quit(&mut pty);
}

/// Online, a Radius key entered in `/login` fetches the gateway's list with that key (the
/// built-in gateway moved to the mock by `PI_OAUTH_ORIGIN`), and its models are offered.
#[test]
fn an_online_radius_key_fetches_the_gateway_s_models() {
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(OAuthMock::start()).expect("oauth mock");
    let url = oauth.url();
    let mut pty = Pty::spawn_unset(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_OAUTH_ORIGIN", url.as_str()), ("BROWSER", "true")],
        // Online: without PI_OFFLINE (set at all, even empty, keeps catalogues offline).
        &["PI_OFFLINE"],
    );
    pty.wait_text("mock-model");
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("radius");
    pty.wait_text("→ Radius");
    pty.send(ENTER);
    pty.wait_text("API key");
    pty.type_text(pi_test_support::oauth::MOCK_RADIUS_KEY);
    pty.send(ENTER);
    pty.wait_text("Saved API key for Radius. Credentials saved to");
    let fetched: Vec<_> = oauth
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/config")
        .collect();
    assert_eq!(fetched.len(), 1);
    assert_eq!(
        fetched[0].header("authorization"),
        Some(format!("Bearer {}", pi_test_support::oauth::MOCK_RADIUS_KEY).as_str())
    );
    pty.type_text("/model gw-");
    pty.wait_text("gw-deep");
    pty.send(ENTER);
    pty.wait_text("/model radius/gw-fast");
    pty.send(ENTER);
    pty.wait_text("(radius) gw-fast");
    quit(&mut pty);
}

/// A models.json Radius gateway is offered for a key before its list is fetched, as pi 1.6
/// offers it (Radius's key method); online, the key fetches the gateway's models.
#[test]
fn a_gateway_is_offered_for_a_key_and_the_key_fetches_its_models() {
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(OAuthMock::start()).expect("oauth mock");
    let models_path = s.agent.path().join("models.json");
    let mut models: serde_json::Value = std::fs::read_to_string(&models_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({"providers": {}}));
    models["providers"]["corp"] = serde_json::json!({
        "name": "Corp Gateway", "baseUrl": format!("{}/v1", oauth.url()), "oauth": "radius"
    });
    std::fs::write(&models_path, models.to_string()).unwrap();
    let url = oauth.url();
    let mut pty = Pty::spawn_unset(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_OAUTH_ORIGIN", url.as_str()), ("BROWSER", "true")],
        // Online: without PI_OFFLINE (set at all, even empty, keeps catalogues offline).
        &["PI_OFFLINE"],
    );
    pty.wait_text("mock-model");
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("corp gateway");
    pty.wait_text("→ Corp Gateway");
    pty.send(ENTER);
    pty.wait_text("API key");
    pty.type_text(pi_test_support::oauth::MOCK_RADIUS_KEY);
    pty.send(ENTER);
    pty.wait_text("Saved API key for Corp Gateway. Credentials saved to");
    let fetched: Vec<_> = oauth
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/config")
        .collect();
    assert_eq!(fetched.len(), 1);
    pty.type_text("/model gw-");
    pty.wait_text("gw-deep");
    pty.send(ENTER);
    pty.wait_text("/model corp/gw-fast");
    pty.send(ENTER);
    pty.wait_text("(corp) gw-fast");
    quit(&mut pty);
}
