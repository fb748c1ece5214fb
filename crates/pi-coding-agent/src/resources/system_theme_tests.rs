//! The `system` theme's colours equal pi 1.6's for the same reported colours. Each expectation
//! is what pi 1.6.0 computed: `node` importing `generateSystemThemeColors` from
//! `<pi>/dist/modes/interactive/theme/system-theme.js` and calling it with
//! `{ background, foreground, palette, saturation: 1 }` (colours as `{r, g, b}`), printing
//! `JSON.stringify(result.colors)`; the fallback is the same call with `{ saturation: 1 }`.

use super::*;
use crate::resources::themes::{system_faint_tokens, system_theme_from, ThemeColor};

fn rgb(hex: &str) -> Rgb {
    let ch = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
    (ch(1), ch(3), ch(5))
}

fn expected(value: &serde_json::Value) -> ThemeColor {
    match value {
        serde_json::Value::String(s) if s.is_empty() => ThemeColor::Default,
        serde_json::Value::String(s) => {
            let (r, g, b) = rgb(s);
            ThemeColor::Rgb(r, g, b)
        }
        serde_json::Value::Number(n) => ThemeColor::Index(n.as_u64().unwrap_or(0) as u8),
        other => panic!("not a colour: {other}"),
    }
}

fn check(background: &str, foreground: Option<&str>, palette: &[&str], pi: &str) {
    let mut reported = TerminalColors {
        background: Some(rgb(background)),
        foreground: foreground.map(rgb),
        ..Default::default()
    };
    for (slot, c) in reported.palette.iter_mut().zip(palette) {
        *slot = Some(rgb(c));
    }
    let ours = derive(&reported).expect("derived");
    let pi: serde_json::Map<String, serde_json::Value> = serde_json::from_str(pi).expect("json");
    let wrong: Vec<String> = pi
        .iter()
        .filter(|(token, want)| ours.get(*token) != Some(&expected(want)))
        .map(|(token, want)| format!("{token}: pi {want}, ours {:?}", ours.get(token)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        pi.len(),
        wrong.join("\n")
    );
    assert_eq!(ours.len(), pi.len());
}

#[test]
fn nothing_is_derived_without_a_background() {
    assert!(derive(&TerminalColors::default()).is_none());
}

#[test]
fn without_reported_colours_the_theme_is_palette_indices_and_faint_greys() {
    let pi: serde_json::Value = serde_json::from_str(FALLBACK).expect("json");
    let theme = system_theme_from(&TerminalColors::default());
    for (token, want) in pi["colors"].as_object().expect("colors") {
        assert_eq!(theme.color(token), expected(want), "{token}");
    }
    let mut faint: Vec<&str> = system_faint_tokens().collect();
    let mut pi_faint: Vec<&str> = pi["dim"]
        .as_array()
        .expect("dim")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    faint.sort_unstable();
    pi_faint.sort_unstable();
    assert_eq!(faint, pi_faint);
}

#[test]
fn light_or_dark_follows_the_foreground_then_contrast() {
    assert!(is_dark((0x30, 0x34, 0x46), Some((0xc6, 0xd0, 0xf5))));
    assert!(!is_dark((0xff, 0xff, 0xff), None));
    // A light foreground on mid grey cannot reach 4.5:1, so the background alone decides.
    assert!(!is_dark((0x90, 0x90, 0x90), Some((0xff, 0xff, 0xff))));
}

#[test]
fn reports_are_recorded_once() {
    assert!(set_reported(Reported::Palette(3), (1, 2, 3)));
    assert!(!set_reported(Reported::Palette(3), (1, 2, 3)));
    assert!(!set_reported(Reported::Palette(16), (1, 2, 3)));
    assert_eq!(reported().palette[3], Some((1, 2, 3)));
}

#[test]
fn a_dark_terminal_with_its_palette() {
    check(
        "#303446",
        Some("#c6d0f5"),
        &[
            "#51576d", "#e78284", "#a6d189", "#e5c890", "#8caaee", "#f4b8e4", "#81c8be", "#b5bfe2", "#626880",
            "#e78284", "#a6d189", "#e5c890", "#8caaee", "#f4b8e4", "#81c8be", "#a5adce",
        ],
        r##"{"selectedBg":"#283d73","searchMatchBg":"#4e3e1c","userMessageBg":"#283d73","customMessageBg":"#5d2b52","toolPendingBg":"#3c404c","toolSuccessBg":"#324723","toolErrorBg":"#662b2e","text":"","userMessageText":"","customMessageText":"#a2a7b9","toolTitle":"","syntaxOperator":"#a2a7b9","syntaxPunctuation":"#a2a7b9","muted":"#a2a7b9","dim":"#8389a2","thinkingText":"#9ba1b5","toolOutput":"#a2a7b9","mdLinkUrl":"#a2a7b9","mdQuote":"#a2a7b9","mdQuoteBorder":"#a2a7b9","mdHr":"#a2a7b9","mdCodeBlockBorder":"#a2a7b9","toolDiffContext":"#a2a7b9","syntaxComment":"#a2a7b9","scrollbarTrack":"#4f5467","scrollbarThumb":"#9ca1b5","searchMatchText":"#a2a7b9","borderMuted":"#7c839c","accent":"#cc92bd","borderAccent":"#c58cb6","customMessageLabel":"#cc92bd","mdCode":"#cc92bd","mdListBullet":"#cc92bd","syntaxType":"#cc92bd","border":"#82a0e3","mdLink":"#88a6ea","syntaxKeyword":"#88a6ea","syntaxVariable":"#70b7ad","success":"#8db770","mdCodeBlock":"#8db770","toolDiffAdded":"#8db770","bashMode":"#86b069","syntaxNumber":"#cc92bd","error":"#e6898a","toolDiffRemoved":"#e6898a","warning":"#c0a46d","mdHeading":"#c0a46d","syntaxFunction":"#c0a46d","syntaxString":"#8db770","thinkingOff":"#727891","thinkingMinimal":"#627ebe","thinkingLow":"#6884c5","thinkingMedium":"#589a91","thinkingHigh":"#b57da6","thinkingXhigh":"#bc83ad","thinkingMax":"#e07c7e"}"##,
    );
}

#[test]
fn a_light_terminal_with_the_xterm_palette() {
    check(
        "#ffffff",
        Some("#000000"),
        &[
            "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5", "#7f7f7f",
            "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
        ],
        r##"{"selectedBg":"#edf0f5","searchMatchBg":"#f0f2e1","userMessageBg":"#edf0f5","customMessageBg":"#f5edf4","toolPendingBg":"#f0f0f0","toolSuccessBg":"#ecf2eb","toolErrorBg":"#f4efee","text":"","userMessageText":"","customMessageText":"#7b7b7b","toolTitle":"","syntaxOperator":"#7b7b7b","syntaxPunctuation":"#7b7b7b","muted":"#7b7b7b","dim":"#9a9a9a","thinkingText":"#8f8f8f","toolOutput":"#7b7b7b","mdLinkUrl":"#7b7b7b","mdQuote":"#7b7b7b","mdQuoteBorder":"#7b7b7b","mdHr":"#7b7b7b","mdCodeBlockBorder":"#7b7b7b","toolDiffContext":"#7b7b7b","syntaxComment":"#7b7b7b","scrollbarTrack":"#ededed","scrollbarThumb":"#aaaaaa","searchMatchText":"#7c7c7c","borderMuted":"#adadad","accent":"#c800c8","borderAccent":"#dd38dc","customMessageLabel":"#c800c8","mdCode":"#c800c8","mdListBullet":"#c800c8","syntaxType":"#c800c8","border":"#5488ff","mdLink":"#326cff","syntaxKeyword":"#326cff","syntaxVariable":"#008e8e","success":"#009600","mdCodeBlock":"#009600","toolDiffAdded":"#009600","bashMode":"#00ae00","syntaxNumber":"#c800c8","error":"#e0281d","toolDiffRemoved":"#e0281d","warning":"#818100","mdHeading":"#818100","syntaxFunction":"#818100","syntaxString":"#009600","thinkingOff":"#d1d1d1","thinkingMinimal":"#b9cdf4","thinkingLow":"#b1c7f5","thinkingMedium":"#4bdad9","thinkingHigh":"#e7a0e3","thinkingXhigh":"#ee8fea","thinkingMax":"#fe8b7b"}"##,
    );
}

#[test]
fn a_background_without_foreground_or_palette() {
    check(
        "#1e1e1e",
        None,
        &[],
        r##"{"selectedBg":"#1f343f","searchMatchBg":"#432a1b","userMessageBg":"#1f343f","customMessageBg":"#332b49","toolPendingBg":"#2e3133","toolSuccessBg":"#21372a","toolErrorBg":"#4a2425","text":"#dddfe0","userMessageText":"#dadcde","customMessageText":"#99a1a6","toolTitle":"#dbddde","syntaxOperator":"#99a1a6","syntaxPunctuation":"#99a1a6","muted":"#99a1a6","dim":"#7a8489","thinkingText":"#919a9f","toolOutput":"#99a1a6","mdLinkUrl":"#98a1a6","mdQuote":"#98a1a6","mdQuoteBorder":"#99a1a6","mdHr":"#99a1a6","mdCodeBlockBorder":"#98a1a6","toolDiffContext":"#99a1a6","syntaxComment":"#99a1a6","scrollbarTrack":"#44494c","scrollbarThumb":"#929ba0","searchMatchText":"#98a1a6","borderMuted":"#727c81","accent":"#a493d6","borderAccent":"#9d8bd4","customMessageLabel":"#a493d6","mdCode":"#a493d6","mdListBullet":"#a493d6","syntaxType":"#a493d6","border":"#57a3c8","mdLink":"#62aacd","syntaxKeyword":"#62aacd","syntaxVariable":"#55b0b7","success":"#61b487","mdCodeBlock":"#61b487","toolDiffAdded":"#61b487","bashMode":"#57ad80","syntaxNumber":"#61b487","error":"#eb777a","toolDiffRemoved":"#eb777a","warning":"#ca961d","mdHeading":"#c9961c","syntaxFunction":"#ca961d","syntaxString":"#dd8751","thinkingOff":"#677176","thinkingMinimal":"#627a86","thinkingLow":"#50849e","thinkingMedium":"#5d81c9","thinkingHigh":"#926fe2","thinkingXhigh":"#dc4abd","thinkingMax":"#fe475a"}"##,
    );
}

#[test]
fn a_mid_grey_background_relaxes_the_levels() {
    check(
        "#808080",
        Some("#202020"),
        &[
            "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5", "#7f7f7f",
            "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
        ],
        r##"{"selectedBg":"#2c68ff","searchMatchBg":"#797900","userMessageBg":"#2c68ff","customMessageBg":"#ce02cd","toolPendingBg":"#757575","toolSuccessBg":"#008800","toolErrorBg":"#e1291e","text":"#000000","userMessageText":"#000000","customMessageText":"#000000","toolTitle":"#000000","syntaxOperator":"#000000","syntaxPunctuation":"#000000","muted":"#000000","dim":"#000000","thinkingText":"#000000","toolOutput":"#000000","mdLinkUrl":"#000000","mdQuote":"#000000","mdQuoteBorder":"#000000","mdHr":"#000000","mdCodeBlockBorder":"#000000","toolDiffContext":"#000000","syntaxComment":"#000000","scrollbarTrack":"#676767","scrollbarThumb":"#000000","searchMatchText":"#000000","borderMuted":"#000000","accent":"#000000","borderAccent":"#000000","customMessageLabel":"#000000","mdCode":"#000000","mdListBullet":"#000000","syntaxType":"#000000","border":"#000000","mdLink":"#000000","syntaxKeyword":"#000000","syntaxVariable":"#000000","success":"#000000","mdCodeBlock":"#000000","toolDiffAdded":"#000000","bashMode":"#000000","syntaxNumber":"#000000","error":"#000000","toolDiffRemoved":"#000000","warning":"#000000","mdHeading":"#000000","syntaxFunction":"#000000","syntaxString":"#000000","thinkingOff":"#424242","thinkingMinimal":"#173375","thinkingLow":"#142a5d","thinkingMedium":"#052626","thinkingHigh":"#000000","thinkingXhigh":"#000000","thinkingMax":"#000000"}"##,
    );
}

#[test]
fn a_faint_foreground_on_a_light_background_is_replaced() {
    check(
        "#fdf6e3",
        Some("#c0c0c0"),
        &[],
        r##"{"selectedBg":"#dfe7eb","searchMatchBg":"#ede3de","userMessageBg":"#dfe7eb","customMessageBg":"#e6e4ee","toolPendingBg":"#e4e6e6","toolSuccessBg":"#dee8e2","toolErrorBg":"#eee3e2","text":"#575757","userMessageText":"#575757","customMessageText":"#677075","toolTitle":"#565656","syntaxOperator":"#677075","syntaxPunctuation":"#677075","muted":"#677075","dim":"#869095","thinkingText":"#7b858a","toolOutput":"#677075","mdLinkUrl":"#677176","mdQuote":"#677176","mdQuoteBorder":"#677075","mdHr":"#677075","mdCodeBlockBorder":"#677176","toolDiffContext":"#677075","syntaxComment":"#677075","scrollbarTrack":"#e1e2e3","scrollbarThumb":"#97a0a5","searchMatchText":"#677075","borderMuted":"#9aa3a7","accent":"#755ab5","borderAccent":"#8a70ca","customMessageLabel":"#755ab5","mdCode":"#765bb6","mdListBullet":"#765bb6","syntaxType":"#755ab5","border":"#3c8db2","mdLink":"#2f7899","syntaxKeyword":"#2f7798","syntaxVariable":"#287c82","success":"#337f59","mdCodeBlock":"#337f59","toolDiffAdded":"#337f59","bashMode":"#3f966b","syntaxNumber":"#337f59","error":"#c6253c","toolDiffRemoved":"#c6253c","warning":"#8e6701","mdHeading":"#8e6701","syntaxFunction":"#8e6701","syntaxString":"#a65517","thinkingOff":"#c3c7c9","thinkingMinimal":"#b6c3cb","thinkingLow":"#9ec1d4","thinkingMedium":"#a1b6df","thinkingHigh":"#b4a4e8","thinkingXhigh":"#e583cc","thinkingMax":"#fe7177"}"##,
    );
}

#[test]
fn a_palette_with_a_colour_missing_is_not_used() {
    check(
        "#282c34",
        Some("#abb2bf"),
        &[
            "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5", "#7f7f7f",
            "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff",
        ],
        r##"{"selectedBg":"#223d4b","searchMatchBg":"#51311d","userMessageBg":"#223d4b","customMessageBg":"#3c3258","toolPendingBg":"#363a3c","toolSuccessBg":"#244131","toolErrorBg":"#5a2829","text":"#b0b6c2","userMessageText":"#b0b6c2","customMessageText":"#9da5aa","toolTitle":"#b0b6c2","syntaxOperator":"#9da5aa","syntaxPunctuation":"#9da5aa","muted":"#9da5aa","dim":"#7e888e","thinkingText":"#969fa4","toolOutput":"#9da5aa","mdLinkUrl":"#9da5aa","mdQuote":"#9da5aa","mdQuoteBorder":"#9da5aa","mdHr":"#9da5aa","mdCodeBlockBorder":"#9da5aa","toolDiffContext":"#9da5aa","syntaxComment":"#9da5aa","scrollbarTrack":"#4a5054","scrollbarThumb":"#979fa4","searchMatchText":"#9da5aa","borderMuted":"#778187","accent":"#a899d7","borderAccent":"#a291d5","customMessageLabel":"#a899d7","mdCode":"#a798d7","mdListBullet":"#a798d7","syntaxType":"#a899d7","border":"#5fa7cb","mdLink":"#6aaed0","syntaxKeyword":"#6aaed0","syntaxVariable":"#5cb4bb","success":"#68b78c","mdCodeBlock":"#68b78c","toolDiffAdded":"#68b78c","bashMode":"#5eb185","syntaxNumber":"#68b78c","error":"#eb8081","toolDiffRemoved":"#eb8081","warning":"#ce9a22","mdHeading":"#ce9a22","syntaxFunction":"#ce9a22","syntaxString":"#df8d5a","thinkingOff":"#6d767c","thinkingMinimal":"#677f8c","thinkingLow":"#5489a4","thinkingMedium":"#6386cd","thinkingHigh":"#9676e4","thinkingXhigh":"#df54c0","thinkingMax":"#fe5563"}"##,
    );
}

#[test]
fn pastel_palette_colours_stay_pastel_on_black() {
    check(
        "#000000",
        Some("#ffffff"),
        &[
            "#51576d", "#e78284", "#a6d189", "#e5c890", "#8caaee", "#f4b8e4", "#81c8be", "#b5bfe2", "#626880",
            "#e78284", "#a6d189", "#e5c890", "#8caaee", "#f4b8e4", "#81c8be", "#a5adce",
        ],
        r##"{"selectedBg":"#1e2a48","searchMatchBg":"#362a11","userMessageBg":"#1e2a48","customMessageBg":"#46163c","toolPendingBg":"#292b32","toolSuccessBg":"#233019","toolErrorBg":"#3f2223","text":"","userMessageText":"","customMessageText":"#979cb2","toolTitle":"","syntaxOperator":"#979cb2","syntaxPunctuation":"#979cb2","muted":"#979cb2","dim":"#787e97","thinkingText":"#8e94ab","toolOutput":"#979cb1","mdLinkUrl":"#979cb2","mdQuote":"#979cb2","mdQuoteBorder":"#979cb2","mdHr":"#979cb2","mdCodeBlockBorder":"#979cb2","toolDiffContext":"#979cb1","syntaxComment":"#979cb2","scrollbarTrack":"#414452","scrollbarThumb":"#9096ad","searchMatchText":"#979cb2","borderMuted":"#6f758e","accent":"#c188b2","borderAccent":"#b880aa","customMessageLabel":"#c188b2","mdCode":"#c188b2","mdListBullet":"#c188b2","syntaxType":"#c188b2","border":"#7793d6","mdLink":"#7e9cdf","syntaxKeyword":"#7e9cdf","syntaxVariable":"#66aca3","success":"#82ac66","mdCodeBlock":"#82ac66","toolDiffAdded":"#82ac66","bashMode":"#7ba35e","syntaxNumber":"#c188b2","error":"#e07b7e","toolDiffRemoved":"#e07b7e","warning":"#b59963","mdHeading":"#b59963","syntaxFunction":"#b59963","syntaxString":"#82ac66","thinkingOff":"#656b83","thinkingMinimal":"#5570af","thinkingLow":"#5b77b7","thinkingMedium":"#4e8c84","thinkingHigh":"#a7709a","thinkingXhigh":"#ae76a0","thinkingMax":"#d26f72"}"##,
    );
}

/// pi 1.6 without any reported colour: palette indices, default colours, and the faint tokens.
const FALLBACK: &str = r##"{"colors":{"selectedBg":"","searchMatchBg":"","userMessageBg":"","customMessageBg":"","toolPendingBg":"","toolSuccessBg":"","toolErrorBg":"","text":"","userMessageText":"","customMessageText":"","toolTitle":"","syntaxOperator":"","syntaxPunctuation":"","muted":"","dim":"","thinkingText":"","toolOutput":"","mdLinkUrl":"","mdQuote":"","mdQuoteBorder":"","mdHr":"","mdCodeBlockBorder":"","toolDiffContext":"","syntaxComment":"","scrollbarTrack":"","scrollbarThumb":"","searchMatchText":"","borderMuted":"","accent":5,"borderAccent":5,"customMessageLabel":5,"mdCode":5,"mdListBullet":5,"syntaxType":5,"border":4,"mdLink":4,"syntaxKeyword":4,"syntaxVariable":6,"success":2,"mdCodeBlock":2,"toolDiffAdded":2,"bashMode":2,"syntaxNumber":5,"error":1,"toolDiffRemoved":1,"warning":3,"mdHeading":3,"syntaxFunction":3,"syntaxString":2,"thinkingOff":"","thinkingMinimal":4,"thinkingLow":4,"thinkingMedium":6,"thinkingHigh":5,"thinkingXhigh":13,"thinkingMax":1},"dim":["customMessageText","syntaxOperator","syntaxPunctuation","muted","dim","thinkingText","toolOutput","mdLinkUrl","mdQuote","mdQuoteBorder","mdHr","mdCodeBlockBorder","toolDiffContext","syntaxComment","scrollbarTrack","scrollbarThumb","searchMatchText","borderMuted","thinkingOff"]}"##;
