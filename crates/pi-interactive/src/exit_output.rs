//! What is left on the normal screen when the terminal UI ends: the whole document (header,
//! transcript, editor, footer) after fullscreen, and the command that resumes the session.

use std::path::Path;

use super::theme::UiTheme;
use super::view::View;
use pi_coding_agent::session::AgentSession;

/// The document as rendered at `width`, one terminal line per row (raw mode: `\r\n`).
pub fn document(view: &mut View, width: usize) -> String {
    let parts = view.screen_parts(width, width);
    let mut out = String::new();
    let rows = parts
        .transcript
        .iter()
        .chain(parts.above_editor.iter().flatten())
        .chain(&parts.editor)
        .chain(parts.below_editor.iter().flatten());
    for row in rows {
        // The editor's cursor marker is an APC string: it must not reach the shell's screen.
        out.push_str(&row.replace(pi_tui::CURSOR_MARKER, ""));
        out.push_str("\x1b[0m\r\n");
    }
    out
}

/// `To resume this session:` and `pi [--session-dir <dir>] --session <id>`, for a session
/// that has a file on disk.
pub fn resume_hint(session: &AgentSession, theme: &UiTheme) -> Option<String> {
    let (id, file, dir) = session.with_store(|s| {
        (
            s.session_id().to_string(),
            s.is_persisted()
                .then(|| s.session_file().map(Path::to_path_buf))
                .flatten(),
            s.session_dir().map(Path::to_path_buf),
        )
    });
    if !file.is_some_and(|f| f.exists()) {
        return None;
    }
    let default_dir = super::commands::paths_for(session).default_session_dir();
    let dir_arg = match dir {
        Some(d) if d != default_dir => format!("--session-dir {} ", shell_quote(&d.to_string_lossy())),
        _ => String::new(),
    };
    Some(format!(
        "{}\r\npi {dir_arg}--session {id}\r\n",
        theme.paint("dim", "To resume this session:")
    ))
}

/// Quote `s` for a POSIX shell when it holds anything but plain path characters.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%,~".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("/tmp/sessions-1"), "/tmp/sessions-1");
        assert_eq!(shell_quote("/tmp/my sessions"), "'/tmp/my sessions'");
        assert_eq!(shell_quote("/tmp/it's"), "'/tmp/it'\\''s'");
    }
}
