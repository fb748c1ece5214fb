//! Keys: the `Key`/`KeyEvent` types, decoding one terminal input sequence (kitty CSI u,
//! xterm modifyOtherKeys, legacy xterm/rxvt/SS3 sequences, control bytes) into a `KeyEvent`,
//! and key ids like `ctrl+c` / `shift+tab` with a matcher.

use std::fmt;

/// A key, independent of modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// A character key; letters are lowercase unless typed as plain text.
    Char(char),
    Enter,
    Tab,
    Backspace,
    Escape,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    Clear,
    F(u8),
}

/// Modifier bits, using the kitty encoding (value - 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Modifiers(pub u8);

impl Modifiers {
    pub const NONE: Modifiers = Modifiers(0);
    pub const SHIFT: Modifiers = Modifiers(1);
    pub const ALT: Modifiers = Modifiers(2);
    pub const CTRL: Modifiers = Modifiers(4);
    pub const SUPER: Modifiers = Modifiers(8);
    /// Bits this library understands (lock keys and hyper/meta are ignored).
    const MASK: u8 = 1 | 2 | 4 | 8;

    pub fn shift(self) -> bool {
        self.0 & 1 != 0
    }
    pub fn alt(self) -> bool {
        self.0 & 2 != 0
    }
    pub fn ctrl(self) -> bool {
        self.0 & 4 != 0
    }
    pub fn super_(self) -> bool {
        self.0 & 8 != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 & Self::MASK == 0
    }
    pub fn contains(self, other: Modifiers) -> bool {
        self.0 & other.0 == other.0
    }
    #[must_use]
    pub fn with(self, other: Modifiers) -> Modifiers {
        Modifiers(self.0 | other.0)
    }
    #[must_use]
    pub fn without(self, other: Modifiers) -> Modifiers {
        Modifiers(self.0 & !other.0)
    }
    fn normalized(self) -> Modifiers {
        Modifiers(self.0 & Self::MASK)
    }
}

/// Press, auto-repeat or release (releases only arrive with the kitty protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyEventKind {
    #[default]
    Press,
    Repeat,
    Release,
}

/// One decoded key event.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyEvent {
    pub key: Key,
    pub mods: Modifiers,
    pub kind: KeyEventKind,
    /// The shifted character reported by the kitty protocol (alternate keys).
    pub shifted: Option<char>,
    /// Caps lock was on (kitty only).
    pub caps_lock: bool,
    /// Came as ESC + character (legacy alt): `ESC b`/`ESC f`/`ESC p`/`ESC n` also stand for
    /// alt+left/right/up/down, as several terminals send them for those keys.
    pub legacy_alt: bool,
    /// A bare line feed outside the kitty protocol: Enter, and also Ctrl+J (the byte Ctrl+J
    /// sends), so the editor's newline binding takes it as pi-tui does.
    pub line_feed: bool,
}

impl KeyEvent {
    pub fn new(key: Key, mods: Modifiers) -> Self {
        KeyEvent {
            key,
            mods,
            kind: KeyEventKind::Press,
            shifted: None,
            caps_lock: false,
            legacy_alt: false,
            line_feed: false,
        }
    }

    pub fn plain(key: Key) -> Self {
        Self::new(key, Modifiers::NONE)
    }

    pub fn is_release(&self) -> bool {
        self.kind == KeyEventKind::Release
    }

    /// The text this key types, if it is a printable key without ctrl/alt/super.
    pub fn text(&self) -> Option<char> {
        let Key::Char(c) = self.key else {
            return None;
        };
        if self.is_release() || self.mods.ctrl() || self.mods.alt() || self.mods.super_() || c.is_control() {
            return None;
        }
        if self.mods.shift() {
            if let Some(s) = self.shifted {
                return Some(s);
            }
            return Some(upper(c));
        }
        if self.caps_lock && c.is_alphabetic() {
            return Some(upper(c));
        }
        Some(c)
    }

    /// The key id with its modifiers, normalised so that an uppercase letter typed as text
    /// compares equal to `shift+<letter>`.
    pub fn id(&self) -> KeyId {
        let mut key = self.key;
        let mut mods = self.mods.normalized();
        if let Key::Char(c) = key {
            if c.is_ascii_uppercase() {
                key = Key::Char(c.to_ascii_lowercase());
                mods = mods.with(Modifiers::SHIFT);
            }
        }
        KeyId { key, mods }
    }

    /// Whether this event is a press or repeat of the key id `id` (e.g. `ctrl+shift+p`).
    /// Unknown ids never match.
    pub fn matches(&self, id: &str) -> bool {
        if self.is_release() {
            return false;
        }
        match KeyId::parse(id) {
            Some(k) => self.matches_id(&k),
            None => false,
        }
    }

    pub fn matches_id(&self, id: &KeyId) -> bool {
        if self.is_release() {
            return false;
        }
        let own = self.id();
        own == *id
            || (self.legacy_alt && legacy_alt_arrow(&own) == Some(*id))
            || (self.line_feed && id.key == Key::Char('j') && id.mods == Modifiers::CTRL)
    }
}

/// The arrow key a legacy `ESC <letter>` also stands for.
fn legacy_alt_arrow(id: &KeyId) -> Option<KeyId> {
    let Key::Char(c) = id.key else { return None };
    let alt = Modifiers::ALT;
    let arrow = match (c, id.mods) {
        ('p', m) if m == alt => Key::Up,
        ('n', m) if m == alt => Key::Down,
        ('b', m) if m == alt || m == alt.with(Modifiers::SHIFT) => Key::Left,
        ('f', m) if m == alt || m == alt.with(Modifiers::SHIFT) => Key::Right,
        _ => return None,
    };
    Some(KeyId { key: arrow, mods: alt })
}

fn upper(c: char) -> char {
    let mut u = c.to_uppercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// A key with modifiers, as written in keybindings (`ctrl+c`, `alt+enter`, `shift+tab`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId {
    pub key: Key,
    pub mods: Modifiers,
}

impl KeyId {
    /// Parse `mod+mod+key`. Modifier and key names are case-insensitive.
    pub fn parse(s: &str) -> Option<KeyId> {
        let lower = s.trim().to_lowercase();
        if lower.is_empty() {
            return None;
        }
        // The key itself may be "+" ("ctrl++"), so split off the last segment by hand.
        let (mods_part, key_part) = if lower == "+" {
            ("", "+")
        } else if let Some(stripped) = lower.strip_suffix("++") {
            (stripped, "+")
        } else {
            match lower.rsplit_once('+') {
                Some((m, k)) => (m, k),
                None => ("", lower.as_str()),
            }
        };
        let mut mods = Modifiers::NONE;
        if !mods_part.is_empty() {
            for m in mods_part.split('+') {
                mods = mods.with(match m {
                    "shift" => Modifiers::SHIFT,
                    "alt" | "option" | "meta" => Modifiers::ALT,
                    "ctrl" | "control" => Modifiers::CTRL,
                    "super" | "cmd" => Modifiers::SUPER,
                    _ => return None,
                });
            }
        }
        let key = match key_part {
            "enter" | "return" => Key::Enter,
            "tab" => Key::Tab,
            "backspace" => Key::Backspace,
            "escape" | "esc" => Key::Escape,
            "space" => Key::Char(' '),
            "up" => Key::Up,
            "down" => Key::Down,
            "left" => Key::Left,
            "right" => Key::Right,
            "home" => Key::Home,
            "end" => Key::End,
            "pageup" => Key::PageUp,
            "pagedown" => Key::PageDown,
            "insert" => Key::Insert,
            "delete" => Key::Delete,
            "clear" => Key::Clear,
            k => {
                let mut chars = k.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Key::Char(c),
                    (Some('f'), Some(_)) => {
                        let n: u8 = k[1..].parse().ok()?;
                        if !(1..=24).contains(&n) {
                            return None;
                        }
                        Key::F(n)
                    }
                    _ => return None,
                }
            }
        };
        Some(KeyId { key, mods })
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Same modifier order as pi's key ids.
        if self.mods.shift() {
            f.write_str("shift+")?;
        }
        if self.mods.ctrl() {
            f.write_str("ctrl+")?;
        }
        if self.mods.alt() {
            f.write_str("alt+")?;
        }
        if self.mods.super_() {
            f.write_str("super+")?;
        }
        match self.key {
            Key::Char(' ') => f.write_str("space"),
            Key::Char(c) => write!(f, "{c}"),
            Key::F(n) => write!(f, "f{n}"),
            Key::PageUp => f.write_str("pageUp"),
            Key::PageDown => f.write_str("pageDown"),
            other => write!(f, "{}", format!("{other:?}").to_lowercase()),
        }
    }
}

/// Decode one complete input sequence (as split by [`crate::input::InputParser`]).
/// `kitty_active` changes the meaning of `\n` and `ESC CR`, which some terminals map to
/// shift+enter when the kitty protocol is on.
pub fn parse_key(seq: &str, kitty_active: bool) -> Option<KeyEvent> {
    let b = seq.as_bytes();
    if b.is_empty() {
        return None;
    }
    if b[0] != 0x1b {
        let mut chars = seq.chars();
        let c = chars.next()?;
        if chars.next().is_some() {
            return None;
        }
        return Some(parse_single(c, kitty_active));
    }
    if b.len() == 1 {
        return Some(KeyEvent::plain(Key::Escape));
    }
    match b[1] {
        // A lone "ESC [" / "ESC O" (flushed after the timeout) is alt+[ / alt+O.
        b'[' if b.len() == 2 => Some(KeyEvent::new(Key::Char('['), Modifiers::ALT)),
        b'O' if b.len() == 2 => Some(KeyEvent::new(Key::Char('o'), Modifiers::ALT.with(Modifiers::SHIFT))),
        b'[' => parse_csi(&seq[2..], kitty_active),
        b'O' if b.len() == 3 => parse_ss3(b[2]),
        b'\x1b' => {
            // ESC ESC: alt + whatever follows.
            let mut ev = if b.len() == 2 {
                KeyEvent::plain(Key::Escape)
            } else {
                parse_key(&seq[1..], kitty_active)?
            };
            ev.mods = ev.mods.with(Modifiers::ALT);
            Some(ev)
        }
        _ => {
            let rest = &seq[1..];
            let mut chars = rest.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            if c == '\r' {
                // Kitty users commonly map shift+enter to send ESC CR.
                let mods = if kitty_active { Modifiers::SHIFT } else { Modifiers::ALT };
                return Some(KeyEvent::new(Key::Enter, mods));
            }
            let mut ev = parse_single(c, false);
            ev.mods = ev.mods.with(Modifiers::ALT);
            ev.legacy_alt = true;
            Some(ev)
        }
    }
}

fn windows_terminal() -> bool {
    static WT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WT.get_or_init(|| std::env::var_os("WT_SESSION").is_some())
}

fn parse_single(c: char, kitty_active: bool) -> KeyEvent {
    match c {
        '\r' => KeyEvent::plain(Key::Enter),
        '\n' => {
            if kitty_active {
                KeyEvent::new(Key::Enter, Modifiers::SHIFT)
            } else {
                KeyEvent {
                    line_feed: true,
                    ..KeyEvent::plain(Key::Enter)
                }
            }
        }
        '\t' => KeyEvent::plain(Key::Tab),
        '\x7f' => KeyEvent::plain(Key::Backspace),
        // Windows Terminal sends BS for ctrl+backspace; elsewhere BS is plain backspace.
        '\x08' if windows_terminal() => KeyEvent::new(Key::Backspace, Modifiers::CTRL),
        '\x08' => KeyEvent::plain(Key::Backspace),
        '\x1b' => KeyEvent::plain(Key::Escape),
        '\0' => KeyEvent::new(Key::Char(' '), Modifiers::CTRL),
        '\x01'..='\x1a' => KeyEvent::new(Key::Char((b'a' + (c as u8) - 1) as char), Modifiers::CTRL),
        '\x1c' => KeyEvent::new(Key::Char('\\'), Modifiers::CTRL),
        '\x1d' => KeyEvent::new(Key::Char(']'), Modifiers::CTRL),
        '\x1e' => KeyEvent::new(Key::Char('^'), Modifiers::CTRL),
        '\x1f' => KeyEvent::new(Key::Char('-'), Modifiers::CTRL),
        c => KeyEvent::plain(Key::Char(c)),
    }
}

fn parse_ss3(c: u8) -> Option<KeyEvent> {
    let (key, mods) = match c {
        b'A' => (Key::Up, Modifiers::NONE),
        b'B' => (Key::Down, Modifiers::NONE),
        b'C' => (Key::Right, Modifiers::NONE),
        b'D' => (Key::Left, Modifiers::NONE),
        b'H' => (Key::Home, Modifiers::NONE),
        b'F' => (Key::End, Modifiers::NONE),
        b'E' => (Key::Clear, Modifiers::NONE),
        b'M' => (Key::Enter, Modifiers::NONE),
        b'P' => (Key::F(1), Modifiers::NONE),
        b'Q' => (Key::F(2), Modifiers::NONE),
        b'R' => (Key::F(3), Modifiers::NONE),
        b'S' => (Key::F(4), Modifiers::NONE),
        // rxvt ctrl+arrows
        b'a' => (Key::Up, Modifiers::CTRL),
        b'b' => (Key::Down, Modifiers::CTRL),
        b'c' => (Key::Right, Modifiers::CTRL),
        b'd' => (Key::Left, Modifiers::CTRL),
        b'e' => (Key::Clear, Modifiers::CTRL),
        _ => return None,
    };
    Some(KeyEvent::new(key, mods))
}

/// `mods[:event]` → modifiers and event kind (kitty encodes modifiers as value - 1).
fn parse_mods(field: &str) -> (Modifiers, KeyEventKind, bool) {
    let mut it = field.split(':');
    let m: u32 = it.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let kind = match it.next().and_then(|s| s.parse::<u32>().ok()) {
        Some(2) => KeyEventKind::Repeat,
        Some(3) => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    };
    let bits = m.saturating_sub(1);
    let caps = bits & 64 != 0;
    (Modifiers((bits & 0x0f) as u8), kind, caps)
}

/// Map a kitty/modifyOtherKeys codepoint to a key (keypad keys fold into their main keys).
fn codepoint_key(cp: u32) -> Option<Key> {
    Some(match cp {
        13 | 57414 => Key::Enter,
        9 => Key::Tab,
        27 => Key::Escape,
        8 | 127 => Key::Backspace,
        57399..=57408 => Key::Char(char::from_digit(cp - 57399, 10)?),
        57409 => Key::Char('.'),
        57410 => Key::Char('/'),
        57411 => Key::Char('*'),
        57412 => Key::Char('-'),
        57413 => Key::Char('+'),
        57415 => Key::Char('='),
        57416 => Key::Char(','),
        57417 => Key::Left,
        57418 => Key::Right,
        57419 => Key::Up,
        57420 => Key::Down,
        57421 => Key::PageUp,
        57422 => Key::PageDown,
        57423 => Key::Home,
        57424 => Key::End,
        57425 => Key::Insert,
        57426 => Key::Delete,
        // Other private-use codes are modifier keys and media keys we do not handle.
        57344..=63743 => return None,
        _ => {
            let c = char::from_u32(cp)?;
            Key::Char(if c.is_ascii_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c
            })
        }
    })
}

fn parse_csi(body: &str, kitty_active: bool) -> Option<KeyEvent> {
    let _ = kitty_active;
    // The final byte of a CSI sequence is ASCII; anything else (a multi-byte character where
    // the final byte should be) is not a key, and slicing off its last byte would split it.
    let last = body.chars().next_back()?;
    if !last.is_ascii() {
        return None;
    }
    let final_byte = last as u8;
    let params = &body[..body.len() - 1];
    // Linux console F1-F5: ESC [ [ A..E
    if let Some(rest) = params.strip_prefix('[') {
        if rest.is_empty() {
            return match final_byte {
                b'A'..=b'E' => Some(KeyEvent::plain(Key::F(final_byte - b'A' + 1))),
                _ => None,
            };
        }
        // ESC [ [ 5 ~ and friends
        return parse_csi(rest, kitty_active);
    }
    match final_byte {
        b'u' => {
            let mut fields = params.split(';');
            let code_field = fields.next()?;
            let mut codes = code_field.split(':');
            let cp: u32 = codes.next()?.parse().ok()?;
            let shifted = codes
                .next()
                .filter(|s| !s.is_empty())
                .and_then(|s| s.parse::<u32>().ok())
                .and_then(char::from_u32);
            let base = codes
                .next()
                .and_then(|s| s.parse::<u32>().ok())
                .and_then(char::from_u32);
            let (mods, kind, caps) = parse_mods(fields.next().unwrap_or("1"));
            let mut key = codepoint_key(cp)?;
            // Non-Latin layouts: shortcuts use the key's position on a US layout.
            if let (Key::Char(c), Some(b)) = (key, base) {
                let latin = c.is_ascii_graphic();
                if !latin && (mods.ctrl() || mods.alt() || mods.super_()) {
                    key = Key::Char(b.to_ascii_lowercase());
                }
            }
            Some(KeyEvent {
                key,
                mods,
                kind,
                shifted,
                caps_lock: caps,
                legacy_alt: false,
                line_feed: false,
            })
        }
        b'~' => {
            let mut fields = params.split(';');
            let n: u32 = fields.next()?.parse().ok()?;
            if n == 27 {
                // xterm modifyOtherKeys: CSI 27 ; mods ; code ~
                let (mods, kind, caps) = parse_mods(fields.next()?);
                let cp: u32 = fields.next()?.parse().ok()?;
                let key = codepoint_key(cp)?;
                return Some(KeyEvent {
                    key,
                    mods,
                    kind,
                    shifted: None,
                    caps_lock: caps,
                    legacy_alt: false,
                    line_feed: false,
                });
            }
            let (mods, kind, caps) = parse_mods(fields.next().unwrap_or("1"));
            let key = match n {
                1 | 7 => Key::Home,
                2 => Key::Insert,
                3 => Key::Delete,
                4 | 8 => Key::End,
                5 => Key::PageUp,
                6 => Key::PageDown,
                11..=15 => Key::F((n - 10) as u8),
                17..=21 => Key::F((n - 11) as u8),
                23..=26 => Key::F((n - 12) as u8),
                28 | 29 | 31..=34 => Key::F((n - 13) as u8),
                _ => return None,
            };
            Some(KeyEvent {
                key,
                mods,
                kind,
                shifted: None,
                caps_lock: caps,
                legacy_alt: false,
                line_feed: false,
            })
        }
        b'$' | b'^' => {
            // rxvt: shift ($) and ctrl (^) variants of the ~ keys.
            let n: u32 = params.parse().ok()?;
            let mods = if final_byte == b'$' {
                Modifiers::SHIFT
            } else {
                Modifiers::CTRL
            };
            let key = match n {
                2 => Key::Insert,
                3 => Key::Delete,
                5 => Key::PageUp,
                6 => Key::PageDown,
                7 => Key::Home,
                8 => Key::End,
                _ => return None,
            };
            Some(KeyEvent::new(key, mods))
        }
        b'Z' => Some(KeyEvent::new(Key::Tab, Modifiers::SHIFT)),
        b'a'..=b'e' if params.is_empty() => {
            let key = [Key::Up, Key::Down, Key::Right, Key::Left, Key::Clear][(final_byte - b'a') as usize];
            Some(KeyEvent::new(key, Modifiers::SHIFT))
        }
        b'A' | b'B' | b'C' | b'D' | b'H' | b'F' | b'E' | b'P' | b'Q' | b'R' | b'S' => {
            let key = match final_byte {
                b'A' => Key::Up,
                b'B' => Key::Down,
                b'C' => Key::Right,
                b'D' => Key::Left,
                b'H' => Key::Home,
                b'F' => Key::End,
                b'E' => Key::Clear,
                b'P' => Key::F(1),
                b'Q' => Key::F(2),
                b'R' => Key::F(3),
                _ => Key::F(4),
            };
            let (mods, kind, caps) = match params.split_once(';') {
                Some((_, m)) => parse_mods(m),
                None => (Modifiers::NONE, KeyEventKind::Press, false),
            };
            Some(KeyEvent {
                key,
                mods,
                kind,
                shifted: None,
                caps_lock: caps,
                legacy_alt: false,
                line_feed: false,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(seq: &str) -> String {
        parse_key(seq, false).map(|e| e.id().to_string()).unwrap_or_default()
    }

    #[test]
    fn key_id_parse_and_display() {
        let k = KeyId::parse("ctrl+shift+p").expect("parses");
        assert_eq!(k.key, Key::Char('p'));
        assert!(k.mods.ctrl() && k.mods.shift());
        assert_eq!(KeyId::parse("shift+ctrl+p"), Some(k));
        assert_eq!(KeyId::parse("ctrl+-").map(|k| k.key), Some(Key::Char('-')));
        assert_eq!(KeyId::parse("ctrl++").map(|k| k.key), Some(Key::Char('+')));
        assert_eq!(KeyId::parse("pageUp").map(|k| k.key), Some(Key::PageUp));
        assert_eq!(KeyId::parse("f12").map(|k| k.key), Some(Key::F(12)));
        assert_eq!(KeyId::parse("hyper+x"), None);
        assert_eq!(
            KeyId::parse("alt+enter").map(|k| k.to_string()),
            Some("alt+enter".into())
        );
    }

    #[test]
    fn legacy_table() {
        let table = [
            ("\r", "enter"),
            ("\t", "tab"),
            ("\x7f", "backspace"),
            ("\x1b", "escape"),
            ("\x03", "ctrl+c"),
            ("\x00", "ctrl+space"),
            ("\x1d", "ctrl+]"),
            ("\x1f", "ctrl+-"),
            ("a", "a"),
            ("A", "shift+a"),
            ("\x1b[A", "up"),
            ("\x1bOB", "down"),
            ("\x1b[1;5C", "ctrl+right"),
            ("\x1b[1;3D", "alt+left"),
            ("\x1b[H", "home"),
            ("\x1b[4~", "end"),
            ("\x1b[3~", "delete"),
            ("\x1b[3;3~", "alt+delete"),
            ("\x1b[5~", "pageUp"),
            ("\x1b[Z", "shift+tab"),
            ("\x1b\r", "alt+enter"),
            ("\x1b\x7f", "alt+backspace"),
            ("\x1bb", "alt+b"),
            ("\x1b\x1d", "ctrl+alt+]"),
            ("\x1bOP", "f1"),
            ("\x1b[15~", "f5"),
            ("\x1b[24~", "f12"),
            ("\x1b[[A", "f1"),
            ("\x1b[a", "shift+up"),
            ("\x1bOd", "ctrl+left"),
            ("\x1b[7$", "shift+home"),
            ("\x1b[8^", "ctrl+end"),
            ("\x1b\x1b[A", "alt+up"),
            ("\x1b[", "alt+["),
        ];
        for (seq, want) in table {
            assert_eq!(id(seq), want, "sequence {seq:?}");
        }
    }

    #[test]
    fn kitty_table() {
        let table = [
            ("\x1b[99;5u", "ctrl+c"),
            ("\x1b[13;2u", "shift+enter"),
            ("\x1b[13;3u", "alt+enter"),
            ("\x1b[57414;2u", "shift+enter"),
            ("\x1b[9;2u", "shift+tab"),
            ("\x1b[27u", "escape"),
            ("\x1b[127;5u", "ctrl+backspace"),
            ("\x1b[112;6u", "shift+ctrl+p"),
            ("\x1b[112:80;6u", "shift+ctrl+p"),
            ("\x1b[93;7u", "ctrl+alt+]"),
            ("\x1b[45;5u", "ctrl+-"),
            ("\x1b[1;3A", "alt+up"),
            ("\x1b[3;5~", "ctrl+delete"),
            ("\x1b[57399u", "0"),
            ("\x1b[57417;5u", "ctrl+left"),
            // Cyrillic "с" on the C key of a US layout.
            ("\x1b[1089::99;5u", "ctrl+c"),
            ("\x1b[32;5u", "ctrl+space"),
            ("\x1b[99;9u", "super+c"),
        ];
        for (seq, want) in table {
            assert_eq!(id(seq), want, "sequence {seq:?}");
        }
    }

    #[test]
    fn kitty_event_types_and_text() {
        let ev = parse_key("\x1b[97;1:3u", true).expect("parses");
        assert!(ev.is_release());
        assert!(!ev.matches("a"));
        let rep = parse_key("\x1b[97;1:2u", true).expect("parses");
        assert_eq!(rep.kind, KeyEventKind::Repeat);
        assert!(rep.matches("a"));
        let shifted = parse_key("\x1b[49:33;2u", true).expect("parses");
        assert_eq!(shifted.text(), Some('!'));
        let caps = parse_key("\x1b[97;65u", true).expect("parses");
        assert_eq!(caps.text(), Some('A'));
        assert!(caps.matches("a"));
        assert_eq!(parse_key("\x1b[99;5u", true).and_then(|e| e.text()), None);
    }

    #[test]
    fn modify_other_keys() {
        assert_eq!(id("\x1b[27;2;13~"), "shift+enter");
        assert_eq!(id("\x1b[27;5;99~"), "ctrl+c");
        assert_eq!(id("\x1b[27;3;13~"), "alt+enter");
        let ev = parse_key("\x1b[27;2;65~", false).expect("parses");
        assert_eq!(ev.text(), Some('A'));
    }

    #[test]
    fn kitty_active_reinterprets_legacy_enter_variants() {
        assert!(parse_key("\n", true).expect("parses").matches("shift+enter"));
        assert!(parse_key("\x1b\r", true).expect("parses").matches("shift+enter"));
        assert!(parse_key("\n", false).expect("parses").matches("enter"));
    }

    #[test]
    fn legacy_alt_letters_also_mean_arrows() {
        let ev = |s: &str| parse_key(s, false).expect("parses");
        assert!(ev("\x1bb").matches("alt+left"));
        assert!(ev("\x1bb").matches("alt+b"));
        assert!(ev("\x1bB").matches("alt+left"));
        assert!(ev("\x1bf").matches("alt+right"));
        assert!(ev("\x1bp").matches("alt+up"));
        assert!(ev("\x1bn").matches("alt+down"));
        // Under kitty alt+b is its own key.
        assert!(!ev("\x1b[98;3u").matches("alt+left"));
    }

    #[test]
    fn matcher() {
        let ev = parse_key("\x03", false).expect("parses");
        assert!(ev.matches("ctrl+c"));
        assert!(ev.matches("Ctrl+C"));
        assert!(!ev.matches("ctrl+shift+c"));
        assert!(!ev.matches("c"));
        assert!(!ev.matches("nonsense+c"));
    }
}
