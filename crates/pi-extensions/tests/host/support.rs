//! Shared pieces of the host tests: finding node and the npm packages, a handler that records
//! what the host sends, and runner set-up.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_extensions::{
    ExtensionRunner, ExtensionSource, HostHandler, ModulesConfig, OutputStream, RunnerConfig, Timeouts,
};
use serde_json::Value;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The reference pi's install folder: `PI_REFERENCE_PI`, else the one
/// `pi_test_support::find_reference` finds (`PI_REFERENCE_DIR` or the test-deps cache).
pub fn reference_install() -> Option<PathBuf> {
    std::env::var_os("PI_REFERENCE_PI")
        .map(PathBuf::from)
        .or_else(|| pi_test_support::find_reference().map(|r| r.dir))
}

pub fn find_node() -> Option<PathBuf> {
    if let Some(node) = std::env::var_os("PI_TEST_NODE") {
        return Some(PathBuf::from(node));
    }
    let usr = PathBuf::from("/usr/bin/node");
    if usr.is_file() {
        return Some(usr);
    }
    pi_extensions::node::find_node(None).ok()
}

pub fn find_modules() -> Option<PathBuf> {
    let configured = std::env::var_os("PI_EXTENSION_MODULES").map(PathBuf::from);
    configured
        .or_else(|| reference_install().map(|dir| dir.join("node_modules")))
        .filter(|dir| pi_extensions::modules::has_required_packages(dir))
}

/// Node and the packages, or [`pi_test_support::require::missing`] (a failure under CI).
pub fn environment(test: &str) -> Option<(PathBuf, PathBuf)> {
    let why = format!("{test}: runs extensions in the host");
    match (find_node(), find_modules()) {
        (Some(node), Some(modules)) => Some((node, modules)),
        (None, _) => pi_test_support::require::missing("node", &why),
        (_, None) => pi_test_support::require::missing(
            "reference pi 1.6.0 (the extension host packages, or set PI_EXTENSION_MODULES)",
            &why,
        ),
    }
}

/// Records what the host tells pi and answers dialogs.
#[derive(Default)]
pub struct Recorder {
    pub output: Mutex<Vec<(OutputStream, String)>>,
    pub notifications: Mutex<Vec<(String, Value)>>,
    pub requests: Mutex<Vec<(String, Value)>>,
    pub select_answer: Mutex<Option<String>>,
}

impl Recorder {
    /// The host's stdout so far, as lines (it arrives in chunks as printed).
    pub fn stdout(&self) -> Vec<String> {
        let text: String = self
            .output
            .lock()
            .map(|o| {
                o.iter()
                    .filter(|(s, _)| *s == OutputStream::Stdout)
                    .map(|(_, l)| l.as_str())
                    .collect()
            })
            .unwrap_or_default();
        text.lines().map(str::to_string).collect()
    }

    pub async fn wait_for_stdout(&self, needle: &str) -> bool {
        for _ in 0..100 {
            if self.stdout().iter().any(|l| l.contains(needle)) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

#[async_trait]
impl HostHandler for Recorder {
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        if let Ok(mut requests) = self.requests.lock() {
            requests.push((method.to_string(), params.clone()));
        }
        match method {
            "tool.builtin" => Ok(serde_json::json!({
                "content": [{ "type": "text", "text": format!("{} ran {}", params["name"].as_str().unwrap_or(""), params["args"]["command"].as_str().unwrap_or("")) }],
                "details": { "cwd": params["cwd"] },
            })),
            "ui.select" => Ok(self
                .select_answer
                .lock()
                .ok()
                .and_then(|a| a.clone())
                .map(Value::from)
                .unwrap_or(Value::Null)),
            _ => Err(format!("{method} is not handled in this test")),
        }
    }

    fn notification(&self, method: &str, params: Value) {
        if let Ok(mut notes) = self.notifications.lock() {
            notes.push((method.to_string(), params));
        }
    }

    fn output(&self, stream: OutputStream, line: &str) {
        if let Ok(mut output) = self.output.lock() {
            output.push((stream, line.to_string()));
        }
    }
}

pub struct Setup {
    pub config: RunnerConfig,
    pub recorder: Arc<Recorder>,
    pub _agent: tempfile::TempDir,
}

pub fn setup(node: PathBuf, modules: PathBuf, files: &[&Path]) -> Result<Setup, std::io::Error> {
    let agent = tempfile::tempdir()?;
    let mut config = RunnerConfig::new(
        "1.6.0-test",
        agent.path(),
        agent.path(),
        files
            .iter()
            .map(|f| ExtensionSource {
                path: f.display().to_string(),
                resolved_path: None,
            })
            .collect(),
    );
    config.node = Some(node);
    config.modules = ModulesConfig {
        dir: Some(modules),
        allow_install: false,
    };
    config.timeouts = Timeouts {
        liveness: Duration::from_millis(500),
        ping: Duration::from_secs(3),
        ..Timeouts::default()
    };
    Ok(Setup {
        config,
        recorder: Arc::new(Recorder::default()),
        _agent: agent,
    })
}

pub async fn start(setup: &Setup) -> Result<ExtensionRunner, Box<dyn std::error::Error>> {
    ExtensionRunner::start(setup.config.clone(), setup.recorder.clone())
        .await?
        .ok_or_else(|| "no runner for a configured extension".into())
}

pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}
