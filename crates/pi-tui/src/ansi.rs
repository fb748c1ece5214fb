//! ANSI escape sequences: finding their extent, stripping them, and tracking the SGR style state
//! so text can be cut anywhere and resumed with the same look.

/// Escape byte.
pub const ESC: char = '\x1b';

/// Byte length of the escape sequence at the start of `s` (which must start with ESC).
/// Unterminated sequences run to the end of the string.
pub fn escape_len(s: &str) -> usize {
    let b = s.as_bytes();
    if b.first() != Some(&0x1b) {
        return 0;
    }
    match b.get(1) {
        None => 1,
        Some(b'[') => {
            // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
            let mut i = 2;
            while i < b.len() {
                if (0x40..=0x7e).contains(&b[i]) {
                    return i + 1;
                }
                if !(0x20..=0x3f).contains(&b[i]) {
                    // Malformed: stop before the offending byte.
                    return i;
                }
                i += 1;
            }
            b.len()
        }
        Some(b']') | Some(b'_') | Some(b'P') | Some(b'X') | Some(b'^') => {
            // String sequences: end at BEL or ST (ESC \).
            let mut i = 2;
            while i < b.len() {
                if b[i] == 0x07 {
                    return i + 1;
                }
                if b[i] == 0x1b && b.get(i + 1) == Some(&b'\\') {
                    return i + 2;
                }
                i += 1;
            }
            b.len()
        }
        Some(&c) => {
            if c < 0x80 {
                2
            } else {
                // ESC followed by a multi-byte character (alt+char): keep the whole character.
                1 + s[1..].chars().next().map_or(0, char::len_utf8)
            }
        }
    }
}

/// The string with every escape sequence removed.
pub fn strip_ansi(s: &str) -> String {
    if !s.contains(ESC) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with(ESC) {
            i += escape_len(rest).max(1);
        } else {
            let next = rest.find(ESC).unwrap_or(rest.len());
            out.push_str(&rest[..next]);
            i += next;
        }
    }
    out
}

/// The active SGR attributes and OSC 8 hyperlink after some prefix of a line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SgrState {
    bold: bool,
    dim: bool,
    italic: bool,
    underline: Option<String>,
    blink: bool,
    inverse: bool,
    hidden: bool,
    strike: bool,
    overline: bool,
    fg: Option<String>,
    bg: Option<String>,
    underline_color: Option<String>,
    link: Option<String>,
}

impl SgrState {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether any attribute or link is active.
    pub fn is_active(&self) -> bool {
        *self != Self::default()
    }

    /// Feed one escape sequence (as returned by [`escape_len`]); non-SGR sequences other than
    /// OSC 8 are ignored.
    pub fn apply(&mut self, seq: &str) {
        if let Some(body) = seq.strip_prefix("\x1b[") {
            if let Some(params) = body.strip_suffix('m') {
                self.apply_sgr(params);
            }
        } else if let Some(body) = seq.strip_prefix("\x1b]8;") {
            let body = body
                .strip_suffix("\x1b\\")
                .or_else(|| body.strip_suffix('\x07'))
                .unwrap_or(body);
            // body = "params;url"
            let url = body.split_once(';').map_or("", |(_, u)| u);
            self.link = if url.is_empty() { None } else { Some(body.to_string()) };
        }
    }

    fn apply_sgr(&mut self, params: &str) {
        if params.is_empty() {
            self.reset_sgr();
            return;
        }
        let parts: Vec<&str> = params.split(';').collect();
        let mut i = 0;
        while i < parts.len() {
            let p = parts[i];
            // Colon sub-parameters (e.g. 4:3, 38:2::r:g:b) stay attached to their code.
            let code_str = p.split(':').next().unwrap_or("");
            let code: u32 = code_str.parse().unwrap_or(0);
            match code {
                0 => self.reset_sgr(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => {
                    if p == "4:0" {
                        self.underline = None;
                    } else {
                        self.underline = Some(p.to_string());
                    }
                }
                5 | 6 => self.blink = true,
                7 => self.inverse = true,
                8 => self.hidden = true,
                9 => self.strike = true,
                21 => self.underline = Some("4".to_string()),
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = None,
                25 => self.blink = false,
                27 => self.inverse = false,
                28 => self.hidden = false,
                29 => self.strike = false,
                53 => self.overline = true,
                55 => self.overline = false,
                30..=37 | 90..=97 => self.fg = Some(p.to_string()),
                39 => self.fg = None,
                40..=47 | 100..=107 => self.bg = Some(p.to_string()),
                49 => self.bg = None,
                59 => self.underline_color = None,
                38 | 48 | 58 => {
                    let (value, used) = extended_color(&parts[i..]);
                    match code {
                        38 => self.fg = Some(value),
                        48 => self.bg = Some(value),
                        _ => self.underline_color = Some(value),
                    }
                    i += used;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn reset_sgr(&mut self) {
        let link = self.link.take();
        *self = Self::default();
        self.link = link;
    }

    /// The sequence that re-establishes this state from a clean terminal.
    pub fn prefix(&self) -> String {
        let mut codes: Vec<&str> = Vec::new();
        if self.bold {
            codes.push("1");
        }
        if self.dim {
            codes.push("2");
        }
        if self.italic {
            codes.push("3");
        }
        if let Some(u) = &self.underline {
            codes.push(u);
        }
        if self.blink {
            codes.push("5");
        }
        if self.inverse {
            codes.push("7");
        }
        if self.hidden {
            codes.push("8");
        }
        if self.strike {
            codes.push("9");
        }
        if self.overline {
            codes.push("53");
        }
        if let Some(c) = &self.fg {
            codes.push(c);
        }
        if let Some(c) = &self.bg {
            codes.push(c);
        }
        if let Some(c) = &self.underline_color {
            codes.push(c);
        }
        let mut out = String::new();
        if !codes.is_empty() {
            out.push_str("\x1b[");
            out.push_str(&codes.join(";"));
            out.push('m');
        }
        if let Some(link) = &self.link {
            out.push_str("\x1b]8;");
            out.push_str(link);
            out.push_str("\x1b\\");
        }
        out
    }

    /// The sequence that turns off exactly the active attributes (not a full reset, so an outer
    /// background painted around the text survives).
    pub fn suffix(&self) -> String {
        let mut codes: Vec<&str> = Vec::new();
        if self.bold || self.dim {
            codes.push("22");
        }
        if self.italic {
            codes.push("23");
        }
        if self.underline.is_some() {
            codes.push("24");
        }
        if self.blink {
            codes.push("25");
        }
        if self.inverse {
            codes.push("27");
        }
        if self.hidden {
            codes.push("28");
        }
        if self.strike {
            codes.push("29");
        }
        if self.overline {
            codes.push("55");
        }
        if self.fg.is_some() {
            codes.push("39");
        }
        if self.bg.is_some() {
            codes.push("49");
        }
        if self.underline_color.is_some() {
            codes.push("59");
        }
        let mut out = String::new();
        if !codes.is_empty() {
            out.push_str("\x1b[");
            out.push_str(&codes.join(";"));
            out.push('m');
        }
        if self.link.is_some() {
            out.push_str("\x1b]8;;\x1b\\");
        }
        out
    }
}

/// `38;5;n` / `38;2;r;g;b` (semicolon form): the joined value and how many parts it used.
fn extended_color(parts: &[&str]) -> (String, usize) {
    if parts[0].contains(':') {
        return (parts[0].to_string(), 1);
    }
    match parts.get(1).copied() {
        Some("5") if parts.len() >= 3 => (parts[..3].join(";"), 3),
        Some("2") if parts.len() >= 5 => (parts[..5].join(";"), 5),
        _ => (parts[0].to_string(), parts.len().min(2)),
    }
}

/// `text` as an OSC 8 hyperlink to `url` (use only when the terminal supports it).
pub fn hyperlink(text: &str, url: &str) -> String {
    format!("\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\")
}

/// Iterate over a string as escape sequences and plain runs.
pub enum Piece<'a> {
    Escape(&'a str),
    Text(&'a str),
}

/// Split `s` into escape sequences and the plain text between them.
pub fn pieces(s: &str) -> impl Iterator<Item = Piece<'_>> {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= s.len() {
            return None;
        }
        let rest = &s[i..];
        if rest.starts_with(ESC) {
            let n = escape_len(rest).max(1);
            i += n;
            Some(Piece::Escape(&rest[..n]))
        } else {
            let n = rest.find(ESC).unwrap_or(rest.len());
            i += n;
            Some(Piece::Text(&rest[..n]))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_lengths() {
        assert_eq!(escape_len("\x1b[31mx"), 5);
        assert_eq!(escape_len("\x1b]8;;http://a\x1b\\x"), 15);
        assert_eq!(escape_len("\x1b]0;t\x07x"), 6);
        assert_eq!(escape_len("\x1b_pi:c\x07x"), 7);
        assert_eq!(escape_len("\x1b[1;2"), 5);
    }

    #[test]
    fn strip() {
        assert_eq!(
            strip_ansi("\x1b[1mbold\x1b[22m and \x1b]8;;u\x1b\\link\x1b]8;;\x1b\\"),
            "bold and link"
        );
    }

    #[test]
    fn state_round_trip() {
        let mut st = SgrState::new();
        st.apply("\x1b[1;38;2;10;20;30m");
        st.apply("\x1b[4m");
        assert_eq!(st.prefix(), "\x1b[1;4;38;2;10;20;30m");
        assert_eq!(st.suffix(), "\x1b[22;24;39m");
        st.apply("\x1b[0m");
        assert!(!st.is_active());
        st.apply("\x1b]8;;https://x\x1b\\");
        assert_eq!(st.prefix(), "\x1b]8;;https://x\x1b\\");
        st.apply("\x1b]8;;\x1b\\");
        assert!(!st.is_active());
    }
}
