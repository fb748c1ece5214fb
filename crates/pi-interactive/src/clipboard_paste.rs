//! Ctrl+V (`app.clipboard.pasteImage`): what the system clipboard holds, for the prompt. An
//! image is saved as `<tmp>/pi-clipboard-<uuid>.<ext>` and its path goes in; otherwise the
//! clipboard's text does. Read through `wl-paste` (Wayland), `xclip` or `xsel` (X11), or
//! `pbpaste` (macOS), each given a short time limit.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Image types taken from the clipboard, most preferred first.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// What the clipboard gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Pasted {
    /// An image, written to this file.
    Image(PathBuf),
    Text(String),
}

/// Read the clipboard: an image first, then text. `Ok(None)` when it holds neither (or no
/// clipboard tool is there).
pub fn read() -> Result<Option<Pasted>, String> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|v| v == "wayland");
    if let Some((bytes, mime)) = read_image(wayland) {
        let ext = extension_for(&mime).unwrap_or("png");
        let path = std::env::temp_dir().join(format!("pi-clipboard-{}.{ext}", uuid::Uuid::new_v4()));
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        return Ok(Some(Pasted::Image(path)));
    }
    Ok(read_text(wayland).filter(|t| !t.is_empty()).map(Pasted::Text))
}

/// The clipboard tool's command that lists the offered types, and the one that reads `mime`.
fn image_commands(wayland: bool, mime: &str) -> (Vec<&'static str>, Vec<String>) {
    if wayland {
        (
            vec!["wl-paste", "--list-types"],
            ["wl-paste", "--type", mime, "--no-newline"].map(String::from).to_vec(),
        )
    } else {
        (
            vec!["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"],
            ["xclip", "-selection", "clipboard", "-t", mime, "-o"]
                .map(String::from)
                .to_vec(),
        )
    }
}

fn read_image(wayland: bool) -> Option<(Vec<u8>, String)> {
    let (list, _) = image_commands(wayland, "");
    let types = String::from_utf8(run(&list, Duration::from_secs(1))?).ok()?;
    let mime = preferred_image_type(types.lines())?;
    let (_, fetch) = image_commands(wayland, &mime);
    let args: Vec<&str> = fetch.iter().map(String::as_str).collect();
    let bytes = run(&args, Duration::from_secs(3))?;
    (!bytes.is_empty()).then(|| (bytes, base_type(&mime)))
}

fn read_text(wayland: bool) -> Option<String> {
    let tools: &[&[&str]] = if cfg!(target_os = "macos") {
        &[&["pbpaste"]]
    } else if wayland {
        &[&["wl-paste", "--no-newline"]]
    } else {
        &[
            &["xclip", "-selection", "clipboard", "-o"],
            &["xsel", "--clipboard", "--output"],
        ]
    };
    tools
        .iter()
        .find_map(|args| run(args, Duration::from_secs(1)))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The first supported image type offered, else any `image/...` one.
fn preferred_image_type<'a>(offered: impl Iterator<Item = &'a str>) -> Option<String> {
    let offered: Vec<&str> = offered.map(str::trim).filter(|t| !t.is_empty()).collect();
    IMAGE_TYPES
        .iter()
        .find_map(|want| offered.iter().find(|t| base_type(t) == *want))
        .or_else(|| offered.iter().find(|t| base_type(t).starts_with("image/")))
        .map(|t| t.to_string())
}

fn base_type(mime: &str) -> String {
    mime.split(';').next().unwrap_or(mime).trim().to_lowercase()
}

fn extension_for(mime: &str) -> Option<&'static str> {
    match base_type(mime).as_str() {
        "image/png" => Some("png"),
        "image/jpeg" => Some("jpg"),
        "image/webp" => Some("webp"),
        "image/gif" => Some("gif"),
        _ => None,
    }
}

/// Run a clipboard tool; its output when it exits with 0 within `limit`.
fn run(args: &[&str], limit: Duration) -> Option<Vec<u8>> {
    let mut child = Command::new(args.first()?)
        .args(&args[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut out = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let buf = reader.join().ok()?;
                return status.success().then_some(buf);
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_preferred_then_any_image() {
        let offered = ["TARGETS", "text/plain", "image/jpeg", "image/png"];
        assert_eq!(preferred_image_type(offered.into_iter()).as_deref(), Some("image/png"));
        let offered = ["text/plain", "image/bmp"];
        assert_eq!(preferred_image_type(offered.into_iter()).as_deref(), Some("image/bmp"));
        assert_eq!(preferred_image_type(["text/plain"].into_iter()), None);
        assert_eq!(extension_for("image/jpeg; charset=x"), Some("jpg"));
        assert_eq!(extension_for("image/bmp"), None);
    }
}
