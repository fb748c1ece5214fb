//! pi-tools: the built-in tools read, bash, edit, write, grep, find and ls.
//!
//! `create_tools` builds tools by name for a session cwd; `exec_bash` is the shell runner the
//! bash tool and the user's `!command` share.

pub mod args;
pub mod bash;
pub mod collate;
pub mod edit;
pub mod edit_diff;
pub mod exec;
pub mod find;
pub mod grep;
pub mod image;
pub mod ls;
pub mod mutation_queue;
pub mod os_error;
pub mod output;
pub mod paths;
pub mod read;
pub mod search;
mod tool_support;
pub mod truncate;
pub mod write;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent::AgentTool;

pub use exec::{
    exec_bash, kill_process_group, kill_running_process_groups, BashError, BashOptions, BashOutcome, BashProgress,
};
pub use mutation_queue::with_file_mutation_queue;
pub use tool_support::{aborted, cancellable};
pub use truncate::{TruncationResult, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

/// The tools active when nothing else is asked for.
pub const DEFAULT_TOOL_NAMES: [&str; 4] = ["read", "bash", "edit", "write"];
/// Every built-in tool, in pi's order.
pub const ALL_TOOL_NAMES: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The `constrainedSampling` pi 1.6 declares for read, bash, edit and write: a provider that
/// can hold arguments to the JSON schema may do so, and one that cannot sends them free.
pub fn prefer_schema_sampling() -> serde_json::Value {
    serde_json::json!({"type": "json_schema", "strict": "prefer"})
}

/// Settings that shape the tools.
#[derive(Clone)]
pub struct ToolsOptions {
    /// `shellPath` from settings.
    pub shell_path: Option<PathBuf>,
    /// `shellCommandPrefix` from settings.
    pub command_prefix: Option<String>,
    /// `images.autoResize` (default true).
    pub auto_resize_images: bool,
    /// Directory put first on PATH for bash (`AGENT_DIR/bin`).
    pub bin_dir: Option<PathBuf>,
    /// Extra environment for bash commands.
    pub env: Vec<(String, String)>,
    /// Whether the current model takes images; when it says no, read adds pi's note.
    pub model_accepts_images: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
    /// The session's `PI_*` variables (session id and file, provider, model, reasoning level)
    /// as they are when a command starts; `None` exposes none and drops inherited ones.
    pub session_env: Option<SessionEnv>,
}

/// The `PI_*` variables pi 1.6 gives bash commands, kept current by the session that owns
/// the tools.
pub type SessionEnv = Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// The variables of [`SessionEnv`]: inherited values are removed before the session's own are set.
pub const SESSION_ENV_NAMES: [&str; 5] = [
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
];

impl Default for ToolsOptions {
    fn default() -> Self {
        ToolsOptions {
            shell_path: None,
            command_prefix: None,
            auto_resize_images: true,
            bin_dir: None,
            env: Vec::new(),
            model_accepts_images: None,
            session_env: None,
        }
    }
}

impl fmt::Debug for ToolsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolsOptions")
            .field("shell_path", &self.shell_path)
            .field("command_prefix", &self.command_prefix)
            .field("auto_resize_images", &self.auto_resize_images)
            .field("bin_dir", &self.bin_dir)
            .field("env", &self.env)
            .field("model_accepts_images", &self.model_accepts_images.is_some())
            .field("session_env", &self.session_env.is_some())
            .finish()
    }
}

/// Build one built-in tool by name (`None` for an unknown name).
pub fn create_tool(name: &str, cwd: &Path, options: &ToolsOptions) -> Option<Arc<dyn AgentTool>> {
    Some(match name {
        "read" => read::tool(cwd, options),
        "bash" => bash::tool(cwd, options),
        "edit" => edit::tool(cwd),
        "write" => write::tool(cwd),
        "grep" => grep::tool(cwd),
        "find" => find::tool(cwd),
        "ls" => ls::tool(cwd),
        _ => return None,
    })
}

/// Build the named built-in tools in the order given; unknown names are skipped.
pub fn create_tools<S: AsRef<str>>(
    cwd: impl AsRef<Path>,
    names: &[S],
    options: &ToolsOptions,
) -> Vec<Arc<dyn AgentTool>> {
    names
        .iter()
        .filter_map(|n| create_tool(n.as_ref(), cwd.as_ref(), options))
        .collect()
}
