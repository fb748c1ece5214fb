//! Text styles (colours and attributes) as SGR sequences that open and close only what they
//! set, so styled pieces nest inside an outer background.

/// A terminal colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// One of the 16 basic colours (0-7 normal, 8-15 bright).
    Basic(u8),
    /// 256-colour palette index.
    Indexed(u8),
    Rgb(u8, u8, u8),
}

impl Color {
    /// Parse `#rrggbb` or a 0-255 palette index.
    pub fn parse(s: &str) -> Option<Color> {
        let s = s.trim();
        if let Some(hex) = s.strip_prefix('#') {
            if hex.len() == 6 {
                let v = u32::from_str_radix(hex, 16).ok()?;
                return Some(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
            }
            return None;
        }
        s.parse::<u8>().ok().map(Color::Indexed)
    }

    fn write_sgr(self, background: bool, out: &mut String) {
        use std::fmt::Write as _;
        let _ = match self {
            Color::Basic(n) => {
                let base = if background { 40 } else { 30 };
                let n = u32::from(n.min(15));
                if n < 8 {
                    write!(out, "{}", base + n)
                } else {
                    write!(out, "{}", base + 60 + (n - 8))
                }
            }
            Color::Indexed(n) => write!(out, "{};5;{n}", if background { 48 } else { 38 }),
            Color::Rgb(r, g, b) if truecolor() => write!(out, "{};2;{r};{g};{b}", if background { 48 } else { 38 }),
            Color::Rgb(r, g, b) => write!(out, "{};5;{}", if background { 48 } else { 38 }, nearest_256(r, g, b)),
        };
    }
}

/// Whether the terminal takes 24-bit colours; else they are sent as the nearest of the 256.
static TRUECOLOR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Say whether the terminal takes 24-bit colours (see `components::Capabilities`); without
/// them, RGB colours are sent as the nearest 256-colour palette entry, as pi does.
pub fn set_truecolor(on: bool) {
    TRUECOLOR.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether RGB colours are written as 24-bit ones (see [`set_truecolor`]).
pub fn is_truecolor() -> bool {
    truecolor()
}

fn truecolor() -> bool {
    TRUECOLOR.load(std::sync::atomic::Ordering::Relaxed)
}

/// The levels of each channel in the xterm 6×6×6 colour cube (entries 16 to 231).
const CUBE_LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The sRGB value of an xterm 256-colour entry: the 16 basic colours as xterm's defaults, the
/// 6×6×6 cube and the 24-step grey ramp (8 to 238).
pub fn xterm_rgb(index: u8) -> (u8, u8, u8) {
    const BASIC: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (128, 0, 0),
        (0, 128, 0),
        (128, 128, 0),
        (0, 0, 128),
        (128, 0, 128),
        (0, 128, 128),
        (192, 192, 192),
        (128, 128, 128),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (0, 0, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match index {
        0..=15 => BASIC[usize::from(index)],
        16..=231 => {
            let i = usize::from(index - 16);
            (CUBE_LEVELS[i / 36], CUBE_LEVELS[(i % 36) / 6], CUBE_LEVELS[i % 6])
        }
        _ => {
            let grey = 8 + (index - 232) * 10;
            (grey, grey, grey)
        }
    }
}

/// The xterm 256-colour entry nearest an RGB colour: the 6×6×6 cube (levels 0, 95, 135, 175,
/// 215, 255) or, for colours that are nearly grey, the 24-step grey ramp (8 to 238), by a
/// distance weighted for how bright each channel looks.
pub fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = CUBE_LEVELS;
    let level = |c: u8| {
        (0..6)
            .min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(c)).abs())
            .unwrap_or(0)
    };
    let dist = |(r1, g1, b1): (u8, u8, u8), (r2, g2, b2): (u8, u8, u8)| {
        let d = |a: u8, b: u8| f64::from(a) - f64::from(b);
        d(r1, r2).powi(2) * 0.299 + d(g1, g2).powi(2) * 0.587 + d(b1, b2).powi(2) * 0.114
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let luma = (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round() as i32;
    let step = (0..24).min_by_key(|&i| (8 + 10 * i - luma).abs()).unwrap_or(0);
    let grey = (8 + 10 * step) as u8;
    let spread = r.max(g).max(b) - r.min(g).min(b);
    if spread < 10 && dist((r, g, b), (grey, grey, grey)) < dist((r, g, b), cube) {
        return 232 + step as u8;
    }
    cube_index as u8
}

/// Foreground, background and attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Style {
    pub fg: Option<Color>,
    pub bg: Option<Color>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub strikethrough: bool,
    pub inverse: bool,
}

impl Style {
    pub const fn new() -> Self {
        Style {
            fg: None,
            bg: None,
            bold: false,
            dim: false,
            italic: false,
            underline: false,
            strikethrough: false,
            inverse: false,
        }
    }
    #[must_use]
    pub const fn fg(mut self, c: Color) -> Self {
        self.fg = Some(c);
        self
    }
    #[must_use]
    pub const fn bg(mut self, c: Color) -> Self {
        self.bg = Some(c);
        self
    }
    #[must_use]
    pub const fn bold(mut self) -> Self {
        self.bold = true;
        self
    }
    #[must_use]
    pub const fn dim(mut self) -> Self {
        self.dim = true;
        self
    }
    #[must_use]
    pub const fn italic(mut self) -> Self {
        self.italic = true;
        self
    }
    #[must_use]
    pub const fn underline(mut self) -> Self {
        self.underline = true;
        self
    }
    #[must_use]
    pub const fn strikethrough(mut self) -> Self {
        self.strikethrough = true;
        self
    }
    #[must_use]
    pub const fn inverse(mut self) -> Self {
        self.inverse = true;
        self
    }

    pub fn is_plain(&self) -> bool {
        *self == Style::default()
    }

    /// The opening sequence ("" for a plain style).
    pub fn open(&self) -> String {
        let mut out = String::new();
        self.write_open(&mut out);
        out
    }

    /// Append the opening sequence to `out` (styles are painted for every rendered line, so
    /// this writes in place instead of building pieces).
    pub fn write_open(&self, out: &mut String) {
        let start = out.len();
        out.push_str("\x1b[");
        let attributes = [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.inverse, "7"),
            (self.strikethrough, "9"),
        ];
        for (_, code) in attributes.iter().filter(|(on, _)| *on) {
            out.push_str(code);
            out.push(';');
        }
        if let Some(c) = self.fg {
            c.write_sgr(false, out);
            out.push(';');
        }
        if let Some(c) = self.bg {
            c.write_sgr(true, out);
            out.push(';');
        }
        if out.len() == start + 2 {
            out.truncate(start);
        } else {
            out.pop();
            out.push('m');
        }
    }

    /// The closing sequence: turns off only what `open` turned on.
    pub fn close(&self) -> String {
        let mut out = String::new();
        self.write_close(&mut out);
        out
    }

    /// Append the closing sequence to `out`.
    pub fn write_close(&self, out: &mut String) {
        let codes = [
            (self.bold || self.dim, "22"),
            (self.italic, "23"),
            (self.underline, "24"),
            (self.inverse, "27"),
            (self.strikethrough, "29"),
            (self.fg.is_some(), "39"),
            (self.bg.is_some(), "49"),
        ];
        let mut first = true;
        for (_, code) in codes.iter().filter(|(on, _)| *on) {
            out.push_str(if first { "\x1b[" } else { ";" });
            out.push_str(code);
            first = false;
        }
        if !first {
            out.push('m');
        }
    }

    /// `text` in this style. Inner closes of the same attributes (from nested styles) are
    /// followed by a re-open so the outer style continues after them.
    pub fn paint(&self, text: &str) -> String {
        if self.is_plain() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len() + 32);
        self.write_open(&mut out);
        if text.contains('\x1b') {
            let open = out.clone();
            let mut body = text.to_string();
            for close in ["\x1b[0m", "\x1b[39m", "\x1b[49m", "\x1b[22m", "\x1b[23m", "\x1b[24m"] {
                if body.contains(close) {
                    body = body.replace(close, &format!("{close}{open}"));
                }
            }
            out.push_str(&body);
        } else {
            out.push_str(text);
        }
        self.write_close(&mut out);
        out
    }
}

/// Pad `line` to `width` and paint it with the background `bg`, re-applying the background
/// after any inner reset so the whole row is covered.
pub fn apply_background(line: &str, width: usize, bg: Color) -> String {
    let padded = crate::width::pad_to_width(line, width);
    Style::new().bg(bg).paint(&padded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xterm_entries_and_the_nearest_entry_agree() {
        assert_eq!(xterm_rgb(1), (128, 0, 0));
        assert_eq!(xterm_rgb(23), (0, 95, 95));
        assert_eq!(xterm_rgb(232), (8, 8, 8));
        assert_eq!(xterm_rgb(255), (238, 238, 238));
        // Every cube and grey entry is its own nearest entry.
        for index in 16..=255u8 {
            let (r, g, b) = xterm_rgb(index);
            assert_eq!(nearest_256(r, g, b), index, "{index}: {:?}", (r, g, b));
        }
    }

    #[test]
    fn open_close() {
        let s = Style::new().fg(Color::Rgb(1, 2, 3)).bold();
        assert_eq!(s.paint("x"), "\x1b[1;38;2;1;2;3mx\x1b[22;39m");
        assert_eq!(Style::new().fg(Color::Basic(9)).open(), "\x1b[91m");
        assert_eq!(Style::new().paint("x"), "x");
    }

    #[test]
    fn background_survives_inner_reset() {
        let line = apply_background("a\x1b[0mb", 4, Color::Indexed(236));
        assert_eq!(line, "\x1b[48;5;236ma\x1b[0m\x1b[48;5;236mb  \x1b[49m");
    }

    #[test]
    fn parse_colors() {
        assert_eq!(Color::parse("#ff0080"), Some(Color::Rgb(255, 0, 128)));
        assert_eq!(nearest_256(255, 0, 128), 16 + 36 * 5 + 2);
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(128, 128, 128), 232 + 12);
        assert_eq!(nearest_256(95, 135, 175), 16 + 36 + 12 + 3);
        assert_eq!(Color::parse("42"), Some(Color::Indexed(42)));
        assert_eq!(Color::parse("nope"), None);
    }
}
