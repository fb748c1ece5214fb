//! The page shell of the HTML export: theme colours as CSS variables, the stylesheet, the small
//! optional script and the Content-Security-Policy that keeps the page offline.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The built-in dark theme, resolved to `#rrggbb` (`""` = the terminal's default colour).
const DARK: &[(&str, &str)] = &[
    ("accent", "#8abeb7"),
    ("border", "#5f87ff"),
    ("borderAccent", "#00d7ff"),
    ("borderMuted", "#505050"),
    ("success", "#b5bd68"),
    ("error", "#cc6666"),
    ("warning", "#ffff00"),
    ("muted", "#808080"),
    ("dim", "#666666"),
    ("text", ""),
    ("thinkingText", "#808080"),
    ("selectedBg", "#3a3a4a"),
    ("userMessageBg", "#343541"),
    ("userMessageText", ""),
    ("customMessageBg", "#2d2838"),
    ("customMessageText", ""),
    ("customMessageLabel", "#9575cd"),
    ("toolPendingBg", "#282832"),
    ("toolSuccessBg", "#283228"),
    ("toolErrorBg", "#3c2828"),
    ("toolTitle", ""),
    ("toolOutput", "#808080"),
    ("mdHeading", "#f0c674"),
    ("mdLink", "#81a2be"),
    ("mdLinkUrl", "#666666"),
    ("mdCode", "#8abeb7"),
    ("mdCodeBlock", "#b5bd68"),
    ("mdCodeBlockBorder", "#808080"),
    ("mdQuote", "#808080"),
    ("mdQuoteBorder", "#808080"),
    ("mdHr", "#808080"),
    ("mdListBullet", "#8abeb7"),
    ("toolDiffAdded", "#b5bd68"),
    ("toolDiffRemoved", "#cc6666"),
    ("toolDiffContext", "#808080"),
    ("syntaxComment", "#6A9955"),
    ("syntaxKeyword", "#569CD6"),
    ("syntaxFunction", "#DCDCAA"),
    ("syntaxVariable", "#9CDCFE"),
    ("syntaxString", "#CE9178"),
    ("syntaxNumber", "#B5CEA8"),
    ("syntaxType", "#4EC9B0"),
    ("syntaxOperator", "#D4D4D4"),
    ("syntaxPunctuation", "#D4D4D4"),
    ("thinkingOff", "#505050"),
    ("thinkingMinimal", "#6e6e6e"),
    ("thinkingLow", "#5f87af"),
    ("thinkingMedium", "#81a2be"),
    ("thinkingHigh", "#b294bb"),
    ("thinkingXhigh", "#d183e8"),
    ("bashMode", "#b5bd68"),
];

/// Theme colours for the page: the 51 theme tokens plus the export backgrounds, every value a
/// validated `#rrggbb` (or empty for "default"), so nothing from a theme file reaches the CSS raw.
#[derive(Debug, Clone, PartialEq)]
pub struct ThemeColors {
    colors: BTreeMap<String, String>,
    page_bg: Option<String>,
    card_bg: Option<String>,
    info_bg: Option<String>,
}

impl Default for ThemeColors {
    fn default() -> Self {
        Self {
            colors: DARK.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect(),
            page_bg: Some("#18181e".into()),
            card_bg: Some("#1e1e24".into()),
            info_bg: Some("#3c3728".into()),
        }
    }
}

impl ThemeColors {
    /// Reads a theme: either a pi theme file (`{name, vars?, colors, export?}`) or a flat map of
    /// token to colour. Values may be `#rrggbb`, a var name, an xterm index 0-255 or `""`.
    /// Tokens that are missing or unresolvable keep the dark theme's colour.
    pub fn from_json(theme: &Value) -> Self {
        let mut out = Self::default();
        let empty = serde_json::Map::new();
        let vars = theme.get("vars").and_then(Value::as_object).unwrap_or(&empty);
        let colors = theme
            .get("colors")
            .and_then(Value::as_object)
            .or_else(|| theme.as_object())
            .unwrap_or(&empty);
        for (token, value) in colors {
            if out.colors.contains_key(token) {
                if let Some(c) = resolve_color(value, vars) {
                    out.colors.insert(token.clone(), c);
                }
            }
        }
        let export = theme.get("export");
        let pick = |key: &str| {
            export
                .and_then(|e| e.get(key))
                .and_then(|v| resolve_color(v, vars))
                .filter(|c| !c.is_empty())
        };
        out.page_bg = pick("pageBg");
        out.card_bg = pick("cardBg");
        out.info_bg = pick("infoBg");
        out
    }

    /// The `:root { ... }` block with one `--<token>` variable per colour.
    pub(crate) fn css_vars(&self) -> String {
        let base = self
            .colors
            .get("userMessageBg")
            .and_then(|c| parse_hex(c))
            .unwrap_or((0x34, 0x35, 0x41));
        let light = luminance(base) > 0.5;
        let (page, card, info) = derive_backgrounds(base, light);
        let fg = if light { "#1f2328" } else { "#d8d8d8" };
        let mut css = String::from(":root{");
        for (token, value) in &self.colors {
            let v = if value.is_empty() { fg } else { value.as_str() };
            css.push_str(&format!("--{token}:{v};"));
        }
        css.push_str(&format!(
            "--pageBg:{};--cardBg:{};--infoBg:{};--fg:{fg};color-scheme:{};}}",
            self.page_bg.as_deref().unwrap_or(&page),
            self.card_bg.as_deref().unwrap_or(&card),
            self.info_bg.as_deref().unwrap_or(&info),
            if light { "light" } else { "dark" },
        ));
        css
    }
}

fn resolve_color(value: &Value, vars: &serde_json::Map<String, Value>) -> Option<String> {
    let mut cur = value;
    // A var may point at another var; a bounded walk also stops circular references.
    for _ in 0..16 {
        match cur {
            Value::Number(n) => return n.as_u64().filter(|i| *i < 256).map(xterm_hex),
            Value::String(s) if s.is_empty() => return Some(String::new()),
            Value::String(s) if s.starts_with('#') => {
                return parse_hex(s).map(|(r, g, b)| format!("#{r:02x}{g:02x}{b:02x}"))
            }
            Value::String(s) => cur = vars.get(s)?,
            _ => return None,
        }
    }
    None
}

fn parse_hex(s: &str) -> Option<(u8, u8, u8)> {
    let h = s.strip_prefix('#')?;
    if h.len() != 6 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).ok();
    Some((byte(0)?, byte(2)?, byte(4)?))
}

fn xterm_hex(i: u64) -> String {
    const BASE: [(u8, u8, u8); 16] = [
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
    let (r, g, b) = match i {
        0..=15 => BASE[i as usize],
        16..=231 => {
            let n = i - 16;
            let step = |v: u64| if v == 0 { 0 } else { (55 + v * 40) as u8 };
            (step(n / 36), step((n / 6) % 6), step(n % 6))
        }
        _ => {
            let g = (8 + (i - 232) * 10) as u8;
            (g, g, g)
        }
    };
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)) / 255.0
}

/// Page, card and info backgrounds derived from the user-message background when a theme does not
/// name them: darker shades for dark themes, lighter ones for light themes.
fn derive_backgrounds(base: (u8, u8, u8), light: bool) -> (String, String, String) {
    let mix = |(r, g, b): (u8, u8, u8), t: f64, to: f64| {
        let m = |c: u8| (f64::from(c) + (to - f64::from(c)) * t).round() as u8;
        format!("#{:02x}{:02x}{:02x}", m(r), m(g), m(b))
    };
    let (r, g, b) = base;
    if light {
        (
            mix(base, 0.6, 255.0),
            mix(base, 0.85, 255.0),
            format!(
                "#{:02x}{:02x}{:02x}",
                r.saturating_add(20),
                g.saturating_add(15),
                b.saturating_sub(10)
            ),
        )
    } else {
        (
            mix(base, 0.45, 0.0),
            mix(base, 0.3, 0.0),
            format!("#{:02x}{:02x}{:02x}", r.saturating_add(20), g.saturating_add(15), b),
        )
    }
}

const CSS: &str = r#"
*{box-sizing:border-box}
html,body{margin:0;padding:0}
body{background:var(--pageBg);color:var(--fg);font:14px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
a{color:var(--mdLink)}
.layout{display:flex;align-items:flex-start;min-height:100vh}
.sidebar{flex:none;width:300px;min-width:160px;max-width:70vw;position:sticky;top:0;max-height:100vh;overflow:auto;padding:12px;border-right:1px solid var(--borderMuted);font-size:12px;resize:horizontal}
.sidebar summary{cursor:pointer;color:var(--accent);font-weight:bold;margin-bottom:6px}
.sidebar .count{color:var(--muted);font-weight:normal}
.tree,.tree ul{list-style:none;margin:0;padding:0}
.tree ul{padding-left:10px;border-left:1px solid var(--borderMuted);margin-left:4px}
.tree li{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;padding:1px 0}
.tree li.fork,.tree li.branch{white-space:normal;overflow:visible}
.tree a{color:var(--fg);text-decoration:none}
.tree a:hover{text-decoration:underline}
.tree .off{color:var(--dim)}
.tree .leaf{color:var(--accent);font-weight:bold}
.tree .role{color:var(--muted)}
.tree .lbl,.label-badge{color:var(--warning);border:1px solid var(--borderMuted);border-radius:3px;padding:0 3px;margin-right:4px}
.filter{width:100%;margin:0 0 6px;padding:3px 5px;background:var(--cardBg);color:var(--fg);border:1px solid var(--borderMuted)}
main{flex:1;min-width:0;max-width:980px;margin:0 auto;padding:16px 20px 60px}
header.session{background:var(--cardBg);border:1px solid var(--borderMuted);border-radius:6px;padding:12px 16px;margin-bottom:18px}
header.session h1{margin:0 0 8px;font-size:18px;color:var(--mdHeading)}
.info{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
.info dt{color:var(--muted)}
.info dd{margin:0;word-break:break-all}
.controls{margin-top:8px}
.controls button{background:var(--selectedBg);color:var(--fg);border:1px solid var(--borderMuted);border-radius:3px;padding:2px 8px;cursor:pointer;font:inherit;font-size:12px}
html:not([data-js]) .js-only{display:none}
.entry{margin:10px 0;scroll-margin-top:12px}
.entry:target{outline:1px solid var(--borderAccent);outline-offset:3px}
.meta{font-size:11px;color:var(--dim);margin-bottom:2px}
.meta .who{color:var(--accent);font-weight:bold;margin-right:6px}
.user{background:var(--userMessageBg);color:var(--userMessageText);border-radius:6px;padding:8px 12px}
.user .text{white-space:pre-wrap;word-wrap:break-word}
.assistant{padding:2px 2px}
.md{word-wrap:break-word}
.md>:first-child{margin-top:0}
.md>:last-child{margin-bottom:0}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{color:var(--mdHeading);margin:12px 0 6px;font-size:15px}
.md h1{font-size:18px}.md h2{font-size:16px}
.md code{color:var(--mdCode)}
.md pre{border-left:2px solid var(--mdCodeBlockBorder);padding:6px 10px;background:var(--cardBg);overflow-x:auto}
.md pre code{color:var(--mdCodeBlock)}
.md blockquote{color:var(--mdQuote);border-left:2px solid var(--mdQuoteBorder);margin:6px 0;padding-left:10px}
.md hr{border:0;border-top:1px solid var(--mdHr)}
.md li::marker{color:var(--mdListBullet)}
.md table{border-collapse:collapse}
.md th,.md td{border:1px solid var(--borderMuted);padding:2px 8px}
.md img,.user img,.tool img{max-width:100%;border:1px solid var(--borderMuted);border-radius:4px}
.thinking{color:var(--thinkingText);font-style:italic;margin:4px 0}
.thinking summary,.collapsible>summary{cursor:pointer;color:var(--muted);font-style:normal}
.thinking .body{white-space:pre-wrap;border-left:2px solid var(--borderMuted);padding-left:10px;margin-top:4px}
.tool{border-radius:6px;padding:6px 10px;margin:6px 0;background:var(--toolPendingBg)}
.tool.ok{background:var(--toolSuccessBg)}
.tool.err{background:var(--toolErrorBg)}
.tool .title{color:var(--toolTitle);font-weight:bold}
.tool .title .arg{font-weight:normal;color:var(--accent)}
.tool .title .extra{font-weight:normal;color:var(--muted)}
.tool pre,.bash pre{margin:4px 0 0;white-space:pre-wrap;word-wrap:break-word;font:inherit}
.tool .output{color:var(--toolOutput)}
.tool.err .output{color:var(--error)}
.more>summary{cursor:pointer;color:var(--muted);font-size:12px}
.more[open]>summary{margin-bottom:0}
.more>pre{margin-top:0}
.diff .add{color:var(--toolDiffAdded)}
.diff .del{color:var(--toolDiffRemoved)}
.diff .ctx{color:var(--toolDiffContext)}
.diff span{display:block}
.status{font-size:12px;color:var(--muted);margin-top:2px}
.status.bad{color:var(--error)}
.error{color:var(--error);border-left:2px solid var(--error);padding-left:8px;margin:4px 0;white-space:pre-wrap}
.usage{font-size:11px;color:var(--dim);margin-top:2px}
.event{font-size:12px;color:var(--muted);text-align:center;margin:8px 0}
.event b{color:var(--accent);font-weight:normal}
.summary-box{background:var(--infoBg);border-radius:6px;padding:8px 12px}
.summary-box>summary,.summary-box .kind{color:var(--warning);cursor:pointer}
.custom{background:var(--customMessageBg);color:var(--customMessageText);border-radius:6px;padding:8px 12px}
.custom .kind{color:var(--customMessageLabel);font-weight:bold}
.skill{border:1px solid var(--borderMuted);border-radius:4px;padding:2px 8px;margin-bottom:6px}
.skill>summary{cursor:pointer;color:var(--customMessageLabel)}
.skill .body{white-space:pre-wrap;color:var(--muted)}
.sys pre{white-space:pre-wrap;max-height:400px;overflow:auto;color:var(--muted)}
@media (max-width:900px){.layout{display:block}.sidebar{position:static;width:auto;max-width:none;max-height:none;border-right:0;border-bottom:1px solid var(--borderMuted)}}
@media print{.sidebar,.controls{display:none}details>*{display:block}}
"#;

/// Progressive enhancement only: expand/collapse buttons, a tree filter and two shortcuts. The
/// page is complete without it.
const SCRIPT: &str = r#"(function(){
var d=document;d.documentElement.setAttribute('data-js','on');
function all(open){d.querySelectorAll('main details').forEach(function(x){x.open=open;});}
var e=d.getElementById('expand-all'),c=d.getElementById('collapse-all'),f=d.getElementById('tree-filter');
if(e)e.addEventListener('click',function(){all(true);});
if(c)c.addEventListener('click',function(){all(false);});
if(f)f.addEventListener('input',function(){var q=f.value.toLowerCase();
d.querySelectorAll('.tree li.node').forEach(function(li){li.hidden=q!==''&&li.textContent.toLowerCase().indexOf(q)<0;});});
d.addEventListener('keydown',function(ev){if(ev.target&&ev.target.tagName==='INPUT')return;
if(ev.key==='T'){d.querySelectorAll('main details.thinking').forEach(function(x){x.open=!x.open;});}
if(ev.key==='O'){d.querySelectorAll('main details.more').forEach(function(x){x.open=!x.open;});}});
})();"#;

fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest))
}

/// Assembles the page. `title`, `sidebar` and `main` are already escaped HTML.
pub(crate) fn page(theme: &ThemeColors, title: &str, sidebar: &str, main: &str) -> String {
    let style = format!("{}{}", theme.css_vars(), CSS);
    // Only our own stylesheet and script may apply (by hash), only inline images load, and no
    // request can leave the page: injected markup stays inert even if escaping had a gap.
    let csp = format!(
        "default-src 'none'; img-src data:; style-src {}; script-src {}; base-uri 'none'; form-action 'none'",
        csp_hash(&style),
        csp_hash(SCRIPT)
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"referrer\" content=\"no-referrer\">\n\
<title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n<div class=\"layout\">\n\
<aside class=\"sidebar\">{sidebar}</aside>\n<main>{main}</main>\n</div>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn theme_file_resolves_vars_indices_and_rejects_junk() {
        let t = ThemeColors::from_json(&json!({
            "name": "x",
            "vars": {"a": "b", "b": "#ABCDEF", "loop1": "loop2", "loop2": "loop1"},
            "colors": {"accent": "a", "error": 196, "muted": "loop1", "text": "red;}body{x:y",
                        "success": "", "notAToken": "#000000"},
            "export": {"pageBg": "#010203"}
        }));
        let css = t.css_vars();
        assert!(css.contains("--accent:#abcdef;"), "{css}");
        assert!(css.contains("--error:#ff0000;"));
        assert!(css.contains("--muted:#808080;"), "a circular var keeps the default");
        assert!(!css.contains("body{x"), "raw values never reach the CSS");
        assert!(!css.contains("notAToken"));
        assert!(css.contains("--pageBg:#010203;"));
        assert!(
            css.contains("--success:#d8d8d8;"),
            "empty means the default text colour"
        );
    }

    #[test]
    fn light_user_background_gives_light_page() {
        let t = ThemeColors::from_json(&json!({"userMessageBg": "#e8e8e8"}));
        let css = t.css_vars();
        assert!(css.contains("color-scheme:light"));
        assert!(css.contains("--fg:#1f2328"));
    }

    #[test]
    fn xterm_palette() {
        assert_eq!(xterm_hex(16), "#000000");
        assert_eq!(xterm_hex(21), "#0000ff");
        assert_eq!(xterm_hex(231), "#ffffff");
        assert_eq!(xterm_hex(232), "#080808");
        assert_eq!(xterm_hex(9), "#ff0000");
    }
}
