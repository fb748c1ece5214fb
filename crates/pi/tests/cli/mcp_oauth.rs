//! OAuth for a remote MCP server, end to end through the binary: a Streamable HTTP server written
//! with the official Python SDK that requires a bearer token (`mcp_servers/oauth_http.py`), and
//! the mock authorization server of `pi-test-support` (metadata, registration, authorize,
//! token, refresh, introspection). `pi mcp login` signs in with `$BROWSER` playing the browser
//! (it follows the authorize redirect into pi's loopback callback); then a tool call reaches the
//! server with the token, a token that expired is refreshed before it is sent, one the server
//! rejects is refreshed after the 401, and `pi mcp logout` forgets the sign-in.

use std::path::Path;

use pi_test_support::oauth::OAuthMock;
use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::extensions::tool_results;
use crate::harness::{Fixture, Mock};
use crate::mcp_python::{python, start_script, Server};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// What every test here starts with: a runtime serving the mock authorization server, and the
/// Python MCP server that has it check every bearer token.
fn start_secure_server(python: &Path) -> (tokio::runtime::Runtime, OAuthMock, Server) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let oauth = rt.block_on(OAuthMock::start()).unwrap();
    let server = start_script(python, "oauth_http.py", &[&oauth.url()]);
    (rt, oauth, server)
}

/// mcp.json naming that server `secure`, with the default (codemode) exposure.
fn configure_secure(fx: &Fixture, url: &str) {
    std::fs::write(
        fx.agent.path().join("mcp.json"),
        json!({"mcpServers": {"secure": {"url": url}}}).to_string(),
    )
    .unwrap();
}

/// A `$BROWSER` that opens the URL with Python's urllib, which follows the redirect.
fn browser(dir: &Path, python: &Path) -> String {
    let script = dir.join("browse.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n",
            python.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    script.display().to_string()
}

#[test]
fn login_then_tool_calls_with_the_token_refreshed_before_expiry_and_after_a_401_then_logout() {
    let Some(python) = python() else { return };
    let (rt, oauth, server) = start_secure_server(&python);
    // Requests in order, across the runs.
    let mock = Mock::start(Script::queue(vec![
        Turn::text("nothing yet"),
        Turn::tool_call("mcp__secure__multiply", json!({"a": 6, "b": 7})),
        Turn::text("done"),
        Turn::tool_call("mcp__secure__multiply", json!({"a": 2, "b": 5})),
        Turn::text("done"),
        Turn::tool_call("mcp__secure__multiply", json!({"a": 3, "b": 3})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    let agent = fx.agent.path().to_path_buf();
    std::fs::write(
        agent.join("mcp.json"),
        json!({"mcpServers": {"secure": {"url": server.url, "exposure": "direct"},
                              "plain": {"url": server.url, "headers": {"Authorization": "Bearer x"}}}})
        .to_string(),
    )
    .unwrap();
    let browse = browser(fx.root.path(), &python);

    // Before signing in: listed as needing sign-in; print mode says nothing about it.
    let list = fx.pi(["mcp", "list"]).run();
    assert_eq!(list.code, 1, "{list:?}");
    assert!(list.stdout.contains("secure: needs sign-in"), "{}", list.stdout);
    assert!(
        list.stdout.contains("sign in with: pi mcp login secure"),
        "{}",
        list.stdout
    );
    let quiet = fx.pi(["-p", "hi"]).run();
    quiet.assert_ok();
    assert_eq!(quiet.stdout, "nothing yet\n");
    assert!(!quiet.stderr.contains("MCP"), "{}", quiet.stderr);

    let not_oauth = fx.pi(["mcp", "login", "plain"]).run();
    assert_eq!(not_oauth.code, 1);
    assert_eq!(
        not_oauth.stderr,
        "MCP server \"plain\" does not use OAuth. Only HTTP servers without an Authorization header do.\n"
    );

    // Sign in: discovery, registration, PKCE, the browser, the callback, the exchange.
    let mut login = fx.pi(["mcp", "login", "secure", "--timeout", "60"]);
    login.cmd.env("BROWSER", &browse);
    let login = login.run();
    login.assert_ok();
    let lines: Vec<&str> = login.stdout.lines().collect();
    assert_eq!(lines[0], "Sign in to MCP server \"secure\" in your browser:");
    assert!(
        lines[1].starts_with(&format!(
            "{}/mcp/authorize?response_type=code&client_id=mcp-client-",
            oauth.url()
        )),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "Signed in to MCP server \"secure\" (1 tools).");
    assert_eq!(oauth.violations(), Vec::<String>::new());
    let stored_path = agent.join("mcp-auth.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&stored_path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let key = format!("mcp__secure|{}", server.url);
    let stored = read_json(&stored_path);
    let entry = &stored[&key];
    assert_eq!(entry["serverUrl"], server.url.as_str());
    assert!(entry["clientInformation"]["client_id"]
        .as_str()
        .unwrap()
        .starts_with("mcp-client-"));
    assert!(entry["clientInformation"]["redirect_uris"][0]
        .as_str()
        .unwrap()
        .starts_with("http://127.0.0.1:"));
    assert_eq!(
        entry["discovery"]["authorizationServerUrl"]
            .as_str()
            .map(|s| s.trim_end_matches('/')),
        Some(oauth.url().as_str())
    );
    assert_eq!(entry["tokens"]["scope"], "mcp:tools");
    assert_eq!(entry["oauthState"].as_str().map(str::len), Some(64));
    let first_access = entry["tokens"]["access_token"].as_str().unwrap().to_string();

    // Signed in: listed as connected, and a second login has nothing to do.
    let list = fx.pi(["mcp", "list"]).run();
    assert!(
        list.stdout.contains("secure: connected, 1 tool (direct, global)"),
        "{}",
        list.stdout
    );
    let again = fx.pi(["mcp", "login", "secure"]).run();
    again.assert_ok();
    assert_eq!(again.stdout, "Already signed in to MCP server \"secure\" (1 tools).\n");

    // The tool call reaches the server with the token.
    let run = fx.pi(["-p", "multiply"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "done\n");
    let requests = mock.requests();
    assert_eq!(tool_results(&requests[2].body), ["42.0"]);
    assert_eq!(oauth.refresh_count(), 0);

    // An expired token is refreshed before it is sent; the rotated refresh token is saved.
    let mut stored = read_json(&stored_path);
    stored[&key]["tokensExpireAt"] = json!(1000);
    std::fs::write(&stored_path, stored.to_string()).unwrap();
    let run = fx.pi(["-p", "again"]).run();
    run.assert_ok();
    assert_eq!(tool_results(&mock.requests()[4].body), ["10.0"]);
    assert_eq!(oauth.refresh_count(), 1);
    let refreshed = read_json(&stored_path);
    let second_access = refreshed[&key]["tokens"]["access_token"].as_str().unwrap().to_string();
    assert_ne!(second_access, first_access);
    assert!(refreshed[&key]["tokensExpireAt"].as_f64().unwrap() > 1e12);

    // A token the server rejects (expired there, not here) is refreshed after the 401.
    oauth.set_access_ttl_seconds(1);
    let mut stored = read_json(&stored_path);
    stored[&key]["tokensExpireAt"] = json!(1000);
    std::fs::write(&stored_path, stored.to_string()).unwrap();
    // This run refreshes (the stored expiry says so) and gets a token valid for one second.
    let list = fx.pi(["mcp", "list"]).run();
    assert!(list.stdout.contains("secure: connected"), "{}", list.stdout);
    oauth.set_access_ttl_seconds(3600);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut stored = read_json(&stored_path);
    stored[&key]["tokensExpireAt"] = json!(4e12);
    std::fs::write(&stored_path, stored.to_string()).unwrap();
    let refreshes = oauth.refresh_count();
    let run = fx.pi(["-p", "third"]).run();
    run.assert_ok();
    assert_eq!(tool_results(&mock.requests()[6].body), ["9.0"]);
    assert_eq!(oauth.refresh_count(), refreshes + 1);
    assert_eq!(oauth.violations(), Vec::<String>::new());

    // Logout forgets the sign-in; the server needs one again.
    let logout = fx.pi(["mcp", "logout", "secure"]).run();
    logout.assert_ok();
    assert_eq!(logout.stdout, "Signed out of MCP server \"secure\".\n");
    assert!(read_json(&stored_path).get(&key).is_none());
    let logout = fx.pi(["mcp", "logout", "secure"]).run();
    assert_eq!(logout.stdout, "No stored credentials for MCP server \"secure\".\n");
    let list = fx.pi(["mcp", "list"]).run();
    assert!(list.stdout.contains("secure: needs sign-in"), "{}", list.stdout);
    drop(rt);
}

#[test]
fn a_login_nobody_completes_stops_at_the_timeout() {
    let Some(python) = python() else { return };
    let (rt, _oauth, server) = start_secure_server(&python);
    let mock = Mock::start(Script::sequential(vec![]));
    let fx = Fixture::new(&mock);
    configure_secure(&fx, &server.url);
    let mut login = fx.pi(["mcp", "login", "secure", "--timeout", "1"]);
    login.cmd.env("BROWSER", "true");
    let login = login.run();
    assert_eq!(login.code, 1, "{login:?}");
    assert!(
        login
            .stdout
            .starts_with("Sign in to MCP server \"secure\" in your browser:\n"),
        "{}",
        login.stdout
    );
    assert_eq!(
        login.stderr,
        "Sign-in to MCP server \"secure\" was cancelled or not completed within 1 seconds.\n"
    );
    drop(rt);
}

/// A sign-in stored by the TypeScript pi 1.6 is used as it is (same file, key and shape), and its
/// refresh token works for a refresh of ours; then 1.6 uses the tokens ours stored.
#[test]
fn sign_ins_stored_by_pi_1_6_are_used_and_ours_work_in_1_6() {
    let Some(python) = python() else { return };
    let (rt, oauth, server) = start_secure_server(&python);
    let mock = Mock::start(Script::queue(vec![]));
    let fx = Fixture::new(&mock);
    let agent = fx.agent.path().to_path_buf();
    configure_secure(&fx, &server.url);
    let Some(mut reference) = crate::session16::reference(&fx, &["mcp", "login", "secure", "--timeout", "60"]) else {
        return;
    };
    // 1.6 opens the URL with xdg-open, which hands it to `$BROWSER` without a desktop.
    reference.cmd.env("BROWSER", browser(fx.root.path(), &python));
    let theirs = reference.run();
    theirs.assert_ok();
    assert!(
        theirs
            .stdout
            .ends_with("Signed in to MCP server \"secure\" (1 tools).\n"),
        "{}",
        theirs.stdout
    );
    let stored_path = agent.join("mcp-auth.json");
    let key = format!("mcp__secure|{}", server.url);
    let stored = read_json(&stored_path);
    assert!(stored[&key]["tokens"]["refresh_token"].is_string(), "{stored}");

    // Ours connects with 1.6's token, and refreshes with 1.6's refresh token and client.
    let list = fx.pi(["mcp", "list"]).run();
    assert!(list.stdout.contains("secure: connected, 1 tool"), "{}", list.stdout);
    let mut expired = stored.clone();
    expired[&key]["tokensExpireAt"] = json!(1000);
    std::fs::write(&stored_path, expired.to_string()).unwrap();
    let list = fx.pi(["mcp", "list"]).run();
    assert!(list.stdout.contains("secure: connected, 1 tool"), "{}", list.stdout);
    assert_eq!(oauth.refresh_count(), 1);
    let ours = read_json(&stored_path);
    assert_ne!(
        ours[&key]["tokens"]["access_token"],
        stored[&key]["tokens"]["access_token"]
    );

    // 1.6 uses what ours stored.
    let again = crate::session16::reference(&fx, &["mcp", "login", "secure"])
        .unwrap()
        .run();
    again.assert_ok();
    assert_eq!(again.stdout, "Already signed in to MCP server \"secure\" (1 tools).\n");
    assert_eq!(oauth.violations(), Vec::<String>::new());
    drop(rt);
}

/// A refresh still under way when pi is done is waited for: the authorization server rotates
/// the refresh token when it answers, so exiting before the answer is saved would lose the
/// sign-in. Here the answer comes 2 s after the request, long after the prompt's reply.
#[test]
fn exit_waits_for_a_token_refresh_under_way() {
    let Some(python) = python() else { return };
    let (rt, oauth, server) = start_secure_server(&python);
    // Slow enough that the connection asks for its refresh before the run ends.
    let mock = Mock::start(Script::queue(vec![Turn::text("hello there").with_delay_ms(200)]));
    let fx = Fixture::new(&mock);
    let agent = fx.agent.path().to_path_buf();
    // Codemode exposure: the first prompt does not wait for the server.
    configure_secure(&fx, &server.url);
    let mut login = fx.pi(["mcp", "login", "secure", "--timeout", "60"]);
    login.cmd.env("BROWSER", browser(fx.root.path(), &python));
    login.run().assert_ok();

    let stored_path = agent.join("mcp-auth.json");
    let key = format!("mcp__secure|{}", server.url);
    let mut stored = read_json(&stored_path);
    let signed_in_refresh = stored[&key]["tokens"]["refresh_token"].clone();
    stored[&key]["tokensExpireAt"] = json!(1000);
    std::fs::write(&stored_path, stored.to_string()).unwrap();
    oauth.set_refresh_delay(std::time::Duration::from_secs(2));

    let started = std::time::Instant::now();
    let run = fx.pi(["-p", "hi"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "hello there\n");
    assert_eq!(oauth.refresh_count(), 1, "the connection refreshed once");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "exited after {:?}, before the refresh was answered",
        started.elapsed()
    );
    let saved = read_json(&stored_path);
    assert_ne!(saved[&key]["tokens"]["refresh_token"], signed_in_refresh, "{saved}");
    assert!(saved[&key]["tokensExpireAt"].as_f64().unwrap() > 1e12, "{saved}");

    // The saved refresh token is the live one: the next refresh works.
    oauth.set_refresh_delay(std::time::Duration::ZERO);
    let mut expired = saved.clone();
    expired[&key]["tokensExpireAt"] = json!(1000);
    std::fs::write(&stored_path, expired.to_string()).unwrap();
    let list = fx.pi(["mcp", "list"]).run();
    assert!(list.stdout.contains("secure: connected, 1 tool"), "{}", list.stdout);
    assert_eq!(oauth.refresh_count(), 2);
    assert_eq!(oauth.violations(), Vec::<String>::new());
    drop(rt);
}

/// `/mcp login` over RPC: the authorization URL arrives in a notice, an input dialog asks for
/// the URL the browser was redirected to, and the pasted URL completes the sign-in.
#[test]
fn rpc_mcp_login_takes_a_pasted_redirect_url() {
    use std::io::{BufRead, BufReader, Write};
    let Some(python) = python() else { return };
    let (rt, oauth, server) = start_secure_server(&python);
    let mock = Mock::start(Script::queue(vec![]));
    let fx = Fixture::new(&mock);
    configure_secure(&fx, &server.url);
    let mut pi = fx.pi(["--mode", "rpc"]);
    pi.cmd
        .env("BROWSER", "true")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = pi.cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, r#"{{"id":"1","type":"prompt","message":"/mcp login secure"}}"#).unwrap();
    let mut notices = Vec::new();
    let mut response = None;
    while let Some(Ok(line)) = lines.next() {
        let event: Value = serde_json::from_str(&line).unwrap();
        match (event["type"].as_str(), event["method"].as_str()) {
            (Some("extension_ui_request"), Some("notify")) => {
                notices.push(event["message"].as_str().unwrap().to_string())
            }
            (Some("extension_ui_request"), Some("input")) => {
                assert_eq!(
                    event["title"],
                    "Waiting for sign-in to \"secure\". If the browser cannot reach this machine, paste the URL it was redirected to."
                );
                let url = notices.last().unwrap().lines().nth(1).unwrap().to_string();
                // The mock authorization server approves at once and redirects with the code.
                let location = std::process::Command::new(&python)
                    .args([
                        "-c",
                        "import sys, urllib.request\n\
class Stop(urllib.request.HTTPRedirectHandler):\n    def redirect_request(self, *a): return None\n\
try:\n    urllib.request.build_opener(Stop).open(sys.argv[1])\n\
except urllib.error.HTTPError as e:\n    print(e.headers['Location'], end='')",
                        &url,
                    ])
                    .output()
                    .unwrap();
                let location = String::from_utf8(location.stdout).unwrap();
                let answer = json!({"type": "extension_ui_response", "id": event["id"], "value": location});
                writeln!(stdin, "{answer}").unwrap();
            }
            (Some("response"), _) => {
                response = Some(event);
                break;
            }
            _ => {}
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(response.unwrap()["data"]["disposition"], "handled");
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("Sign in to MCP server \"secure\" in your browser:\n")),
        "{notices:#?}"
    );
    assert_eq!(notices.last().unwrap(), "Signed in to MCP server \"secure\" (1 tools).");
    assert_eq!(oauth.violations(), Vec::<String>::new());
    drop(rt);
}
