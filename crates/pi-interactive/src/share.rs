//! `/share`: export the session to HTML and upload it as a secret GitHub gist with the `gh`
//! command-line tool, then show the viewer link. All of it runs off the input path.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tokio_util::sync::CancellationToken;

use super::effect::{blocking, then, then_notice, Ctx, Effect};

const DEFAULT_VIEWER: &str = "https://pi.dev/session/";

/// The viewer link of a gist: `PI_SHARE_VIEWER_URL` (or pi's viewer) followed by `#<id>`.
pub fn viewer_url(base: Option<&str>, gist_id: &str) -> String {
    let base = base.filter(|b| !b.is_empty()).unwrap_or(DEFAULT_VIEWER);
    format!("{base}#{gist_id}")
}

/// The gist id: the last path segment of the URL `gh gist create` prints.
pub fn gist_id(url: &str) -> Option<&str> {
    url.trim().rsplit('/').next().filter(|s| !s.is_empty())
}

/// Run `gh gist create` on `file`, killed when `cancel` fires (`None` then).
fn create_gist(file: &Path, cancel: &CancellationToken) -> Result<Option<std::process::Output>, String> {
    let mut child = Command::new("gh")
        .args(["gist", "create", "--public=false"])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("Failed to create gist: {e}"))?;
    loop {
        if cancel.is_cancelled() {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => return Err(format!("Failed to create gist: {e}")),
        }
    }
    // The gist URL and any error text are short: reading after exit cannot block on a full pipe.
    child
        .wait_with_output()
        .map(Some)
        .map_err(|e| format!("Failed to create gist: {e}"))
}

/// Whether `gh` can create a gist. pi 1.6 asks `gh auth status` and takes any failure, a
/// missing `gh` included, for "not logged in".
fn gh_ready() -> Result<(), String> {
    let logged_in = Command::new("gh")
        .args(["auth", "status"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if logged_in {
        Ok(())
    } else {
        Err("GitHub CLI is not logged in. Run 'gh auth login' first.".into())
    }
}

/// What `/share` does once `gh` is ready: the text to show, or the error.
fn share(session_file: Option<PathBuf>, cwd: &Path, cancel: &CancellationToken) -> Result<String, String> {
    // The viewer reads the gist's `session.html`; a folder of our own keeps two pi processes
    // sharing at once apart.
    let dir = std::env::temp_dir().join(format!("pi-share-{}", std::process::id()));
    let file = dir.join("session.html");
    let exported = match session_file {
        None => Err("Cannot export an in-memory session".to_string()),
        Some(input) => std::fs::create_dir_all(&dir)
            .map_err(|e| e.to_string())
            .and_then(|()| pi_coding_agent::export::export_file(&input, Some(&file), cwd).map_err(|e| e.to_string())),
    };
    if let Err(e) = exported {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(format!("Failed to export session: {e}"));
    }
    let output = create_gist(&file, cancel);
    let _ = std::fs::remove_dir_all(&dir);
    let Some(output) = output? else {
        return Ok("Share cancelled".into());
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        let why = if stderr.is_empty() {
            "Unknown error".to_string()
        } else {
            stderr
        };
        return Err(format!("Failed to create gist: {why}"));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let url = stdout.trim();
    let Some(id) = gist_id(url) else {
        return Err("Failed to parse gist ID from gh output".into());
    };
    let base = std::env::var("PI_SHARE_VIEWER_URL").ok();
    Ok(format!("Share URL: {}\nGist: {url}", viewer_url(base.as_deref(), id)))
}

/// `/share`: `gh` is asked first, off the input path (a failure is one error line, no
/// loader, as in 1.6); then the export and upload run under 1.6's bordered loader (Esc
/// cancels them).
pub fn run(cx: &Ctx<'_>) -> Vec<Effect> {
    let file = cx.session.with_store(|s| s.session_file().map(Path::to_path_buf));
    let cwd = cx.session.cwd().to_path_buf();
    vec![blocking(move || {
        if let Err(text) = gh_ready() {
            return then_notice(text, "error");
        }
        then(move |_| {
            let cancel = CancellationToken::new();
            let task_cancel = cancel.clone();
            vec![
                Effect::LoaderStarted {
                    message: "Creating gist...".into(),
                    cancel,
                },
                blocking(move || {
                    let (text, style) = match share(file, &cwd, &task_cancel) {
                        Ok(text) => (text, "dim"),
                        Err(text) => (text, "error"),
                    };
                    let shown = then_notice(text, style);
                    then(move |cx| {
                        let mut out = shown(cx);
                        out.push(Effect::TaskFinished);
                        out
                    })
                }),
            ]
        })
    })]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewer_link_uses_the_gist_id() {
        let url = "https://gist.github.com/someone/abc123\n";
        assert_eq!(gist_id(url), Some("abc123"));
        assert_eq!(viewer_url(None, "abc123"), "https://pi.dev/session/#abc123");
        assert_eq!(viewer_url(Some("http://x/v"), "abc123"), "http://x/v#abc123");
        assert_eq!(gist_id(""), None);
    }
}
