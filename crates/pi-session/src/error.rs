//! The errors a session operation can return.

use std::path::PathBuf;

/// What went wrong with a session file or a tree operation.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A tree operation named an id the session does not hold (pi's wording).
    #[error("Entry {0} not found")]
    EntryNotFound(String),
    /// Another process holds the write lock on this session file.
    #[error("Session file is in use by another pi process: {}", path.display())]
    Locked { path: PathBuf },
    /// The session was opened read-only and something tried to write.
    #[error("Session is open read-only: {}", path.display())]
    ReadOnly { path: PathBuf },
    /// A fork source that holds no session.
    #[error("Cannot fork: source session file is empty or invalid: {}", path.display())]
    InvalidSource { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An entry id chosen by the caller that is empty or already in the session.
    #[error("Entry id {0:?} is empty or already in use")]
    DuplicateEntryId(String),
    #[error("cannot encode session entry: {0}")]
    Encode(#[from] serde_json::Error),
}

impl SessionError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        SessionError::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;
