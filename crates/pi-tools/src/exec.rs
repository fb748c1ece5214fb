//! Running a shell command in its own process group: streaming, timeout, abort, truncation.
//! Shared by the bash tool and the user's `!command`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, ChildStdout, Command};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::output::{OutputAccumulator, OutputSnapshot};
use crate::truncate::TruncationResult;

/// How often progress is reported at most.
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(100);
/// How long to keep reading after the shell exits, in case a background child holds the pipes.
const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);

/// How to run a command.
#[derive(Debug, Clone, Default)]
pub struct BashOptions {
    /// `shellPath` from settings; must exist when set.
    pub shell_path: Option<PathBuf>,
    /// `shellCommandPrefix`: prepended as `<prefix>\n<command>`.
    pub command_prefix: Option<String>,
    /// Kill the command after this many seconds (none when unset or not positive).
    pub timeout_secs: Option<f64>,
    /// Directory put first on PATH (pi's `AGENT_DIR/bin`).
    pub bin_dir: Option<PathBuf>,
    /// Extra environment variables for the command.
    pub env: Vec<(String, String)>,
    /// Inherited variables the command must not see (set again from `env` when listed there).
    pub unset: Vec<String>,
    /// Prefix of the temp file name for long output (`pi-bash` when empty).
    pub temp_file_prefix: Option<String>,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub struct BashOutcome {
    /// The tail-truncated output (no notices).
    pub output: String,
    /// `None` when killed by a signal.
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub timed_out: bool,
    pub truncated: bool,
    /// Where the full output was saved, when it was too long to return whole.
    pub full_output_path: Option<PathBuf>,
    pub truncation: TruncationResult,
    /// Size of the last output line, for the partial-line notice.
    pub last_line_bytes: usize,
}

/// A progress report: the output so far and the text added since the previous report.
#[derive(Debug, Clone, PartialEq)]
pub struct BashProgress {
    pub new_text: String,
    pub snapshot: OutputSnapshot,
}

/// Why a command could not be started.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BashError {
    #[error("Custom shell path not found: {0}")]
    ShellNotFound(String),
    #[error("Working directory does not exist: {0}\nCannot execute bash commands.")]
    MissingCwd(String),
    #[error("{0}")]
    Spawn(String),
}

/// The shell and its leading arguments: the configured path, else `/bin/bash`, `bash` on PATH, `sh`.
pub fn shell_config(custom: Option<&Path>) -> Result<(PathBuf, Vec<String>), BashError> {
    let args = vec!["-c".to_string()];
    if let Some(p) = custom.filter(|p| !p.as_os_str().is_empty()) {
        if p.exists() {
            return Ok((p.to_path_buf(), args));
        }
        return Err(BashError::ShellNotFound(p.display().to_string()));
    }
    if Path::new("/bin/bash").exists() {
        return Ok((PathBuf::from("/bin/bash"), args));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("bash");
            if candidate.is_file() {
                return Ok((candidate, args));
            }
        }
    }
    Ok((PathBuf::from("sh"), args))
}

fn path_with_bin_dir(bin_dir: &Path) -> Option<std::ffi::OsString> {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let mut entries: Vec<PathBuf> = std::env::split_paths(&current).collect();
    if entries.iter().any(|e| e == bin_dir) {
        return None;
    }
    entries.retain(|e| !e.as_os_str().is_empty());
    entries.insert(0, bin_dir.to_path_buf());
    std::env::join_paths(entries).ok()
}

/// Kill a whole process group with SIGKILL, falling back to the leader alone.
///
/// `libc::kill` is used directly rather than spawning `kill(1)`: killing must work even when
/// process creation fails (fd or pid exhaustion), and it costs no fork.
#[allow(unsafe_code)]
pub fn kill_process_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pid <= 0 {
        return;
    }
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; the worst a stale pid
    // can do is fail with ESRCH, which is ignored.
    unsafe {
        if libc::kill(-pid, libc::SIGKILL) != 0 {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

fn running_groups() -> &'static Mutex<HashSet<u32>> {
    static RUNNING: OnceLock<Mutex<HashSet<u32>>> = OnceLock::new();
    RUNNING.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Kill every process group started by `exec_bash` that is still running. For the shutdown
/// path (SIGTERM, SIGHUP, exit) so no command outlives the agent.
pub fn kill_running_process_groups() {
    let pids: Vec<u32> = running_groups()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain()
        .collect();
    for pid in pids {
        kill_process_group(pid);
    }
}

/// Tracks a running command's process group; kills it if the run is dropped before it ends.
struct GroupGuard {
    pid: u32,
    finished: bool,
}

impl GroupGuard {
    fn new(pid: u32) -> Self {
        running_groups().lock().unwrap_or_else(|e| e.into_inner()).insert(pid);
        GroupGuard { pid, finished: false }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        running_groups()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.pid);
        if !self.finished {
            kill_process_group(self.pid);
        }
    }
}

async fn read_some(pipe: &mut Option<impl AsyncReadExt + Unpin>, buf: &mut [u8]) -> usize {
    match pipe {
        Some(p) => p.read(buf).await.unwrap_or(0),
        None => 0,
    }
}

async fn sleep_until_opt(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Run `command` with the shell in `cwd`. stdout and stderr are interleaved in arrival order.
/// `on_progress` gets throttled snapshots (at most one per 100 ms, plus a final one).
/// Cancelling or timing out kills the whole process group.
pub async fn exec_bash(
    command: &str,
    cwd: &Path,
    opts: &BashOptions,
    cancel: CancellationToken,
    mut on_progress: Option<&mut (dyn FnMut(BashProgress) + Send)>,
) -> Result<BashOutcome, BashError> {
    let (shell, args) = shell_config(opts.shell_path.as_deref())?;
    if !tokio::fs::try_exists(cwd).await.unwrap_or(false) {
        return Err(BashError::MissingCwd(cwd.display().to_string()));
    }
    let full_command = match opts.command_prefix.as_deref().filter(|p| !p.is_empty()) {
        Some(prefix) => format!("{prefix}\n{command}"),
        None => command.to_string(),
    };
    let mut cmd = Command::new(&shell);
    cmd.args(&args)
        .arg(&full_command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(path) = opts.bin_dir.as_deref().and_then(path_with_bin_dir) {
        cmd.env("PATH", path);
    }
    for k in &opts.unset {
        cmd.env_remove(k);
    }
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| {
        BashError::Spawn(format!(
            "spawn {} {}",
            shell.display(),
            crate::os_error::code_and_message(&e).0
        ))
    })?;
    let pid = child.id().unwrap_or(0);
    let mut guard = GroupGuard::new(pid);
    let mut stdout: Option<ChildStdout> = child.stdout.take();
    let mut stderr: Option<ChildStderr> = child.stderr.take();
    let prefix = opts.temp_file_prefix.as_deref().unwrap_or("pi-bash");
    let mut acc = OutputAccumulator::new(prefix);

    let deadline = opts
        .timeout_secs
        .filter(|t| *t > 0.0 && t.is_finite())
        .map(|t| Instant::now() + Duration::from_secs_f64(t));
    let mut timed_out = false;
    let mut cancelled = false;
    let mut status: Option<Option<i32>> = None;
    let mut grace: Option<Instant> = None;
    let mut next_update: Option<Instant> = None;
    let mut last_update: Option<Instant> = None;
    let mut pending_text = String::new();
    let mut buf_out = vec![0u8; 16 * 1024];
    let mut buf_err = vec![0u8; 16 * 1024];

    if cancel.is_cancelled() {
        cancelled = true;
        kill_process_group(pid);
    }

    loop {
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break;
        }
        let mut chunk: Option<(bool, usize)> = None;
        // Biased: when both pipes are ready, stdout goes first, which keeps the usual
        // "result then diagnostics" order of commands that write both at once.
        tokio::select! {
            biased;
            n = read_some(&mut stdout, &mut buf_out), if stdout.is_some() => chunk = Some((true, n)),
            n = read_some(&mut stderr, &mut buf_err), if stderr.is_some() => chunk = Some((false, n)),
            s = child.wait(), if status.is_none() => {
                status = Some(s.ok().and_then(|s| s.code()));
                grace = Some(Instant::now() + EXIT_STDIO_GRACE);
            }
            _ = sleep_until_opt(grace), if grace.is_some() => break,
            _ = sleep_until_opt(deadline), if deadline.is_some() && !timed_out => {
                timed_out = true;
                kill_process_group(pid);
            }
            _ = cancel.cancelled(), if !cancelled => {
                cancelled = true;
                kill_process_group(pid);
            }
            _ = sleep_until_opt(next_update), if next_update.is_some() => {
                next_update = None;
                if let Some(cb) = on_progress.as_deref_mut() {
                    last_update = Some(Instant::now());
                    let snapshot = acc.snapshot().await;
                    cb(BashProgress { new_text: std::mem::take(&mut pending_text), snapshot });
                }
            }
        }
        if let Some((is_out, n)) = chunk {
            if n == 0 {
                if is_out {
                    stdout = None;
                } else {
                    stderr = None;
                }
                continue;
            }
            let data = if is_out { &buf_out[..n] } else { &buf_err[..n] };
            let text = acc.append(data).await;
            if let Some(cb) = on_progress.as_deref_mut() {
                pending_text.push_str(&text);
                let now = Instant::now();
                let due = last_update.map_or(now, |t| t + UPDATE_INTERVAL);
                if due <= now {
                    next_update = None;
                    last_update = Some(now);
                    let snapshot = acc.snapshot().await;
                    cb(BashProgress {
                        new_text: std::mem::take(&mut pending_text),
                        snapshot,
                    });
                } else if next_update.is_none() {
                    next_update = Some(due);
                }
            }
        }
    }
    // Pipes may still be held by an escaped grandchild; drop them so nothing waits on them.
    drop(stdout);
    drop(stderr);
    let status = match status {
        Some(s) => s,
        None => child.wait().await.ok().and_then(|s| s.code()),
    };
    guard.finished = true;
    drop(guard);
    let tail = acc.finish().await;
    pending_text.push_str(&tail);
    let snapshot = acc.snapshot().await;
    if let Some(cb) = on_progress {
        if !pending_text.is_empty() || next_update.is_some() {
            cb(BashProgress {
                new_text: pending_text,
                snapshot: snapshot.clone(),
            });
        }
    }
    Ok(BashOutcome {
        output: snapshot.content,
        exit_code: status,
        cancelled,
        timed_out,
        truncated: snapshot.truncation.truncated,
        full_output_path: snapshot.full_output_path,
        last_line_bytes: acc.last_line_bytes(),
        truncation: snapshot.truncation,
    })
}
