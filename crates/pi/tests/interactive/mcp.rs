//! `/mcp` in a pseudo-terminal: the server list (attention first, state · exposure · scope),
//! a server's page with its actions, disabling and enabling it (at once, and saved to
//! mcp.json), its tools, reconnecting, the list and the page following the servers' state,
//! the subcommands' usage line, and signing in to an OAuth server from its page (the sign-in
//! screen, cancel, a pasted redirect URL, sign-out).

use std::path::PathBuf;
use std::time::Duration;

use pi_test_support::Script;
use serde_json::json;

use super::{quit, select_row, setup, wait_json, Pty, ENTER, ESC};

/// Types `text` and runs it: Escape first closes the server-name completions it opens (Enter
/// on an argument menu only completes, as in pi 1.6).
fn submit_past_completions(pty: &mut Pty, text: &str) {
    pty.type_text(text);
    let menu_open = |pty: &Pty| pty.rows().iter().any(|r| r.starts_with("→ "));
    pty.wait_for("the server completions", Duration::from_secs(5), |_| menu_open(pty));
    pty.send(ESC);
    pty.wait_for("the completions closed", Duration::from_secs(5), |_| !menu_open(pty));
    pty.send(ENTER);
}

/// `node` and server-everything's `dist/index.js`, or a skip (a failure under CI).
fn everything() -> Option<(PathBuf, PathBuf)> {
    let node = pi_test_support::require::tool("node", "runs the reference MCP server")?;
    match std::env::var_os("PI_MCP_EVERYTHING_SERVER")
        .map(PathBuf::from)
        .filter(|p| p.exists())
    {
        Some(script) => Some((node, script)),
        None => pi_test_support::require::missing(
            "@modelcontextprotocol/server-everything (PI_MCP_EVERYTHING_SERVER)",
            "the MCP server /mcp lists",
        ),
    }
}

#[test]
fn mcp_without_servers_opens_a_panel_saying_where_to_add_them() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.wait_text("mock-model");
    pty.type_text("/mcp");
    pty.send(ENTER);
    pty.wait_text("escape/ctrl+c close");
    let rows = pty.rows();
    let title = rows
        .iter()
        .position(|r| r.trim() == "MCP servers")
        .expect("the panel's title");
    assert!(rows[title - 1].starts_with("────"), "{rows:#?}");
    assert_eq!(rows[title + 1].trim(), "", "{rows:#?}");
    assert!(
        rows[title + 2]
            .trim()
            .starts_with("No MCP servers configured. Add them to"),
        "{rows:#?}"
    );
    assert!(rows[title + 2].contains("mcp.json or .pi/mcp.json."), "{rows:#?}");
    assert_eq!(rows[title + 4].trim(), "escape/ctrl+c close", "{rows:#?}");
    assert!(rows[title + 5].starts_with("────"), "{rows:#?}");
    pty.send(ESC);
    pty.wait_for("the panel closed", Duration::from_secs(5), |c| {
        !c.contains("escape/ctrl+c close")
    });
    quit(&mut pty);
}

#[test]
fn mcp_lists_servers_and_manages_one() {
    let Some((node, script)) = everything() else { return };
    let s = setup(Script::sequential(vec![]));
    let mcp_json = s.agent.path().join("mcp.json");
    std::fs::write(
        &mcp_json,
        serde_json::to_string_pretty(&json!({"mcpServers": {
            "everything": {"command": node.display().to_string(), "args": [script.display().to_string(), "stdio"], "exposure": "direct"},
            "broken": {"command": "/nonexistent/mcp-server"},
            "off": {"command": "true", "enabled": false},
        }}))
        .unwrap(),
    )
    .unwrap();
    let mut pty = s.pi(40, 100);
    // The list opens at once and follows the servers: "everything" connects while it is open.
    pty.type_text("/mcp");
    pty.send(ENTER);
    pty.wait_text("enter manage • escape/ctrl+c close");
    pty.wait_for("connected while open", Duration::from_secs(30), |c| {
        c.contains("connected · ")
    });
    let rows = pty.rows();
    let at = |name: &str| rows.iter().position(|r| r.contains(name) && r.contains(" · ")).unwrap();
    assert!(
        at("broken") < at("everything") && at("everything") < at("off"),
        "{rows:#?}"
    );
    assert!(rows[at("broken")].contains("failed: "), "{rows:#?}");
    // As 1.6: the rows start in the first column, the first one highlighted.
    assert!(rows[at("broken")].starts_with("→ broken"), "{rows:#?}");
    assert!(
        rows[at("everything")].contains("tools · resources · direct · global"),
        "{rows:#?}"
    );
    assert!(rows[at("off")].contains("disabled · codemode · global"), "{rows:#?}");

    // The server's page: what it is, where it is configured, and what can be done.
    select_row(&mut pty, "everything");
    pty.send(ENTER);
    pty.wait_text("MCP server everything");
    let page = pty.contents();
    let command = format!(" {}", node.display());
    for text in [
        &command,
        "global: ",
        "State: connected",
        "Tools",
        "Reconnect",
        "Exposure",
        "Disable",
    ] {
        assert!(page.contains(text), "{text}: {page}");
    }
    // Its tools, then back.
    select_row(&mut pty, "Tools");
    pty.send(ENTER);
    pty.wait_text("Tools of everything");
    pty.wait_text("Exposure direct:");
    pty.send(ESC);
    pty.wait_text("MCP server everything");
    // Reconnecting from the page says nothing; the page comes back with its state (1.6).
    select_row(&mut pty, "Reconnect");
    pty.send(ENTER);
    pty.wait_text("MCP server everything");
    pty.wait_text("State: connected · ");
    assert!(!pty.contents().contains("Reconnected to"), "{}", pty.contents());
    // Disabling closes it now (the page follows) and writes the file; enabling connects again.
    select_row(&mut pty, "Disable");
    pty.send(ENTER);
    let saved = wait_json(&mcp_json, |v| v["mcpServers"]["everything"]["enabled"] == false);
    assert_eq!(saved["mcpServers"]["everything"]["enabled"], false);
    pty.wait_text("State: disabled");
    select_row(&mut pty, "Enable");
    pty.send(ENTER);
    // Enabled is the default: the key goes, as pi writes it.
    let saved = wait_json(&mcp_json, |v| v["mcpServers"]["everything"].get("enabled").is_none());
    assert!(saved["mcpServers"]["everything"].get("enabled").is_none(), "{saved}");
    pty.wait_for("connected again", Duration::from_secs(30), |c| {
        c.contains("State: connected · ")
    });
    pty.send(ESC);
    pty.wait_text("enter manage");
    pty.send(ESC);
    std::thread::sleep(Duration::from_millis(100));

    pty.type_text("/mcp frobnicate");
    pty.send(ENTER);
    pty.wait_text("Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]");
    pty.type_text("/mcp reconnect nosuch");
    pty.send(ENTER);
    pty.wait_text("No MCP server named \"nosuch\".");
    // Without a name, the one that failed is meant; that it fails again is an error (1.6).
    submit_past_completions(&mut pty, "/mcp reconnect");
    pty.wait_text("MCP server \"broken\" failed to connect: spawn /nonexistent/mcp-server ENOENT");
    quit(&mut pty);
}

/// The Python SDK's venv interpreter, or a skip (a failure under CI).
fn python() -> Option<PathBuf> {
    match std::env::var_os("PI_MCP_PYTHON")
        .map(PathBuf::from)
        .filter(|p| p.exists())
    {
        Some(python) => Some(python),
        None => pi_test_support::require::missing(
            "the Python MCP SDK (PI_MCP_PYTHON)",
            "the OAuth-protected server /mcp signs in to",
        ),
    }
}

/// `tests/cli/mcp_servers/oauth_http.py` on a free port, killed when dropped.
struct OAuthServer {
    child: std::process::Child,
    url: String,
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_oauth_server(python: &std::path::Path, issuer: &str) -> OAuthServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/mcp_servers/oauth_http.py");
    let child = std::process::Command::new(python)
        .arg(script)
        .arg(port.to_string())
        .arg(issuer)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = OAuthServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the Python server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// Sign in from a server's page: the sign-in screen shows the authorization URL (the browser
/// here only writes it down), Esc cancels and the page says so; the second time the user
/// pastes the URL the browser was redirected to, the server connects, and "Sign out" forgets
/// the sign-in again.
#[test]
fn mcp_page_signs_in_with_a_pasted_redirect_url_and_signs_out() {
    let Some(python) = python() else { return };
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(pi_test_support::oauth::OAuthMock::start()).unwrap();
    let server = start_oauth_server(&python, &oauth.url());
    std::fs::write(
        s.agent.path().join("mcp.json"),
        json!({"mcpServers": {"secure": {"url": server.url}}}).to_string(),
    )
    .unwrap();
    // A "browser" that only records the URL it was asked to open.
    let opened = s.cwd.path().join("opened.txt");
    let browser = s.cwd.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let browser = browser.display().to_string();
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("BROWSER", &browser)]);
    pty.wait_text("mock-model");
    pty.type_text("/mcp");
    pty.send(ENTER);
    pty.wait_for("needs sign-in", Duration::from_secs(30), |c| {
        c.contains("needs sign-in")
    });
    pty.send(ENTER);
    pty.wait_text("MCP server secure");
    pty.wait_text("opens the browser");
    select_row(&mut pty, "Sign in");
    pty.send(ENTER);
    pty.wait_text("Sign in to secure");
    pty.wait_text("Approve access in your browser. If it did not open, visit:");
    pty.wait_text("If the browser runs on another machine, paste the URL it was redirected to:");
    pty.wait_text("enter submit • escape/ctrl+c cancel");
    pty.wait_for("the browser opened", Duration::from_secs(10), |_| opened.exists());
    pty.send(ESC);
    pty.wait_text("Sign-in cancelled.");
    pty.wait_text("MCP server secure");

    // Again, and this time the redirect comes back pasted.
    std::fs::remove_file(&opened).unwrap();
    select_row(&mut pty, "Sign in");
    pty.send(ENTER);
    pty.wait_text("Approve access in your browser.");
    pty.wait_for("the browser opened", Duration::from_secs(10), |_| opened.exists());
    let authorize = std::fs::read_to_string(&opened).unwrap();
    // The mock authorization server approves at once and redirects with the code.
    let location = std::process::Command::new(&python)
        .args([
            "-c",
            "import sys, urllib.request\n\
class Stop(urllib.request.HTTPRedirectHandler):\n    def redirect_request(self, *a): return None\n\
try:\n    urllib.request.build_opener(Stop).open(sys.argv[1])\n\
except urllib.error.HTTPError as e:\n    print(e.headers['Location'], end='')",
            &authorize,
        ])
        .output()
        .unwrap();
    let location = String::from_utf8(location.stdout).unwrap();
    assert!(location.contains("code="), "{location:?}");
    pty.type_text(&location);
    pty.send(ENTER);
    pty.wait_for("connected", Duration::from_secs(30), |c| {
        c.contains("State: connected · 1 tool")
    });
    assert_eq!(oauth.violations(), Vec::<String>::new());
    let stored = std::fs::read_to_string(s.agent.path().join("mcp-auth.json")).unwrap();
    assert!(stored.contains("refresh_token"), "{stored}");

    // Signed in: "Sign out" deletes the credentials and the server needs sign-in again.
    pty.wait_text("deletes the stored credentials");
    select_row(&mut pty, "Sign out");
    pty.send(ENTER);
    pty.wait_for("signed out", Duration::from_secs(30), |c| {
        c.contains("State: needs sign-in")
    });
    let stored = std::fs::read_to_string(s.agent.path().join("mcp-auth.json")).unwrap_or_default();
    assert!(!stored.contains("refresh_token"), "{stored}");
    pty.send(ESC);
    pty.wait_text("enter manage");
    pty.send(ESC);
    std::thread::sleep(Duration::from_millis(100));
    quit(&mut pty);
}

/// The URL the mock authorization server redirects the browser to once it approves
/// `authorize` (it approves at once), read without following the redirect.
fn approved_redirect(python: &std::path::Path, authorize: &str) -> String {
    let location = std::process::Command::new(python)
        .args([
            "-c",
            "import sys, urllib.request\n\
class Stop(urllib.request.HTTPRedirectHandler):\n    def redirect_request(self, *a): return None\n\
try:\n    urllib.request.build_opener(Stop).open(sys.argv[1])\n\
except urllib.error.HTTPError as e:\n    print(e.headers['Location'], end='')",
            authorize,
        ])
        .output()
        .unwrap();
    String::from_utf8(location.stdout).unwrap()
}

/// `/mcp login` with two OAuth servers, as in pi 1.6: a "MCP server" picker names them, the
/// sign-in screen shows the URL with "ctrl+x to copy" (which copies it and says so), and once
/// the pasted redirect URL signs the server in, the screen closes and a notice says so.
#[test]
fn mcp_login_picks_a_server_copies_the_url_and_closes_when_signed_in() {
    let Some(python) = python() else { return };
    let s = setup(Script::sequential(vec![]));
    let oauth = s._rt.block_on(pi_test_support::oauth::OAuthMock::start()).unwrap();
    let alpha = start_oauth_server(&python, &oauth.url());
    let beta = start_oauth_server(&python, &oauth.url());
    std::fs::write(
        s.agent.path().join("mcp.json"),
        json!({"mcpServers": {"alpha": {"url": alpha.url}, "beta": {"url": beta.url}}}).to_string(),
    )
    .unwrap();
    let opened = s.cwd.path().join("opened.txt");
    let browser = s.cwd.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let browser = browser.display().to_string();
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("BROWSER", &browser)]);
    pty.wait_text("mock-model");
    submit_past_completions(&mut pty, "/mcp login");
    pty.wait_text("MCP server");
    pty.wait_text("alpha");
    select_row(&mut pty, "beta");
    pty.send(ENTER);
    pty.wait_text("Sign in to beta");
    pty.wait_text("Ctrl+click to open • ctrl+x to copy");
    pty.wait_for("the browser opened", Duration::from_secs(10), |_| opened.exists());
    // Without a clipboard tool the copy goes out as OSC 52 and counts as done.
    pty.send("\x18");
    pty.wait_text("Ctrl+click to open • Copied URL to clipboard");
    let location = approved_redirect(&python, &std::fs::read_to_string(&opened).unwrap());
    assert!(location.contains("code="), "{location:?}");
    pty.type_text(&location);
    pty.send(ENTER);
    pty.wait_text("Signed in to MCP server \"beta\" (1 tools).");
    let screen = pty.contents();
    assert!(
        !screen.contains("Sign in to beta"),
        "the sign-in screen stayed open:\n{screen}"
    );
    assert!(
        !screen.contains("MCP server beta"),
        "the server's page opened:\n{screen}"
    );
    assert_eq!(oauth.violations(), Vec::<String>::new());
    quit(&mut pty);
}
