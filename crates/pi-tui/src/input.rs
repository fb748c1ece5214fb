//! The input stream: splits raw terminal bytes into single sequences (batched keys, split
//! escape sequences, bracketed pastes, terminal replies) and decodes them into `InputEvent`s.

use crate::keys::{parse_key, KeyEvent};

const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// One thing the user (or the terminal) sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputEvent {
    Key(KeyEvent),
    /// The text of a bracketed paste (line endings normalised to `\n`).
    Paste(String),
    /// Reply to the kitty keyboard protocol query (`CSI ? flags u`).
    KittyFlags(u32),
    /// Reply to the cell size query (`CSI 6 ; height ; width t`), in pixels.
    CellSize {
        width: u32,
        height: u32,
    },
    /// The terminal answered the program status query (OSC 7501).
    ProgramStatusSupported,
    /// The terminal reported a colour (OSC 10 foreground, OSC 11 background), 8 bits each.
    TerminalColor {
        slot: u8,
        rgb: (u8, u8, u8),
    },
    /// The terminal reported one of its 16 ANSI palette colours (OSC 4), 8 bits each.
    PaletteColor {
        index: u8,
        rgb: (u8, u8, u8),
    },
    /// The terminal answered the primary device attributes query (`CSI ? … c`). Terminals
    /// answer queries in order, so this marks the end of the replies to queries sent before.
    DeviceAttributes,
    /// The terminal switched between dark and light (`CSI ? 997 ; 1|2 n`, sent while colour
    /// scheme notifications, mode 2031, are on): true for dark.
    ColorScheme {
        dark: bool,
    },
    /// A mouse report (SGR encoding, `CSI < b ; x ; y M|m`).
    Mouse(MouseEvent),
    /// Focus reports (`CSI I` gained, `CSI O` lost).
    Focus(bool),
    /// A sequence that is not a key we know (kept so nothing is silently lost).
    Unknown(String),
}

/// What a mouse report says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    /// A button went down (0 left, 1 middle, 2 right).
    Press(u8),
    /// A button came up (SGR reports which one).
    Release(u8),
    /// The pointer moved with a button held.
    Drag(u8),
    /// The pointer moved with no button held (any-motion tracking).
    Move,
    WheelUp,
    WheelDown,
}

/// One mouse report; `column` and `row` count from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseEvent {
    pub kind: MouseKind,
    pub column: usize,
    pub row: usize,
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

/// Read the three bytes of a legacy (X10) mouse report: button, column and row, each
/// offset by 32 (positions from 1). Button 3 is a release, whichever button it was.
fn parse_x10_mouse(rest: &str) -> Option<MouseEvent> {
    let v: Vec<u32> = rest.chars().map(|c| c as u32).collect();
    let [b, x, y] = v[..] else { return None };
    if b < 32 || x < 33 || y < 33 {
        return None;
    }
    let b = b - 32;
    let release = b & 0x60 == 0 && b & 3 == 3;
    parse_sgr_mouse(&format!("{b};{};{}", x - 32, y - 32), release)
}

/// Read an SGR mouse report body (`b;x;y` and its final `M` press / `m` release).
fn parse_sgr_mouse(body: &str, release: bool) -> Option<MouseEvent> {
    let mut it = body.split(';').map(str::parse::<usize>);
    let (Some(Ok(b)), Some(Ok(x)), Some(Ok(y)), None) = (it.next(), it.next(), it.next(), it.next()) else {
        return None;
    };
    let button = (b & 3) as u8;
    let kind = if b & 64 != 0 {
        match button {
            0 => MouseKind::WheelUp,
            1 => MouseKind::WheelDown,
            // Horizontal wheels: nothing scrolls sideways.
            _ => return None,
        }
    } else if b & 32 != 0 {
        if button == 3 {
            MouseKind::Move
        } else {
            MouseKind::Drag(button)
        }
    } else if release {
        MouseKind::Release(button)
    } else {
        MouseKind::Press(button)
    };
    Some(MouseEvent {
        kind,
        column: x.saturating_sub(1),
        row: y.saturating_sub(1),
        shift: b & 4 != 0,
        alt: b & 8 != 0,
        ctrl: b & 16 != 0,
    })
}

/// Incremental decoder. Feed bytes as they arrive; when `has_pending()` stays true for a short
/// while (10 ms is customary) call `flush()` so a lone ESC becomes the Escape key.
#[derive(Debug, Default)]
pub struct InputParser {
    buf: String,
    /// Trailing bytes of an incomplete UTF-8 character.
    partial: Vec<u8>,
    kitty_active: bool,
}

impl InputParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Tell the decoder whether the kitty keyboard protocol is on (changes how `\n` and
    /// `ESC CR` are read).
    pub fn set_kitty_active(&mut self, on: bool) {
        self.kitty_active = on;
    }

    pub fn kitty_active(&self) -> bool {
        self.kitty_active
    }

    /// Whether an incomplete sequence is waiting for more bytes.
    pub fn has_pending(&self) -> bool {
        !self.buf.is_empty() || !self.partial.is_empty()
    }

    /// Decode as much of `bytes` (plus anything held back) as is complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<InputEvent> {
        let mut data = std::mem::take(&mut self.partial);
        data.extend_from_slice(bytes);
        let valid_up_to = match std::str::from_utf8(&data) {
            Ok(_) => data.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => data.len(),
        };
        self.partial = data.split_off(valid_up_to);
        self.buf.push_str(&String::from_utf8_lossy(&data));
        let mut out = Vec::new();
        self.drain(false, &mut out);
        out
    }

    /// Give up waiting: whatever is held back is decoded as it stands.
    pub fn flush(&mut self) -> Vec<InputEvent> {
        if !self.partial.is_empty() {
            let p = std::mem::take(&mut self.partial);
            self.buf.push_str(&String::from_utf8_lossy(&p));
        }
        let mut out = Vec::new();
        self.drain(true, &mut out);
        out
    }

    fn drain(&mut self, force: bool, out: &mut Vec<InputEvent>) {
        let mut pos = 0;
        let buf = std::mem::take(&mut self.buf);
        while pos < buf.len() {
            let rest = &buf[pos..];
            if let Some(after) = rest.strip_prefix(PASTE_START) {
                match after.find(PASTE_END) {
                    Some(end) => {
                        let text = after[..end].replace("\r\n", "\n").replace('\r', "\n");
                        out.push(InputEvent::Paste(text));
                        pos += PASTE_START.len() + end + PASTE_END.len();
                        continue;
                    }
                    None if force => {
                        // The paste never ended: deliver what arrived.
                        let text = after.replace("\r\n", "\n").replace('\r', "\n");
                        out.push(InputEvent::Paste(text));
                        pos = buf.len();
                        continue;
                    }
                    None => break,
                }
            }
            match sequence_len(rest) {
                Some(n) => {
                    out.push(self.decode(&rest[..n]));
                    pos += n;
                }
                None if force => {
                    out.push(self.decode(rest));
                    pos = buf.len();
                }
                None => break,
            }
        }
        self.buf = buf[pos..].to_string();
    }

    fn decode(&self, seq: &str) -> InputEvent {
        if let Some(body) = seq.strip_prefix("\x1b[?") {
            if let Some(flags) = body.strip_suffix('u') {
                if let Ok(f) = flags.parse() {
                    return InputEvent::KittyFlags(f);
                }
            }
            match body {
                "997;1n" => return InputEvent::ColorScheme { dark: true },
                "997;2n" => return InputEvent::ColorScheme { dark: false },
                _ => {}
            }
            if body
                .strip_suffix('c')
                .is_some_and(|b| b.bytes().all(|c| c.is_ascii_digit() || c == b';'))
            {
                return InputEvent::DeviceAttributes;
            }
        }
        if let Some(body) = seq.strip_prefix("\x1b[6;").and_then(|b| b.strip_suffix('t')) {
            let mut it = body.split(';');
            if let (Some(Ok(h)), Some(Ok(w)), None) = (it.next().map(str::parse), it.next().map(str::parse), it.next())
            {
                return InputEvent::CellSize { width: w, height: h };
            }
        }
        if crate::program_status::is_program_status_reply(seq) {
            return InputEvent::ProgramStatusSupported;
        }
        if let Some((slot, rgb)) = parse_color_reply(seq) {
            if slot >= PALETTE_SLOT {
                return InputEvent::PaletteColor {
                    index: slot - PALETTE_SLOT,
                    rgb,
                };
            }
            return InputEvent::TerminalColor { slot, rgb };
        }
        if let Some(m) = seq.strip_prefix("\x1b[M").and_then(parse_x10_mouse) {
            return InputEvent::Mouse(m);
        }
        if let Some(body) = seq.strip_prefix("\x1b[<") {
            let (body, release) = match (body.strip_suffix('M'), body.strip_suffix('m')) {
                (Some(b), _) => (b, false),
                (_, Some(b)) => (b, true),
                _ => (body, false),
            };
            if let Some(m) = parse_sgr_mouse(body, release) {
                return InputEvent::Mouse(m);
            }
            return InputEvent::Unknown(seq.to_string());
        }
        if seq == "\x1b[I" || seq == "\x1b[O" {
            return InputEvent::Focus(seq == "\x1b[I");
        }
        match parse_key(seq, self.kitty_active) {
            Some(k) => InputEvent::Key(k),
            None => InputEvent::Unknown(seq.to_string()),
        }
    }
}

/// Palette replies are returned by [`parse_color_reply`] as this plus their index.
const PALETTE_SLOT: u8 = 100;

/// A colour report `OSC 10|11 ; rgb:RRRR/GGGG/BBBB` or `OSC 4 ; N ; rgb:…` (BEL or ST ended;
/// 1 to 4 hex digits a channel, `rgba:` too): the slot (`PALETTE_SLOT + N` for palette
/// colour N, 0 to 15) and the colour scaled to 8 bits.
fn parse_color_reply(seq: &str) -> Option<(u8, (u8, u8, u8))> {
    let body = seq.strip_prefix("\x1b]")?;
    let body = body.strip_suffix('\x07').or_else(|| body.strip_suffix("\x1b\\"))?;
    let (slot, value) = body.split_once(';')?;
    let (slot, value): (u8, &str) = match slot {
        "10" => (10, value),
        "11" => (11, value),
        "4" => {
            let (index, value) = value.split_once(';')?;
            let index: u8 = index.parse().ok().filter(|i| *i < 16)?;
            (PALETTE_SLOT + index, value)
        }
        _ => return None,
    };
    let channels = value.strip_prefix("rgb:").or_else(|| value.strip_prefix("rgba:"))?;
    let mut it = channels.split('/').map(|c| {
        if c.is_empty() || c.len() > 4 {
            return None;
        }
        let v = u32::from_str_radix(c, 16).ok()?;
        let max = (1u32 << (4 * c.len() as u32)) - 1;
        Some((v * 255 + max / 2) / max)
    });
    let (r, g, b) = (it.next()??, it.next()??, it.next()??);
    Some((slot, (r as u8, g as u8, b as u8)))
}

/// Byte length of the first complete sequence in `s`, or None when more bytes are needed.
fn sequence_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if b[0] != 0x1b {
        return Some(s.chars().next().map_or(1, char::len_utf8));
    }
    let &second = b.get(1)?;
    match second {
        // A legacy (X10) mouse report: three bytes of button and position follow.
        b'[' if b.get(2) == Some(&b'M') => {
            let mut n = 3;
            let mut chars = s[3..].chars();
            for _ in 0..3 {
                n += chars.next()?.len_utf8();
            }
            Some(n)
        }
        b'[' => csi_len(s, 2),
        // SS3: one more character (whatever it is).
        b'O' => s[2..].chars().next().map(|c| 2 + c.len_utf8()),
        b']' | b'_' | b'P' | b'X' | b'^' => {
            let mut i = 2;
            while i < b.len() {
                if b[i] == 0x07 {
                    return Some(i + 1);
                }
                if b[i] == 0x1b {
                    return match b.get(i + 1) {
                        Some(b'\\') => Some(i + 2),
                        Some(_) => Some(i), // broken string sequence; stop before the ESC
                        None => None,
                    };
                }
                i += 1;
            }
            None
        }
        0x1b => {
            // ESC ESC: alt + the following sequence, or alt+escape on its own.
            if b.len() == 2 {
                return None;
            }
            if b[2] == b'[' || b[2] == b'O' {
                return sequence_len(&s[1..]).map(|n| n + 1);
            }
            Some(2)
        }
        _ => Some(1 + s[1..].chars().next().map_or(0, char::len_utf8)),
    }
}

fn csi_len(s: &str, start: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = start;
    // Linux console F-keys: ESC [ [ A..E
    if b.get(i) == Some(&b'[') {
        return s[i + 1..].chars().next().map(|c| i + 1 + c.len_utf8());
    }
    while i < b.len() {
        let c = b[i];
        // rxvt's shifted keys end in '$' (an intermediate byte elsewhere).
        if c == b'$' && i > start && b[start..i].iter().all(u8::is_ascii_digit) {
            return Some(i + 1);
        }
        if (0x40..=0x7e).contains(&c) {
            return Some(i + 1);
        }
        if !(0x20..=0x3f).contains(&c) {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Key;

    #[test]
    fn colour_reports_are_read_with_either_ending_and_any_digit_count() {
        let mut p = InputParser::new();
        let events = p.feed(b"\x1b]11;rgb:ffff/ffff/f0f0\x07\x1b]10;rgb:00/80/ff\x1b\\x");
        assert_eq!(
            events[..2],
            [
                InputEvent::TerminalColor {
                    slot: 11,
                    rgb: (255, 255, 240)
                },
                InputEvent::TerminalColor {
                    slot: 10,
                    rgb: (0, 128, 255)
                },
            ]
        );
        assert!(matches!(&events[2], InputEvent::Key(_)));
        assert_eq!(parse_color_reply("\x1b]11;rgb:zz/00/00\x07"), None);
        assert_eq!(parse_color_reply("\x1b]12;rgb:00/00/00\x07"), None);
    }

    #[test]
    fn palette_replies_and_the_device_attributes_answer_are_read() {
        let mut p = InputParser::new();
        let events = p.feed(b"\x1b]4;1;rgb:cccc/0000/0000\x1b\\\x1b]4;15;rgb:ff/ff/ff\x07\x1b[?62;22c");
        assert_eq!(
            events,
            [
                InputEvent::PaletteColor {
                    index: 1,
                    rgb: (204, 0, 0)
                },
                InputEvent::PaletteColor {
                    index: 15,
                    rgb: (255, 255, 255)
                },
                InputEvent::DeviceAttributes,
            ]
        );
        assert_eq!(parse_color_reply("\x1b]4;16;rgb:00/00/00\x07"), None);
    }

    fn keys(events: &[InputEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                InputEvent::Key(k) => k.id().to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn splits_batched_input() {
        let mut p = InputParser::new();
        let ev = p.feed(b"ab\x1b[A\x03\x1b[1;5Cz");
        assert_eq!(keys(&ev), ["a", "b", "up", "ctrl+c", "ctrl+right", "z"]);
        assert!(!p.has_pending());
    }

    #[test]
    fn waits_for_split_sequences() {
        let mut p = InputParser::new();
        assert!(p.feed(b"\x1b[1;").is_empty());
        assert!(p.has_pending());
        assert_eq!(keys(&p.feed(b"5A")), ["ctrl+up"]);
        // A lone ESC is only Escape after the timeout flush.
        assert!(p.feed(b"\x1b").is_empty());
        assert_eq!(keys(&p.flush()), ["escape"]);
    }

    #[test]
    fn utf8_split_across_reads() {
        let mut p = InputParser::new();
        let bytes = "é日".as_bytes();
        assert!(p.feed(&bytes[..1]).is_empty());
        let ev = p.feed(&bytes[1..]);
        assert_eq!(
            ev,
            vec![
                InputEvent::Key(KeyEvent::plain(Key::Char('é'))),
                InputEvent::Key(KeyEvent::plain(Key::Char('日')))
            ]
        );
    }

    #[test]
    fn bracketed_paste() {
        let mut p = InputParser::new();
        let ev = p.feed(b"x\x1b[200~line1\r\nline2\x1b[20");
        assert_eq!(keys(&ev), ["x"]);
        let ev = p.feed(b"1~y");
        assert_eq!(ev[0], InputEvent::Paste("line1\nline2".into()));
        assert_eq!(keys(&ev[1..]), ["y"]);
    }

    #[test]
    fn terminal_replies() {
        let mut p = InputParser::new();
        assert_eq!(p.feed(b"\x1b[?7u"), vec![InputEvent::KittyFlags(7)]);
        assert_eq!(
            p.feed(b"\x1b[?997;2n\x1b[?997;1n"),
            vec![
                InputEvent::ColorScheme { dark: false },
                InputEvent::ColorScheme { dark: true }
            ]
        );
        assert_eq!(
            p.feed(b"\x1b[6;18;9t"),
            vec![InputEvent::CellSize { width: 9, height: 18 }]
        );
    }

    #[test]
    fn mouse_reports_and_focus() {
        let mut p = InputParser::new();
        let ev = p.feed(b"\x1b[<64;10;5M\x1b[<65;1;1M\x1b[<0;3;4M\x1b[<32;6;4M\x1b[<0;7;4m\x1b[<72;1;1M");
        let kinds: Vec<_> = ev
            .iter()
            .map(|e| match e {
                InputEvent::Mouse(m) => (m.kind, m.column, m.row, m.alt),
                other => panic!("not a mouse event: {other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (MouseKind::WheelUp, 9, 4, false),
                (MouseKind::WheelDown, 0, 0, false),
                (MouseKind::Press(0), 2, 3, false),
                (MouseKind::Drag(0), 5, 3, false),
                (MouseKind::Release(0), 6, 3, false),
                (MouseKind::WheelUp, 0, 0, true),
            ]
        );
        assert_eq!(
            p.feed(b"\x1b[I\x1b[O"),
            vec![InputEvent::Focus(true), InputEvent::Focus(false)]
        );
        // A broken report is kept, not mistaken for keys.
        assert_eq!(p.feed(b"\x1b[<1;2M"), vec![InputEvent::Unknown("\x1b[<1;2M".into())]);
    }

    #[test]
    fn legacy_mouse_reports_are_mouse_events_not_typing() {
        let mut p = InputParser::new();
        // Wheel up at (10, 5), wheel down with Alt at (1, 1), a press at (3, 4), a release.
        let ev = p.feed(b"\x1b[M`*%\x1b[Mi!!\x1b[M #$\x1b[M##$x");
        let got: Vec<_> = ev
            .iter()
            .map(|e| match e {
                InputEvent::Mouse(m) => format!("{:?} {} {} {}", m.kind, m.column, m.row, m.alt),
                InputEvent::Key(k) => format!("key {k:?}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            &got[..4],
            [
                "WheelUp 9 4 false",
                "WheelDown 0 0 true",
                "Press(0) 2 3 false",
                "Release(3) 2 3 false"
            ]
        );
        assert_eq!(keys(&ev[4..]), ["x"]);
        // Cut short, the report waits for its last bytes.
        assert!(p.feed(b"\x1b[M`").is_empty());
        assert!(matches!(p.feed(b"!!")[..], [InputEvent::Mouse(_)]));
    }

    #[test]
    fn alt_sequences() {
        let mut p = InputParser::new();
        assert_eq!(
            keys(&p.feed(b"\x1bb\x1b\r\x1b\x1b[D")),
            ["alt+b", "alt+enter", "alt+left"]
        );
        assert_eq!(keys(&p.feed(b"\x1b[5$\x1b[3^")), ["shift+pageUp", "ctrl+delete"]);
    }

    #[test]
    fn multibyte_where_a_final_byte_belongs_is_unknown_not_a_panic() {
        let mut p = InputParser::new();
        let ev = p.feed("\x1b[[é".as_bytes());
        assert_eq!(ev, vec![InputEvent::Unknown("\x1b[[é".into())]);
        assert_eq!(parse_key("\x1b[1;5€", false), None);
        assert_eq!(keys(&p.feed("\x1b[Aé".as_bytes())), ["up", "é"]);
    }

    /// A bounded, seeded fuzz run: random mixes of escape-sequence pieces and multi-byte text,
    /// fed in random chunks. Nothing may panic, and every byte that is not part of a
    /// recognised key comes back (as text or in an `Unknown` event).
    /// `PI_FUZZ_ITERS=1000000 cargo test --release -p pi-tui random_input` runs it longer.
    #[test]
    fn random_input_never_panics_and_loses_nothing() {
        const PIECES: &[&str] = &[
            "\x1b", "[", "[", "O", "?", ";", ":", "1", "5", "27", "200~", "201~", "~", "u", "$", "^", "A", "Z", "t",
            "é", "€", "😀", "a", "\r", "\n", "\x7f", "\x07", "\\", "]", "P",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let iters: usize = std::env::var("PI_FUZZ_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5_000);
        for _ in 0..iters {
            let len = 1 + (next() % 12) as usize;
            let text: String = (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let bytes = text.as_bytes();
            // Every substring at char boundaries goes through the key parser directly too.
            for (i, _) in text.char_indices() {
                let _ = parse_key(&text[i..], next().is_multiple_of(2));
            }
            let mut p = InputParser::new();
            p.set_kitty_active(next().is_multiple_of(2));
            let mut events = Vec::new();
            let mut pos = 0;
            while pos < bytes.len() {
                let step = 1 + (next() % 4) as usize;
                let end = (pos + step).min(bytes.len());
                events.extend(p.feed(&bytes[pos..end]));
                pos = end;
            }
            events.extend(p.flush());
            assert!(!p.has_pending(), "{text:?} left bytes pending after flush");
            for e in &events {
                if let InputEvent::Unknown(u) = e {
                    assert!(
                        text.contains(u.as_str()),
                        "{text:?}: unknown {u:?} is not from the input"
                    );
                }
            }
        }
    }
}
