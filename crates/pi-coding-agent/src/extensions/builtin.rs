//! pi 1.6's built-in extensions by name (`builtin:mcp`, `builtin:codemode`,
//! `builtin:tool-search`, `builtin:llama.cpp`): which are on for a run, and the error for a
//! name that is none of them.
//!
//! What decides, strongest first: `--no-mcp` (MCP stays off whatever else says), the command
//! line's `-e builtin:<name>` (on), `-ne` (off), a `+`/`-`/`!` entry of the project's
//! `extensions` setting that names the built-in (the last such entry wins), and then the user's
//! `extensions` entries (`!glob` off, `+name` on again, `-name` off, in that order of strength).

use std::path::Path;

use serde_json::Value;

use crate::cli::Args;
use crate::config::settings::SettingsManager;
use crate::resources::discovery::{matches_any_exact, matches_any_glob};

pub const MCP: &str = "builtin:mcp";
pub const CODEMODE: &str = "builtin:codemode";
pub const TOOL_SEARCH: &str = "builtin:tool-search";
pub const LLAMA_CPP: &str = "builtin:llama.cpp";
pub const ALL: [&str; 4] = [CODEMODE, LLAMA_CPP, MCP, TOOL_SEARCH];

pub fn is_builtin(source: &str) -> bool {
    source.starts_with("builtin:")
}

/// The interactive commands of built-in extensions that are off for this run: `/llama` without
/// `builtin:llama.cpp`, `/mcp` without `builtin:mcp`.
pub fn commands_off(args: &Args, session: &crate::session::AgentSession) -> Vec<&'static str> {
    let Ok(settings) = session.settings().lock() else {
        return Vec::new();
    };
    [(LLAMA_CPP, "llama"), (MCP, "mcp")]
        .into_iter()
        .filter(|(extension, _)| !enabled(args, &settings, extension))
        .map(|(_, command)| command)
        .collect()
}

/// Whether the built-in `name` is on for this run, from the command line and the settings in
/// force (the project's count only for a trusted project: the settings leave them out otherwise).
pub fn enabled(args: &Args, settings: &SettingsManager, name: &str) -> bool {
    if name == MCP && args.no_mcp {
        return false;
    }
    if args.extensions.iter().any(|e| e == name) {
        return true;
    }
    if args.no_extensions {
        return false;
    }
    let entries = |map: &serde_json::Map<String, Value>| -> Vec<String> {
        map.get("extensions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let (project, user) = (
        entries(settings.project_settings()),
        entries(settings.global_settings()),
    );
    project_override(name, &project).unwrap_or_else(|| user_enabled(name, &user))
}

/// The project's say on the built-in `name`: its last `+`, `-` or `!` entry that matches
/// (`+`/`-` by exact name, `!` as a glob), or `None` when none does.
fn project_override(name: &str, entries: &[String]) -> Option<bool> {
    let path = Path::new(name);
    // A built-in's path names no file: relative to any folder it is its own name.
    let base = Path::new("");
    entries.iter().fold(None, |decided, entry| {
        let matched = if let Some(target) = entry.strip_prefix(['+', '-']) {
            matches_any_exact(path, &[target], base)
        } else if let Some(target) = entry.strip_prefix('!') {
            matches_any_glob(path, &[target], base)
        } else {
            false
        };
        if matched {
            Some(entry.starts_with('+'))
        } else {
            decided
        }
    })
}

/// The user's say on the built-in `name`: on unless a `!glob` matches it, a `+name` turns it
/// on again, and a `-name` turns it off above all.
fn user_enabled(name: &str, entries: &[String]) -> bool {
    let path = Path::new(name);
    let base = Path::new("");
    let of = |prefix: char| -> Vec<&str> { entries.iter().filter_map(|e| e.strip_prefix(prefix)).collect() };
    let mut on = !matches_any_glob(path, &of('!'), base);
    if matches_any_exact(path, &of('+'), base) {
        on = true;
    }
    if matches_any_exact(path, &of('-'), base) {
        on = false;
    }
    on
}

/// pi's load error for each `-e builtin:<name>` that names no built-in extension.
pub fn unknown_errors(args: &Args) -> Vec<String> {
    args.extensions
        .iter()
        .filter(|e| is_builtin(e) && !ALL.contains(&e.as_str()))
        .map(|e| format!("Failed to load extension \"{e}\": Unknown built-in extension: {e}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        let argv: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        crate::cli::args::parse_args(&argv)
    }

    /// Settings read from a user file and a project file with these `extensions` entries.
    fn settings(user: &[&str], project: &[&str]) -> (tempfile::TempDir, SettingsManager) {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, entries: &[&str]| {
            let path = dir.path().join(name);
            std::fs::write(&path, serde_json::json!({ "extensions": entries }).to_string()).unwrap();
            path
        };
        let manager = SettingsManager::from_files(write("user.json", user), write("project.json", project));
        (dir, manager)
    }

    fn on(cli: &[&str], user: &[&str], project: &[&str], name: &str) -> bool {
        let (_dir, settings) = settings(user, project);
        enabled(&args(cli), &settings, name)
    }

    #[test]
    fn no_extensions_turns_builtins_off_unless_named_again() {
        assert!(on(&[], &[], &[], MCP));
        assert!(!on(&["-ne"], &[], &[], MCP));
        assert!(on(&["-ne", "-e", "builtin:mcp"], &[], &[], MCP));
        assert!(!on(&["-ne", "-e", "builtin:mcp"], &[], &[], TOOL_SEARCH));
        assert!(unknown_errors(&args(&["-ne", "-e", "builtin:mcp"])).is_empty());
        assert_eq!(
            unknown_errors(&args(&["-e", "builtin:nope"])),
            ["Failed to load extension \"builtin:nope\": Unknown built-in extension: builtin:nope"]
        );
    }

    #[test]
    fn the_users_entries_turn_builtins_off_and_on_again() {
        assert!(!on(&[], &["-builtin:mcp"], &[], MCP));
        assert!(on(&[], &["-builtin:mcp"], &[], LLAMA_CPP));
        assert!(!on(&[], &["!builtin:*"], &[], CODEMODE));
        assert!(!on(&[], &["!*"], &[], LLAMA_CPP), "a glob on the name matches too");
        assert!(on(&[], &["!builtin:*", "+builtin:mcp"], &[], MCP));
        assert!(!on(&[], &["!builtin:*", "+builtin:mcp"], &[], TOOL_SEARCH));
        // `-` is the strongest, wherever it stands.
        assert!(!on(&[], &["-builtin:mcp", "+builtin:mcp"], &[], MCP));
        assert!(!on(&[], &["+builtin:mcp", "-builtin:mcp"], &[], MCP));
        // Exact entries name the whole path: a bare name is no built-in's.
        assert!(on(&[], &["-mcp", "-builtin:tool_search"], &[], MCP));
        assert!(on(&[], &["-builtin:tool_search"], &[], TOOL_SEARCH));
        // Plain entries are files to load, no switches.
        assert!(on(&[], &["builtin:mcp"], &[], MCP));
    }

    #[test]
    fn a_matching_project_entry_overrides_the_users_and_its_last_one_wins() {
        assert!(on(&[], &["-builtin:mcp"], &["+builtin:mcp"], MCP));
        assert!(!on(&[], &[], &["-builtin:llama.cpp"], LLAMA_CPP));
        assert!(on(&[], &["-builtin:mcp"], &["-builtin:mcp", "+builtin:mcp"], MCP));
        assert!(!on(&[], &["-builtin:mcp"], &["+builtin:mcp", "!builtin:m*"], MCP));
        // A project entry that names another built-in leaves the user's say.
        assert!(!on(&[], &["-builtin:mcp"], &["+builtin:codemode"], MCP));
    }

    #[test]
    fn the_command_line_decides_over_the_settings() {
        assert!(on(&["-e", "builtin:mcp"], &["-builtin:mcp"], &["-builtin:mcp"], MCP));
        assert!(!on(&["-e", "builtin:mcp", "--no-mcp"], &[], &[], MCP));
        assert!(!on(&["--no-mcp"], &[], &["+builtin:mcp"], MCP));
        assert!(!on(&["-ne"], &[], &["+builtin:mcp"], MCP));
    }
}
