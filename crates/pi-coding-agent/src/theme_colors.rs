//! An extension's `theme.colors` and `theme.mode`: every token as a colour object
//! (`{kind:"indexed", index}`, `{kind:"rgb", r, g, b}` or `{kind:"oklch", l, c, h}`) the
//! way pi 1.6's Theme reports them, and the colour depth its escape sequences use.

use serde_json::{json, Map, Value};

use crate::resources::oklab::{rgb_to_oklch, Rgb};
use crate::resources::themes::{Theme, ThemeColor, OPTIONAL_TOKENS, THEME_TOKENS};
use crate::ui_theme::UiTheme;

/// The colour depth pi writes theme colours in: a `terminal.trueColor` setting decides,
/// else `PI_TRUE_COLOR` (`1`/`0`), else what the environment says of the terminal.
pub fn truecolor(setting: Option<bool>) -> bool {
    if let Some(on) = setting {
        return on;
    }
    match std::env::var("PI_TRUE_COLOR").ok().as_deref() {
        Some("1") => true,
        Some("0") => false,
        _ => pi_tui::components::Capabilities::detect().true_color,
    }
}

/// `"truecolor"` or `"256color"`, as a Theme's `mode` names the depth.
pub fn mode_name(truecolor: bool) -> &'static str {
    if truecolor {
        "truecolor"
    } else {
        "256color"
    }
}

/// A concrete colour as pi's colour objects describe it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Concrete {
    Indexed(u8),
    Rgb(u8, u8, u8),
    Oklch(f64, f64, f64),
}

impl Concrete {
    fn to_json(self) -> Value {
        match self {
            Concrete::Indexed(index) => json!({"kind": "indexed", "index": index}),
            Concrete::Rgb(r, g, b) => json!({"kind": "rgb", "r": r, "g": g, "b": b}),
            Concrete::Oklch(l, c, h) => json!({"kind": "oklch", "l": l, "c": c, "h": h}),
        }
    }

    fn oklch(self) -> (f64, f64, f64) {
        let rgb = |(r, g, b): (u8, u8, u8)| rgb_to_oklch(Rgb::new(f64::from(r), f64::from(g), f64::from(b)));
        let o = match self {
            Concrete::Oklch(l, c, h) => return (l, c, h),
            Concrete::Indexed(i) => rgb(pi_tui::style::xterm_rgb(i)),
            Concrete::Rgb(r, g, b) => rgb((r, g, b)),
        };
        (o.l, o.c, o.h)
    }

    /// `amount` of the way from this colour to `other` in OKLCH, the hue turning the short
    /// way (a grey takes the other colour's hue).
    fn mix(self, other: Concrete, amount: f64) -> Concrete {
        let (l1, c1, h1) = self.oklch();
        let (l2, c2, h2) = other.oklch();
        let first = if c1 < 1e-7 { h2 } else { h1 };
        let second = if c2 < 1e-7 { first } else { h2 };
        let delta = ((second - first + 540.0) % 360.0) - 180.0;
        let h = first + delta * amount;
        Concrete::Oklch(
            l1 + (l2 - l1) * amount,
            c1 + (c2 - c1) * amount,
            ((h % 360.0) + 360.0) % 360.0,
        )
    }
}

/// Every token's colour object. Tokens without a colour of their own take the terminal's
/// reported default colours (else a guess for the theme's appearance); faint tokens are
/// their colour mixed 40% toward the background. Keys come in pi's order: the coloured
/// foregrounds, the coloured backgrounds, then the default ones.
pub fn colors(theme: &UiTheme) -> Value {
    let reported = crate::resources::system_theme::reported();
    let (guess_fg, guess_bg) = if theme.appearance() == "light" {
        ((0, 0, 0), (255, 255, 255))
    } else {
        ((229, 229, 231), (0, 0, 0))
    };
    let (fr, fgc, fb) = reported.foreground.unwrap_or(guess_fg);
    let (br, bgc, bb) = reported.background.unwrap_or(guess_bg);
    let foreground = Concrete::Rgb(fr, fgc, fb);
    let background = Concrete::Rgb(br, bgc, bb);
    let tokens = THEME_TOKENS.iter().chain(OPTIONAL_TOKENS.iter().map(|(t, _)| t));
    let (mut bgs, mut fgs): (Vec<&str>, Vec<&str>) = tokens.copied().partition(|t| Theme::is_background(t));
    // The system theme lists its coloured tokens in the order of its palette slots.
    if theme.name() == crate::resources::themes::SYSTEM_THEME {
        let order = |t: &&str| crate::resources::themes::system_slot_position(t).unwrap_or(usize::MAX);
        fgs.sort_by_key(order);
        bgs.sort_by_key(order);
    }
    let concrete = |t: &str| match theme.theme.color(t) {
        ThemeColor::Default => None,
        ThemeColor::Index(i) => Some(Concrete::Indexed(i)),
        ThemeColor::Rgb(r, g, b) => Some(Concrete::Rgb(r, g, b)),
    };
    let mut out = Map::new();
    let mut put = |t: &str, c: Concrete| {
        let c = if theme.fg(t).dim { c.mix(background, 0.4) } else { c };
        out.insert(t.to_string(), c.to_json());
    };
    for t in fgs.iter().chain(&bgs) {
        if let Some(c) = concrete(t) {
            put(t, c);
        }
    }
    for t in &fgs {
        if concrete(t).is_none() {
            put(t, foreground);
        }
    }
    for t in &bgs {
        if concrete(t).is_none() {
            put(t, background);
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_entries_have_their_xterm_values() {
        assert_eq!(pi_tui::style::xterm_rgb(1), (128, 0, 0));
        assert_eq!(pi_tui::style::xterm_rgb(23), (0, 95, 95));
        assert_eq!(pi_tui::style::xterm_rgb(232), (8, 8, 8));
        assert_eq!(pi_tui::style::xterm_rgb(255), (238, 238, 238));
    }

    #[test]
    fn a_faint_grey_is_mixed_toward_the_background_keeping_its_hue() {
        let grey = Concrete::Rgb(229, 229, 231);
        let Concrete::Oklch(l, c, h) = grey.mix(Concrete::Rgb(0, 0, 0), 0.4) else {
            panic!("an oklch colour")
        };
        let (l0, c0, h0) = grey.oklch();
        assert!((l - l0 * 0.6).abs() < 1e-12 && (c - c0 * 0.6).abs() < 1e-12);
        assert!((h - h0).abs() < 1e-9);
    }

    #[test]
    fn every_token_has_a_colour_object() {
        let theme = UiTheme::new(crate::resources::themes::builtin_theme("dark").unwrap());
        let colors = colors(&theme);
        let map = colors.as_object().unwrap();
        assert_eq!(map.len(), THEME_TOKENS.len() + OPTIONAL_TOKENS.len());
        assert!(map.values().all(|c| c["kind"].is_string()));
    }
}
