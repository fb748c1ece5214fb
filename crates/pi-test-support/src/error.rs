//! Errors of the mock server: bad scripts, file and socket failures.

use std::path::PathBuf;

/// Anything that stops the mock from starting or loading a script.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    #[error("invalid mock script: {0}")]
    Script(#[source] serde_json::Error),
    #[error("invalid match pattern {pattern:?}: {message}")]
    Pattern { pattern: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
}
