//! Seeded fuzzing of mcp.json reading: mutated global and project files load into servers or
//! errors, never a panic; each server entry is validated on its own without panicking.
//! `PI_FUZZ_ITERS=100000 cargo test --release -p pi-mcp --lib config::fuzz_tests` runs longer.

use pi_test_support::fuzz::{self, Rng};
use serde_json::Value;

use super::load::{load_mcp_config, LoadOptions};
use super::validate::validate_server_config;

const CONFIGS: &[&str] = &[
    r#"{"mcpServers": {
  "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/src"], "env": {"TOKEN": "$TOKEN"}, "cwd": "~/w", "tools": {"read_file": "direct"}},
  "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}, "timeout": 30000, "exposure": "codemode"},
  "oauth": {"url": "http://127.0.0.1:9000/mcp", "auth": {"type": "oauth", "clientId": "c", "redirectUri": "http://localhost:1234/cb", "scopes": ["a"]}},
  "off": {"command": "x", "enabled": false}
}, "autoEnableCodemode": true}"#,
    r#"{"mcpServers": {"files": {"enabled": false}, "remote": {"tools": {"*": "hidden"}}}}"#,
    r#"{"mcpServers": {}}"#,
    "\u{feff}{\"mcpServers\": {\"a\": {\"url\": \"not a url\"}}}",
];

#[test]
fn fuzz_mcp_json_loads_or_reports() {
    let agent = tempfile::tempdir().expect("temp dir");
    let project = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(project.path().join(".pi")).expect("mkdir");
    let mut rng = Rng::new(0x5eed_0000_0000_0d01);
    for i in 0..fuzz::iters(1_500) {
        let seed = *rng.pick(CONFIGS);
        let bytes = fuzz::mutated(&mut rng, seed.as_bytes());
        // Every entry on its own, as `pi mcp add` and the loader check it.
        if let Ok(Value::Object(top)) = serde_json::from_slice::<Value>(&bytes) {
            if let Some(Value::Object(servers)) = top.get("mcpServers") {
                for (name, entry) in servers {
                    if let Err(message) = validate_server_config(name, entry) {
                        assert!(!message.is_empty(), "an empty error for {name}: {entry}");
                    }
                }
            }
        }
        // Every fifth input as a file, alternately global and project (trusted).
        if i % 5 == 0 {
            let (global, local) = if i % 10 == 0 {
                (bytes.clone(), CONFIGS[1].as_bytes().to_vec())
            } else {
                (CONFIGS[0].as_bytes().to_vec(), bytes.clone())
            };
            std::fs::write(agent.path().join("mcp.json"), global).expect("write");
            std::fs::write(project.path().join(".pi/mcp.json"), local).expect("write");
            let config = load_mcp_config(&LoadOptions {
                agent_dir: agent.path(),
                cwd: project.path(),
                project_trusted: true,
            });
            for error in &config.errors {
                assert!(error.contains("mcp.json"), "an error that names no file: {error}");
            }
        }
    }
}
