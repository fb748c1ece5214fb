//! Servers extensions register with `pi.registerMcpServer`, side by side with pi 1.6: committed
//! when the factory resolves (`getMcpServers` is empty inside it), connected through pi's MCP
//! support so their tools reach the model, reported once when MCP is off (`-ne`), and an
//! invalid config fails the load with 1.6's message.

use pi_test_support::Script;

use crate::extensions::{environment, fixture, pi_with};
use crate::harness::{Fixture, Mock, Pi, Run};

fn filesystem_server() -> Option<(std::path::PathBuf, String)> {
    let node = pi_test_support::require::tool("node", "runs the filesystem MCP server")?;
    match std::env::var("PI_MCP_FILESYSTEM_SERVER") {
        Ok(script) => Some((node, script)),
        Err(_) => pi_test_support::require::missing(
            "@modelcontextprotocol/server-filesystem (PI_MCP_FILESYSTEM_SERVER)",
            "an extension registers it",
        ),
    }
}

/// Run `pi` against a fresh mock; the tool names of its first request, stderr, exit code and
/// the extension's log.
fn observe(
    mock: &Mock,
    fx: &Fixture,
    mut pi: Pi,
    server: &(std::path::PathBuf, String),
    case: &str,
) -> (Vec<String>, Run, String) {
    let log = fx.root.path().join("mcp.log");
    let _ = std::fs::remove_file(&log);
    pi.cmd
        .env("MCP_LOG", &log)
        .env("MCP_CASE", case)
        .env("MCP_NODE", &server.0)
        .env("MCP_SERVER_SCRIPT", &server.1);
    let run = pi.run();
    let tools = mock
        .requests()
        .first()
        .map(|r| {
            r.body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .filter(|n| n.starts_with("mcp__"))
                .collect()
        })
        .unwrap_or_default();
    (tools, run, std::fs::read_to_string(&log).unwrap_or_default())
}

fn reference_pi(reference: &pi_test_support::ReferencePi, fx: &Fixture, args: &[&str]) -> Pi {
    let mut cmd = reference.command();
    cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
    Pi::from_command(cmd)
}

#[test]
fn registered_servers_connect_or_are_reported_as_pi_does() {
    let test = "registered_servers_connect_or_are_reported_as_pi_does";
    let Some(env) = environment(test) else { return };
    let Some(server) = filesystem_server() else { return };
    let reference = pi_test_support::reference_pi(test);
    let ext = fixture("mcp_register.ts");
    let cases: [(&[&str], &str); 3] = [
        (&["-p", "--no-session", "-e", &ext, "hi"], "ok"),
        (&["-p", "--no-session", "-ne", "-e", &ext, "hi"], "ok"),
        (&["-p", "--no-session", "-e", &ext, "hi"], "bad"),
    ];
    for (args, case) in cases {
        let mock = Mock::start(Script::echo());
        let fx = Fixture::new(&mock);
        let (tools, run, log) = observe(&mock, &fx, pi_with(&fx, &env, args), &server, case);
        let ne = args.contains(&"-ne");
        match (case, ne) {
            ("ok", false) => {
                run.assert_ok();
                assert!(tools.contains(&"mcp__fs__read_text_file".to_string()), "{tools:?}");
                assert_eq!(run.stderr, "");
                assert_eq!(log, "factory []\nsession_start fs:direct\n");
            }
            ("ok", true) => {
                run.assert_ok();
                assert!(tools.is_empty(), "{tools:?}");
                assert_eq!(
                    run.stderr,
                    format!("Extension error ({ext}): MCP server \"fs\" is registered, but no loaded extension connects MCP servers; another extension may have replaced the built-in MCP support\n")
                );
            }
            _ => {
                assert_eq!(run.code, 1);
                assert_eq!(
                    run.stderr,
                    format!("Error: Failed to load extension \"{ext}\": Failed to load extension: Invalid MCP server registered by extension \"{ext}\": server \"fs\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)\nHint: Start without extensions using \"pi -ne\".\n")
                );
            }
        }
        if let Some(reference) = &reference {
            let mock = Mock::start(Script::echo());
            let fx = Fixture::new(&mock);
            let (their_tools, their_run, their_log) =
                observe(&mock, &fx, reference_pi(reference, &fx, args), &server, case);
            assert_eq!(tools, their_tools, "{case} {args:?}");
            assert_eq!(run.code, their_run.code, "{their_run:?}");
            assert_eq!(run.stderr, their_run.stderr);
            if case == "ok" {
                assert_eq!(log, their_log);
            }
        }
    }
}
