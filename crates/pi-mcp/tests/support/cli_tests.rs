//! `pi mcp` commands end to end: files written, servers connected (the stdio test server and the
//! HTTP one), and the texts and exit codes pi 1.6 gives (taken from running it).

use std::path::Path;

use pi_mcp::cli::{run, CliContext, CliOutput};
use serde_json::{json, Value};

use super::http_server::{start, HttpOptions};

fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

async fn pi_mcp(context: &CliContext, items: &[&str]) -> CliOutput {
    run(&args(items), context).await
}

fn context(agent: &Path, cwd: &Path, trusted: bool) -> CliContext {
    let mut context = CliContext::new(agent, cwd);
    context.project_trusted = Some(trusted);
    context.client_version = "1.6.0".into();
    context
}

fn exe() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

pub async fn cli_list_add_remove_against_real_servers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let ctx = context(&agent, &cwd, false);
    let global = agent.join("mcp.json");
    let g = global.display().to_string();

    let empty = pi_mcp(&ctx, &["list"]).await;
    assert_eq!(
        empty.stdout,
        format!("No MCP servers configured. Add them to {g} or .pi/mcp.json.\n")
    );
    assert_eq!(empty.exit_code, 0);

    let exe = exe();
    let added = pi_mcp(
        &ctx,
        &[
            "add",
            "demo",
            "--env",
            "PI_MCP_TEST_SERVER=stdio",
            "--exposure",
            "deferred",
            "--",
            &exe,
        ],
    )
    .await;
    assert_eq!(
        added.stdout,
        format!("Added global MCP server \"demo\" in {g}.\nCheck it with: pi mcp list\n")
    );
    assert_eq!((added.stderr.as_str(), added.exit_code), ("", 0));
    let http = start(HttpOptions {
        sse: true,
        ..Default::default()
    })
    .await;
    let locked = start(HttpOptions {
        bearer: Some("secret".into()),
        ..Default::default()
    })
    .await;
    let added = pi_mcp(&ctx, &["add", "web", "--url", &http.url]).await;
    assert_eq!(
        added.stdout,
        format!("Added global MCP server \"web\" in {g}.\nCheck it with: pi mcp list. If it requires sign-in: pi mcp login web\n")
    );
    pi_mcp(&ctx, &["add", "locked", "--url", &locked.url]).await;
    let replaced = pi_mcp(
        &ctx,
        &["add", "locked", "--url", &locked.url, "--description", "Needs a token"],
    )
    .await;
    assert!(replaced
        .stdout
        .starts_with(&format!("Replaced global MCP server \"locked\" in {g}.")));

    // Exposure per tool, a disabled server and a broken entry, written by hand as users do.
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&global).expect("read")).expect("json");
    file["mcpServers"]["demo"]["toolExposure"] = json!({"echo": "direct", "s*": "hidden"});
    file["mcpServers"]["off"] = json!({"command": "x", "enabled": false});
    file["mcpServers"]["sse"] = json!({"type": "sse", "url": "http://127.0.0.1:1/sse"});
    std::fs::write(&global, serde_json::to_string_pretty(&file).expect("json")).expect("write");

    let listed = pi_mcp(&ctx, &["list"]).await;
    let expected = format!(
        "demo: connected, 8 tools (deferred, global)\n  {exe}\n  tools: echo [direct], red_pixel, fail, sleep [hidden], progress, roots, crash, spawn_child [hidden]\n  offers resources\n\
web: connected, 8 tools (codemode, global)\n  {}\n  tools: echo, red_pixel, fail, sleep, progress, roots, crash, spawn_child\n  offers resources\n\
locked: needs sign-in (codemode, global)\n  {}\n  sign in with: pi mcp login locked\n\
off: disabled (codemode, global)\n  x\n\
config error: {g}: server \"sse\": legacy SSE transport is not supported; use the streamable HTTP URL\n",
        http.url, locked.url
    );
    assert_eq!(listed.stdout, expected);
    assert_eq!(listed.exit_code, 1, "a server needs sign-in and an entry is invalid");

    let log = std::fs::read_to_string(agent.join("mcp.log")).expect("mcp.log written");
    let first = log.lines().next().unwrap_or("");
    assert!(first.ends_with(" [demo] info test: server initialized"), "{log}");
    assert!(first.len() == "2026-12-01T08:40:24.123Z [demo] info test: server initialized".len());
    assert!(log.contains("\n    second line\n"));

    let json_list = pi_mcp(&ctx, &["list", "--json"]).await;
    let report: Value = serde_json::from_str(&json_list.stdout).expect("json output");
    assert_eq!(
        report["errors"],
        json!([format!(
            "{g}: server \"sse\": legacy SSE transport is not supported; use the streamable HTTP URL"
        )])
    );
    let demo = &report["servers"][0];
    assert_eq!(demo["name"], "demo");
    assert_eq!(demo["scope"], "global");
    assert_eq!(demo["source"], g);
    assert_eq!(demo["state"], "connected");
    assert_eq!(demo["resources"], true);
    assert_eq!(
        demo["toolExposure"],
        json!({"echo": "direct", "sleep": "hidden", "spawn_child": "hidden"})
    );
    let keys: Vec<&str> = report["servers"][2]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "name",
            "scope",
            "source",
            "enabled",
            "exposure",
            "transport",
            "state",
            "tools"
        ]
    );
    assert_eq!(report["servers"][2]["state"], "needs-auth");
    assert_eq!(json_list.exit_code, 1);

    let login = pi_mcp(&ctx, &["login", "web"]).await;
    assert_eq!(
        (login.stdout.as_str(), login.exit_code),
        ("Already signed in to MCP server \"web\" (8 tools).\n", 0)
    );
    let login = pi_mcp(&ctx, &["login", "locked"]).await;
    assert_eq!(login.exit_code, 1);
    assert!(
        login.stderr.starts_with("Sign-in to MCP server \"locked\" failed: "),
        "{}",
        login.stderr
    );

    let removed = pi_mcp(&ctx, &["remove", "sse"]).await;
    assert_eq!(removed.stdout, format!("Removed global MCP server \"sse\" from {g}.\n"));
    pi_mcp(&ctx, &["remove", "locked"]).await;
    let listed = pi_mcp(&ctx, &["list"]).await;
    assert_eq!(listed.exit_code, 0, "{}", listed.stdout);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&global).expect("read")).expect("json");
    let names: Vec<&str> = file["mcpServers"]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(names, ["demo", "web", "off"]);
}

pub async fn cli_messages_and_exit_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let ctx = context(&agent, &cwd, false);
    let g = agent.join("mcp.json").display().to_string();
    let p = cwd.join(".pi/mcp.json").display().to_string();
    let fail = |out: CliOutput, message: &str| {
        assert_eq!(
            (out.stdout.as_str(), out.stderr.as_str(), out.exit_code),
            ("", format!("{message}\n").as_str(), 1)
        );
    };
    let hint = "Use \"pi mcp --help\" for usage.";

    let help = pi_mcp(&ctx, &[]).await;
    assert!(help
        .stdout
        .starts_with("Usage:\n  pi mcp add <server> [options] -- <command> [args...]\n"));
    assert_eq!(help.exit_code, 0);
    assert_eq!(pi_mcp(&ctx, &["add", "x", "--", "cmd", "-h"]).await.stdout, help.stdout);

    pi_mcp(
        &ctx,
        &["add", "demo", "--env", "A=1", "--", "python3", "s.py", "--flag"],
    )
    .await;
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&g).expect("read")).expect("json");
    assert_eq!(
        file,
        json!({"mcpServers": {"demo": {"command": "python3", "args": ["s.py", "--flag"], "env": {"A": "1"}}}})
    );
    pi_mcp(
        &ctx,
        &[
            "add",
            "web2",
            "--url",
            "https://example.com/mcp",
            "--bearer-token-env-var",
            "TOK",
            "--exposure",
            "direct",
            "--description",
            "Web things",
        ],
    )
    .await;
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&g).expect("read")).expect("json");
    assert_eq!(
        file["mcpServers"]["web2"],
        json!({"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOK}"}, "exposure": "direct", "description": "Web things"})
    );
    let local = pi_mcp(&ctx, &["add", "loc", "-l", "--", "echo", "hi"]).await;
    assert_eq!(
        local.stdout,
        format!("Added project MCP server \"loc\" in {p}.\nThe project is not trusted, so {p} is ignored until you start pi in the project and trust it.\nCheck it with: pi mcp list\n")
    );

    fail(
        pi_mcp(&ctx, &["frob"]).await,
        &format!("Unknown mcp command \"frob\".\n{hint}"),
    );
    fail(
        pi_mcp(&ctx, &["list", "extra"]).await,
        &format!("Usage: pi mcp list [--json]\n{hint}"),
    );
    fail(
        pi_mcp(&ctx, &["list", "--bogus"]).await,
        &format!("Unknown option --bogus.\n{hint}"),
    );
    fail(
        pi_mcp(&ctx, &["remove"]).await,
        &format!("Usage: pi mcp remove <server> [-l]\n{hint}"),
    );
    fail(
        pi_mcp(&ctx, &["remove", "nope"]).await,
        &format!("No global MCP server named \"nope\" in {g}."),
    );
    fail(
        pi_mcp(&ctx, &["remove", "loc"]).await,
        &format!("No global MCP server named \"loc\" in {g}. It is defined in {p}; use --local."),
    );
    fail(
        pi_mcp(&ctx, &["remove", "-l", "demo"]).await,
        &format!("No project MCP server named \"demo\" in {p}. It is defined in {g}; omit --local."),
    );
    fail(
        pi_mcp(&ctx, &["login"]).await,
        &format!("Usage: pi mcp login <server> [-l]\n{hint}"),
    );
    fail(
        pi_mcp(&ctx, &["login", "demoo"]).await,
        &format!("No MCP server named \"demoo\". Did you mean \"demo\"? {p} is ignored because the project is not trusted. Start pi in the project to trust it. Configured: demo, web2."),
    );
    fail(
        pi_mcp(&ctx, &["login", "demo"]).await,
        "MCP server \"demo\" does not use OAuth. Only HTTP servers without an Authorization header do.",
    );
    fail(
        pi_mcp(&ctx, &["logout", "web2"]).await,
        "MCP server \"web2\" does not use OAuth. Only HTTP servers without an Authorization header do.",
    );
    fail(
        pi_mcp(&ctx, &["add"]).await,
        &format!("Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{hint}"),
    );
    fail(
        pi_mcp(&ctx, &["add", "x", "--url", "http://a", "--", "cmd"]).await,
        &format!("Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{hint}"),
    );
    fail(
        pi_mcp(&ctx, &["add", "x", "--url", "http://a", "--env", "A=1"]).await,
        "--env only applies to stdio servers.",
    );
    fail(
        pi_mcp(&ctx, &["add", "x", "--cwd", "d", "--header", "A=b", "--", "cmd"]).await,
        "--header only applies to HTTP servers (--url).",
    );
    fail(
        pi_mcp(&ctx, &["add", "x", "--url", "http://a", "--header", "Ab"]).await,
        "--header expects KEY=VALUE, got \"Ab\".",
    );
    fail(pi_mcp(&ctx, &["add", "x", "--url"]).await, "--url needs a value.");
    fail(
        pi_mcp(&ctx, &["add", "bad name", "--", "cmd"]).await,
        "invalid server name \"bad name\" (use letters, digits, \"_\" and \"-\")",
    );
    fail(
        pi_mcp(&ctx, &["add", "x", "--exposure", "loud", "--", "cmd"]).await,
        "server \"x\": exposure must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\"",
    );
    fail(
        pi_mcp(&ctx, &["add", "x", "--url", "ftp://a"]).await,
        "server \"x\": url must be an http or https URL",
    );

    pi_mcp(&ctx, &["add", "web", "--url", "https://example.com/mcp"]).await;
    fail(
        pi_mcp(&ctx, &["login", "web", "-l"]).await,
        &format!("MCP server \"web\" is defined in {g}, not in the project; omit --local."),
    );
    fail(
        pi_mcp(&ctx, &["login", "web", "--timeout", "0"]).await,
        "--timeout must be a positive number of seconds.",
    );
    let logout = pi_mcp(&ctx, &["logout", "web"]).await;
    assert_eq!(
        (logout.stdout.as_str(), logout.exit_code),
        ("No stored credentials for MCP server \"web\".\n", 0)
    );
    std::fs::write(
        agent.join("mcp-auth.json"),
        "{\"mcp__web|https://example.com/mcp\": {\"tokens\": {}}}",
    )
    .expect("write");
    assert_eq!(
        pi_mcp(&ctx, &["logout", "web"]).await.stdout,
        "Signed out of MCP server \"web\".\n"
    );
    std::fs::write(
        &g,
        "{\"mcpServers\": {\"p\": {\"url\": \"https://example.com/mcp\", \"auth\": {\"provider\": \"radius\"}}}}",
    )
    .expect("write");
    fail(
        pi_mcp(&ctx, &["login", "p"]).await,
        "MCP server \"p\" uses the credentials of provider \"radius\". Run \"pi auth login radius\".",
    );

    // A trusted project's entries are read, and may override a global server.
    std::fs::write(&p, "{\"mcpServers\": {\"p\": {\"enabled\": false}}}").expect("write");
    let trusted = context(&agent, &cwd, true);
    let listed = pi_mcp(&trusted, &["list"]).await;
    assert_eq!(
        listed.stdout,
        format!("p: disabled (codemode, global)\n  https://example.com/mcp\n  project override: {p}\n")
    );
    assert_eq!(listed.exit_code, 0);
    std::fs::write(&g, "[]").expect("write");
    fail(
        pi_mcp(&ctx, &["add", "z", "--", "cmd"]).await,
        &format!("Could not update {g}: {g}: expected an object with an \"mcpServers\" object"),
    );
}
