//! The empty `auth.json` and `models-store.json` pi 1.6 creates in the agent dir: which
//! commands create them, their content and mode, and that existing files are kept; the
//! reference pi 1.6 runs the same commands when it is installed.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::harness::pi_bin;

const CASES: &[&[&str]] = &[
    &["--version"],
    &["--help"],
    &["--list-models"],
    &["-p", "hi", "--model", "nowhere/none"],
    &["list"],
    &["auth", "check"],
    &["auth", "check", "--provider", "openai"],
    &["auth", "print-api-key"],
    &["auth", "logout"],
];

/// For each of the two files: absent, or its content and mode.
fn files(agent: &Path) -> Vec<Option<(String, u32)>> {
    ["auth.json", "models-store.json"]
        .iter()
        .map(|name| {
            let path = agent.join(name);
            let content = std::fs::read_to_string(&path).ok()?;
            #[cfg(unix)]
            let mode = {
                use std::os::unix::fs::PermissionsExt;
                std::fs::metadata(&path).ok()?.permissions().mode() & 0o777
            };
            #[cfg(not(unix))]
            let mode = 0;
            Some((content, mode))
        })
        .collect()
}

/// Run `args` with a fresh agent dir (holding `store` as models-store.json when given).
fn after(mut cmd: Command, args: &[&str], store: Option<&str>) -> Vec<Option<(String, u32)>> {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    if let Some(store) = store {
        std::fs::write(agent.join("models-store.json"), store).unwrap();
    }
    for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PI_CODING_AGENT_SESSION_DIR"] {
        cmd.env_remove(var);
    }
    let status = cmd
        .args(args)
        .current_dir(root.path())
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", root.path())
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.code().is_some(), "{args:?} was killed");
    files(&agent)
}

fn empty() -> Option<(String, u32)> {
    Some(("{}".into(), 0o600))
}

#[test]
fn runtime_commands_create_the_empty_files() {
    let ours = |args: &[&str]| after(Command::new(pi_bin()), args, None);
    assert_eq!(ours(&["--version"]), vec![None, None]);
    assert_eq!(ours(&["list"]), vec![None, None]);
    assert_eq!(ours(&["auth", "check"]), vec![None, None]);
    assert_eq!(ours(&["--help"]), vec![empty(), empty()]);
    assert_eq!(ours(&["-p", "hi", "--model", "nowhere/none"]), vec![empty(), empty()]);
    assert_eq!(ours(&["auth", "check", "--provider", "openai"]), vec![empty(), None]);
    assert_eq!(ours(&["auth", "logout"]), vec![empty(), empty()]);
    // An existing store keeps its content and mode.
    let kept = after(Command::new(pi_bin()), &["--help"], Some("{\"a\":1}"));
    assert_eq!(kept[0], empty());
    assert_eq!(kept[1].as_ref().map(|(c, _)| c.as_str()), Some("{\"a\":1}"));
    assert_ne!(kept[1].as_ref().map(|(_, m)| *m), Some(0o600));
}

#[test]
fn the_same_commands_create_the_same_files_as_pi_1_6() {
    let Some(reference) = pi_test_support::reference_pi("the_same_commands_create_the_same_files_as_pi_1_6") else {
        return;
    };
    for args in CASES {
        let theirs = after(reference.command(), args, None);
        let ours = after(Command::new(pi_bin()), args, None);
        assert_eq!(ours, theirs, "pi {}", args.join(" "));
    }
}
