//! The documentation the system prompt names is on disk after a run: written from the binary
//! into `<agentDir>/docs/`, once per version, and never at the cost of the run.

use std::path::PathBuf;

use pi_test_support::Script;
use serde_json::Value;

use crate::harness::{Fixture, Mock};

/// The system prompt of a recorded request, whatever the API.
fn system_prompt(body: &Value) -> String {
    if let Some(first) = body["messages"].as_array().and_then(|m| m.first()) {
        if first["role"] == "system" || first["role"] == "developer" {
            return match &first["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
        }
    }
    if let Some(blocks) = body["system"].as_array() {
        return blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    }
    body["instructions"].as_str().unwrap_or_default().to_string()
}

/// The path after `label` on its line of the prompt.
fn path_after(prompt: &str, label: &str) -> PathBuf {
    let line = prompt
        .lines()
        .find_map(|l| l.trim_start_matches("- ").strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} line in the system prompt:\n{prompt}"));
    PathBuf::from(line.split(" (").next().unwrap().trim())
}

fn run_hello(fx: &Fixture) -> String {
    let run = fx.pi(["-p", "hello"]).run();
    run.assert_ok();
    assert!(
        !run.stdout.contains("docs"),
        "nothing about docs on stdout: {}",
        run.stdout
    );
    run.stdout
}

#[test]
fn the_docs_the_system_prompt_names_exist_after_a_run() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    run_hello(&fx);
    let requests = mock.requests();
    let prompt = system_prompt(&requests.last().expect("a request").body);

    let readme = path_after(&prompt, "Main documentation: ");
    let docs = path_after(&prompt, "Further docs: ");
    let examples = path_after(&prompt, "Examples: ");
    assert_eq!(docs, fx.agent.path().join("docs"));
    assert!(readme.is_file(), "{readme:?} missing");
    assert!(examples.is_dir(), "{examples:?} missing");
    // Every `docs/NAME.md` the prompt names, and the two pages of the no-model message.
    let mut named: Vec<String> = prompt
        .match_indices("docs/")
        .filter_map(|(at, _)| {
            let rest = &prompt[at + 5..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))?;
            rest[..end].ends_with(".md").then(|| rest[..end].to_string())
        })
        .collect();
    assert!(named.len() >= 10, "{named:?}");
    named.extend(["providers.md".to_string(), "models.md".to_string()]);
    for name in named {
        assert!(
            docs.join(&name).is_file(),
            "{name} is named but {:?} does not exist",
            docs.join(&name)
        );
    }
}

#[test]
fn a_second_run_leaves_the_written_docs_alone() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    run_hello(&fx);
    let page = fx.agent.path().join("docs/usage.md");
    let original = std::fs::read_to_string(&page).unwrap();
    // A matching stamp means the files are not written again, so a change survives.
    std::fs::write(&page, "changed by hand").unwrap();
    run_hello(&fx);
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "changed by hand");
    // A stamp from another version brings the pages back.
    std::fs::write(fx.agent.path().join("docs/.pi-docs-stamp"), "0.0.0 0\n").unwrap();
    run_hello(&fx);
    assert_eq!(std::fs::read_to_string(&page).unwrap(), original);
}

#[test]
fn an_unwritable_docs_folder_does_not_fail_the_run() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    // A file where the folder belongs: no write can succeed, whoever runs the test.
    std::fs::write(fx.agent.path().join("docs"), "not a folder").unwrap();
    let out = run_hello(&fx);
    assert!(!out.trim().is_empty(), "the answer is printed");
    assert_eq!(
        std::fs::read_to_string(fx.agent.path().join("docs")).unwrap(),
        "not a folder"
    );
    let requests = mock.requests();
    let prompt = system_prompt(&requests.last().expect("a request").body);
    assert_eq!(path_after(&prompt, "Further docs: "), fx.agent.path().join("docs"));
}
