//! `/mcp` in a pseudo-terminal: the server list (attention first, state · exposure · scope),
//! a server's page with its actions, disabling and enabling it (at once, and saved to
//! mcp.json), its tools, reconnecting, the list and the page following the servers' state,
//! and the subcommands' usage line.

use std::path::PathBuf;
use std::time::Duration;

use pi_test_support::Script;
use serde_json::json;

use super::{quit, select_row, setup, wait_json, ENTER, ESC};

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
    select_row(&mut pty, "Reconnect");
    pty.send(ENTER);
    pty.wait_text("Reconnected to MCP server \"everything\" (connected · ");
    pty.wait_text("MCP server everything");
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
    quit(&mut pty);
}
