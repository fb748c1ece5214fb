//! The reference pi's own example extensions (`examples/extensions/` of the installed pi 1.6,
//! never copied into this repository) run through our binary and through pi 1.6 side by side
//! against the mock: the same output, the same tool results, the same prompt sections.

use std::path::PathBuf;

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::extensions::{environment, pi_with, reference_run, tool_results};
use crate::harness::{Fixture, Mock, Run};

/// The reference's examples folder, or `None` after a `skipped:` line (a failure under `CI`).
fn examples(test: &str) -> Option<(pi_test_support::ReferencePi, PathBuf)> {
    let reference = pi_test_support::reference_pi(test)?;
    let dir = reference.coding_agent().join("examples/extensions");
    dir.join("hello.ts").is_file().then_some((reference, dir))
}

fn example_args(dir: &std::path::Path, names: &[&str], tail: &[&str]) -> Vec<String> {
    let mut args = Vec::new();
    for name in names {
        args.push("-e".to_string());
        args.push(dir.join(name).display().to_string());
    }
    args.extend(tail.iter().map(|s| s.to_string()));
    args
}

/// What a print run shows and what the model was sent back.
fn outcome(run: Run, mock: &Mock) -> (i32, String, String, Vec<Vec<String>>) {
    let results = mock.requests().iter().map(|r| tool_results(&r.body)).collect();
    (run.code, run.stdout, run.stderr, results)
}

#[test]
fn example_extensions_with_a_tool_call_print_what_pi_1_6_prints() {
    let test = "example_extensions_with_a_tool_call_print_what_pi_1_6_prints";
    let Some(env) = environment(test) else { return };
    let Some((reference, dir)) = examples(test) else { return };
    // todo.ts imports pi-ai, pi-tui and typebox together (it failed to load on Node 20);
    // the others are the examples that react to a print-mode prompt without a terminal.
    let names = [
        "todo.ts",
        "hello.ts",
        "commands.ts",
        "bookmark.ts",
        "session-name.ts",
        "status-line.ts",
        "model-status.ts",
        "protected-paths.ts",
        "permission-gate.ts",
        "input-transform.ts",
        "truncated-tool.ts",
    ];
    let args = example_args(&dir, &names, &["-p", "add a todo"]);
    let script = || {
        Script::sequential(vec![
            Turn::tool_call("todo", json!({"action": "add", "text": "write the tests"})),
            Turn::tool_call("todo", json!({"action": "list"})),
            Turn::text("done"),
        ])
    };
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let ours = outcome(pi_with(&fx, &env, &args).run(), &mock);
    assert_eq!(ours.0, 0, "{ours:?}");
    assert_eq!(
        ours.3,
        vec![
            vec![],
            vec!["Added todo #1: write the tests".to_string()],
            vec![
                "Added todo #1: write the tests".to_string(),
                "[ ] #1: write the tests".to_string()
            ],
        ],
        "{ours:?}"
    );
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    let theirs = outcome(reference_run(&reference, &fx, &args).run(), &mock);
    assert_eq!(ours, theirs);
}

/// The `<name>` section of a request's system prompt, with its tags.
fn section(body: &Value, name: &str) -> Option<String> {
    let prompt = body["messages"]
        .as_array()?
        .iter()
        .find(|m| m["role"] == "system" || m["role"] == "developer")?["content"]
        .as_str()?
        .to_string();
    let open = format!("<{name}>\n");
    let close = format!("\n</{name}>");
    let start = prompt.find(&open)?;
    let end = prompt[start..].find(&close)? + start + close.len();
    Some(prompt[start..end].to_string())
}

/// Whether the `<cwd>` section comes before `<name>` in the request's system prompt.
fn follows_cwd(body: &Value, name: &str) -> bool {
    let text = body["messages"][0]["content"].as_str().unwrap_or_default();
    match (text.find("<cwd>\n"), text.find(&format!("<{name}>\n"))) {
        (Some(cwd), Some(at)) => cwd < at,
        _ => false,
    }
}

#[test]
fn prompt_customizer_adds_the_section_pi_1_6_adds() {
    let test = "prompt_customizer_adds_the_section_pi_1_6_adds";
    let Some(env) = environment(test) else { return };
    let Some((reference, dir)) = examples(test) else { return };
    let guidance = |run: Run, mock: &Mock| {
        assert_eq!(run.code, 0, "{run:?}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 1, "{run:?}");
        let body = &requests[0].body;
        assert!(follows_cwd(body, "tool_guidance"), "after the working directory");
        (run.stdout, run.stderr, section(body, "tool_guidance"))
    };
    for tools in ["read,bash,edit,write", "read,grep"] {
        let args = example_args(&dir, &["prompt-customizer.ts"], &["--tools", tools, "-p", "hi"]);
        let mock = Mock::start(Script::echo());
        let fx = Fixture::new(&mock);
        let ours = guidance(pi_with(&fx, &env, &args).run(), &mock);
        let text = ours.2.clone().unwrap_or_default();
        assert!(text.contains("- Use `read` for file contents"), "{ours:?}");
        assert_eq!(
            text.contains("Use `bash`"),
            tools.contains("bash"),
            "the selected tools decide: {ours:?}"
        );
        let mock = Mock::start(Script::echo());
        let fx = Fixture::new(&mock);
        let theirs = guidance(reference_run(&reference, &fx, &args).run(), &mock);
        assert_eq!(ours, theirs, "--tools {tools}");
    }
}

#[test]
fn list_models_shows_the_models_extensions_register() {
    let test = "list_models_shows_the_models_extensions_register";
    let Some(env) = environment(test) else { return };
    let args = ["-e", &crate::extensions::fixture("provider.ts"), "--list-models"].map(str::to_string);
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let ours = pi_with(&fx, &env, &args).run();
    assert_eq!(ours.code, 0, "{ours:?}");
    let listed = |line: &str| line.split_whitespace().take(2).eq(["echo-llm", "echo-1"]);
    assert!(ours.stdout.lines().any(listed), "{ours:?}");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = reference_run(&reference, &fx, &args).run();
    assert_eq!((ours.code, ours.stdout), (theirs.code, theirs.stdout));
}

#[test]
fn the_model_registry_answers_auth_and_refresh_as_pi_1_6() {
    let test = "the_model_registry_answers_auth_and_refresh_as_pi_1_6";
    let Some(env) = environment(test) else { return };
    let args = ["-e", &crate::extensions::fixture("registry.ts"), "-p", "hi"].map(str::to_string);
    let log = |fx: &Fixture, run: crate::harness::Pi, name: &str| {
        let path = fx.root.path().join(name);
        let mut run = run;
        run.cmd.env("REGISTRY_LOG", &path);
        run.run().assert_ok();
        std::fs::read_to_string(path).unwrap()
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let ours = log(&fx, pi_with(&fx, &env, &args), "ours.log");
    assert!(ours.contains("auth ok=true key=sk-mock-openai\n"), "{ours}");
    assert!(ours.contains("refresh object\n"), "{ours}");
    assert!(ours.contains("complete stop echo: ping assistant"), "{ours}");
    assert!(ours.contains("aborted aborted\n"), "{ours}");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = log(&fx, reference_run(&reference, &fx, &args), "theirs.log");
    assert_eq!(ours, theirs);
}
