//! The animated brand colours of pi 1.6's partner providers in the `/login` lists: Radius's
//! name streams its four logo colours left to right, OpenRouter's name breathes between its
//! brand colour and a brighter one. Only the highlighted row is animated, and the app redraws
//! it every [`FRAME`] only while such a row is shown.

use std::time::Duration;

use pi_coding_agent::resources::oklab::{oklch_to_rgb, rgb_to_oklch, Oklch, Rgb};
use pi_tui::style::{Color, Style};

/// How often an animated row is drawn again.
pub const FRAME: Duration = Duration::from_millis(50);

/// The four colours of the Radius logo, in the order they move across the text.
const RADIUS_COLORS: [(u8, u8, u8); 4] = [
    (0x4d, 0x9a, 0xbf),
    (0x83, 0xcc, 0xd2),
    (0xf1, 0xbe, 0x57),
    (0xf0, 0x90, 0x82),
];
/// Characters per colour band.
const BAND: f64 = 4.0;
/// How fast the bands move, in characters per second.
const SPEED: f64 = 10.0;

/// OpenRouter's glow on dark themes (its lime) and on light ones (violet: lime is unreadable
/// on white): the base colour and the peak it brightens to.
const GLOW_DARK: ((u8, u8, u8), (u8, u8, u8)) = ((0xc6, 0xf2, 0x43), (0xef, 0xff, 0xb0));
const GLOW_LIGHT: ((u8, u8, u8), (u8, u8, u8)) = ((0x5d, 0x32, 0xe1), (0x8f, 0x6b, 0xff));
/// One breath of the glow, in milliseconds.
const GLOW_PERIOD_MS: f64 = 2400.0;

/// A provider's animated style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Brand {
    Radius,
    OpenRouter,
}

impl Brand {
    /// The animated style of a provider, if it has one.
    pub fn of(provider: &str) -> Option<Brand> {
        match provider {
            "radius" => Some(Brand::Radius),
            "openrouter" => Some(Brand::OpenRouter),
            _ => None,
        }
    }

    /// `text` painted as it looks `elapsed` after the list opened; `light` is the theme's
    /// appearance. The foreground is reset after it.
    pub fn paint(self, text: &str, elapsed: Duration, light: bool) -> String {
        let ms = elapsed.as_secs_f64() * 1000.0;
        match self {
            Brand::Radius => radius_shimmer(text, ms),
            Brand::OpenRouter => openrouter_glow(text, ms, light),
        }
    }
}

fn fg((r, g, b): (u8, u8, u8)) -> String {
    Style {
        fg: Some(Color::Rgb(r, g, b)),
        ..Style::default()
    }
    .open()
}

/// The colour of each character of a Radius name at `ms`.
fn radius_colors(chars: usize, ms: f64) -> Vec<(u8, u8, u8)> {
    let n = RADIUS_COLORS.len();
    let cycle = n as f64 * BAND;
    let offset = ms / 1000.0 * SPEED;
    (0..chars)
        .map(|index| {
            let position = ((index as f64 - offset) % cycle + cycle) % cycle;
            let band = ((position / BAND).floor() as usize).min(n - 1);
            let t = position / BAND - band as f64;
            // Smoothstep: each band stays recognisable and still blends into the next.
            let amount = t * t * (3.0 - 2.0 * t);
            mix_srgb(RADIUS_COLORS[band], RADIUS_COLORS[(band + 1) % n], amount)
        })
        .collect()
}

fn radius_shimmer(text: &str, ms: f64) -> String {
    let colors = radius_colors(text.chars().count(), ms);
    let mut out = String::new();
    for (c, color) in text.chars().zip(colors) {
        out.push_str(&fg(color));
        out.push(c);
    }
    out.push_str("\x1b[39m");
    out
}

/// OpenRouter's colour at `ms`: the base colour at the start of each breath, the peak halfway.
fn glow_color(ms: f64, light: bool) -> (u8, u8, u8) {
    let (base, peak) = if light { GLOW_LIGHT } else { GLOW_DARK };
    let amount = (1.0 - (2.0 * std::f64::consts::PI * ms / GLOW_PERIOD_MS).cos()) / 2.0;
    mix_oklch(base, peak, amount)
}

fn openrouter_glow(text: &str, ms: f64, light: bool) -> String {
    format!("{}{text}\x1b[39m", fg(glow_color(ms, light)))
}

fn channel(v: f64) -> u8 {
    v.round().clamp(0.0, 255.0) as u8
}

fn mix_srgb(a: (u8, u8, u8), b: (u8, u8, u8), amount: f64) -> (u8, u8, u8) {
    let mix = |x: u8, y: u8| channel(f64::from(x) + (f64::from(y) - f64::from(x)) * amount);
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// `amount` of the way from `a` to `b` in OKLCH, the hue turning the short way.
fn mix_oklch(a: (u8, u8, u8), b: (u8, u8, u8), amount: f64) -> (u8, u8, u8) {
    let lch = |(r, g, b): (u8, u8, u8)| rgb_to_oklch(Rgb::new(f64::from(r), f64::from(g), f64::from(b)));
    let (x, y) = (lch(a), lch(b));
    let first = if x.c < 1e-7 { y.h } else { x.h };
    let second = if y.c < 1e-7 { first } else { y.h };
    let delta = ((second - first + 540.0) % 360.0) - 180.0;
    let rgb = oklch_to_rgb(Oklch {
        l: x.l + (y.l - x.l) * amount,
        c: x.c + (y.c - x.c) * amount,
        h: first + delta * amount,
    });
    (channel(rgb.r), channel(rgb.g), channel(rgb.b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_partners_are_animated() {
        assert_eq!(Brand::of("radius"), Some(Brand::Radius));
        assert_eq!(Brand::of("openrouter"), Some(Brand::OpenRouter));
        assert_eq!(Brand::of("anthropic"), None);
    }

    #[test]
    fn radius_bands_are_four_characters_wide_and_move_ten_characters_a_second() {
        let at0 = radius_colors(16, 0.0);
        // Each band starts on its logo colour.
        for (band, color) in RADIUS_COLORS.iter().enumerate() {
            assert_eq!(at0[band * 4], *color);
        }
        // Within a band the colour blends toward the next one (smoothstep: halfway at 2).
        assert_eq!(at0[2], mix_srgb(RADIUS_COLORS[0], RADIUS_COLORS[1], 0.5));
        assert_ne!(at0[1], RADIUS_COLORS[0]);
        // 100 ms later everything moved one character to the right.
        let later = radius_colors(17, 100.0);
        assert_eq!(&later[1..17], &at0[..16]);
        // A whole cycle (16 characters at 10 per second) later it looks the same again.
        assert_eq!(radius_colors(16, 1600.0), at0);
    }

    #[test]
    fn openrouter_breathes_from_its_colour_to_the_peak_and_back() {
        assert_eq!(glow_color(0.0, false), (0xc6, 0xf2, 0x43));
        assert_eq!(glow_color(1200.0, false), (0xef, 0xff, 0xb0));
        assert_eq!(glow_color(2400.0, false), (0xc6, 0xf2, 0x43));
        assert_eq!(glow_color(0.0, true), (0x5d, 0x32, 0xe1));
        assert_eq!(glow_color(1200.0, true), (0x8f, 0x6b, 0xff));
        let quarter = glow_color(600.0, false);
        assert!(quarter != glow_color(0.0, false) && quarter != glow_color(1200.0, false));
    }

    #[test]
    fn painted_names_keep_their_text_and_reset_the_colour() {
        let s = Brand::Radius.paint("Sign in with Radius", Duration::from_millis(330), false);
        assert_eq!(pi_tui::strip_ansi(&s), "Sign in with Radius");
        assert!(s.ends_with("\x1b[39m"));
        let s = Brand::OpenRouter.paint("OpenRouter", Duration::ZERO, false);
        assert_eq!(pi_tui::strip_ansi(&s), "OpenRouter");
    }
}
