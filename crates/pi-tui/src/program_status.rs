//! Program status reports (OSC 7501): telling a terminal that supports it whether the program
//! is idle, working, blocked on the user, done or failed. Only sent once the terminal answered
//! the support query (or `PI_PROGRAM_STATUS=1` says to); `PI_PROGRAM_STATUS=0` turns it off.

use base64::Engine as _;

/// The support query; a terminal that supports the protocol answers with the same body.
pub const PROGRAM_STATUS_QUERY: &str = "\x1b]7501;?\x1b\\";

/// Longest message sent, in bytes (its base64 form stays under the protocol's limit).
const MAX_MESSAGE_BYTES: usize = 2048;

/// Whether `seq` (one OSC sequence) answers [`PROGRAM_STATUS_QUERY`].
pub fn is_program_status_reply(seq: &str) -> bool {
    let Some(body) = seq.strip_prefix("\x1b]7501;?") else {
        return false;
    };
    let body = body.strip_suffix('\x07').or_else(|| body.strip_suffix("\x1b\\"));
    body.is_some_and(|b| !b.contains(['\x07', '\x1b']))
}

/// The program's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramState {
    Idle,
    Working,
    Blocked,
    Done,
    Error,
    /// Withdraw the report (on exit).
    Clear,
}

impl ProgramState {
    fn as_str(self) -> &'static str {
        match self {
            ProgramState::Idle => "idle",
            ProgramState::Working => "working",
            ProgramState::Blocked => "blocked",
            ProgramState::Done => "done",
            ProgramState::Error => "error",
            ProgramState::Clear => "clear",
        }
    }
}

/// One report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramStatus {
    pub state: ProgramState,
    /// The program's name (letters, digits and `_.+-`, up to 32; others are left out).
    pub app: Option<String>,
    /// What the user is asked for, when blocked (`question`, ...).
    pub kind: Option<String>,
    /// A short text for the terminal to show (control characters become spaces).
    pub message: Option<String>,
}

impl ProgramStatus {
    pub fn new(state: ProgramState) -> Self {
        ProgramStatus {
            state,
            app: None,
            kind: None,
            message: None,
        }
    }

    /// The escape sequence that reports it.
    pub fn encode(&self) -> String {
        let mut pairs = vec![format!("state={}", self.state.as_str())];
        if let Some(app) = self.app.as_deref().filter(|a| valid_app(a)) {
            pairs.push(format!("app={app}"));
        }
        if self.state == ProgramState::Blocked {
            if let Some(kind) = self.kind.as_deref().filter(|k| valid_app(k)) {
                pairs.push(format!("kind={kind}"));
            }
        }
        let message: String = self
            .message
            .as_deref()
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let message = truncate_bytes(message.trim(), MAX_MESSAGE_BYTES);
        if !message.is_empty() {
            let encoded = base64::engine::general_purpose::STANDARD.encode(message.as_bytes());
            pairs.push(format!("msg={encoded}"));
        }
        format!("\x1b]7501;{}\x1b\\", pairs.join(":"))
    }
}

fn valid_app(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
}

fn truncate_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_carry_state_app_and_a_base64_message() {
        let mut s = ProgramStatus::new(ProgramState::Working);
        s.app = Some("pi".into());
        s.message = Some("my\nsession".into());
        assert_eq!(s.encode(), "\x1b]7501;state=working:app=pi:msg=bXkgc2Vzc2lvbg==\x1b\\");
        let mut b = ProgramStatus::new(ProgramState::Blocked);
        b.kind = Some("question".into());
        b.app = Some("bad app!".into());
        assert_eq!(b.encode(), "\x1b]7501;state=blocked:kind=question\x1b\\");
        assert_eq!(
            ProgramStatus::new(ProgramState::Clear).encode(),
            "\x1b]7501;state=clear\x1b\\"
        );
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let mut s = ProgramStatus::new(ProgramState::Error);
        s.message = Some("é".repeat(2000));
        let encoded = s.encode();
        let b64 = encoded
            .strip_prefix("\x1b]7501;state=error:msg=")
            .and_then(|r| r.strip_suffix("\x1b\\"))
            .unwrap_or_default();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap_or_default();
        assert_eq!(decoded.len(), 2048);
        assert!(String::from_utf8(decoded).is_ok());
    }

    #[test]
    fn only_the_query_echo_is_a_reply() {
        assert!(is_program_status_reply("\x1b]7501;?\x1b\\"));
        assert!(is_program_status_reply("\x1b]7501;?v=1\x07"));
        assert!(!is_program_status_reply("\x1b]7501;state=idle\x1b\\"));
        assert!(!is_program_status_reply("\x1b]11;rgb:0000/0000/0000\x07"));
    }
}
