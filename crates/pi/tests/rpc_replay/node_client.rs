//! The TypeScript pi 1.6's own `RpcClient` (its published `rpc-client.js`) drives our binary
//! through the golden RPC scenario's opening: each call must resolve with the answer 1.6 gave.
//! Skipped when Node or the reference install is not on the machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::World;

/// The reference install's client (`PI_RPC_CLIENT_JS` overrides; else the reference that
/// `scripts/test-deps` installs, found through `PI_REFERENCE_DIR` or its cache folder).
fn client_js() -> Option<PathBuf> {
    let path = std::env::var_os("PI_RPC_CLIENT_JS").map(PathBuf::from).or_else(|| {
        pi_test_support::find_reference().map(|r| {
            r.dir
                .join("node_modules/@earendil-works/pi-coding-agent/dist/modes/rpc/rpc-client.js")
        })
    });
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    path.filter(|path| node && path.is_file())
}

/// The driver: every step asserts what pi 1.6 answered in the golden run.
const DRIVER: &str = r#"
import assert from "node:assert/strict";
const { RpcClient } = await import(process.env.CLIENT_JS);
const client = new RpcClient({ cliPath: process.env.SHIM, cwd: process.env.PROJ, env: {} });
await client.start();
try {
  const state = await client.getState();
  assert.equal(state.model.provider, "mock-openai");
  assert.equal(state.model.id, "mock-model");
  assert.equal(state.thinkingLevel, "off");
  assert.deepEqual(await client.getAvailableThinkingLevels(), ["off"]);

  const events = await client.promptAndWait("hello rpc");
  const types = events.map((e) => e.type);
  assert.equal(types.at(-1), "agent_settled");
  const end = events.find((e) => e.type === "agent_end");
  assert.equal(end.willRetry, false);
  assert.equal(await client.getLastAssistantText(), "echo: hello rpc");

  const { entries, leafId } = await client.getEntries();
  assert.equal(entries.at(-1).id, leafId);
  assert.ok(entries.some((e) => e.type === "message" && e.message.role === "assistant"));
  const later = await client.getEntries(entries.at(-2).id);
  assert.equal(later.entries.length, 1);
  const tree = await client.getTree();
  assert.equal(tree.leafId, leafId);
  assert.equal(tree.tree.length, 1);

  assert.deepEqual(await client.clearQueue(), { steering: [], followUp: [] });

  // pi 1.6's model and thinking rules: the level stays "off" on the thinker, cycling gives
  // "minimal".
  const model = await client.setModel("mock-anthropic", "mock-thinker");
  assert.equal(model.id, "mock-thinker");
  assert.equal((await client.getState()).thinkingLevel, "off");
  assert.deepEqual(await client.cycleThinkingLevel(), { level: "minimal" });
  const levels = await client.getAvailableThinkingLevels();
  assert.ok(levels.includes("off") && levels.includes("high"), String(levels));

  const name = await client.setSessionName("via the 1.6 client");
  assert.equal(name, undefined);
  assert.equal((await client.getState()).sessionName, "via the 1.6 client");
  console.log("ok");
} finally {
  await client.stop();
}
"#;

#[test]
fn the_pi_16_rpc_client_drives_our_binary() {
    let Some(client) = client_js().or_else(|| {
        pi_test_support::require::missing(
            "reference pi 1.6.0",
            "its RpcClient (rpc-client.js, run by node) drives our binary",
        )
    }) else {
        return;
    };
    let world = World::golden();
    let dir = tempfile::tempdir().expect("tempdir");
    // The client runs `node <cliPath> --mode rpc ...`: a shim hands the pipes to our binary.
    let shim = dir.path().join("shim.cjs");
    let bin = std::env::var_os("PI_RPC_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_pi")), PathBuf::from);
    std::fs::write(
        &shim,
        format!(
            "const r = require('node:child_process').spawnSync({:?}, process.argv.slice(2), {{ stdio: 'inherit' }});\nprocess.exit(r.status ?? 1);\n",
            bin.display().to_string()
        ),
    )
    .expect("shim");
    let driver = dir.path().join("driver.mjs");
    std::fs::write(&driver, DRIVER).expect("driver");
    let out = Command::new("node")
        .arg(&driver)
        .envs(world.agent.env())
        .env("HOME", world.root.path())
        .env("CLIENT_JS", url_of(&client))
        .env("SHIM", &shim)
        .env("PROJ", world.proj())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ok"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// A `file://` URL for a dynamic `import()`.
fn url_of(path: &Path) -> String {
    format!("file://{}", path.display())
}
