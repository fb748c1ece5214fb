//! pi-session: the JSONL session tree (append-only writer, loader, migrations, branching, context rebuild).
//!
//! A session file is one JSON object per line: a header, then entries that form a tree through
//! `id`/`parentId`. The format is pi's v3, readable and writable by the TypeScript pi. Start
//! with [`SessionManager`].

mod context;
mod entry;
mod error;
mod file;
pub mod ids;
mod listing;
mod manager;
mod message;
mod migrate;
mod tree;

pub use context::{build_context, ModelRef, SessionContext};
pub use entry::{Entry, EntryKind, SessionHeader, CURRENT_SESSION_VERSION};
pub use error::{Result, SessionError};
pub use file::{LoadReport, SkippedLine};
pub use listing::{
    encode_cwd, find_most_recent, find_session, list_all, list_sessions, looks_like_path, read_session_info,
    session_dir_for_cwd, session_file_name, FoundSession, SessionInfo,
};
pub use manager::{NewSessionOptions, SessionManager};
pub use message::{
    bash_execution_text, convert_to_llm, AgentMessage, BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};
pub use tree::{Label, SessionTree, TreeNode};
