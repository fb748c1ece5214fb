//! Extensions in the terminal UI: a command that opens a dialog and shows a notice.

use std::path::PathBuf;
use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{quit, setup, ENTER};

/// Node and the packages the extension host needs, or `None` after a `skipped:` line (a
/// failure under `CI`).
fn extension_env(test: &str) -> Option<(PathBuf, PathBuf)> {
    let node = std::env::var_os("PI_TEST_NODE")
        .map(PathBuf::from)
        .or_else(|| pi_extensions::node::find_node(None).ok());
    let modules = std::env::var_os("PI_EXTENSION_MODULES")
        .map(PathBuf::from)
        .or_else(|| pi_test_support::find_reference().map(|r| r.dir.join("node_modules")))
        .filter(|dir| pi_extensions::modules::has_required_packages(dir));
    match (node, modules) {
        (Some(node), Some(modules)) => Some((node, modules)),
        _ => pi_test_support::require::missing("node and the extension host packages", test),
    }
}

#[test]
fn an_extension_command_opens_a_dialog_and_shows_a_notice() {
    let Some((node, modules)) = extension_env("an_extension_command_opens_a_dialog_and_shows_a_notice") else {
        return;
    };
    let s = setup(Script::echo());
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/ui.ts");
    let node = node.display().to_string();
    let modules = modules.display().to_string();
    let mut pty = Pty::spawn_env(
        &["-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty.type_text("/pick");
    pty.send(ENTER);
    pty.wait_text("Pick a letter");
    pty.wait_text("beta");
    pty.send("\x1b[B");
    pty.send(ENTER);
    pty.wait_text("picked beta in tui");
    // Nothing was sent to the model: the command ran instead of a prompt.
    assert!(s.server.requests().is_empty());
    quit(&mut pty);
}
