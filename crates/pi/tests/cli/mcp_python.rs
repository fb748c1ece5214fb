//! A Streamable HTTP MCP server written with the official Python SDK (`mcp` from PyPI, in the
//! venv `scripts/test-deps` makes; `tests/cli/mcp_servers/streamable_http.py`), started by the
//! test: its tools called directly and from a codemode script, and a tool it adds later
//! (`notifications/tools/list_changed`) declared once the tools were listed again.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::extensions::tool_results;
use crate::harness::{Fixture, Mock};

/// The server process, killed when the test ends.
pub(crate) struct Server {
    child: Child,
    pub(crate) url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn python() -> Option<PathBuf> {
    match std::env::var_os("PI_MCP_PYTHON")
        .map(PathBuf::from)
        .filter(|p| p.exists())
    {
        Some(python) => Some(python),
        None => pi_test_support::require::missing(
            "the Python MCP SDK (PI_MCP_PYTHON)",
            "the Streamable HTTP server the session connects to",
        ),
    }
}

fn start_server(python: &Path) -> Server {
    start_script(python, "streamable_http.py", &[])
}

/// Start `tests/cli/mcp_servers/<script> PORT <args…>` and wait for its port.
pub(crate) fn start_script(python: &Path, script: &str, args: &[&str]) -> Server {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/mcp_servers")
        .join(script);
    let child = Command::new(python)
        .arg(script)
        .arg(port.to_string())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the Python server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

fn names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_python_sdk_server_over_streamable_http_is_called_and_its_new_tools_are_listed_again() {
    let Some(python) = python() else { return };
    let server = start_server(&python);
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("mcp__py__add", json!({"a": 2, "b": 3})),
        Turn::tool_call(
            "codemode",
            json!({"code": "const s = await tools.mcp__py__add({a: 1, b: 1});\nconst u = await tools.mcp__py__unlock({});\nreturn [s.content[0].text, u.content[0].text, (await describeNamespace('py')).instructions];"}),
        ),
        Turn::tool_call("bash", json!({"command": "sleep 1"})),
        Turn::tool_call("mcp__py__secret", json!({})),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    std::fs::write(
        fx.agent.path().join("mcp.json"),
        serde_json::to_string_pretty(&json!({"mcpServers": {"py": {"url": server.url, "exposure": "direct"}}}))
            .unwrap(),
    )
    .unwrap();
    let run = fx.pi(["--tools", "read,bash,codemode,mcp__*", "-p", "go"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "done\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);
    let first = names(&requests[0].body);
    assert!(first.contains(&"mcp__py__add".to_string()), "{first:?}");
    assert!(!first.contains(&"mcp__py__secret".to_string()), "{first:?}");
    assert_eq!(tool_results(&requests[1].body), ["5.0"]);
    let script = &tool_results(&requests[2].body)[1];
    assert!(
        script.ends_with("\n[\"2.0\",\"unlocked\",\"Python SDK test server.\"]"),
        "{script}"
    );
    // The server announced the new tool; it is listed again and declared.
    let last = names(&requests[4].body);
    assert!(last.contains(&"mcp__py__secret".to_string()), "{last:?}");
    assert_eq!(tool_results(&requests[4].body)[3], "the secret is 42");
}
