//! Project trust in the non-interactive modes: the project's own settings and SYSTEM.md are
//! left out unless `--approve`, a saved decision in `trust.json` or `defaultProjectTrust`
//! allows them; AGENTS.md loads regardless.

use pi_test_support::Script;

use crate::harness::{Fixture, Mock};

fn fixture() -> (Mock, Fixture) {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    std::fs::create_dir_all(fx.proj.join(".pi")).unwrap();
    std::fs::write(fx.proj.join(".pi/settings.json"), r#"{"defaultThinkingLevel": "high"}"#).unwrap();
    std::fs::write(fx.proj.join(".pi/SYSTEM.md"), "PROJECT SYSTEM PROMPT").unwrap();
    std::fs::write(fx.proj.join("AGENTS.md"), "PROJECT AGENTS FILE").unwrap();
    (mock, fx)
}

/// Run a prompt on the reasoning model; the last request's effort and system text.
fn run(mock: &Mock, fx: &Fixture, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "-p",
        "--no-session",
        "--provider",
        "mock-openai",
        "--model",
        "mock-thinker",
    ];
    args.extend_from_slice(extra);
    args.push("hi");
    let run = fx.pi(args).run();
    run.assert_ok();
    assert_eq!(run.stderr, "", "untrusted files are skipped silently");
    let requests = mock.requests();
    let body = &requests.last().unwrap().body;
    let effort = body["reasoning_effort"].as_str().unwrap_or_default().to_owned();
    (effort, body["messages"][0]["content"].to_string())
}

#[test]
fn untrusted_project_files_are_skipped_unless_approved() {
    let (mock, fx) = fixture();
    let (effort, system) = run(&mock, &fx, &[]);
    assert_eq!(effort, "medium", "the project's defaultThinkingLevel is ignored");
    assert!(!system.contains("PROJECT SYSTEM PROMPT"), "{system}");
    assert!(
        system.contains("PROJECT AGENTS FILE"),
        "context files load regardless: {system}"
    );

    let (effort, system) = run(&mock, &fx, &["--approve"]);
    assert_eq!(effort, "high");
    assert!(system.contains("PROJECT SYSTEM PROMPT"), "{system}");

    let (effort, _) = run(&mock, &fx, &["-a", "--no-approve"]);
    assert_eq!(effort, "medium");
}

#[test]
fn saved_decisions_and_the_default_setting() {
    let (mock, fx) = fixture();
    // A parent folder's saved decision covers the project.
    let parent = fx.proj.parent().unwrap().display().to_string();
    fx.agent
        .write("trust.json", serde_json::json!({ parent: true }).to_string())
        .unwrap();
    assert_eq!(run(&mock, &fx, &[]).0, "high");
    assert_eq!(
        run(&mock, &fx, &["-na"]).0,
        "medium",
        "--no-approve beats the saved decision"
    );
    std::fs::remove_file(fx.agent.path().join("trust.json")).unwrap();

    fx.agent
        .write("settings.json", r#"{"defaultProjectTrust": "always"}"#)
        .unwrap();
    assert_eq!(run(&mock, &fx, &[]).0, "high");
    // A saved "no" beats the default.
    fx.agent
        .write(
            "trust.json",
            serde_json::json!({ fx.proj.display().to_string(): false }).to_string(),
        )
        .unwrap();
    assert_eq!(run(&mock, &fx, &[]).0, "medium");
}

/// Package commands never ask: an untrusted project's package settings are neither shown
/// nor written.
#[test]
fn package_commands_respect_trust() {
    let (_mock, fx) = fixture();
    let pkg = fx.root.path().join("pkg");
    std::fs::create_dir_all(pkg.join("prompts")).unwrap();
    std::fs::write(pkg.join("prompts/a.md"), "A prompt\n").unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name":"pkg","version":"1.0.0"}"#).unwrap();
    let pkg = pkg.to_str().unwrap();
    let run = fx.pi(["install", "-l", pkg]).run();
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Project is not trusted. Use --approve to modify local package config.\n"
    );
    let settings = std::fs::read_to_string(fx.proj.join(".pi/settings.json")).unwrap();
    assert!(!settings.contains("packages"), "{settings}");
    fx.pi(["install", "-l", pkg, "--approve"]).run().assert_ok();
    let run = fx.pi(["list"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "No packages installed.\n");
    let run = fx.pi(["list", "-a"]).run();
    run.assert_ok();
    assert!(run.stdout.starts_with("Project packages:\n"), "{}", run.stdout);
}
