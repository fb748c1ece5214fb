//! pi-session: the JSONL session tree (append-only writer, loader, migrations, branching, context rebuild).
//!
//! A session file is one JSON object per line: a header, then entries that form a tree through
//! `id`/`parentId`. The format is pi's v3, readable and writable by the TypeScript pi. Start
//! with [`SessionManager`].
//!
//! Rules the store keeps:
//! - Nothing is written until the session holds an assistant message; then the header and the
//!   buffered entries go out in one write, and every later entry is appended as one
//!   `write_all` of one line (no fsync, as pi). Appends are synchronous and cheap enough to
//!   call from async code; opening, forking and listing read whole files and belong in
//!   `spawn_blocking`.
//! - One writer per file: a manager holds an exclusive advisory lock (`File::try_lock`) on its
//!   file from `open` (or from the first write of a new session) until it switches file or is
//!   dropped. A second writer gets [`SessionError::Locked`]; readers
//!   ([`SessionManager::open_read_only`], listing) are never blocked (on Unix).
//! - Loading never fails on a line: blank, malformed, cut-short lines are skipped, reported in
//!   [`LoadReport`] and left in the file; the next append starts on a fresh line.
//! - Unknown entry types and fields are kept and written back (migration, fork).

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

pub use context::{build_context, project_context, ModelRef, ProjectedEntry, SessionContext};
pub use entry::{Entry, EntryKind, Extra, SessionHeader, CURRENT_SESSION_VERSION};
pub use error::{Result, SessionError};
pub use file::{LoadReport, SkippedLine};
pub use listing::{
    encode_cwd, find_most_recent, find_session, list_all, list_sessions, looks_like_path, migrate_legacy_sessions,
    read_session_info, session_dir_for_cwd, session_file_name, FoundSession, SessionInfo,
};
pub use manager::{NewSessionOptions, SessionManager};
pub use message::{
    bash_execution_text, branch_summary_message, compaction_summary_message, convert_to_llm, custom_message,
    AgentMessage, CustomMessage, BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
};
pub use tree::{Label, SessionTree, TreeNode};
