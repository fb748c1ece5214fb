//! The stdio transport's process: spawned in its own process group with piped stdio, its stderr kept
//! as a bounded tail, and the whole group killed when the connection is dropped.

#![allow(unsafe_code)] // `kill(2)` on a process group; libc has no safe wrapper.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::error::McpError;

/// How much of a server's stderr is kept.
const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// How much of the tail is shown with an error.
pub const STDERR_SHOWN_CHARS: usize = 2_000;

/// The last bytes a server wrote to stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    buffer: Arc<Mutex<Vec<u8>>>,
    done: Arc<tokio::sync::Notify>,
    finished: Arc<std::sync::atomic::AtomicBool>,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        buffer.extend_from_slice(chunk);
        if buffer.len() > STDERR_TAIL_BYTES {
            let cut = buffer.len() - STDERR_TAIL_BYTES;
            buffer.drain(..cut);
        }
    }

    /// The tail as pi shows it: trimmed, at most the last 2 000 characters.
    pub fn shown(&self) -> String {
        let buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&buffer);
        let text = text.trim();
        let count = text.chars().count();
        text.chars().skip(count.saturating_sub(STDERR_SHOWN_CHARS)).collect()
    }

    /// Wait (a little) until the process closed stderr, so a crash's last words are kept.
    pub async fn settle(&self, limit: Duration) {
        let notified = self.done.notified();
        tokio::pin!(notified);
        // Registered before the check, so a reader finishing in between still wakes us.
        notified.as_mut().enable();
        if self.finished.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let _ = tokio::time::timeout(limit, notified).await;
    }
}

/// Owns the server's process group: dropping it kills the group.
#[derive(Debug)]
pub struct ProcessGuard {
    pid: Option<i32>,
    child: Option<Child>,
}

/// Signal the server's process group, or the server alone when it has no group (yet). Only while
/// the server is not reaped: its pid cannot belong to another process then.
fn signal_group(pid: i32, signal: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        if libc::kill(-pid, signal) != 0 {
            libc::kill(pid, signal);
        }
    }
}

/// Signal what is left of the group after the server was reaped (its children), never a lone pid.
fn signal_group_only(pid: i32, signal: i32) {
    // SAFETY: as above.
    unsafe {
        libc::kill(-pid, signal);
    }
}

impl ProcessGuard {
    /// Shut down as MCP asks: stdin is already closed by the caller; give the server 500 ms to exit,
    /// then SIGTERM the group, then SIGKILL after 2 s more.
    pub async fn shutdown(mut self) {
        let (Some(pid), Some(mut child)) = (self.pid.take(), self.child.take()) else {
            return;
        };
        if tokio::time::timeout(Duration::from_millis(500), child.wait())
            .await
            .is_err()
        {
            signal_group(pid, libc::SIGTERM);
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
            {
                signal_group(pid, libc::SIGKILL);
                let _ = child.wait().await;
            }
        }
        // Children of the server that ignored stdin closing would otherwise outlive it.
        signal_group_only(pid, libc::SIGTERM);
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.pid.take() {
            signal_group(pid, libc::SIGKILL);
        }
    }
}

fn errno_name(error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT".into(),
        Some(libc::EACCES) => "EACCES".into(),
        Some(libc::ENOTDIR) => "ENOTDIR".into(),
        Some(libc::ENOEXEC) => "ENOEXEC".into(),
        Some(libc::E2BIG) => "E2BIG".into(),
        _ => error.to_string(),
    }
}

/// A started server: its pipes, its stderr tail, and the guard of its process group.
pub struct SpawnedServer {
    pub stdout: ChildStdout,
    pub stdin: ChildStdin,
    pub stderr: StderrTail,
    pub guard: ProcessGuard,
}

/// Start `command args` in `cwd` with the parent's environment plus `env`, in a new process group.
pub fn spawn_server(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> Result<SpawnedServer, McpError> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(|e| McpError::Spawn {
        command: command.to_string(),
        reason: errno_name(&e),
    })?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok());
    let (Some(stdout), Some(stdin), Some(mut stderr_pipe)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(McpError::Transport("MCP server pipes are missing".into()));
    };
    let stderr = StderrTail::default();
    let tail = stderr.clone();
    tokio::spawn(async move {
        let mut chunk = vec![0u8; 8192];
        loop {
            match stderr_pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => tail.push(&chunk[..n]),
            }
        }
        tail.finished.store(true, std::sync::atomic::Ordering::SeqCst);
        tail.done.notify_waiters();
    });
    Ok(SpawnedServer {
        stdout,
        stdin,
        stderr,
        guard: ProcessGuard {
            pid,
            child: Some(child),
        },
    })
}
