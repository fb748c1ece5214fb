//! pi 1.6's pre-trust pass, side by side with the reference: a user extension's `project_trust`
//! handler decides whether the project's own extension loads, before `trust.json`; its
//! `remember` saves the decision; a throwing handler is a startup warning; the user extension's
//! factory runs once. In print, JSON and RPC mode.

use std::path::Path;

use pi_test_support::Script;

use crate::extensions::{environment, fixture, pi_with};
use crate::harness::{Fixture, Mock, Pi};

/// What one run showed: the extensions' log, stderr, and `trust.json` afterwards.
#[derive(Debug, PartialEq)]
struct Seen {
    log: String,
    stderr: String,
    trust: Option<serde_json::Value>,
}

fn setup(mock: &Mock) -> Fixture {
    let fx = Fixture::new(mock);
    let gate = std::fs::read_to_string(fixture("trust_gate.ts")).unwrap();
    fx.agent.write("extensions/gate.ts", gate).unwrap();
    let local = std::fs::read_to_string(fixture("trust_local.ts")).unwrap();
    std::fs::create_dir_all(fx.proj.join(".pi/extensions")).unwrap();
    std::fs::write(fx.proj.join(".pi/extensions/local.ts"), local).unwrap();
    fx
}

/// Run `pi` (`ours`) or the reference with the gate answering `answer`; `saved` is written
/// to `trust.json` first. RPC runs get one `get_state` command on stdin.
fn observe(
    fx: &Fixture,
    mut pi: Pi,
    answer: &str,
    remember: bool,
    saved: Option<serde_json::Value>,
    rpc: bool,
) -> Seen {
    let log = fx.root.path().join("trust.log");
    let _ = std::fs::remove_file(&log);
    let trust_file = fx.agent.path().join("trust.json");
    let _ = std::fs::remove_file(&trust_file);
    if let Some(saved) = saved {
        std::fs::write(&trust_file, saved.to_string()).unwrap();
    }
    pi.cmd
        .env("TRUST_LOG", &log)
        .env("TRUST_ANSWER", answer)
        .env("TRUST_REMEMBER", if remember { "1" } else { "0" });
    if rpc {
        pi = pi.stdin("{\"id\":\"1\",\"type\":\"get_state\"}\n");
    }
    let run = pi.run();
    assert_eq!(run.code, 0, "{run:?}");
    Seen {
        log: std::fs::read_to_string(&log).unwrap_or_default(),
        stderr: run.stderr.clone(),
        trust: std::fs::read_to_string(&trust_file)
            .ok()
            .map(|t| serde_json::from_str(&t).unwrap()),
    }
}

fn reference_pi(reference: &pi_test_support::ReferencePi, fx: &Fixture, args: &[&str]) -> Pi {
    let mut cmd = reference.command();
    cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
    Pi::from_command(cmd)
}

fn trust_entry(dir: &Path, trusted: bool) -> serde_json::Value {
    serde_json::json!({ dir.display().to_string(): trusted })
}

struct Case {
    args: &'static [&'static str],
    answer: &'static str,
    remember: bool,
    saved: Option<bool>,
    /// Whether the project's extension loads.
    trusted: bool,
    /// The warning line pi prints, if any.
    warning: Option<&'static str>,
}

#[test]
fn project_trust_handlers_decide_before_saved_decisions_in_every_mode() {
    let test = "project_trust_handlers_decide_before_saved_decisions_in_every_mode";
    let Some(env) = environment(test) else { return };
    let reference = pi_test_support::reference_pi(test);
    let print: &[&str] = &["-p", "--no-session", "hi"];
    let json: &[&str] = &["--mode", "json", "--no-session", "hi"];
    let rpc: &[&str] = &["--mode", "rpc", "--no-session"];
    let cases = [
        // Undecided: the decision order goes on; nothing saved and no TUI means untrusted.
        Case {
            args: print,
            answer: "undecided",
            remember: false,
            saved: None,
            trusted: false,
            warning: None,
        },
        // ... and a saved decision is used.
        Case {
            args: print,
            answer: "undecided",
            remember: false,
            saved: Some(true),
            trusted: true,
            warning: None,
        },
        // A handler's "no" beats a saved "yes"; `remember` writes it over.
        Case {
            args: json,
            answer: "no",
            remember: true,
            saved: Some(true),
            trusted: false,
            warning: None,
        },
        Case {
            args: print,
            answer: "yes",
            remember: true,
            saved: None,
            trusted: true,
            warning: None,
        },
        Case {
            args: rpc,
            answer: "yes",
            remember: false,
            saved: None,
            trusted: true,
            warning: None,
        },
        // A throwing handler, and one that returns nothing, are warnings; the order goes on.
        Case {
            args: print,
            answer: "throw",
            remember: false,
            saved: None,
            trusted: false,
            warning: Some("project_trust error: gate broke"),
        },
        Case {
            args: rpc,
            answer: "none",
            remember: false,
            saved: Some(true),
            trusted: true,
            warning: Some("project_trust error: Cannot read properties of undefined (reading 'trusted')"),
        },
    ];
    let mock = Mock::start(Script::echo());
    let fx = setup(&mock);
    for case in &cases {
        let rpc_mode = case.args[0] == "--mode" && case.args[1] == "rpc";
        let saved = case.saved.map(|t| trust_entry(&fx.proj, t));
        let ours = observe(
            &fx,
            pi_with(&fx, &env, case.args),
            case.answer,
            case.remember,
            saved.clone(),
            rpc_mode,
        );
        let mode = if rpc_mode {
            "rpc"
        } else if case.args[0] == "--mode" {
            "json"
        } else {
            "print"
        };
        let mut expected = format!(
            "factory gate\nproject_trust project_trust {} mode={mode} hasUI=false\nctx cwd,mode,hasUI,ui ui select,confirm,input,notify\ndialogs undefined false undefined\n",
            fx.proj.display()
        );
        if case.trusted {
            expected.push_str("factory local\n");
        }
        expected.push_str(&format!("session_start trusted={}\n", case.trusted));
        assert_eq!(ours.log, expected, "{}: {}", case.answer, case.args.join(" "));
        assert!(ours.stderr.starts_with("gate was asked\n"), "{:?}", ours.stderr);
        let gate = fx.agent.path().join("extensions/gate.ts");
        match case.warning {
            Some(w) => assert!(
                ours.stderr
                    .contains(&format!("Warning: Extension \"{}\" {w}\n", gate.display())),
                "{:?}",
                ours.stderr
            ),
            None => assert!(!ours.stderr.contains("Warning"), "{:?}", ours.stderr),
        }
        let wanted_trust = match (case.remember, case.answer) {
            (true, "yes") => Some(trust_entry(&fx.proj, true)),
            (true, "no") => Some(trust_entry(&fx.proj, false)),
            _ => saved.clone(),
        };
        assert_eq!(ours.trust, wanted_trust, "{}", case.answer);
        if let Some(reference) = &reference {
            let theirs = observe(
                &fx,
                reference_pi(reference, &fx, case.args),
                case.answer,
                case.remember,
                saved,
                rpc_mode,
            );
            assert_eq!(ours, theirs, "{}: {}", case.answer, case.args.join(" "));
        }
    }
}

#[test]
fn approve_skips_the_handlers_and_loads_the_project() {
    let test = "approve_skips_the_handlers_and_loads_the_project";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = setup(&mock);
    let args = ["-p", "--no-session", "-a", "hi"];
    let ours = observe(&fx, pi_with(&fx, &env, args), "no", true, None, false);
    // The project's extension comes first in the load order.
    assert_eq!(ours.log, "factory local\nfactory gate\nsession_start trusted=true\n");
    assert_eq!(ours.trust, None);
    if let Some(reference) = pi_test_support::reference_pi(test) {
        let theirs = observe(&fx, reference_pi(&reference, &fx, &args), "no", true, None, false);
        assert_eq!(ours, theirs);
    }
}
