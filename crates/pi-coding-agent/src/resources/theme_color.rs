//! Colour literals of theme files, as pi 1.6 reads them: `#rgb`, `#rrggbb`,
//! `oklch(L C H)` (L 0-1 or a percentage, hue optionally in `deg`) and `okhsl(H S L)`
//! (saturation and lightness 0-1 or percentages), the OK forms turned into sRGB.

use super::oklab::{okhsl_to_rgb, oklch_to_rgb, Oklch, Rgb};
use super::themes::ThemeColor;

/// `Some` when `s` is written as a colour (valid or not), `None` when it is something else
/// (a variable name).
pub fn parse_color_literal(s: &str) -> Option<Result<ThemeColor, String>> {
    if let Some(hex) = s.strip_prefix('#') {
        // Worded as pi 1.6 words every colour it cannot read.
        return Some(parse_hex(hex).ok_or_else(|| format!("Invalid color value: {s}")));
    }
    let lower = s.to_ascii_lowercase();
    let args = |prefix: &str| {
        lower
            .strip_prefix(prefix)
            .and_then(|rest| rest.trim_end().strip_suffix(')'))
            .map(|inner| inner.split_whitespace().collect::<Vec<_>>())
    };
    let invalid = || format!("Invalid color value: {s}");
    if let Some(parts) = args("oklch(") {
        return Some(oklch(&parts).ok_or_else(invalid).and_then(|r| r));
    }
    if let Some(parts) = args("okhsl(") {
        return Some(okhsl(&parts).ok_or_else(invalid).and_then(|r| r));
    }
    None
}

fn parse_hex(hex: &str) -> Option<ThemeColor> {
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let full: String = match hex.len() {
        3 => hex.chars().flat_map(|c| [c, c]).collect(),
        6 => hex.to_string(),
        _ => return None,
    };
    let byte = |i: usize| u8::from_str_radix(&full[i..i + 2], 16).ok();
    Some(ThemeColor::Rgb(byte(0)?, byte(2)?, byte(4)?))
}

/// A finite number, with `suffix` allowed (and reported) after it.
fn number(text: &str, suffix: &str) -> Option<(f64, bool)> {
    let (digits, had) = match text.strip_suffix(suffix) {
        Some(d) if !suffix.is_empty() => (d, true),
        _ => (text, false),
    };
    let ok = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'+' | b'-' | b'e'));
    let n: f64 = digits.parse().ok().filter(|n: &f64| n.is_finite() && ok)?;
    Some((n, had))
}

fn rgb(c: Rgb) -> ThemeColor {
    let ch = |v: f64| v.round().clamp(0.0, 255.0) as u8;
    ThemeColor::Rgb(ch(c.r), ch(c.g), ch(c.b))
}

fn oklch(parts: &[&str]) -> Option<Result<ThemeColor, String>> {
    let [l, c, h] = parts else { return None };
    let (l, pct) = number(l, "%")?;
    let (c, _) = number(c, "")?;
    let (h, _) = number(h, "deg")?;
    let l = if pct { l / 100.0 } else { l };
    if !(0.0..=1.0).contains(&l) {
        return Some(Err(format!("l must be between 0 and 1: {l}")));
    }
    if c < 0.0 {
        return Some(Err(format!("c must not be negative: {c}")));
    }
    Some(Ok(rgb(oklch_to_rgb(Oklch { l, c, h }))))
}

fn okhsl(parts: &[&str]) -> Option<Result<ThemeColor, String>> {
    let [h, s, l] = parts else { return None };
    let (h, _) = number(h, "deg")?;
    let (s, s_pct) = number(s, "%")?;
    let (l, l_pct) = number(l, "%")?;
    let s = if s_pct { s / 100.0 } else { s };
    let l = if l_pct { l / 100.0 } else { l };
    if !(0.0..=1.0).contains(&s) {
        return Some(Err(format!("s must be between 0 and 1: {s}")));
    }
    if !(0.0..=1.0).contains(&l) {
        return Some(Err(format!("l must be between 0 and 1: {l}")));
    }
    Some(Ok(rgb(okhsl_to_rgb(h, s, l))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pi_16s_colour_forms() {
        assert_eq!(parse_color_literal("#abc"), Some(Ok(ThemeColor::Rgb(0xaa, 0xbb, 0xcc))));
        assert_eq!(
            parse_color_literal("#5fa8cc"),
            Some(Ok(ThemeColor::Rgb(0x5f, 0xa8, 0xcc)))
        );
        assert!(parse_color_literal("#12").is_some_and(|r| r.is_err()));
        // White and black by either form; percentages and `deg` allowed.
        assert_eq!(
            parse_color_literal("oklch(1 0 0)"),
            Some(Ok(ThemeColor::Rgb(255, 255, 255)))
        );
        assert_eq!(
            parse_color_literal("OKLCH(0% 0 90deg)"),
            Some(Ok(ThemeColor::Rgb(0, 0, 0)))
        );
        assert_eq!(
            parse_color_literal("okhsl(0 0% 100%)"),
            Some(Ok(ThemeColor::Rgb(255, 255, 255)))
        );
        // A saturated OKHSL red is red.
        let Some(Ok(ThemeColor::Rgb(r, g, b))) = parse_color_literal("okhsl(20 72% 67%)") else {
            panic!("okhsl")
        };
        assert!(r > g && r > b, "{r} {g} {b}");
        // The same sRGB as pi 1.6's colour functions.
        for (literal, hex) in [
            ("okhsl(20 72% 67%)", (0xea, 0x7f, 0x81)),
            ("okhsl(234 3% 89%)", (0xde, 0xe0, 0xe1)),
            ("oklch(0.7 0.1 200)", (0x40, 0xb1, 0xb7)),
            ("oklch(50% 0.3 30deg)", (0xbb, 0x0c, 0x00)),
        ] {
            assert_eq!(
                parse_color_literal(literal),
                Some(Ok(ThemeColor::Rgb(hex.0, hex.1, hex.2))),
                "{literal}"
            );
        }
        assert!(parse_color_literal("okhsl(20 172% 67%)").is_some_and(|r| r.is_err()));
        assert!(parse_color_literal("oklch(1 2)").is_some_and(|r| r.is_err()));
        assert_eq!(parse_color_literal("sea"), None);
    }
}
