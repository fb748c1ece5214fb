//! `pi config`: the resolved resources (from packages, settings entries and the pi folders)
//! with their enabled state: the toggling screen on a terminal, else a plain listing.

use std::fmt::Write as _;
use std::io::IsTerminal;

use super::cli::Style;
use super::is_offline;
use super::locations::{Locations, Scope};
use super::process::Output;
use super::resolve::{resolve_all, Origin, ResolvedPaths, ResolvedResource, ResourceKind};
use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;

fn title(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Extensions => "Extensions",
        ResourceKind::Skills => "Skills",
        ResourceKind::Prompts => "Prompt templates",
        ResourceKind::Themes => "Themes",
    }
}

fn origin_label(r: &ResolvedResource) -> String {
    let scope = match r.scope {
        Scope::User => "user",
        Scope::Project => "project",
    };
    match &r.origin {
        Origin::Package(source) => format!("{scope} package {source}"),
        Origin::Settings => format!("{scope} settings"),
        Origin::Auto => scope.to_string(),
    }
}

/// The listing `pi config` prints.
pub fn render(resolved: &ResolvedPaths, style: Style) -> String {
    let mut out = String::new();
    let mut any = false;
    for kind in ResourceKind::ALL {
        let list = resolved.of(kind);
        if list.is_empty() {
            continue;
        }
        if any {
            out.push('\n');
        }
        any = true;
        let _ = writeln!(out, "{}", style.bold(&format!("{}:", title(kind))));
        for r in list {
            let mark = if r.enabled { "[x]" } else { "[ ]" };
            let _ = writeln!(
                out,
                "  {mark} {} {}",
                r.path.display(),
                style.dim(&format!("({})", origin_label(r)))
            );
        }
    }
    if !any {
        let _ = writeln!(out, "{}", style.dim("No resources found."));
    }
    out
}

/// Run `pi config` (`argv` starts with `config`); returns the exit code.
pub fn run(paths: Paths) -> i32 {
    let style = Style::detect();
    let mut settings = SettingsManager::load(&paths);
    for e in settings.drain_errors() {
        eprintln!("Warning (config command, {} settings): {}", e.scope.as_str(), e.message);
    }
    let loc = Locations::new(paths, settings.npm_command());
    let install = (!is_offline()).then_some(Output::Inherit);
    let (resolved, problems) = resolve_all(&loc, &settings, install);
    for p in problems {
        eprintln!("{}", style.red(&format!("Error: {p}")));
    }
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return match super::config_view::run(&resolved, &mut settings, &loc) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{}", style.red(&format!("Error: {e}")));
                1
            }
        };
    }
    print!("{}", render(&resolved, style));
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn lists_by_kind_with_marks() {
        let mut r = ResolvedPaths::default();
        r.skills.push(ResolvedResource {
            path: PathBuf::from("/p/skills/a/SKILL.md"),
            enabled: true,
            origin: Origin::Package("npm:x".into()),
            scope: Scope::User,
            base_dir: PathBuf::from("/p"),
            temporary: false,
        });
        r.prompts.push(ResolvedResource {
            path: PathBuf::from("/a/prompts/b.md"),
            enabled: false,
            origin: Origin::Auto,
            scope: Scope::Project,
            base_dir: PathBuf::from("/a"),
            temporary: false,
        });
        let text = render(&r, Style { color: false });
        assert_eq!(
            text,
            "Skills:\n  [x] /p/skills/a/SKILL.md (user package npm:x)\n\nPrompt templates:\n  [ ] /a/prompts/b.md (project)\n"
        );
    }
}
