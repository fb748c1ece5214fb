//! pi 1.6's `[Theme conflicts]` section under the startup header: theme files that could not
//! be loaded (with why) and themes whose name an earlier one already took.

use std::path::Path;

use super::theme::UiTheme;
use pi_coding_agent::resources::{Diagnostic, DiagnosticKind};

/// A path with the home folder written `~`.
fn shown(p: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// The name a collision message is about (`name "x" collision`).
fn collision_name(message: &str) -> &str {
    message.split('"').nth(1).unwrap_or(message)
}

/// The section's text, or `None` without problems. Name clashes come first, grouped by name
/// (the theme kept, then each one skipped); then each other problem: its file, and the message.
pub fn section(theme: &UiTheme, issues: &[Diagnostic], home: Option<&Path>) -> Option<String> {
    if issues.is_empty() {
        return None;
    }
    let mut lines = vec![theme.paint("warning", "[Theme conflicts]")];
    let mut names: Vec<&str> = Vec::new();
    for d in issues.iter().filter(|d| d.kind == DiagnosticKind::Collision) {
        let name = collision_name(&d.message);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    for name in names {
        let group: Vec<&Diagnostic> = issues
            .iter()
            .filter(|d| d.kind == DiagnosticKind::Collision && collision_name(&d.message) == name)
            .collect();
        lines.push(theme.paint("warning", &format!("  \"{name}\" collision:")));
        if let Some(winner) = group.first().and_then(|d| d.winner.as_deref()) {
            let kept = format!("    {} {}", theme.paint("success", "✓"), shown(winner, home));
            lines.push(theme.paint("dim", &kept));
        }
        for d in group {
            let skipped = format!("    {} {} (skipped)", theme.paint("warning", "✗"), shown(&d.path, home));
            lines.push(theme.paint("dim", &skipped));
        }
    }
    for d in issues.iter().filter(|d| d.kind != DiagnosticKind::Collision) {
        let token = if d.kind == DiagnosticKind::Error {
            "error"
        } else {
            "warning"
        };
        lines.push(theme.paint(token, &format!("  {}", shown(&d.path, home))));
        lines.push(theme.paint(token, &format!("    {}", d.message)));
    }
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn clashes_are_grouped_and_bad_files_listed_with_why() {
        let theme = UiTheme::fallback();
        let issues = vec![
            Diagnostic::warning(
                "Invalid theme \"/home/u/t/bad.json\":\n\n\nOther errors:\n  - /x: schema is false",
                "/home/u/t/bad.json",
            ),
            Diagnostic::collision("name \"nord\" collision", "/p/b.json", PathBuf::from("/home/u/a.json")),
        ];
        let text = section(&theme, &issues, Some(Path::new("/home/u"))).expect("section");
        assert_eq!(
            pi_tui::strip_ansi(&text),
            "[Theme conflicts]\n  \"nord\" collision:\n    ✓ ~/a.json\n    ✗ /p/b.json (skipped)\n  ~/t/bad.json\n    \
             Invalid theme \"/home/u/t/bad.json\":\n\n\nOther errors:\n  - /x: schema is false"
        );
        assert!(section(&theme, &[], None).is_none());
    }
}
