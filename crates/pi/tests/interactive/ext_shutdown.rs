//! `ctx.shutdown()` of an extension in the terminal UI: pi quits once the agent is idle, with
//! `session_shutdown` (reason `quit`) before the host stops.

use std::time::Duration;

use pi_test_support::Script;

use super::pty::Pty;
use super::{setup, ENTER};

#[test]
fn an_extension_command_shuts_the_terminal_ui_down() {
    let test = "an_extension_command_shuts_the_terminal_ui_down";
    let node = std::env::var_os("PI_TEST_NODE")
        .map(std::path::PathBuf::from)
        .or_else(|| pi_extensions::node::find_node(None).ok());
    let modules = std::env::var_os("PI_EXTENSION_MODULES")
        .map(std::path::PathBuf::from)
        .or_else(|| pi_test_support::find_reference().map(|r| r.dir.join("node_modules")))
        .filter(|dir| pi_extensions::modules::has_required_packages(dir));
    let (Some(node), Some(modules)) = (node, modules) else {
        let _: Option<()> = pi_test_support::require::missing("node and the extension host packages", test);
        return;
    };
    let s = setup(Script::echo());
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/extensions/shutdown.ts");
    let log = s.cwd.path().join("lifecycle.log");
    let (node, modules, log_text) = (
        node.display().to_string(),
        modules.display().to_string(),
        log.display().to_string(),
    );
    let mut pty = Pty::spawn_env(
        &["-e", fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[
            ("PI_NODE", &node),
            ("PI_EXTENSION_MODULES", &modules),
            ("LIFECYCLE_LOG", &log_text),
        ],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty.type_text("/bye");
    pty.send(ENTER);
    let code = pty.wait_exit(Duration::from_secs(20));
    assert_eq!(code, Some(0), "pi did not quit: {}", pty.contents());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "bye\nshutdown quit\n");
}
