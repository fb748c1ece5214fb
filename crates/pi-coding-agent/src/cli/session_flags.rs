//! The checks on `--session-id` and `--name` that run before a session is opened: which flags
//! they cannot be combined with, the id's form, and the name's clean-up.

use super::Args;

/// pi's session id form: letters and digits, with `.`, `_` and `-` inside.
pub fn is_valid_session_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let edge_ok = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    edge_ok(bytes.first())
        && edge_ok(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

pub const INVALID_SESSION_ID: &str = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

/// `--session-id` with `--session`, `--continue` or `--resume`, or an id of the wrong form: the
/// message (without `Error: `).
pub fn session_id_error(args: &Args) -> Option<String> {
    let id = args.session_id.as_deref()?;
    let conflicting: Vec<&str> = [
        (args.session.is_some(), "--session"),
        (args.continue_session, "--continue"),
        (args.resume, "--resume"),
    ]
    .iter()
    .filter(|(set, _)| *set)
    .map(|(_, flag)| *flag)
    .collect();
    if !conflicting.is_empty() {
        return Some(format!(
            "--session-id cannot be combined with {}",
            conflicting.join(", ")
        ));
    }
    (!is_valid_session_id(id)).then(|| INVALID_SESSION_ID.to_string())
}

/// The `--fork` conflicts (without `Error: `).
pub fn fork_error(args: &Args) -> Option<String> {
    args.fork.as_ref()?;
    let conflicting: Vec<&str> = [
        (args.session.is_some(), "--session"),
        (args.continue_session, "--continue"),
        (args.resume, "--resume"),
        (args.no_session, "--no-session"),
    ]
    .iter()
    .filter(|(set, _)| *set)
    .map(|(_, flag)| *flag)
    .collect();
    (!conflicting.is_empty()).then(|| format!("--fork cannot be combined with {}", conflicting.join(", ")))
}

/// The session name `--name` asks for: line breaks become spaces and the ends are trimmed.
/// `Err` with the message when nothing is left.
pub fn session_name(raw: &str) -> Result<String, String> {
    let mut name = String::with_capacity(raw.len());
    let mut in_break = false;
    for c in raw.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                name.push(' ');
            }
            in_break = true;
        } else {
            name.push(c);
            in_break = false;
        }
    }
    let name = name.trim();
    if name.is_empty() {
        Err("--name requires a non-empty value".into())
    } else {
        Ok(name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_args;

    #[test]
    fn session_id_form() {
        for ok in ["a", "abc", "a.b-c_d", "0", "01a23133-81be-73a6"] {
            assert!(is_valid_session_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", ".a", "a b", "a/b", "é", "a."] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
    }

    #[test]
    fn session_id_conflicts() {
        let err = |v: &[&str]| session_id_error(&parse_args(v));
        assert_eq!(err(&["--session-id", "abc"]), None);
        assert_eq!(err(&["--session-id", "abc", "--no-session"]), None);
        assert_eq!(
            err(&["--session-id", "abc", "-c"]).as_deref(),
            Some("--session-id cannot be combined with --continue")
        );
        assert_eq!(
            err(&["--session-id", "abc", "--resume", "--session", "x"]).as_deref(),
            Some("--session-id cannot be combined with --session, --resume")
        );
        assert_eq!(err(&["--session-id", "-bad"]).as_deref(), Some(INVALID_SESSION_ID));
        assert_eq!(
            fork_error(&parse_args(&["--fork", "x", "--no-session", "-c"])).as_deref(),
            Some("--fork cannot be combined with --continue, --no-session")
        );
    }

    #[test]
    fn names_are_cleaned() {
        assert_eq!(session_name("  My run "), Ok("My run".into()));
        assert_eq!(session_name("a\r\n\nb\nc"), Ok("a b c".into()));
        assert_eq!(session_name(" \n "), Err("--name requires a non-empty value".into()));
    }
}
