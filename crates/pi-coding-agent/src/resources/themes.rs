//! Themes: JSON files naming a colour for each of the 51 tokens the TUI paints with.
//!
//! A theme file is `{"$schema"?, "name", "vars"?, "colors", "export"?}`. A colour is
//! `"#rrggbb"`, an xterm palette index 0–255, `""` (the terminal's default) or the name of a
//! var (vars may refer to vars; a cycle is an error). Loading checks the shape as pi 1.6's
//! schema does (unknown keys, at the top, in `colors` or in `export`, are refused), resolves the
//! vars and reports every problem at once. Custom themes come from `--theme` paths, settings
//! `themes`, `.pi/themes/*.json` and `<agent>/themes/*.json`; the first with a name wins.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::discovery::collect_top_level_files;
use super::sources::{collect_from_sources, ResourceCollector, ResourceSources};
use super::{Diagnostic, ResourceScope};
use crate::config::paths::{Paths, CONFIG_DIR_NAME};

/// Every colour token a theme must define, in the order of pi's schema.
pub const THEME_TOKENS: [&str; 51] = [
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    "bashMode",
];

/// Tokens a theme may leave out, and the token each then takes its colour from.
pub const OPTIONAL_TOKENS: [(&str, &str); 5] = [
    ("scrollbarTrack", "muted"),
    ("scrollbarThumb", "text"),
    ("searchMatchBg", "selectedBg"),
    ("searchMatchText", "text"),
    ("thinkingMax", "thinkingXhigh"),
];

/// Tokens used as backgrounds (the rest are foregrounds).
pub const BACKGROUND_TOKENS: [&str; 7] = [
    "selectedBg",
    "searchMatchBg",
    "userMessageBg",
    "customMessageBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
];

/// A resolved colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeColor {
    /// The terminal's default colour (`""`).
    Default,
    /// An xterm-256 palette index.
    Index(u8),
    /// A truecolour value.
    Rgb(u8, u8, u8),
}

/// A loaded theme with every token resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    /// All 51 tokens.
    pub colors: BTreeMap<String, ThemeColor>,
    /// Optional HTML-export colours (`pageBg`, `cardBg`, `infoBg`), resolved.
    pub export: BTreeMap<String, ThemeColor>,
    /// The file it came from (`None` for built-ins).
    pub source_path: Option<PathBuf>,
}

impl Theme {
    /// A token's colour; the optional tokens pi 1.6 added fall back to the one they refine.
    pub fn color(&self, token: &str) -> ThemeColor {
        if let Some(c) = self.colors.get(token) {
            return *c;
        }
        match OPTIONAL_TOKENS.iter().find(|(t, _)| *t == token) {
            Some((_, fallback)) => self.colors.get(*fallback).copied().unwrap_or(ThemeColor::Default),
            None => ThemeColor::Default,
        }
    }
    pub fn is_background(token: &str) -> bool {
        BACKGROUND_TOKENS.contains(&token)
    }
}

/// The problems with one colour value (a string, or an integer 0-255), as pi 1.6's schema
/// check words them: one line per alternative that failed, then the summary line.
fn color_value_errors(path: &str, v: &Value, out: &mut Vec<String>) {
    if v.is_string() {
        return;
    }
    let integer = v
        .as_i64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64));
    let why = match integer {
        Some(n) if n < 0 => "must be >= 0",
        Some(n) if n > 255 => "must be <= 255",
        Some(_) => return,
        None => "must be integer",
    };
    out.push(format!("  - {path}: must be string"));
    out.push(format!("  - {path}: {why}"));
    out.push(format!("  - {path}: must match a schema in anyOf"));
}

/// Keys of `obj` outside `allowed`, each reported, then the object once (pi 1.6 refuses
/// unknown keys rather than ignoring them, so a typo in a token name is not silent).
fn unknown_key_errors(path: &str, obj: &Map<String, Value>, allowed: &dyn Fn(&str) -> bool, out: &mut Vec<String>) {
    let mut any = false;
    for key in obj.keys().filter(|k| !allowed(k)) {
        out.push(format!("  - {path}/{key}: schema is false"));
        any = true;
    }
    if any {
        let at = if path.is_empty() { "/" } else { path };
        out.push(format!("  - {at}: must not have additional properties"));
    }
}

/// Everything wrong with a theme document's shape, in the order pi 1.6 lists it: the
/// missing colour tokens apart, then required keys, unknown keys and bad values.
fn shape_errors(json: &Value) -> (Vec<&'static str>, Vec<String>) {
    let mut missing = Vec::new();
    let mut other = Vec::new();
    let Some(obj) = json.as_object() else {
        other.push("  - /: must be object".to_string());
        return (missing, other);
    };
    let required: Vec<&str> = ["name", "colors"]
        .into_iter()
        .filter(|k| !obj.contains_key(*k))
        .collect();
    if !required.is_empty() {
        other.push(format!("  - /: must have required properties {}", required.join(", ")));
    }
    const TOP: [&str; 6] = ["$schema", "name", "appearance", "vars", "colors", "export"];
    unknown_key_errors("", obj, &|k| TOP.contains(&k), &mut other);
    if obj.get("$schema").is_some_and(|v| !v.is_string()) {
        other.push("  - /$schema: must be string".to_string());
    }
    if obj.get("name").is_some_and(|v| !v.is_string()) {
        other.push("  - /name: must be string".to_string());
    }
    if obj
        .get("appearance")
        .is_some_and(|a| !matches!(a.as_str(), Some("dark" | "light")))
    {
        // One line per allowed value that did not match.
        for _ in 0..2 {
            other.push("  - /appearance: must be equal to constant".to_string());
        }
        other.push("  - /appearance: must match a schema in anyOf".to_string());
    }
    match obj.get("vars") {
        None => {}
        Some(Value::Object(vars)) => {
            for (k, v) in vars {
                color_value_errors(&format!("/vars/{k}"), v, &mut other);
            }
        }
        Some(_) => other.push("  - /vars: must be object".to_string()),
    }
    match obj.get("colors") {
        None => {}
        Some(Value::Object(colors)) => {
            let known = |k: &str| THEME_TOKENS.contains(&k) || OPTIONAL_TOKENS.iter().any(|(t, _)| *t == k);
            missing.extend(THEME_TOKENS.iter().filter(|t| !colors.contains_key(**t)));
            unknown_key_errors("/colors", colors, &known, &mut other);
            for token in schema_order() {
                if let Some(v) = colors.get(token) {
                    color_value_errors(&format!("/colors/{token}"), v, &mut other);
                }
            }
        }
        Some(_) => other.push("  - /colors: must be object".to_string()),
    }
    match obj.get("export") {
        None => {}
        Some(Value::Object(export)) => {
            const EXPORT: [&str; 3] = ["pageBg", "cardBg", "infoBg"];
            unknown_key_errors("/export", export, &|k| EXPORT.contains(&k), &mut other);
            for key in EXPORT {
                if let Some(v) = export.get(key) {
                    color_value_errors(&format!("/export/{key}"), v, &mut other);
                }
            }
        }
        Some(_) => other.push("  - /export: must be object".to_string()),
    }
    (missing, other)
}

/// Where pi 1.6's schema lists each optional token: right after the token named here (the
/// order its value errors are listed in).
const OPTIONAL_AFTER: [(&str, &str); 5] = [
    ("scrollbarTrack", "thinkingText"),
    ("scrollbarThumb", "scrollbarTrack"),
    ("searchMatchBg", "selectedBg"),
    ("searchMatchText", "searchMatchBg"),
    ("thinkingMax", "thinkingXhigh"),
];

/// Every token, the optional ones included, in the order of pi 1.6's schema.
fn schema_order() -> Vec<&'static str> {
    let mut order = Vec::with_capacity(THEME_TOKENS.len() + OPTIONAL_AFTER.len());
    for token in THEME_TOKENS {
        order.push(token);
        let mut last = token;
        while let Some((optional, _)) = OPTIONAL_AFTER.iter().find(|(_, after)| *after == last) {
            order.push(optional);
            last = optional;
        }
    }
    order
}

fn resolve(value: &Value, vars: &Map<String, Value>, seen: &mut HashSet<String>) -> Result<ThemeColor, String> {
    if let Some(n) = value.as_u64() {
        return Ok(ThemeColor::Index(n.min(255) as u8));
    }
    // `7.0` is the integer 7 to a JSON reader that has one kind of number.
    if let Some(f) = value.as_f64().filter(|f| f.fract() == 0.0 && (0.0..=255.0).contains(f)) {
        return Ok(ThemeColor::Index(f as u8));
    }
    let Some(s) = value.as_str() else {
        return Err(format!("Invalid color value: {value}"));
    };
    if s.is_empty() {
        return Ok(ThemeColor::Default);
    }
    // `#rgb`, `#rrggbb`, `oklch(…)`, `okhsl(…)`; anything else names a variable.
    if let Some(color) = super::theme_color::parse_color_literal(s) {
        return color;
    }
    if !seen.insert(s.to_string()) {
        return Err(format!("Circular variable reference detected: {s}"));
    }
    match vars.get(s) {
        Some(next) => resolve(next, vars, seen),
        None => Err(format!("Variable reference not found: {s}")),
    }
}

/// Check and resolve a theme's JSON. `label` names it in messages.
pub fn parse_theme_value(label: &str, json: &Value, source: Option<&Path>) -> Result<Theme, String> {
    let obj = json.as_object();
    let name = obj.and_then(|o| o.get("name"));
    // A slash would make the name read as a `light/dark` pair in settings.
    if let Some(n) = name.and_then(Value::as_str).filter(|n| n.contains('/')) {
        return Err(format!(
            "Invalid theme name \"{n}\": theme names cannot contain \"/\" because it is reserved for automatic light/dark theme settings."
        ));
    }
    let (mut missing, other) = shape_errors(json);
    let vars = obj
        .and_then(|o| o.get("vars"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let colors = obj.and_then(|o| o.get("colors"));
    if !missing.is_empty() || !other.is_empty() {
        let mut msg = format!("Invalid theme \"{label}\":\n");
        if !missing.is_empty() {
            missing.sort_unstable();
            msg.push_str("\nMissing required color tokens:\n");
            msg.push_str(
                &missing
                    .iter()
                    .map(|t| format!("  - {t}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            msg.push_str("\n\nAdd them to the theme's \"colors\" object; the built-in dark and light themes show a value for each.");
        }
        if !other.is_empty() {
            msg.push_str(&format!("\n\nOther errors:\n{}", other.join("\n")));
        }
        return Err(msg);
    }
    let colors_obj = colors.and_then(Value::as_object).cloned().unwrap_or_default();
    let mut resolved = BTreeMap::new();
    for token in THEME_TOKENS {
        let v = colors_obj.get(token).cloned().unwrap_or(Value::String(String::new()));
        resolved.insert(token.to_string(), resolve(&v, &vars, &mut HashSet::new())?);
    }
    for (token, _) in OPTIONAL_TOKENS {
        if let Some(v) = colors_obj.get(token) {
            resolved.insert(token.to_string(), resolve(v, &vars, &mut HashSet::new())?);
        }
    }
    let mut export = BTreeMap::new();
    if let Some(e) = obj.and_then(|o| o.get("export")).and_then(Value::as_object) {
        for key in ["pageBg", "cardBg", "infoBg"] {
            if let Some(v) = e.get(key) {
                export.insert(key.to_string(), resolve(v, &vars, &mut HashSet::new())?);
            }
        }
    }
    Ok(Theme {
        name: name.and_then(Value::as_str).unwrap_or_default().to_string(),
        colors: resolved,
        export,
        source_path: source.map(Path::to_path_buf),
    })
}

/// Read, check and resolve a theme file.
pub fn load_theme_file(path: &Path) -> Result<Theme, String> {
    load_theme_file_as(path, &path.to_string_lossy())
}

/// [`load_theme_file`], naming the theme `label` in messages (pi 1.6 names a theme it
/// loads by name, rather than by path, that way).
pub fn load_theme_file_as(path: &Path, label: &str) -> Result<Theme, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("Failed to read theme {label}: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let json: Value = serde_json::from_str(text).map_err(|e| format!("Failed to parse theme {label}: {e}"))?;
    parse_theme_value(label, &json, Some(path))
}

/// What to load custom themes from.
pub type ThemeSources = ResourceSources;

/// Custom themes and the problems met.
#[derive(Debug, Clone, Default)]
pub struct LoadedThemes {
    pub themes: Vec<Theme>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Theme files in precedence order, and the unusable paths met.
#[derive(Default)]
struct ThemeFiles {
    files: Vec<PathBuf>,
    diagnostics: Vec<Diagnostic>,
}

impl ResourceCollector for ThemeFiles {
    const EXTENSION: &'static str = "json";

    fn folder_files(&self, dir: &Path) -> Vec<PathBuf> {
        collect_top_level_files(dir, ".json")
    }

    fn auto_files(&self, paths: &Paths, scope: &ResourceScope) -> Vec<PathBuf> {
        let dir = match scope {
            ResourceScope::Project => paths.cwd.join(CONFIG_DIR_NAME).join("themes"),
            _ => paths.themes_dir(),
        };
        collect_top_level_files(&dir, ".json")
    }

    /// Themes have no scope: the first one with a name wins, wherever it came from.
    fn add_file(&mut self, file: PathBuf, _scope: ResourceScope) {
        self.files.push(file);
    }

    fn unusable_path(&mut self, path: PathBuf) {
        let message = if path.exists() {
            "theme path is not a json file"
        } else {
            "theme path does not exist"
        };
        self.diagnostics.push(Diagnostic::warning(message, path));
    }
}

/// Load custom themes in precedence order (built-ins are not included; see [`builtin_theme`]).
pub fn load_themes(paths: &Paths, sources: &ThemeSources) -> LoadedThemes {
    let mut found = ThemeFiles::default();
    collect_from_sources(paths, sources, &mut found);
    let ThemeFiles { files, mut diagnostics } = found;
    let mut themes: Vec<Theme> = Vec::new();
    let mut seen = HashSet::new();
    for f in files {
        if !seen.insert(f.clone()) {
            continue;
        }
        match load_theme_file(&f) {
            Ok(theme) => {
                if let Some(existing) = themes.iter().find(|t| t.name == theme.name) {
                    diagnostics.push(Diagnostic::collision(
                        format!("name \"{}\" collision", theme.name),
                        &f,
                        existing.source_path.clone().unwrap_or_default(),
                    ));
                } else {
                    themes.push(theme);
                }
            }
            Err(message) => diagnostics.push(Diagnostic::warning(message, &f)),
        }
    }
    LoadedThemes { themes, diagnostics }
}

/// What the terminal reported of its background (OSC 11): 0 nothing yet, 1 light, 2 dark.
static REPORTED_BACKGROUND: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The terminal reported its background colour: light or dark by its relative luminance.
/// Returns whether that changed what was known.
pub fn set_reported_background(rgb: (u8, u8, u8)) -> bool {
    let code = if is_light(rgb) { 1 } else { 2 };
    REPORTED_BACKGROUND.swap(code, std::sync::atomic::Ordering::Relaxed) != code
}

/// What the terminal last said of its appearance (`CSI ? 997 ; 1|2 n`): 0 nothing, 1 light,
/// 2 dark. Only used while it has not reported its background colour.
static REPORTED_SCHEME: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The terminal said it switched to dark (`true`) or light. Returns whether that changed
/// what was known.
pub fn set_reported_scheme(dark: bool) -> bool {
    let code = if dark { 2 } else { 1 };
    REPORTED_SCHEME.swap(code, std::sync::atomic::Ordering::Relaxed) != code
}

/// Whether a background colour is light (relative luminance, sRGB, above the midpoint).
pub fn is_light(rgb: (u8, u8, u8)) -> bool {
    super::system_theme::luminance(rgb) > 0.179
}

/// The name of the default theme for a terminal: by the background it reported, else
/// `light` when the second field of `COLORFGBG` (the background index) is 8 or more, else
/// `dark`.
pub fn default_theme_name(colorfgbg: Option<&str>) -> &'static str {
    // With the foreground as well, by the direction text is drawn in, as pi 1.6 decides it.
    let reported = super::system_theme::reported();
    if let Some(bg) = reported.background {
        return if super::system_theme::is_dark(bg, reported.foreground) {
            "dark"
        } else {
            "light"
        };
    }
    match REPORTED_BACKGROUND.load(std::sync::atomic::Ordering::Relaxed) {
        1 => return "light",
        2 => return "dark",
        _ => {}
    }
    // Then what the terminal said of its appearance (mode 2031), then `COLORFGBG`.
    match REPORTED_SCHEME.load(std::sync::atomic::Ordering::Relaxed) {
        1 => return "light",
        2 => return "dark",
        _ => {}
    }
    colorfgbg_theme_name(colorfgbg)
}

/// What `COLORFGBG` says of the background (its last field, a palette index), as pi 1.6
/// reads it: 0-6 and 8 are dark, 7 and 9-15 light; anything else says nothing (`dark`).
fn colorfgbg_theme_name(colorfgbg: Option<&str>) -> &'static str {
    let bg = colorfgbg
        .and_then(|v| v.split(';').next_back())
        .map(str::trim)
        .filter(|b| (1..=2).contains(&b.len()) && b.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|b| b.parse::<u32>().ok());
    match bg {
        Some(7 | 9..=15) => "light",
        _ => "dark",
    }
}

/// The built-in `dark` or `light` theme.
pub fn builtin_theme(name: &str) -> Option<Theme> {
    if name == SYSTEM_THEME {
        return Some(system_theme());
    }
    let json = match name {
        "dark" => builtin_json("dark", DARK),
        "light" => builtin_json("light", LIGHT),
        _ => return None,
    };
    parse_theme_value(name, &json, None).ok()
}

/// The theme that follows the terminal's own colours.
pub const SYSTEM_THEME: &str = "system";

/// The ANSI palette slot (0-15) each coloured token of the `system` theme takes; tokens not
/// listed are neutral and use the terminal's default colours.
const SYSTEM_SLOTS: [(&str, u8); 37] = [
    ("accent", 5),
    ("borderAccent", 5),
    ("customMessageLabel", 5),
    ("mdCode", 5),
    ("mdListBullet", 5),
    ("syntaxType", 5),
    ("border", 4),
    ("mdLink", 4),
    ("syntaxKeyword", 4),
    ("syntaxVariable", 6),
    ("success", 2),
    ("mdCodeBlock", 2),
    ("toolDiffAdded", 2),
    ("bashMode", 2),
    ("syntaxNumber", 5),
    ("error", 1),
    ("toolDiffRemoved", 1),
    ("warning", 3),
    ("mdHeading", 3),
    ("syntaxFunction", 3),
    ("syntaxString", 2),
    ("thinkingMinimal", 4),
    ("thinkingLow", 4),
    ("thinkingMedium", 6),
    ("thinkingHigh", 5),
    ("thinkingXhigh", 13),
    ("thinkingMax", 1),
    // Panels (selection, search match, message and tool backgrounds) stay the terminal's own
    // background, as pi 1.6 leaves them without reported colours.
    ("selectedBg", 255),
    ("searchMatchBg", 255),
    ("userMessageBg", 255),
    ("customMessageBg", 255),
    ("toolPendingBg", 255),
    ("toolSuccessBg", 255),
    ("toolErrorBg", 255),
    // Body text keeps the default foreground at full strength.
    ("text", 254),
    ("userMessageText", 254),
    ("toolTitle", 254),
];

/// Neutral tokens the `system` theme draws faint (SGR 2) instead of in a grey that some
/// palettes make unreadable.
pub fn system_faint_tokens() -> impl Iterator<Item = &'static str> {
    THEME_TOKENS
        .iter()
        .chain(OPTIONAL_TOKENS.iter().map(|(t, _)| t))
        .copied()
        .filter(|t| !SYSTEM_SLOTS.iter().any(|(s, _)| s == t))
}

/// The ANSI palette slot of a coloured token of the `system` theme (above 15: not one).
pub fn system_slot(token: &str) -> Option<u8> {
    SYSTEM_SLOTS.iter().find(|(t, _)| *t == token).map(|(_, s)| *s)
}

/// Where a coloured token of the `system` theme comes in its list of palette slots.
pub fn system_slot_position(token: &str) -> Option<usize> {
    SYSTEM_SLOTS.iter().position(|(t, _)| *t == token)
}

/// The `system` theme: derived from the colours the terminal reported (see
/// [`super::system_theme`]) once it reported its background; before that (or without) ANSI
/// palette indices and the default colours, which the terminal renders with its own theme,
/// so it fits a light or a dark background alike.
pub fn system_theme() -> Theme {
    system_theme_from(&super::system_theme::reported())
}

/// The `system` theme for the colours a terminal reported.
pub fn system_theme_from(reported: &super::system_theme::TerminalColors) -> Theme {
    let tokens: Vec<&str> = THEME_TOKENS
        .iter()
        .chain(OPTIONAL_TOKENS.iter().map(|(t, _)| t))
        .copied()
        .collect();
    let derived = super::system_theme::derive(reported);
    let colors = derived.unwrap_or_else(|| {
        tokens
            .iter()
            .map(|token| {
                let color = match system_slot(token) {
                    Some(slot) if slot < 16 => ThemeColor::Index(slot),
                    _ => ThemeColor::Default,
                };
                (token.to_string(), color)
            })
            .collect()
    });
    Theme {
        name: SYSTEM_THEME.into(),
        colors,
        export: BTreeMap::new(),
        source_path: None,
    }
}

/// The two halves of a `light/dark` theme setting, as pi 1.6 reads one: exactly one slash
/// and neither half empty once trimmed.
pub fn parse_theme_pair(setting: &str) -> Option<(String, String)> {
    let (light, dark) = setting.split_once('/')?;
    let (light, dark) = (light.trim(), dark.trim());
    if dark.contains('/') || light.is_empty() || dark.is_empty() {
        return None;
    }
    Some((light.to_string(), dark.to_string()))
}

/// The theme a setting names for a terminal whose background `colorfgbg` describes: a
/// `light/dark` pair picks its half, another name with a slash (not a theme file's path) is
/// `system` as in pi 1.6, anything else is the name itself.
pub fn resolve_theme_setting(setting: &str, colorfgbg: Option<&str>) -> String {
    if setting.ends_with(".json") {
        return setting.to_string();
    }
    match parse_theme_pair(setting) {
        Some((light, dark)) => {
            if default_theme_name(colorfgbg) == "light" {
                light
            } else {
                dark
            }
        }
        None if setting.contains('/') => SYSTEM_THEME.to_string(),
        None => setting.to_string(),
    }
}

/// pi 1.6's built-in dark theme: each token's colour as 1.6 resolves its definition (given
/// there in OKHSL) to sRGB.
const DARK: &[(&str, &str)] = &[
    ("accent", "#a798d7"),
    ("border", "#5fa8cc"),
    ("borderAccent", "#a08ed5"),
    ("borderMuted", "#768186"),
    ("success", "#68b78d"),
    ("error", "#ea7f81"),
    ("warning", "#cd9a22"),
    ("muted", "#9da5a9"),
    ("dim", "#7e888e"),
    ("text", "#dee0e1"),
    ("thinkingText", "#96a0a4"),
    ("selectedBg", "#213b49"),
    ("scrollbarTrack", "#484e52"),
    ("scrollbarThumb", "#97a0a5"),
    ("searchMatchBg", "#4e2f1b"),
    ("searchMatchText", "#9da5a9"),
    ("userMessageBg", "#213b49"),
    ("userMessageText", "#dee0e1"),
    ("customMessageBg", "#3a3055"),
    ("customMessageText", "#9da5a9"),
    ("customMessageLabel", "#a798d7"),
    ("toolPendingBg", "#34383a"),
    ("toolSuccessBg", "#254131"),
    ("toolErrorBg", "#5b282a"),
    ("toolTitle", "#dee0e1"),
    ("toolOutput", "#9da5a9"),
    ("mdHeading", "#cd9a22"),
    ("mdLink", "#69add0"),
    ("mdLinkUrl", "#9da5a9"),
    ("mdCode", "#a798d7"),
    ("mdCodeBlock", "#68b78d"),
    ("mdCodeBlockBorder", "#9da5a9"),
    ("mdQuote", "#9da5a9"),
    ("mdQuoteBorder", "#9da5a9"),
    ("mdHr", "#9da5a9"),
    ("mdListBullet", "#a798d7"),
    ("toolDiffAdded", "#68b78d"),
    ("toolDiffRemoved", "#ea7f81"),
    ("toolDiffContext", "#9da5a9"),
    ("syntaxComment", "#9da5a9"),
    ("syntaxKeyword", "#69add0"),
    ("syntaxFunction", "#cd9a22"),
    ("syntaxVariable", "#5db3ba"),
    ("syntaxString", "#de8d5a"),
    ("syntaxNumber", "#68b78d"),
    ("syntaxType", "#a798d7"),
    ("syntaxOperator", "#9da5a9"),
    ("syntaxPunctuation", "#9da5a9"),
    ("thinkingOff", "#6c767b"),
    ("thinkingMinimal", "#68808d"),
    ("thinkingLow", "#5489a4"),
    ("thinkingMedium", "#6185cc"),
    ("thinkingHigh", "#9776e5"),
    ("thinkingXhigh", "#de54c1"),
    ("thinkingMax", "#fe5462"),
    ("bashMode", "#5eb286"),
];

/// pi 1.6's built-in light theme, resolved the same way.
const LIGHT: &[(&str, &str)] = &[
    ("accent", "#7459b4"),
    ("border", "#3d8eb3"),
    ("borderAccent", "#8a72cb"),
    ("borderMuted", "#9aa2a7"),
    ("success", "#337e58"),
    ("error", "#c8253d"),
    ("warning", "#8f6802"),
    ("muted", "#677176"),
    ("dim", "#879095"),
    ("text", "#3b3f41"),
    ("thinkingText", "#7c868c"),
    ("selectedBg", "#dfe7ec"),
    ("scrollbarTrack", "#e1e3e4"),
    ("scrollbarThumb", "#96a0a4"),
    ("searchMatchBg", "#ede3dd"),
    ("searchMatchText", "#677176"),
    ("userMessageBg", "#dfe7ec"),
    ("userMessageText", "#3b3f41"),
    ("customMessageBg", "#e6e4ee"),
    ("customMessageText", "#677176"),
    ("customMessageLabel", "#7459b4"),
    ("toolPendingBg", "#e4e5e6"),
    ("toolSuccessBg", "#dee9e1"),
    ("toolErrorBg", "#eee2e1"),
    ("toolTitle", "#3b3f41"),
    ("toolOutput", "#677176"),
    ("mdHeading", "#8f6802"),
    ("mdLink", "#2f7899"),
    ("mdLinkUrl", "#677176"),
    ("mdCode", "#7459b4"),
    ("mdCodeBlock", "#337e58"),
    ("mdCodeBlockBorder", "#677176"),
    ("mdQuote", "#677176"),
    ("mdQuoteBorder", "#677176"),
    ("mdHr", "#677176"),
    ("mdListBullet", "#7459b4"),
    ("toolDiffAdded", "#337e58"),
    ("toolDiffRemoved", "#c8253d"),
    ("toolDiffContext", "#677176"),
    ("syntaxComment", "#677176"),
    ("syntaxKeyword", "#2f7899"),
    ("syntaxFunction", "#8f6802"),
    ("syntaxVariable", "#287a81"),
    ("syntaxString", "#a45417"),
    ("syntaxNumber", "#337e58"),
    ("syntaxType", "#7459b4"),
    ("syntaxOperator", "#677176"),
    ("syntaxPunctuation", "#677176"),
    ("thinkingOff", "#c2c8ca"),
    ("thinkingMinimal", "#b5c4cb"),
    ("thinkingLow", "#9fc2d5"),
    ("thinkingMedium", "#a2b7e0"),
    ("thinkingHigh", "#b5a5e8"),
    ("thinkingXhigh", "#e585cd"),
    ("thinkingMax", "#fe7479"),
    ("bashMode", "#40976c"),
];

fn builtin_json(name: &str, colours: &[(&str, &str)]) -> Value {
    let colors: Map<String, Value> = colours.iter().map(|(k, v)| (k.to_string(), Value::from(*v))).collect();
    serde_json::json!({ "name": name, "colors": colors })
}

/// Where a custom theme came from.
pub fn theme_scope(theme: &Theme, paths: &Paths) -> ResourceScope {
    match &theme.source_path {
        Some(p) if p.starts_with(paths.cwd.join(CONFIG_DIR_NAME)) => ResourceScope::Project,
        Some(p) if p.starts_with(&paths.agent_dir) => ResourceScope::User,
        _ => ResourceScope::Path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_order_puts_each_optional_token_after_its_neighbour() {
        let order = schema_order();
        assert_eq!(order.len(), THEME_TOKENS.len() + OPTIONAL_TOKENS.len());
        let at = |t: &str| order.iter().position(|o| *o == t).expect(t);
        assert_eq!(at("scrollbarTrack"), at("thinkingText") + 1);
        assert_eq!(at("scrollbarThumb"), at("thinkingText") + 2);
        assert_eq!(at("searchMatchText"), at("selectedBg") + 2);
        assert_eq!(at("thinkingMax"), at("thinkingXhigh") + 1);
        assert_eq!(at("bashMode"), order.len() - 1);
    }
    use serde_json::json;

    fn full_colors(value: Value) -> Map<String, Value> {
        THEME_TOKENS.iter().map(|t| (t.to_string(), value.clone())).collect()
    }

    #[test]
    fn builtins_are_complete() {
        for name in ["dark", "light"] {
            let t = builtin_theme(name).expect("builtin");
            // Every token, the optional ones included, as pi 1.6's own themes define them.
            assert_eq!(t.colors.len(), THEME_TOKENS.len() + OPTIONAL_TOKENS.len());
            for (token, _) in OPTIONAL_TOKENS {
                assert!(t.colors.contains_key(token), "{name}: {token}");
            }
        }
        assert!(builtin_theme("nope").is_none());
    }

    #[test]
    fn vars_resolve_and_cycles_fail() {
        let mut colors = full_colors(json!("main"));
        colors.insert("accent".into(), json!(42));
        colors.insert("text".into(), json!(""));
        let t = parse_theme_value(
            "t",
            &json!({"name": "t", "vars": {"main": "alias", "alias": "#0a0B0c"}, "colors": colors}),
            None,
        )
        .expect("valid");
        assert_eq!(t.color("border"), ThemeColor::Rgb(10, 11, 12));
        assert_eq!(t.color("accent"), ThemeColor::Index(42));
        assert_eq!(t.color("text"), ThemeColor::Default);
        let err = parse_theme_value(
            "t",
            &json!({"name": "t", "vars": {"a": "b", "b": "a"}, "colors": full_colors(json!("a"))}),
            None,
        )
        .expect_err("cycle");
        assert!(err.contains("Circular variable reference detected"), "{err}");
        let err = parse_theme_value(
            "t",
            &json!({"name": "t", "colors": full_colors(json!("nothing"))}),
            None,
        )
        .expect_err("missing var");
        assert_eq!(err, "Variable reference not found: nothing");
    }

    #[test]
    fn missing_tokens_are_listed() {
        let mut colors = full_colors(json!(1));
        colors.remove("bashMode");
        colors.remove("accent");
        colors.insert("mdHr".into(), json!(300));
        let err = parse_theme_value("mine", &json!({"name": "mine", "colors": colors}), None).expect_err("invalid");
        assert!(
            err.starts_with("Invalid theme \"mine\":\n\nMissing required color tokens:\n  - accent\n  - bashMode"),
            "{err}"
        );
        assert!(err.contains("/colors/mdHr"), "{err}");
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused_in_pi_16s_order() {
        let mut colors = full_colors(json!("#abc"));
        colors.insert("fooBar".into(), json!("#ffffff"));
        colors.insert("thinkingMax".into(), json!(7.0));
        colors.insert("border".into(), json!(2.5));
        colors.insert("accent".into(), json!(-1));
        let json = json!({"name": "x", "sparkle": true, "appearance": "grey", "colors": colors,
            "export": {"pageBg": "#000", "foo": 1}});
        let err = parse_theme_value("x", &json, None).expect_err("unknown keys");
        let want = [
            "Invalid theme \"x\":",
            "",
            "",
            "Other errors:",
            "  - /sparkle: schema is false",
            "  - /: must not have additional properties",
            "  - /appearance: must be equal to constant",
            "  - /appearance: must be equal to constant",
            "  - /appearance: must match a schema in anyOf",
            "  - /colors/fooBar: schema is false",
            "  - /colors: must not have additional properties",
            "  - /colors/accent: must be string",
            "  - /colors/accent: must be >= 0",
            "  - /colors/accent: must match a schema in anyOf",
            "  - /colors/border: must be string",
            "  - /colors/border: must be integer",
            "  - /colors/border: must match a schema in anyOf",
            "  - /export/foo: schema is false",
            "  - /export: must not have additional properties",
        ];
        assert_eq!(err, want.join("\n"));
        assert_eq!(
            parse_theme_value("e", &json!({}), None).expect_err("empty"),
            "Invalid theme \"e\":\n\n\nOther errors:\n  - /: must have required properties name, colors"
        );
        // What pi 1.6 accepts still loads: the optional tokens, `$schema`, `appearance`,
        // an integral float, oklch/okhsl/#rgb and vars.
        let mut colors = full_colors(json!("v"));
        colors.insert("accent".into(), json!("oklch(0.7 0.1 200)"));
        colors.insert("muted".into(), json!("okhsl(200 50% 60%)"));
        colors.insert("text".into(), json!(7.0));
        colors.insert("scrollbarThumb".into(), json!("#fff"));
        let ok = json!({"$schema": "s", "name": "ok", "appearance": "light", "vars": {"v": "#123"},
            "colors": colors, "export": {"cardBg": 3}});
        let t = parse_theme_value("ok", &ok, None).expect("valid");
        assert_eq!(t.color("text"), ThemeColor::Index(7));
        // A string the schema takes but that is no colour fails when resolved, as in 1.6.
        for bad in ["#zzz", "#12345", "oklch(bad)", "okhsl(1 2)"] {
            let mut colors = full_colors(json!("#000"));
            colors.insert("accent".into(), json!(bad));
            let err = parse_theme_value("b", &json!({"name": "b", "colors": colors}), None).expect_err(bad);
            assert_eq!(err, format!("Invalid color value: {bad}"));
        }
        // A colour out of range says which part, as 1.6 does.
        for (bad, why) in [
            ("oklch(1.5 0 0)", "l must be between 0 and 1: 1.5"),
            ("okhsl(10 2 0.5)", "s must be between 0 and 1: 2"),
            ("oklch(0.5 -1 0)", "c must not be negative: -1"),
        ] {
            let mut colors = full_colors(json!("#000"));
            colors.insert("accent".into(), json!(bad));
            let err = parse_theme_value("b", &json!({"name": "b", "colors": colors}), None).expect_err(bad);
            assert_eq!(err, why);
        }
        assert_eq!(t.color("scrollbarThumb"), ThemeColor::Rgb(255, 255, 255));
    }

    #[test]
    fn default_theme_from_colorfgbg() {
        assert!(is_light((255, 255, 255)) && is_light((238, 232, 213)));
        assert!(!is_light((0, 0, 0)) && !is_light((40, 42, 54)) && !is_light((0, 43, 54)));
        assert_eq!(default_theme_name(None), "dark");
        assert_eq!(default_theme_name(Some("0;15")), "light");
        assert_eq!(default_theme_name(Some("15;0")), "dark");
        // The last field decides, classified as pi 1.6 does (8 is Solarized Dark's base).
        assert_eq!(default_theme_name(Some("15;default;7")), "light");
        assert_eq!(default_theme_name(Some("15;default")), "dark");
        assert_eq!(default_theme_name(Some("7;8")), "dark");
        assert_eq!(default_theme_name(Some("0;16")), "dark");
    }

    #[test]
    fn a_theme_name_with_a_slash_is_refused() {
        let json = json!({"name": "a/b", "colors": full_colors(json!("#000000"))});
        let err = parse_theme_value("a/b", &json, None).expect_err("slash");
        assert!(
            err.contains("reserved for automatic light/dark theme settings"),
            "{err}"
        );
    }

    #[test]
    fn theme_pairs_are_read_as_pi_16_reads_them() {
        assert_eq!(
            parse_theme_pair(" light / dark "),
            Some(("light".to_string(), "dark".to_string()))
        );
        assert_eq!(parse_theme_pair("a/b/c"), None);
        assert_eq!(parse_theme_pair("/dark"), None);
        assert_eq!(parse_theme_pair("dark"), None);
        assert_eq!(resolve_theme_setting("light/nord", Some("0;15")), "light");
        assert_eq!(resolve_theme_setting("light/nord", Some("15;0")), "nord");
        // Not a pair: pi 1.6 shows the system theme.
        assert_eq!(resolve_theme_setting("a/b/c", None), SYSTEM_THEME);
        assert_eq!(resolve_theme_setting("./themes/x.json", None), "./themes/x.json");
    }
}
