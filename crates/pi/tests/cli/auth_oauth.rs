//! Account sign-in through the binary against the mock authorization server: tokens
//! refreshed before they expire and saved, two processes racing for one refresh, and
//! `pi auth login` on a terminal (browser callback and device code).

use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use pi_test_support::oauth::{OAuthMock, MOCK_CHATGPT_ACCOUNT};
use pi_test_support::Script;
use serde_json::Value;

use crate::harness::{pi_bin, Fixture, Mock, Run};

struct Env {
    rt: tokio::runtime::Runtime,
    oauth: OAuthMock,
    llm: Mock,
    fx: Fixture,
}

fn setup() -> Env {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let oauth = rt.block_on(OAuthMock::start()).unwrap();
    let llm = Mock::start(Script::echo());
    let fx = Fixture::new(&llm);
    Env { rt, oauth, llm, fx }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

impl Env {
    fn pi(&self, args: &[&str]) -> crate::harness::Pi {
        let mut pi = self.fx.pi(args);
        pi.cmd.env("PI_OAUTH_ORIGIN", self.oauth.url());
        pi
    }

    fn auth_json(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.fx.agent.path().join("auth.json")).unwrap()).unwrap()
    }

    /// An Anthropic login that expires in `ms`, with a refresh token the mock accepts once.
    fn store_anthropic_login(&self, ms: i64) -> String {
        let refresh = self.oauth.issue_refresh_token();
        let entry = serde_json::json!({"anthropic": {"type": "oauth", "refresh": refresh, "access": "sk-ant-oat01-old",
            "expires": now_ms() + ms}, "openai": {"type": "api_key", "key": "sk-kept"}});
        self.fx.agent.write("auth.json", entry.to_string()).unwrap();
        refresh
    }
}

#[test]
fn an_expiring_token_is_refreshed_saved_and_printed() {
    let env = setup();
    let old_refresh = env.store_anthropic_login(60_000);
    let run = env.pi(&["auth", "print-bearer-token", "--provider", "anthropic"]).run();
    assert_eq!(run.code, 0, "{run:?}");
    let saved = env.auth_json();
    let access = saved["anthropic"]["access"].as_str().unwrap();
    assert!(access.starts_with("sk-ant-oat01-access-"), "{saved}");
    assert_eq!(run.stdout, format!("{access}\n"));
    assert_ne!(saved["anthropic"]["refresh"], old_refresh.as_str());
    assert!(saved["anthropic"]["expires"].as_i64().unwrap() > now_ms() + 50 * 60_000);
    assert_eq!(saved["openai"]["key"], "sk-kept", "other entries survive");
    assert_eq!(env.oauth.refresh_count(), 1);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(env.fx.agent.path().join("auth.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // Valid for more than five minutes now: used as it is.
    let again = env.pi(&["auth", "print-bearer-token", "--provider", "anthropic"]).run();
    assert_eq!(again.stdout, run.stdout);
    assert_eq!(env.oauth.refresh_count(), 1);
}

#[test]
fn a_failed_refresh_names_no_token() {
    let env = setup();
    env.store_anthropic_login(0);
    // The mock forgets the refresh token: it was used elsewhere.
    let saved = env.auth_json();
    let mut broken = saved.clone();
    broken["anthropic"]["refresh"] = "revoked-refresh".into();
    env.fx.agent.write("auth.json", broken.to_string()).unwrap();
    let run = env.pi(&["auth", "print-bearer-token", "--provider", "anthropic"]).run();
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("OAuth refresh failed for anthropic"), "{run:?}");
    assert!(run.stderr.contains("invalid_grant"), "{run:?}");
    assert!(
        !run.stderr.contains("revoked-refresh") && !run.stderr.contains("sk-ant-oat01-old"),
        "{run:?}"
    );
}

#[test]
fn two_processes_racing_refresh_once_and_lose_no_token() {
    let env = setup();
    env.store_anthropic_login(1_000);
    // Each refresh answer takes a while, so both processes want the refresh at once.
    env.oauth.set_refresh_delay(Duration::from_millis(400));
    let spawn = || {
        let pi = env.pi(&["auth", "print-bearer-token", "--provider", "anthropic"]);
        std::thread::spawn(move || pi.run())
    };
    let (a, b) = (spawn(), spawn());
    let (a, b): (Run, Run) = (a.join().unwrap(), b.join().unwrap());
    assert_eq!((a.code, b.code), (0, 0), "{a:?} {b:?}");
    assert_eq!(a.stdout, b.stdout, "both use the one refreshed token");
    assert_eq!(env.oauth.refresh_count(), 1);
    assert_eq!(
        env.oauth.violations(),
        Vec::<String>::new(),
        "a refresh token was used twice"
    );
    let saved = env.auth_json();
    assert_eq!(a.stdout.trim(), saved["anthropic"]["access"].as_str().unwrap());
    // The saved refresh token is the live one: the next refresh works.
    let mut expired = saved.clone();
    expired["anthropic"]["expires"] = 0.into();
    env.fx.agent.write("auth.json", expired.to_string()).unwrap();
    env.oauth.set_refresh_delay(Duration::ZERO);
    let next = env.pi(&["auth", "print-bearer-token", "--provider", "anthropic"]).run();
    assert_eq!(next.code, 0, "{next:?}");
    assert_eq!(env.oauth.refresh_count(), 2);
}

/// A refresh in one process and an API key saved by another while the refresh is in flight:
/// the two writes to auth.json are serialised, so the file ends with both (and every other
/// entry), and the refreshed token is the one the first process printed.
#[test]
fn a_key_saved_during_another_process_refresh_is_kept() {
    let env = setup();
    env.store_anthropic_login(1_000);
    env.oauth.set_refresh_delay(Duration::from_millis(1_500));
    let refresher = {
        let pi = env.pi(&["auth", "print-bearer-token", "--provider", "anthropic"]);
        std::thread::spawn(move || pi.run())
    };
    // Wait until the refresh request is at the authorization server, then save a key.
    let start = Instant::now();
    while env.oauth.requests().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(20), "the refresh never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (code, screen) = run_on_terminal(&env, &["auth", "login", "openai", "--api-key"], |screen| {
        screen
            .contains("Enter OpenAI API key:")
            .then(|| b"sk-typed-during-refresh\r".to_vec())
    });
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Saved API key for OpenAI"), "{screen}");
    let refreshed: Run = refresher.join().unwrap();
    assert_eq!(refreshed.code, 0, "{refreshed:?}");
    assert_eq!(env.oauth.refresh_count(), 1);

    let saved = env.auth_json();
    assert_eq!(
        saved["openai"],
        serde_json::json!({"type": "api_key", "key": "sk-typed-during-refresh"})
    );
    assert_eq!(saved["anthropic"]["type"], "oauth", "{saved}");
    assert_eq!(
        refreshed.stdout.trim(),
        saved["anthropic"]["access"].as_str().unwrap(),
        "the refreshed login was lost"
    );
    assert_eq!(env.oauth.violations(), Vec::<String>::new());
}

/// `pi auth login …` on a pseudo-terminal; `on_output` sees the screen so far and may act
/// (once) when it returns true.
fn login_on_terminal(env: &Env, args: &[&str], mut on_output: impl FnMut(&str) -> bool) -> (i32, String) {
    run_on_terminal(env, args, |screen| on_output(screen).then(Vec::new))
}

/// `pi …` on a pseudo-terminal; `on_output` sees the screen so far and may answer (once) with
/// bytes to type.
fn run_on_terminal(env: &Env, args: &[&str], mut on_output: impl FnMut(&str) -> Option<Vec<u8>>) -> (i32, String) {
    let mut acted = false;
    terminal_session(env, args, |screen| {
        if acted {
            return None;
        }
        let typed = on_output(screen);
        acted = typed.is_some();
        typed
    })
}

/// `pi …` on a pseudo-terminal, typing each answer once the screen shows its prompt (after
/// the previous answer's).
fn type_on_terminal(env: &Env, args: &[&str], answers: &[(&str, &str)]) -> (i32, String) {
    let mut next = 0;
    terminal_session(env, args, |screen| {
        let (prompt, typed) = answers.get(next)?;
        screen.contains(prompt).then(|| {
            next += 1;
            typed.as_bytes().to_vec()
        })
    })
}

/// `pi …` on a pseudo-terminal; `on_output` sees the screen so far after every read and may
/// answer with bytes to type.
fn terminal_session(env: &Env, args: &[&str], on_output: impl FnMut(&str) -> Option<Vec<u8>>) -> (i32, String) {
    terminal_session_with(env, args, false, on_output)
}

/// [`terminal_session`], `online` without the agent dir's `PI_OFFLINE`.
fn terminal_session_with(
    env: &Env,
    args: &[&str],
    online: bool,
    on_output: impl FnMut(&str) -> Option<Vec<u8>>,
) -> (i32, String) {
    terminal_session_of(pi_bin(), env, args, online, on_output)
}

/// [`terminal_session_with`] running `program` (ours or the reference's).
fn terminal_session_of(
    program: &std::path::Path,
    env: &Env,
    args: &[&str],
    online: bool,
    mut on_output: impl FnMut(&str) -> Option<Vec<u8>>,
) -> (i32, String) {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap().into_string().unwrap();
    let slave = std::fs::OpenOptions::new().read(true).write(true).open(&name).unwrap();
    let mut child = Command::new("setsid")
        .arg("--ctty")
        .arg(program)
        .args(args)
        .current_dir(&env.fx.proj)
        .envs(
            env.fx
                .agent
                .env()
                .into_iter()
                .filter(|(k, _)| !online || k != "PI_OFFLINE"),
        )
        .env("PI_OAUTH_ORIGIN", env.oauth.url())
        .env("PI_OAUTH_CALLBACK_PORT", "0")
        // A browser that does nothing: the test follows the URL itself.
        .env("BROWSER", "true")
        .env("TERM", "xterm-256color")
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave)
        .spawn()
        .unwrap();
    let mut reader = std::fs::File::from(master);
    let mut writer = reader.try_clone().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut screen = String::new();
    let start = Instant::now();
    let status = loop {
        if let Ok(bytes) = rx.recv_timeout(Duration::from_millis(20)) {
            screen.push_str(&String::from_utf8_lossy(&bytes));
        }
        if let Some(typed) = on_output(&screen) {
            writer.write_all(&typed).unwrap();
        }
        if let Some(status) = child.try_wait().unwrap() {
            while let Ok(bytes) = rx.recv_timeout(Duration::from_millis(50)) {
                screen.push_str(&String::from_utf8_lossy(&bytes));
            }
            break status;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("login did not finish: {screen:?}");
        }
    };
    let _ = std::io::stdout().flush();
    (status.code().unwrap_or(-1), screen)
}

#[test]
fn browser_login_on_a_terminal_saves_the_credential() {
    let env = setup();
    let handle = env.rt.handle().clone();
    let (code, screen) = login_on_terminal(&env, &["auth", "login", "anthropic"], |screen| {
        let Some(at) = screen.find("Open this URL to sign in:") else {
            return false;
        };
        let Some(url) = screen[at..].split_whitespace().find(|w| w.starts_with("http://")) else {
            return false;
        };
        let url = url.to_string();
        // The browser: the mock redirects it into pi's loopback callback.
        handle.spawn(async move {
            let _ = reqwest::get(&url).await;
        });
        true
    });
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Logged in to Anthropic"), "{screen}");
    assert!(
        screen.contains("To use \"Copy code login (headless)\" instead, run \"pi auth login anthropic --no-browser\""),
        "{screen}"
    );
    assert_eq!(env.oauth.violations(), Vec::<String>::new());
    let saved = env.auth_json();
    assert_eq!(saved["anthropic"]["type"], "oauth");
    assert!(saved["anthropic"]["access"]
        .as_str()
        .unwrap()
        .starts_with("sk-ant-oat01-"));
    assert!(
        !screen.contains(saved["anthropic"]["access"].as_str().unwrap()),
        "the token is not shown"
    );
}

#[test]
fn a_cloudflare_key_login_asks_for_the_account_and_keeps_it_with_the_key() {
    let env = setup();
    let (code, screen) = type_on_terminal(
        &env,
        &["auth", "login", "cloudflare-workers-ai", "--api-key"],
        &[
            ("Enter Cloudflare API key: ", "cf-key\r"),
            ("Enter Cloudflare account ID: ", "acct42\r"),
        ],
    );
    assert_eq!(code, 0, "{screen}");
    assert!(!screen.contains("cf-key"), "the key is not echoed: {screen}");
    assert!(screen.contains("acct42"), "the account id is: {screen}");
    assert!(screen.contains("Saved API key for Cloudflare Workers AI."), "{screen}");
    assert_eq!(
        env.auth_json()["cloudflare-workers-ai"].to_string(),
        r#"{"type":"api_key","key":"cf-key","env":{"CLOUDFLARE_ACCOUNT_ID":"acct42"}}"#
    );
}

#[test]
fn device_code_login_on_a_terminal() {
    let env = setup();
    let (code, screen) = login_on_terminal(&env, &["auth", "login", "openai-codex", "--no-browser"], |_| false);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Select OpenAI Codex login method: Device code login (headless)"),
        "{screen}"
    );
    assert!(screen.contains("and enter code: ABCD-1234"), "{screen}");
    let saved = env.auth_json();
    assert_eq!(saved["openai-codex"]["accountId"], MOCK_CHATGPT_ACCOUNT);
    assert_eq!(env.oauth.violations(), Vec::<String>::new());
}

#[test]
fn a_prompt_refreshes_an_expiring_login_before_its_request() {
    let env = setup();
    env.store_anthropic_login(60_000);
    // The built-in provider, pointed at the mock LLM.
    let models_path = env.fx.agent.path().join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&models_path).unwrap()).unwrap();
    models["providers"]["anthropic"] =
        serde_json::json!({"baseUrl": env.llm.server.base_url_for(pi_test_support::Api::Anthropic)});
    std::fs::write(&models_path, models.to_string()).unwrap();
    let run = env
        .pi(&["-p", "--provider", "anthropic", "--model", "claude-opus-5-5", "hello"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let saved = env.auth_json();
    let access = saved["anthropic"]["access"].as_str().unwrap();
    assert!(access.starts_with("sk-ant-oat01-access-"), "{saved}");
    let requests = env.llm.requests();
    let request = requests.last().expect("a request");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {access}").as_str())
    );
    let betas = request.header("anthropic-beta").unwrap_or_default();
    assert!(betas.contains("oauth-2025-04-20"), "{betas}");
    assert_eq!(env.oauth.refresh_count(), 1);
}

/// The sign-ins 1.6 added, through the binary: Meta's device grant and key mint, whose
/// "refresh" mints a new key; Radius's device method picked by `--no-browser`.
#[test]
fn meta_and_radius_logins_on_a_terminal_and_meta_s_key_renewal() {
    let env = setup();
    let (code, screen) = login_on_terminal(&env, &["auth", "login", "meta", "--no-browser"], |_| false);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("and enter code: META-0001"), "{screen}");
    assert!(screen.contains("Enabling Meta Model API access..."), "{screen}");
    let saved = env.auth_json();
    let key = saved["meta"]["access"].as_str().unwrap().to_string();
    assert!(key.starts_with("meta-key-"), "{saved}");
    assert!(!screen.contains(&key), "the key is not shown");

    // The key expires: print-bearer-token mints another with the stored identity.
    let mut expired = saved.clone();
    expired["meta"]["expires"] = (now_ms() - 1).into();
    env.fx.agent.write("auth.json", expired.to_string()).unwrap();
    let run = env.pi(&["auth", "print-bearer-token", "--provider", "meta"]).run();
    assert_eq!(run.code, 0, "{run:?}");
    let renewed = env.auth_json();
    assert_ne!(renewed["meta"]["access"], key.as_str());
    assert_eq!(run.stdout, format!("{}\n", renewed["meta"]["access"].as_str().unwrap()));
    assert_eq!(renewed["meta"]["refresh"], saved["meta"]["refresh"]);

    let (code, screen) = login_on_terminal(&env, &["auth", "login", "radius", "--no-browser"], |_| false);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Sign in to Radius: Sign in with device code (when signing in from another device)"),
        "{screen}"
    );
    assert!(screen.contains("and enter code: RADI-0001"), "{screen}");
    assert_eq!(env.auth_json()["radius"]["scope"], "gateway offline_access");
    assert_eq!(env.oauth.violations(), Vec::<String>::new());
}

/// A models.json provider with `"oauth": "radius"` signs in to its own gateway (its
/// `baseUrl` without `/v1`), keeps its own auth.json entry, renews it there and sends the
/// token with its requests.
#[test]
fn a_models_json_radius_gateway_signs_in_refreshes_and_sends_its_token() {
    let env = setup();
    let models_path = env.fx.agent.path().join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&models_path).unwrap()).unwrap();
    models["providers"]["corp"] = serde_json::json!({
        "name": "Corp Gateway",
        "baseUrl": format!("{}/v1", env.oauth.url()),
        "oauth": "radius",
        "models": [{"id": "corp-chat", "api": "openai-completions",
            "baseUrl": env.llm.server.base_url_for(pi_test_support::Api::Openai)}]
    });
    std::fs::write(&models_path, models.to_string()).unwrap();

    let (code, screen) = login_on_terminal(&env, &["auth", "login", "corp", "--no-browser"], |_| false);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Sign in to Corp Gateway: Sign in with device code (when signing in from another device)"),
        "{screen}"
    );
    assert!(screen.contains("Logged in to Corp Gateway"), "{screen}");
    let saved = env.auth_json();
    assert_eq!(saved["corp"]["type"], "oauth", "{saved}");
    assert_eq!(saved["corp"]["scope"], "gateway offline_access");
    assert!(
        saved.get("radius").is_none(),
        "the built-in entry is untouched: {saved}"
    );

    // Expired: renewed at the gateway of baseUrl (no PI_OAUTH_ORIGIN here).
    let mut expired = saved.clone();
    expired["corp"]["expires"] = (now_ms() - 1).into();
    env.fx.agent.write("auth.json", expired.to_string()).unwrap();
    let refreshes = env.oauth.refresh_count();
    let run = env.fx.pi(["auth", "print-bearer-token", "--provider", "corp"]).run();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(env.oauth.refresh_count(), refreshes + 1);
    let renewed = env.auth_json();
    let access = renewed["corp"]["access"].as_str().unwrap().to_string();
    assert_ne!(renewed["corp"]["access"], saved["corp"]["access"]);
    assert_eq!(run.stdout, format!("{access}\n"));

    let run = env
        .fx
        .pi(["-p", "--provider", "corp", "--model", "corp-chat", "hello"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    let requests = env.llm.requests();
    let request = requests.last().expect("a request");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {access}").as_str())
    );
    assert_eq!(env.oauth.violations(), Vec::<String>::new());
}

/// Without a login, a models.json Radius gateway uses the environment's `RADIUS_API_KEY`, as
/// the built-in Radius does.
#[test]
fn a_models_json_radius_gateway_takes_the_radius_key_of_the_environment() {
    let env = setup();
    let models_path = env.fx.agent.path().join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&models_path).unwrap()).unwrap();
    models["providers"]["corp"] = serde_json::json!({
        "baseUrl": format!("{}/v1", env.oauth.url()),
        "oauth": "radius",
        "models": [{"id": "corp-chat", "api": "openai-completions",
            "baseUrl": env.llm.server.base_url_for(pi_test_support::Api::Openai)}]
    });
    std::fs::write(&models_path, models.to_string()).unwrap();
    let mut pi = env.fx.pi(["--list-models"]);
    pi.cmd.env_remove("RADIUS_API_KEY");
    let run = pi.run();
    assert!(!run.stdout.contains("corp-chat"), "no key, not available: {run:?}");
    let mut pi = env.fx.pi(["-p", "--provider", "corp", "--model", "corp-chat", "hello"]);
    pi.cmd.env("RADIUS_API_KEY", "radius-env-key");
    let run = pi.run();
    assert_eq!(run.code, 0, "{run:?}");
    let requests = env.llm.requests();
    let request = requests.last().expect("a request");
    assert_eq!(request.header("authorization"), Some("Bearer radius-env-key"));
}

/// A models.json Radius gateway signed in through the browser: the gateway's discovery names
/// the authorization endpoint, the mock (playing the browser) redirects into pi's loopback
/// callback and checks PKCE, state and the redirect URI when the code is exchanged at the
/// gateway. The entry saved is the one 1.6 writes (`type`, `access`, `refresh`, `expires`,
/// `scope`), and the sign-in fetches the gateway's model list with the new token.
#[test]
fn a_models_json_radius_gateway_signs_in_through_the_browser() {
    let env = setup();
    let models = serde_json::json!({"providers": {"corp": {
        "name": "Corp Gateway",
        "baseUrl": format!("{}/v1", env.oauth.url()),
        "oauth": "radius"
    }}});
    env.fx.agent.write("models.json", models.to_string()).unwrap();
    let handle = env.rt.handle().clone();
    let (code, screen) = login_on_terminal(&env, &["auth", "login", "corp"], |screen| {
        let Some(at) = screen.find("Open this URL to sign in:") else {
            return false;
        };
        let Some(url) = screen[at..].split_whitespace().find(|w| w.starts_with("http://")) else {
            return false;
        };
        let url = url.to_string();
        handle.spawn(async move {
            let _ = reqwest::get(&url).await;
        });
        true
    });
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Listening for OAuth callback on http://127.0.0.1:"),
        "{screen}"
    );
    assert!(screen.contains("Continue in your browser."), "{screen}");
    assert!(
        screen.contains(
            "To use \"Sign in with device code (when signing in from another device)\" instead, run \"pi auth login corp --no-browser\""
        ),
        "{screen}"
    );
    assert!(screen.contains("Logged in to Corp Gateway"), "{screen}");
    assert_eq!(env.oauth.violations(), Vec::<String>::new());

    let requests = env.oauth.requests();
    let authorize = requests
        .iter()
        .find(|r| r.path == "/oauth/authorize")
        .expect("the browser step");
    let query = |k: &str| {
        authorize
            .query
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert_eq!(query("client_id"), "pi-gateway");
    assert_eq!(query("scope"), "gateway offline_access");
    assert_eq!(query("handoff"), "url");
    assert!(query("redirect_uri").ends_with("/oauth/callback"), "{authorize:?}");
    let exchange = requests
        .iter()
        .find(|r| r.path == "/v1/oauth/token")
        .expect("the code exchange");
    assert_eq!(exchange.field("grant_type").as_deref(), Some("authorization_code"));
    assert_eq!(exchange.field("redirect_uri"), Some(query("redirect_uri")));

    let text = std::fs::read_to_string(env.fx.agent.path().join("auth.json")).unwrap();
    let saved: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    let entry = saved["corp"].as_object().unwrap();
    let keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "access", "refresh", "expires", "scope"], "{text}");
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["scope"], "gateway offline_access");
    let access = entry["access"].as_str().unwrap();
    assert!(access.starts_with("radius-access-"), "{text}");
    assert!(!screen.contains(access), "the token is not shown");
    // An hour from the mock's answer, less 1.6's minute of skew.
    let left = entry["expires"].as_i64().unwrap() - now_ms();
    assert!((3_500_000..=3_540_000).contains(&left), "{left}");
    assert!(saved.get("radius").is_none(), "{text}");
    // Offline (the test agent dir's default) the sign-in fetches no model list.
    assert!(!requests.iter().any(|r| r.path == "/v1/config"));
}

/// Online, the sign-in fetches the gateway's model list with the new token, so its models are
/// listed at once.
#[test]
fn an_online_gateway_sign_in_fetches_the_gateway_s_models() {
    let env = setup();
    let models = serde_json::json!({"providers": {"corp": {
        "baseUrl": format!("{}/v1", env.oauth.url()),
        "oauth": "radius"
    }}});
    env.fx.agent.write("models.json", models.to_string()).unwrap();
    let (code, screen) = terminal_session_with(&env, &["auth", "login", "corp", "--no-browser"], true, |_| None);
    assert_eq!(code, 0, "{screen}");
    let access = env.auth_json()["corp"]["access"].as_str().unwrap().to_string();
    let config: Vec<_> = env
        .oauth
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/config")
        .collect();
    assert_eq!(config.len(), 1, "{screen}");
    assert_eq!(
        config[0].header("authorization"),
        Some(format!("Bearer {access}").as_str())
    );
    let run = env.pi(&["--list-models", "corp"]).run();
    assert!(
        run.stdout.contains("gw-fast") && run.stdout.contains("gw-deep"),
        "{run:?}"
    );
}

/// The device sign-in to a models.json gateway saves the same auth.json entry as pi 1.6: the
/// same fields in the same order.
#[test]
fn a_gateway_device_sign_in_saves_the_entry_pi_1_6_saves() {
    let Some(reference) = pi_test_support::reference_pi("a_gateway_device_sign_in_saves_the_entry_pi_1_6_saves") else {
        return;
    };
    let entry = |program: &std::path::Path| {
        let env = setup();
        let models = serde_json::json!({"providers": {"corp": {
            "name": "Corp Gateway", "baseUrl": format!("{}/v1", env.oauth.url()), "oauth": "radius"
        }}});
        env.fx.agent.write("models.json", models.to_string()).unwrap();
        let (code, screen) =
            terminal_session_of(program, &env, &["auth", "login", "corp", "--no-browser"], false, |_| {
                None
            });
        assert_eq!(code, 0, "{screen}");
        assert_eq!(env.oauth.violations(), Vec::<String>::new());
        let text = std::fs::read_to_string(env.fx.agent.path().join("auth.json")).unwrap();
        let saved: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
        let entry = saved["corp"].as_object().unwrap().clone();
        let shape: Vec<(String, String)> = entry
            .iter()
            .map(|(k, v)| {
                let kind = match v {
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    _ => "other",
                };
                (k.clone(), kind.to_string())
            })
            .collect();
        (shape, entry["type"].clone(), entry["scope"].clone(), saved.len())
    };
    assert_eq!(entry(pi_bin()), entry(&reference.cli));
}

/// A key saved for a models.json Radius gateway fetches the gateway's list with that key,
/// as 1.6 refreshes a provider's catalogue after any login.
#[test]
fn a_key_saved_for_a_gateway_fetches_its_models() {
    let env = setup();
    let models = serde_json::json!({"providers": {"corp": {
        "name": "Corp Gateway", "baseUrl": format!("{}/v1", env.oauth.url()), "oauth": "radius"
    }}});
    env.fx.agent.write("models.json", models.to_string()).unwrap();
    let key = pi_test_support::oauth::MOCK_RADIUS_KEY;
    let mut typed = false;
    let (code, screen) = terminal_session_with(&env, &["auth", "login", "corp", "--api-key"], true, |screen| {
        (!typed && screen.contains("Enter Radius API key: ")).then(|| {
            typed = true;
            format!("{key}\r").into_bytes()
        })
    });
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Saved API key for Corp Gateway."), "{screen}");
    let config: Vec<_> = env
        .oauth
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/config")
        .collect();
    assert_eq!(config.len(), 1, "{screen}");
    assert_eq!(
        config[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    let run = env.pi(&["--list-models", "corp"]).run();
    assert!(run.stdout.contains("gw-fast"), "{run:?}");
}
