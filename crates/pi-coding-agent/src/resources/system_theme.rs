//! The `system` theme's colours from what the terminal reported of its own (OSC 10 / 11 and
//! the 16 ANSI colours of OSC 4), computed as pi 1.6 computes them. Each token belongs to a
//! colour family (a hue, a saturation range and an ANSI slot) and must reach a contrast level
//! on the surfaces it is drawn on; a level is a curve giving the OKLab lightness needed over
//! a surface's lightness. Hue and saturation come from the family's palette colour (all 16
//! reported) or the family's own hue; lightness from the levels alone. Backgrounds near
//! mid-grey that cannot fit every level relax them as little as possible. Body text keeps the
//! terminal's foreground when that is clearly stronger than muted text, and always reaches
//! 4.5:1. Without a reported background the theme stays ANSI indices and default colours
//! (see [`super::themes::system_theme`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use super::oklab;
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

const WHITE: Rgb = (255, 255, 255);
const BLACK: Rgb = (0, 0, 0);

type Color = oklab::Rgb;

fn color((r, g, b): Rgb) -> Color {
    Color::new(f64::from(r), f64::from(g), f64::from(b))
}

fn wcag(a: Color, b: Color) -> f64 {
    let lum = |c: Color| {
        let lin = |v: f64| {
            let v = v / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b)
    };
    let (la, lb) = (lum(a), lum(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// OKLab lightness, 0-1.
fn lightness(c: Color) -> f64 {
    oklab::rgb_to_oklab(c)[0]
}

/// Body text must reach this WCAG contrast on the surfaces it is drawn on.
const TEXT_CONTRAST: f64 = 4.5;

/// Whether a terminal is dark: by its foreground's direction from the background when text can
/// read that way, else by whether white reads better than black on the background.
pub fn is_dark(background: Rgb, foreground: Option<Rgb>) -> bool {
    let bg = color(background);
    let white = wcag(color(WHITE), bg);
    let black = wcag(color(BLACK), bg);
    if let Some(fg) = foreground {
        let (fl, bl) = (lightness(color(fg)), lightness(bg));
        if (fl - bl).abs() > 0.05 {
            let dark = fl > bl;
            if (if dark { white } else { black }) >= TEXT_CONTRAST {
                return dark;
            }
        }
    }
    white >= black
}

/// A colour family: its own hue, its saturation at mid lightness (`max`) and at black and
/// white (`min`), and the ANSI slot whose colour it takes.
#[derive(Clone, Copy)]
struct Family {
    hue: f64,
    min: f64,
    max: f64,
    slot: usize,
}

const fn fam(hue: f64, min: f64, max: f64, slot: usize) -> Family {
    Family { hue, min, max, slot }
}

const NEUTRAL: Family = fam(231.49, 0.02, 0.08, 8);
const BLUE: Family = fam(231.49, 0.1, 0.68, 4);
const GREEN: Family = fam(158.68, 0.1, 0.76, 2);
const RED: Family = fam(20.0, 0.1, 0.92, 1);
const YELLOW: Family = fam(82.36, 0.5, 1.0, 3);
const ORANGE: Family = fam(52.0, 0.12, 0.85, 3);
const VIOLET: Family = fam(295.0, 0.2, 0.6, 5);
const CALAMINE: Family = fam(202.43, 0.1, 0.74, 6);

/// Every token with its family and, where it differs from the family's, its palette slot.
const TOKENS: [(&str, Family, Option<usize>); 56] = [
    ("selectedBg", BLUE, None),
    ("searchMatchBg", ORANGE, Some(3)),
    ("userMessageBg", BLUE, None),
    ("customMessageBg", VIOLET, None),
    ("toolPendingBg", NEUTRAL, None),
    ("toolSuccessBg", GREEN, None),
    ("toolErrorBg", RED, None),
    ("text", NEUTRAL, None),
    ("userMessageText", NEUTRAL, None),
    ("customMessageText", NEUTRAL, None),
    ("toolTitle", NEUTRAL, None),
    ("syntaxOperator", NEUTRAL, None),
    ("syntaxPunctuation", NEUTRAL, None),
    ("muted", NEUTRAL, None),
    ("dim", NEUTRAL, None),
    ("thinkingText", NEUTRAL, None),
    ("toolOutput", NEUTRAL, None),
    ("mdLinkUrl", NEUTRAL, None),
    ("mdQuote", NEUTRAL, None),
    ("mdQuoteBorder", NEUTRAL, None),
    ("mdHr", NEUTRAL, None),
    ("mdCodeBlockBorder", NEUTRAL, None),
    ("toolDiffContext", NEUTRAL, None),
    ("syntaxComment", NEUTRAL, None),
    ("scrollbarTrack", NEUTRAL, None),
    ("scrollbarThumb", NEUTRAL, None),
    ("searchMatchText", NEUTRAL, None),
    ("borderMuted", NEUTRAL, None),
    ("accent", VIOLET, None),
    ("borderAccent", VIOLET, None),
    ("customMessageLabel", VIOLET, None),
    ("mdCode", VIOLET, None),
    ("mdListBullet", VIOLET, None),
    ("syntaxType", VIOLET, None),
    ("border", BLUE, None),
    ("mdLink", BLUE, None),
    ("syntaxKeyword", BLUE, None),
    ("syntaxVariable", CALAMINE, None),
    ("success", GREEN, None),
    ("mdCodeBlock", GREEN, None),
    ("toolDiffAdded", GREEN, None),
    ("bashMode", GREEN, None),
    ("syntaxNumber", GREEN, Some(5)),
    ("error", RED, None),
    ("toolDiffRemoved", RED, None),
    ("warning", YELLOW, None),
    ("mdHeading", YELLOW, None),
    ("syntaxFunction", YELLOW, None),
    ("syntaxString", ORANGE, Some(2)),
    ("thinkingOff", NEUTRAL, None),
    ("thinkingMinimal", fam(231.49, 0.08, 0.2, 4), None),
    ("thinkingLow", fam(231.49, 0.2, 0.45, 4), None),
    ("thinkingMedium", fam(263.25, 0.3, 0.6, 6), None),
    ("thinkingHigh", fam(295.0, 0.4, 0.75, 5), None),
    ("thinkingXhigh", fam(337.5, 0.5, 0.85, 13), None),
    ("thinkingMax", fam(20.0, 0.95, 1.0, 1), None),
];

/// Contrast levels, from faint to strong.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Panel,
    Track,
    Thinking(u8),
    Subtle,
    Thumb,
    Readable,
    Emphasis,
    TextOnPanel,
    Text,
}

/// A level's target-lightness polynomial (coefficients by power) and the surface lightness
/// range where it can be reached, for dark and light terminals.
struct Curves {
    dark: ([f64; 6], [f64; 2]),
    light: ([f64; 6], [f64; 2]),
}

/// pi 1.6's fitted curves, in the order: panel, track, thinking 0-6, subtle, thumb, readable,
/// emphasis, text on panel, text.
const CURVES: [Curves; 15] = [
    // panel
    Curves {
        dark: ([0.29131, -0.39746, 2.33185, -0.85524, -1.2076, 0.86276], [0.0, 0.979]),
        light: (
            [-3.74073, 27.94549, -78.44258, 112.6798, -79.60015, 22.11277],
            [0.348, 1.0],
        ),
    },
    // track
    Curves {
        dark: ([0.39028, -0.23015, 0.83573, 2.43829, -4.38292, 2.01582], [0.0, 0.946]),
        light: (
            [-5.24921, 38.37322, -107.28833, 152.10005, -106.17127, 29.18061],
            [0.368, 1.0],
        ),
    },
    // thinking0
    Curves {
        dark: ([0.52988, -0.05809, -0.30924, 4.63567, -6.52933, 2.89108], [0.0, 0.873]),
        light: (
            [-28.27749, 182.85284, -469.62416, 603.15916, -384.59976, 97.35147],
            [0.51, 1.0],
        ),
    },
    // thinking1
    Curves {
        dark: ([0.55278, -0.03667, -0.45659, 4.95347, -6.90265, 3.0706], [0.0, 0.858]),
        light: (
            [-37.10484, 235.86282, -596.62344, 754.3633, -474.00763, 118.3551],
            [0.535, 1.0],
        ),
    },
    // thinking2
    Curves {
        dark: ([0.57486, -0.01765, -0.58987, 5.25227, -7.27175, 3.25532], [0.0, 0.842]),
        light: (
            [-59.89653, 377.05024, -945.07843, 1182.03145, -734.96375, 181.68658],
            [0.556, 1.0],
        ),
    },
    // thinking3
    Curves {
        dark: ([0.59621, -0.00062, -0.71148, 5.53588, -7.6392, 3.44606], [0.0, 0.827]),
        light: (
            [-72.07122, 445.84082, -1099.57352, 1353.88793, -829.53392, 202.26164],
            [0.58, 1.0],
        ),
    },
    // thinking4
    Curves {
        dark: ([0.61691, 0.01462, -0.82288, 5.80651, -8.00641, 3.64333], [0.0, 0.811]),
        light: (
            [-110.14338, 674.21488, -1645.75941, 2004.32367, -1215.15899, 293.3183],
            [0.6, 1.0],
        ),
    },
    // thinking5
    Curves {
        dark: ([0.63702, 0.02826, -0.92498, 6.06465, -8.37246, 3.84651], [0.0, 0.795]),
        light: (
            [-175.47701, 1063.54495, -2570.70594, 3098.80776, -1860.15527, 444.76392],
            [0.62, 1.0],
        ),
    },
    // thinking6
    Curves {
        dark: ([0.65658, 0.04044, -1.01835, 6.30989, -8.73529, 4.05439], [0.0, 0.779]),
        light: (
            [-183.81712, 1094.70055, -2602.68539, 3088.71276, -1826.91131, 430.75931],
            [0.643, 1.0],
        ),
    },
    // subtle
    Curves {
        dark: ([0.56762, -0.02475, -0.5383, 5.12628, -7.10931, 3.17324], [0.0, 0.848]),
        light: (
            [-232.85459, 1376.54473, -3249.11801, 3827.91186, -2248.29472, 526.55751],
            [0.657, 1.0],
        ),
    },
    // thumb
    Curves {
        dark: ([0.60323, 0.00278, -0.73328, 5.57157, -7.68067, 3.46933], [0.0, 0.823]),
        light: (
            [-82.89897, 511.01355, -1255.98095, 1540.76821, -940.68087, 228.58523],
            [0.586, 1.0],
        ),
    },
    // readable
    Curves {
        dark: ([0.66937, 0.04704, -1.06871, 6.43941, -8.9332, 4.17229], [0.0, 0.77]),
        light: (
            [
                -1554.52576,
                8733.56817,
                -19604.93507,
                21977.72696,
                -12300.99599,
                2749.81288,
            ],
            [0.751, 1.0],
        ),
    },
    // emphasis
    Curves {
        dark: ([0.7303, 0.07695, -1.31626, 7.1681, -10.14436, 4.92846], [0.0, 0.712]),
        light: (
            [
                -4948.31942,
                26870.91986,
                -58334.48399,
                63280.17197,
                -34298.01053,
                7430.30146,
            ],
            [0.811, 1.0],
        ),
    },
    // textOnPanel
    Curves {
        dark: ([0.86713, 0.05232, -0.89428, 4.79014, -5.5432, 1.75023], [0.0, 0.542]),
        light: (
            [
                -8570.89457,
                43954.60805,
                -90084.00702,
                92220.6791,
                -47152.15802,
                9632.27113,
            ],
            [0.867, 1.0],
        ),
    },
    // text
    Curves {
        dark: ([0.89242, 0.02311, -0.44862, 2.34417, -0.06084, -2.63844], [0.0, 0.5]),
        light: (
            [
                -2004.67048,
                6664.47299,
                -6060.70202,
                -1792.61209,
                5133.82359,
                -1939.85583,
            ],
            [0.894, 1.0],
        ),
    },
];

impl Level {
    fn curves(self) -> &'static Curves {
        let i = match self {
            Level::Panel => 0,
            Level::Track => 1,
            Level::Thinking(n) => 2 + usize::from(n.min(6)),
            Level::Subtle => 9,
            Level::Thumb => 10,
            Level::Readable => 11,
            Level::Emphasis => 12,
            Level::TextOnPanel => 13,
            Level::Text => 14,
        };
        &CURVES[i]
    }

    /// The lightness this level needs over a surface, or `None` where it cannot be reached.
    fn target(self, dark: bool, surface: f64) -> Option<f64> {
        let curves = self.curves();
        let (coef, reach) = if dark { curves.dark } else { curves.light };
        if surface < reach[0] || surface > reach[1] {
            return None;
        }
        Some(
            coef.iter()
                .enumerate()
                .fold(0.0, |sum, (power, c)| sum + c * surface.powf(power as f64)),
        )
    }
}

const PANELS: [&str; 7] = [
    "userMessageBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "selectedBg",
    "searchMatchBg",
    "customMessageBg",
];
const TOOL_PANELS: [&str; 3] = ["toolPendingBg", "toolSuccessBg", "toolErrorBg"];
const MESSAGE_PANELS: [&str; 2] = ["userMessageBg", "customMessageBg"];
/// Body text tokens, which take the terminal's foreground when it reads well.
const FOREGROUND_TOKENS: [&str; 3] = ["text", "userMessageText", "toolTitle"];

/// A token must reach a level on each of some surfaces (`background` or a panel token).
struct Rule {
    token: &'static str,
    on: Vec<&'static str>,
    level: Level,
}

/// The rules, in pi 1.6's order (it decides the order tokens are solved in).
fn rules() -> Vec<Rule> {
    let mut rules = Vec::new();
    let mut add = |tokens: &[&'static str], on: &[&'static str], level: Level| {
        for t in tokens {
            rules.push(Rule {
                token: t,
                on: on.to_vec(),
                level,
            });
        }
    };
    let bg = "background";
    let with = |a: &[&'static str], b: &[&'static str], c: &[&'static str]| [a, b, c].concat();
    add(&PANELS, &[bg], Level::Panel);
    add(&["text"], &[bg], Level::Text);
    add(&["text"], &["selectedBg"], Level::TextOnPanel);
    add(&["userMessageText"], &["userMessageBg"], Level::TextOnPanel);
    add(&["toolTitle"], &TOOL_PANELS, Level::TextOnPanel);
    add(
        &["accent", "success", "error", "warning"],
        &with(&[bg, "selectedBg"], &TOOL_PANELS, &[]),
        Level::Readable,
    );
    let muted_on = with(&[bg, "selectedBg", "customMessageBg"], &TOOL_PANELS, &[]);
    add(&["muted"], &muted_on, Level::Readable);
    add(&["dim"], &muted_on, Level::Subtle);
    add(&["thinkingText"], &[bg], Level::Readable);
    add(
        &["customMessageText"],
        &with(&["customMessageBg"], &TOOL_PANELS, &[]),
        Level::Readable,
    );
    add(
        &["customMessageLabel"],
        &with(&[bg, "customMessageBg", "selectedBg"], &TOOL_PANELS, &[]),
        Level::Readable,
    );
    add(&["toolOutput"], &with(&[bg], &TOOL_PANELS, &[]), Level::Readable);
    add(
        &[
            "mdHeading",
            "mdLink",
            "mdLinkUrl",
            "mdCode",
            "mdQuote",
            "mdCodeBlockBorder",
            "mdListBullet",
        ],
        &with(&[bg], &MESSAGE_PANELS, &[]),
        Level::Readable,
    );
    let everywhere = with(&[bg], &MESSAGE_PANELS, &TOOL_PANELS);
    add(&["mdCodeBlock"], &everywhere, Level::Readable);
    add(
        &["toolDiffAdded", "toolDiffRemoved", "toolDiffContext"],
        &with(&[bg], &TOOL_PANELS, &[]),
        Level::Readable,
    );
    add(
        &[
            "syntaxComment",
            "syntaxKeyword",
            "syntaxFunction",
            "syntaxVariable",
            "syntaxString",
            "syntaxNumber",
            "syntaxType",
            "syntaxOperator",
            "syntaxPunctuation",
        ],
        &everywhere,
        Level::Readable,
    );
    add(&["searchMatchText"], &["searchMatchBg"], Level::Readable);
    add(&["bashMode", "border", "borderAccent"], &[bg], Level::Readable);
    add(&["borderMuted"], &[bg], Level::Subtle);
    add(&["mdQuoteBorder", "mdHr"], &everywhere, Level::Readable);
    add(&["scrollbarTrack"], &[bg], Level::Track);
    add(&["scrollbarThumb"], &["scrollbarTrack"], Level::Thumb);
    let thinking = [
        "thinkingOff",
        "thinkingMinimal",
        "thinkingLow",
        "thinkingMedium",
        "thinkingHigh",
        "thinkingXhigh",
        "thinkingMax",
    ];
    for (i, t) in (0u8..).zip(thinking) {
        add(&[t], &[bg], Level::Thinking(i));
    }
    rules
}

/// Tokens with every surface before the tokens drawn on it.
fn solve_order(rules: &[Rule]) -> Vec<&'static str> {
    fn visit(token: &'static str, rules: &[Rule], order: &mut Vec<&'static str>) {
        if order.contains(&token) {
            return;
        }
        for rule in rules.iter().filter(|r| r.token == token) {
            for surface in rule.on.iter().filter(|s| **s != "background") {
                visit(surface, rules, order);
            }
        }
        order.push(token);
    }
    let mut order = Vec::new();
    for rule in rules {
        visit(rule.token, rules, &mut order);
    }
    order
}

/// Saturation weight at an OKHSL lightness: a bell, 0 at black and white, 1 in the middle.
fn bell(l: f64) -> f64 {
    let gaussian = |x: f64| (-(x - 0.5).powf(2.0) / (2.0 * 0.25f64.powf(2.0))).exp();
    (gaussian(l) - gaussian(0.0)) / (1.0 - gaussian(0.0))
}

/// A family's saturation at a lightness relative to its maximum.
fn saturation_curve(f: &Family, l: f64) -> f64 {
    let floor = if f.max > 0.0 { f.min / f.max } else { 1.0 };
    floor + (1.0 - floor) * bell(l)
}

/// A palette colour as the source of a hue.
#[derive(Clone, Copy)]
struct Source {
    hsl: oklab::Okhsl,
    chroma: f64,
}

fn source(c: Color) -> Source {
    Source {
        hsl: oklab::rgb_to_okhsl(c),
        chroma: oklab::rgb_to_oklch(c).c,
    }
}

/// A source colour's hue at another OKHSL lightness: its saturation falls off toward black and
/// white along the family's curve, and its chroma never grows past the source's (so pastel
/// palettes stay pastel).
fn anchored(src: Source, f: &Family, l: f64) -> Color {
    let anchor = saturation_curve(f, src.hsl.l);
    let falloff = if anchor > 0.0 {
        (saturation_curve(f, l) / anchor).min(1.0)
    } else {
        1.0
    };
    let c = oklab::okhsl_to_rgb(src.hsl.h, src.hsl.s * falloff, l);
    let cap = src.chroma * falloff;
    let lch = oklab::rgb_to_oklch(c);
    if lch.c <= cap {
        c
    } else {
        oklab::oklch_to_rgb(oklab::Oklch {
            l: lch.l,
            c: cap,
            h: src.hsl.h,
        })
    }
}

/// Move body text toward white or black until it reaches 4.5:1 on every surface.
fn with_text_contrast(c: Color, surfaces: &[Color], lighter: bool) -> Color {
    let meets = |x: Color| surfaces.iter().all(|s| wcag(x, *s) >= TEXT_CONTRAST);
    if meets(c) {
        return c;
    }
    let hsl = oklab::rgb_to_okhsl(c);
    let at = |l: f64| oklab::okhsl_to_rgb(hsl.h, hsl.s, l);
    let extreme = if lighter { 1.0 } else { 0.0 };
    if !meets(at(extreme)) {
        return at(extreme);
    }
    let (mut low, mut high) = (hsl.l, extreme);
    for _ in 0..20 {
        let mid = (low + high) / 2.0;
        if meets(at(mid)) {
            high = mid;
        } else {
            low = mid;
        }
    }
    at(high)
}

fn family_of(token: &str) -> (Family, usize) {
    TOKENS
        .iter()
        .find(|(t, _, _)| *t == token)
        .map_or((NEUTRAL, 8), |(_, f, slot)| (*f, slot.unwrap_or(f.slot)))
}

fn theme_color(c: Color) -> ThemeColor {
    // Channels are whole and within 0-255 already.
    ThemeColor::Rgb(c.r as u8, c.g as u8, c.b as u8)
}

/// Every token's colour from the reported colours, or `None` without a background.
pub fn derive(reported: &TerminalColors) -> Option<BTreeMap<String, ThemeColor>> {
    let bg_rgb = reported.background?;
    let background = color(bg_rgb);
    let foreground = reported.foreground.map(color);
    // The palette counts only when all 16 colours were reported.
    let palette: Option<Vec<Source>> = reported.palette.iter().map(|c| c.map(|c| source(color(c)))).collect();
    let dark = is_dark(bg_rgb, reported.foreground);
    let extreme = if dark { 1.0 } else { 0.0 };
    let background_l = lightness(background);
    let rules = rules();
    let order = solve_order(&rules);

    let paint = |token: &str, oklab_l: f64| -> Color {
        let l = oklab::oklab_to_okhsl_lightness(oklab_l);
        let (f, slot) = family_of(token);
        match &palette {
            None => oklab::okhsl_to_rgb(f.hue, f.min + (f.max - f.min) * bell(l), l),
            Some(p) => anchored(p[slot], &f, l),
        }
    };
    // The lightness a level needs over a surface, relaxed by `t`: from 0 to 1 the levels above
    // the readable floor move toward it, from 1 to 2 every level moves toward the surface.
    let floor_level = if dark { Level::Readable } else { Level::Subtle };
    let target = |level: Level, surface: f64, t: f64| -> Option<f64> {
        let reached = level.target(dark, surface);
        if reached.is_none() && t == 0.0 {
            return None;
        }
        let distance = reached.unwrap_or(extreme) - surface;
        let floor = floor_level.target(dark, surface).unwrap_or(extreme) - surface;
        let compressed = if distance.abs() > floor.abs() {
            distance - (distance - floor) * t.min(1.0)
        } else {
            distance
        };
        Some(surface + compressed * (1.0 - (t - 1.0).max(0.0)))
    };
    // White (or black) text must still read on a panel.
    let extreme_text = color(if dark { WHITE } else { BLACK });
    let readable = |c: Color| wcag(extreme_text, c) >= TEXT_CONTRAST;
    let limit_panel = |token: &str, l: f64| -> Color {
        let c = paint(token, l);
        if readable(c) {
            return c;
        }
        let (mut low, mut high) = (background_l, l);
        for _ in 0..20 {
            let mid = (low + high) / 2.0;
            if readable(paint(token, mid)) {
                low = mid;
            } else {
                high = mid;
            }
        }
        paint(token, low)
    };
    let pick = |targets: &[f64]| -> f64 {
        if dark {
            targets.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        } else {
            targets.iter().copied().fold(f64::INFINITY, f64::min)
        }
    };
    let solve = |t: f64| -> Option<HashMap<&'static str, Color>> {
        let mut colors: HashMap<&'static str, Color> = HashMap::from([("background", background)]);
        for &token in &order {
            let mut targets = Vec::new();
            for rule in rules.iter().filter(|r| r.token == token) {
                for surface in &rule.on {
                    let on = colors.get(surface).copied().unwrap_or(background);
                    match target(rule.level, lightness(on), t) {
                        Some(v) if (0.0..=1.0).contains(&v) => targets.push(v),
                        _ => return None,
                    }
                }
            }
            let l = pick(&targets);
            let c = if PANELS.contains(&token) {
                limit_panel(token, l)
            } else {
                paint(token, l)
            };
            colors.insert(token, c);
        }
        Some(colors)
    };
    let mut relaxation = 0.0;
    let solved = match solve(0.0) {
        Some(c) => c,
        None => {
            // A mid-grey background cannot fit every level: relax as little as possible.
            let (mut low, mut high) = (0.0, 2.0);
            let mut colors = solve(high);
            for _ in 0..20 {
                let mid = (low + high) / 2.0;
                match solve(mid) {
                    Some(c) => {
                        high = mid;
                        colors = Some(c);
                    }
                    None => low = mid,
                }
            }
            relaxation = high;
            colors.unwrap_or_default()
        }
    };
    let mut out: BTreeMap<String, ThemeColor> = TOKENS
        .iter()
        .map(|(t, _, _)| {
            let c = solved.get(t).map_or(ThemeColor::Default, |c| theme_color(*c));
            (t.to_string(), c)
        })
        .collect();
    for token in FOREGROUND_TOKENS {
        let surfaces: Vec<Color> = rules
            .iter()
            .filter(|r| r.token == token)
            .flat_map(|r| r.on.iter().map(|s| solved.get(s).copied().unwrap_or(background)))
            .collect();
        let mut text = solved.get(token).copied();
        if let Some(fg) = foreground {
            let targets: Option<Vec<f64>> = surfaces
                .iter()
                .map(|s| target(Level::Emphasis, lightness(*s), relaxation).filter(|v| (0.0..=1.0).contains(v)))
                .collect();
            if let Some(targets) = targets {
                let needed = pick(&targets);
                let fg_l = lightness(fg);
                // The terminal's own foreground where it is clearly stronger than muted text.
                if (dark && fg_l >= needed) || (!dark && fg_l <= needed) {
                    out.insert(token.to_string(), ThemeColor::Default);
                    continue;
                }
                text = Some(anchored(source(fg), &NEUTRAL, oklab::oklab_to_okhsl_lightness(needed)));
            }
        }
        if let Some(text) = text {
            out.insert(
                token.to_string(),
                theme_color(with_text_contrast(text, &surfaces, dark)),
            );
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "system_theme_tests.rs"]
mod tests;
