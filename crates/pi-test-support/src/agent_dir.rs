//! Temporary pi agent directories whose `models.json` points at a mock server, with the
//! providers and models the golden runs used.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::conversation::Api;
use crate::server::MockServer;

/// Provider name, pi `api` name, and API key of each mock provider.
pub const PROVIDERS: &[(&str, Api, &str, &str)] = &[
    ("mock-openai", Api::Openai, "openai-completions", "sk-mock-openai"),
    ("mock-anthropic", Api::Anthropic, "anthropic-messages", "sk-ant-mock"),
    (
        "mock-responses",
        Api::Responses,
        "openai-responses",
        "sk-mock-responses",
    ),
    ("mock-google", Api::Google, "google-generative-ai", "mock-google-key"),
];

fn models() -> Value {
    json!([
        {"id": "mock-model", "name": "Mock Model", "reasoning": false, "input": ["text"],
         "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
         "contextWindow": 128000, "maxTokens": 16384},
        {"id": "mock-thinker", "name": "Mock Thinker", "reasoning": true, "input": ["text", "image"],
         "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
         "contextWindow": 200000, "maxTokens": 32000},
    ])
}

/// A `models.json` value with the given mock providers (in the order of [`PROVIDERS`]).
pub fn models_json(server: &MockServer, apis: &[Api]) -> Value {
    let mut providers = serde_json::Map::new();
    for (name, api, api_name, key) in PROVIDERS {
        if apis.contains(api) {
            providers.insert(
                (*name).to_owned(),
                json!({"baseUrl": server.base_url_for(*api), "api": api_name, "apiKey": key, "models": models()}),
            );
        }
    }
    json!({"providers": providers})
}

/// The three providers of the golden runs (no Google).
pub const GOLDEN_APIS: &[Api] = &[Api::Openai, Api::Anthropic, Api::Responses];

/// All four mock providers.
pub const ALL_APIS: &[Api] = &[Api::Openai, Api::Anthropic, Api::Responses, Api::Google];

/// Write `models.json` into `dir` (created if missing) and return its path.
pub fn write_models_json(dir: &Path, server: &MockServer, apis: &[Api]) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("models.json");
    let text = serde_json::to_string_pretty(&models_json(server, apis)).map_err(io::Error::other)?;
    std::fs::write(&path, text + "\n")?;
    Ok(path)
}

/// A temporary agent directory (removed on drop) holding a `models.json` for a mock server.
/// Point pi at it with [`AgentDir::env`]: `PI_CODING_AGENT_DIR=<dir>` and `PI_OFFLINE=1`.
pub struct AgentDir {
    dir: tempfile::TempDir,
}

impl AgentDir {
    /// All four mock providers (`mock-openai` first, so it is the default model).
    pub fn new(server: &MockServer) -> io::Result<AgentDir> {
        Self::with_apis(server, ALL_APIS)
    }

    /// Exactly the providers of the golden runs, so `--list-models` matches them too.
    pub fn golden(server: &MockServer) -> io::Result<AgentDir> {
        Self::with_apis(server, GOLDEN_APIS)
    }

    /// The given mock providers.
    pub fn with_apis(server: &MockServer, apis: &[Api]) -> io::Result<AgentDir> {
        let dir = tempfile::Builder::new().prefix("pi-agent-").tempdir()?;
        write_models_json(dir.path(), server, apis)?;
        Ok(AgentDir { dir })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write a file relative to the directory (e.g. `settings.json`, `AGENTS.md`).
    pub fn write(&self, relative: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<PathBuf> {
        let path = self.dir.path().join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, contents)?;
        Ok(path)
    }

    /// Environment for a pi process using this directory.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PI_CODING_AGENT_DIR".to_owned(), self.dir.path().display().to_string()),
            ("PI_OFFLINE".to_owned(), "1".to_owned()),
            // OAuth refreshes go to a closed local port unless a test points them at its mock
            // authorization server: no test reaches a real provider.
            ("PI_OAUTH_ORIGIN".to_owned(), "http://127.0.0.1:9".to_owned()),
            // Likewise `pi update --models`: the model catalogue is not pi.dev's.
            ("PI_MODEL_CATALOG_URL".to_owned(), "http://127.0.0.1:9".to_owned()),
        ]
    }
}
