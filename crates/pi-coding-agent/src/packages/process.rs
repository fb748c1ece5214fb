//! Running the external tools packages need (`npm`, `git`): with the output shown, or
//! captured with a time limit; failures become [`PackageError`]s worded as pi words them.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::PackageError;

/// Where a shown command's output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The terminal, as the package subcommands do.
    Inherit,
    /// stderr only: stdout carries a mode's real output.
    Stderr,
}

fn spawn_error(command: &str, e: &std::io::Error) -> PackageError {
    if e.kind() == std::io::ErrorKind::NotFound {
        PackageError::new(format!("spawn {command} ENOENT"))
    } else {
        PackageError::new(format!("spawn {command}: {e}"))
    }
}

fn joined(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run `command args` in `cwd`, its output shown; a non-zero exit is an error.
pub fn run(command: &str, args: &[String], cwd: Option<&Path>, output: Output) -> Result<(), PackageError> {
    let mut cmd = Command::new(command);
    cmd.args(args).stdin(Stdio::null());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    if output == Output::Stderr {
        cmd.stdout(std::io::stderr());
    }
    let status = cmd.status().map_err(|e| spawn_error(command, &e))?;
    if status.success() {
        Ok(())
    } else {
        let code = status.code().map_or_else(|| "null".to_string(), |c| c.to_string());
        Err(PackageError::new(format!(
            "{} failed with code {code}",
            joined(command, args)
        )))
    }
}

/// Run `command args` and return its trimmed stdout; killed after `timeout`.
pub fn capture(
    command: &str,
    args: &[String],
    cwd: Option<&Path>,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Result<String, PackageError> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .envs(env.iter().copied());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|e| spawn_error(command, &e))?;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(spawn_error(command, &e)),
        }
    };
    let Some(status) = status else {
        // The readers are left behind: a grandchild may still hold the pipes open.
        return Err(PackageError::new(format!(
            "{} timed out after {}ms",
            joined(command, args),
            timeout.as_millis()
        )));
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    if status.success() {
        return Ok(stdout.trim().to_string());
    }
    let exit = status
        .code()
        .map_or_else(|| "signal".to_string(), |c| format!("code {c}"));
    let detail = if stderr.is_empty() { stdout } else { stderr };
    Err(PackageError::new(format!(
        "{} failed with {exit}: {detail}",
        joined(command, args)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_reports_output_and_failures() {
        let out = capture(
            "sh",
            &["-c".into(), "echo hi".into()],
            None,
            &[],
            Duration::from_secs(5),
        )
        .expect("ok");
        assert_eq!(out, "hi");
        let err = capture(
            "sh",
            &["-c".into(), "echo bad >&2; exit 3".into()],
            None,
            &[],
            Duration::from_secs(5),
        )
        .expect_err("fails");
        assert_eq!(err.to_string(), "sh -c echo bad >&2; exit 3 failed with code 3: bad\n");
        let err = capture(
            "sh",
            &["-c".into(), "sleep 5".into()],
            None,
            &[],
            Duration::from_millis(50),
        )
        .expect_err("times out");
        assert!(err.to_string().ends_with("timed out after 50ms"), "{err}");
        let err = run("pi-no-such-command", &[], None, Output::Stderr).expect_err("missing");
        assert_eq!(err.to_string(), "spawn pi-no-such-command ENOENT");
    }
}
