//! What every built-in tool does around its own work: cancellation, blocking work off the runtime,
//! the shared path/limit arguments, the mutation queue, and the `[notice. notice]` tail of listings.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pi_agent::{ToolError, ToolOutput};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::paths::resolve_to_cwd;
use crate::truncate::{format_size, truncate_head, DEFAULT_MAX_BYTES, NO_LINE_LIMIT};
use crate::with_file_mutation_queue;

/// The error every tool gives when cancelled.
pub fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

/// `Operation aborted` once `cancel` has fired, so a tool stops between steps.
pub(crate) fn ensure_live(cancel: &CancellationToken) -> Result<(), ToolError> {
    if cancel.is_cancelled() {
        Err(aborted())
    } else {
        Ok(())
    }
}

/// Run `work` unless `cancel` fires first (before or during), which gives `Operation aborted`.
pub async fn cancellable<T>(
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    ensure_live(cancel)?;
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(aborted()),
        r = work => r,
    }
}

/// Run blocking `work` on the blocking pool, so the runtime never waits on the disk or the CPU.
pub(crate) async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::new(e.to_string()))
}

/// Run a blocking search on the blocking pool; cancelling sets the flag the walker checks, and a
/// search that finishes after the cancel still counts as aborted.
pub(crate) async fn run_search<T: Send + 'static>(
    cancel: &CancellationToken,
    work: impl FnOnce(&AtomicBool) -> Result<T, String> + Send + 'static,
) -> Result<T, ToolError> {
    let flag = Arc::new(AtomicBool::new(false));
    let inner = flag.clone();
    let handle = blocking(move || work(&inner));
    let result = tokio::select! {
        r = handle => r?.map_err(ToolError::new)?,
        _ = cancel.cancelled() => {
            flag.store(true, Ordering::Relaxed);
            return Err(aborted());
        }
    };
    ensure_live(cancel)?;
    Ok(result)
}

/// Run a change to the file at `abs` in its mutation queue, unless `cancel` fires first.
pub(crate) async fn mutate_file<T>(
    abs: &Path,
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    with_file_mutation_queue(abs, cancellable(cancel, work)).await
}

/// The optional `path` argument of the search tools, resolved against `cwd` (empty means `cwd`).
pub(crate) fn search_root(args: &Args<'_>, cwd: &Path) -> Result<PathBuf, ToolError> {
    let path = args.opt_string("path")?.filter(|p| !p.is_empty());
    Ok(resolve_to_cwd(path.as_deref().unwrap_or("."), cwd))
}

/// The optional `limit` argument: `default` when absent, never below `floor` (NaN gives `floor`).
pub(crate) fn limit_arg(args: &Args<'_>, default: usize, floor: usize) -> Result<usize, ToolError> {
    Ok(args
        .opt_number("limit")?
        .map_or(default, |l| if l >= floor as f64 { l as usize } else { floor }))
}

/// The notices a listing ends with, as `[first. second]`, each with its entry in `details`.
#[derive(Default)]
pub(crate) struct Notices {
    texts: Vec<String>,
    details: Map<String, Value>,
}

impl Notices {
    pub(crate) fn add(&mut self, text: String, key: &str, value: Value) {
        self.texts.push(text);
        self.details.insert(key.into(), value);
    }

    /// `lines` joined and cut to the byte limit, noting the cut when there is one.
    pub(crate) fn cap_bytes(&mut self, lines: &[String]) -> String {
        let truncation = truncate_head(&lines.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
        if truncation.truncated {
            self.add(
                format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)),
                "truncation",
                truncation.to_value(),
            );
        }
        truncation.content
    }

    /// `output` with the notices after it, and their details when there are any.
    pub(crate) fn finish(self, mut output: String) -> ToolOutput {
        if !self.texts.is_empty() {
            output.push_str(&format!("\n\n[{}]", self.texts.join(". ")));
        }
        let mut out = ToolOutput::text(output);
        if !self.details.is_empty() {
            out.details = Some(Value::Object(self.details));
        }
        out
    }
}
