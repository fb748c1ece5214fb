//! `pi mcp …` through the binary: servers added to and listed from the agent dir's mcp.json,
//! and a project's `.pi/mcp.json` read only when the project is trusted.

use pi_test_support::Script;
use serde_json::Value;

use crate::harness::{Fixture, Mock};

fn list(fx: &Fixture, extra: &[&str]) -> Value {
    let mut args = vec!["mcp", "list", "--json"];
    args.extend_from_slice(extra);
    let run = fx.pi(args).run();
    // The test servers cannot start (`/bin/false`): as in pi, the listing says so and exits 1.
    assert_eq!(run.code, 1, "{run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

fn names(listing: &Value) -> Vec<String> {
    let servers = listing.get("servers").unwrap_or(listing);
    match servers {
        Value::Array(items) => items
            .iter()
            .filter_map(|s| s["name"].as_str().map(str::to_string))
            .collect(),
        Value::Object(map) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

#[test]
fn add_then_list_and_project_servers_need_trust() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let run = fx.pi(vec!["mcp", "add", "demo", "--", "/bin/false"]).run();
    assert_eq!(run.code, 0, "{run:?}");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(fx.agent.path().join("mcp.json")).unwrap()).unwrap();
    assert_eq!(config["mcpServers"]["demo"]["command"], "/bin/false", "{config}");
    assert!(names(&list(&fx, &[])).contains(&"demo".to_string()));

    std::fs::create_dir_all(fx.proj.join(".pi")).unwrap();
    std::fs::write(
        fx.proj.join(".pi/mcp.json"),
        r#"{"mcpServers": {"projsrv": {"command": "/bin/false"}}}"#,
    )
    .unwrap();
    assert!(
        !names(&list(&fx, &[])).contains(&"projsrv".to_string()),
        "an untrusted project's servers are not read"
    );
    assert!(names(&list(&fx, &["--approve"])).contains(&"projsrv".to_string()));
}
