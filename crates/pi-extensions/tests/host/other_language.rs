//! A host written in another language: the Python example host in `docs/examples` speaks the
//! protocol in place of the Node host; pi loads its extension and calls its tool.

use std::path::{Path, PathBuf};

use pi_extensions::{ExtensionRunner, ExtensionSource, HostProgram, InputOutcome, RunnerConfig, ToolCall};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

fn python() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("python3"))
        .find(|p| p.is_file())
}

#[tokio::test]
async fn the_python_example_host_serves_its_tool() -> TestResult {
    let Some(python) =
        python().or_else(|| pi_test_support::require::missing("python3", "runs the Python example extension host"))
    else {
        return Ok(());
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/python-extension-host/host.py");
    let agent = tempfile::tempdir()?;
    let mut config = RunnerConfig::new(
        "1.6.0-test",
        agent.path(),
        agent.path(),
        vec![ExtensionSource {
            path: "python:word-count".into(),
            resolved_path: None,
        }],
    );
    config.host_program = Some(HostProgram {
        program: python,
        script,
    });
    let recorder = std::sync::Arc::new(Recorder::default());
    let runner = ExtensionRunner::start(config, recorder.clone())
        .await?
        .ok_or("no runner")?;
    let registrations = runner.registrations();
    let tools: Vec<&str> = registrations.tools().iter().map(|(_, t)| t.name.as_str()).collect();
    assert_eq!(tools, vec!["py_word_count"]);
    let result = runner
        .call_tool(
            ToolCall {
                call_id: "c1".into(),
                name: "py_word_count".into(),
                params: json!({ "text": "one two three" }),
            },
            None,
            &CancellationToken::new(),
        )
        .await?;
    assert_eq!(result.content, vec![json!({"type": "text", "text": "3 words"})]);
    assert_eq!(result.details["words"], 3);
    let (outcome, errors) = runner.emit_input("hi", None, "interactive", None).await?;
    assert_eq!(outcome, InputOutcome::Continue);
    assert!(errors.is_empty());
    runner.shutdown().await;
    Ok(())
}

#[test]
fn the_host_variable_names_a_program_and_its_script() {
    assert_eq!(
        HostProgram::parse("python3 /x/host.py"),
        Some(HostProgram {
            program: PathBuf::from("python3"),
            script: PathBuf::from("/x/host.py"),
        })
    );
    assert_eq!(HostProgram::parse("python3"), None);
}
