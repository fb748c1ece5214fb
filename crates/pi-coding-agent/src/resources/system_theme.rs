//! The `system` theme's colours from what the terminal reported of its own (OSC 10 / 11 and
//! the 16 ANSI colours of OSC 4): each coloured token takes the hue of one palette colour,
//! moved toward white on a dark background (black on a light one) until it reads against the
//! background; panels are the background tinted toward their colour; body text keeps the
//! terminal's foreground when that reaches 4.5:1. Without a reported background the theme
//! stays ANSI indices and default colours (see [`super::themes::system_theme`]).

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::themes::ThemeColor;

pub type Rgb = (u8, u8, u8);

/// What the terminal reported of its colours so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TerminalColors {
    pub foreground: Option<Rgb>,
    pub background: Option<Rgb>,
    pub palette: [Option<Rgb>; 16],
}

static REPORTED: Mutex<TerminalColors> = Mutex::new(TerminalColors {
    foreground: None,
    background: None,
    palette: [None; 16],
});

/// Set when a report changed what is known, until [`take_changed`].
static CHANGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether reports changed the known colours since the last call.
pub fn take_changed() -> bool {
    CHANGED.swap(false, std::sync::atomic::Ordering::Relaxed)
}

/// Which reported colour: the foreground, the background, or palette colour N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reported {
    Foreground,
    Background,
    Palette(u8),
}

/// Record a colour the terminal reported; true when that changed what was known.
pub fn set_reported(which: Reported, rgb: Rgb) -> bool {
    let mut colors = REPORTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let slot = match which {
        Reported::Foreground => &mut colors.foreground,
        Reported::Background => &mut colors.background,
        Reported::Palette(i) => match colors.palette.get_mut(usize::from(i)) {
            Some(slot) => slot,
            None => return false,
        },
    };
    let changed = slot.replace(rgb) != Some(rgb);
    if changed {
        CHANGED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    changed
}

/// Record the colour reports among terminal input events; true when any changed what was
/// known.
pub fn record(events: &[pi_tui::InputEvent]) -> bool {
    let mut changed = false;
    for event in events {
        changed |= match *event {
            pi_tui::InputEvent::TerminalColor { slot: 10, rgb } => set_reported(Reported::Foreground, rgb),
            pi_tui::InputEvent::TerminalColor { slot: 11, rgb } => set_reported(Reported::Background, rgb),
            pi_tui::InputEvent::PaletteColor { index, rgb } => set_reported(Reported::Palette(index), rgb),
            _ => false,
        };
    }
    changed
}

/// The colours reported so far.
pub fn reported() -> TerminalColors {
    REPORTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// WCAG 2 relative luminance.
pub(crate) fn luminance((r, g, b): Rgb) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG 2 contrast ratio, 1 to 21.
pub fn contrast(a: Rgb, b: Rgb) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `a` moved a fraction `t` of the way to `b`.
fn mix(a: Rgb, b: Rgb, t: f64) -> Rgb {
    let ch = |x: u8, y: u8| {
        (f64::from(x) + (f64::from(y) - f64::from(x)) * t)
            .round()
            .clamp(0.0, 255.0) as u8
    };
    (ch(a.0, b.0), ch(a.1, b.1), ch(a.2, b.2))
}

const WHITE: Rgb = (255, 255, 255);
const BLACK: Rgb = (0, 0, 0);

/// `color`, moved toward white (`dark` background) or black as little as needed to reach
/// `min` contrast on every surface.
fn readable(color: Rgb, surfaces: &[Rgb], min: f64, dark: bool) -> Rgb {
    let meets = |c: Rgb| surfaces.iter().all(|s| contrast(c, *s) >= min);
    if meets(color) {
        return color;
    }
    let end = if dark { WHITE } else { BLACK };
    let (mut low, mut high) = (0.0, 1.0);
    for _ in 0..16 {
        let mid = (low + high) / 2.0;
        if meets(mix(color, end, mid)) {
            high = mid;
        } else {
            low = mid;
        }
    }
    mix(color, end, high)
}

/// The xterm defaults, for palette colours the terminal did not report.
const XTERM: [Rgb; 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

/// How a token is drawn.
enum Role {
    /// Body text: the terminal's foreground when it reads well enough.
    Body,
    /// A neutral grey between background and foreground (share of the way, minimum contrast).
    Grey(f64, f64),
    /// A palette colour, readable on the background.
    Colour(u8),
    /// A panel: the background tinted toward a palette colour (or the foreground, `None`).
    Panel(Option<u8>, f64),
}

fn role(token: &str) -> Role {
    match token {
        "text" | "userMessageText" | "toolTitle" | "searchMatchText" | "customMessageText" => Role::Body,
        "dim" | "borderMuted" | "scrollbarTrack" | "mdHr" | "mdCodeBlockBorder" | "mdQuoteBorder" => {
            Role::Grey(0.45, 2.0)
        }
        "muted" | "thinkingText" | "toolOutput" | "mdLinkUrl" | "mdQuote" | "toolDiffContext" | "syntaxComment"
        | "syntaxOperator" | "syntaxPunctuation" | "scrollbarThumb" | "thinkingOff" => Role::Grey(0.7, 3.0),
        "userMessageBg" => Role::Panel(Some(4), 0.12),
        "customMessageBg" => Role::Panel(Some(5), 0.12),
        "toolPendingBg" => Role::Panel(None, 0.06),
        "toolSuccessBg" => Role::Panel(Some(2), 0.1),
        "toolErrorBg" => Role::Panel(Some(1), 0.12),
        "selectedBg" => Role::Panel(Some(4), 0.25),
        "searchMatchBg" => Role::Panel(Some(3), 0.35),
        other => match super::themes::system_slot(other) {
            Some(slot) if slot < 16 => Role::Colour(slot),
            _ => Role::Grey(0.7, 3.0),
        },
    }
}

/// Every token's colour from the reported colours, or `None` without a background.
pub fn derive(colors: &TerminalColors, tokens: &[&str]) -> Option<BTreeMap<String, ThemeColor>> {
    let bg = colors.background?;
    let dark = contrast(WHITE, bg) >= contrast(BLACK, bg);
    let fg = colors
        .foreground
        .unwrap_or(if dark { (220, 220, 220) } else { (30, 30, 30) });
    let slot = |i: u8| colors.palette[usize::from(i)].unwrap_or(XTERM[usize::from(i)]);
    let panel = |of: Option<u8>, amount: f64| mix(bg, of.map_or(fg, slot), amount);
    let rgb = |c: Rgb| ThemeColor::Rgb(c.0, c.1, c.2);
    // Text is drawn on the panels too: it must read on the most tinted of them.
    let text_surfaces = [bg, panel(Some(4), 0.25), panel(Some(4), 0.12), panel(Some(1), 0.12)];
    let out = tokens
        .iter()
        .map(|token| {
            let color = match role(token) {
                Role::Body => {
                    if text_surfaces.iter().all(|s| contrast(fg, *s) >= 4.5) {
                        ThemeColor::Default
                    } else {
                        rgb(readable(fg, &text_surfaces, 4.5, dark))
                    }
                }
                Role::Grey(share, min) => rgb(readable(mix(bg, fg, share), &[bg], min, dark)),
                Role::Colour(i) => rgb(readable(slot(i), &[bg, panel(Some(4), 0.12)], 3.0, dark)),
                Role::Panel(of, amount) => rgb(panel(of, amount)),
            };
            (token.to_string(), color)
        })
        .collect();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as_rgb(c: &ThemeColor) -> Rgb {
        match c {
            ThemeColor::Rgb(r, g, b) => (*r, *g, *b),
            other => panic!("not a colour: {other:?}"),
        }
    }

    #[test]
    fn nothing_is_derived_without_a_background() {
        assert!(derive(&TerminalColors::default(), &["accent"]).is_none());
    }

    #[test]
    fn colours_take_the_palette_hue_and_read_on_the_background() {
        let mut colors = TerminalColors {
            foreground: Some((230, 230, 230)),
            background: Some((20, 20, 30)),
            ..Default::default()
        };
        colors.palette[1] = Some((120, 20, 20)); // a dark red that needs lifting
        let out = derive(&colors, &["error", "text", "dim", "toolErrorBg"]).expect("derived");
        let error = as_rgb(&out["error"]);
        assert!(contrast(error, (20, 20, 30)) >= 3.0, "{error:?}");
        assert!(error.0 > error.1 && error.0 > error.2, "still red: {error:?}");
        // A bright foreground on a dark background is kept as the terminal's own.
        assert_eq!(out["text"], ThemeColor::Default);
        let dim = as_rgb(&out["dim"]);
        assert!(contrast(dim, (20, 20, 30)) >= 2.0 && luminance(dim) < luminance((230, 230, 230)));
        // The error panel is the background tinted red.
        let panel = as_rgb(&out["toolErrorBg"]);
        assert!(panel.0 > 20 && panel.0 < 60, "{panel:?}");
    }

    #[test]
    fn a_light_background_darkens_and_a_weak_foreground_is_replaced() {
        let colors = TerminalColors {
            foreground: Some((200, 200, 200)), // too faint on white
            background: Some((255, 255, 255)),
            ..Default::default()
        };
        let out = derive(&colors, &["text", "warning"]).expect("derived");
        let text = as_rgb(&out["text"]);
        assert!(contrast(text, WHITE) >= 4.5, "{text:?}");
        // Yellow (xterm's, not reported) is darkened until it reads on white.
        let warning = as_rgb(&out["warning"]);
        assert!(contrast(warning, WHITE) >= 3.0, "{warning:?}");
    }

    #[test]
    fn reports_are_recorded_once() {
        assert!(set_reported(Reported::Palette(3), (1, 2, 3)));
        assert!(!set_reported(Reported::Palette(3), (1, 2, 3)));
        assert!(!set_reported(Reported::Palette(16), (1, 2, 3)));
        assert_eq!(reported().palette[3], Some((1, 2, 3)));
    }
}
