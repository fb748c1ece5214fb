//! Where an extension command of RPC `get_commands` comes from, as pi 1.6 reports it: a `-e`
//! path (`cli`), a settings `extensions` entry (`local`), an `extensions/` folder (`auto`), a
//! package (its source as configured, origin `package`), or pi's own built-in extensions
//! (`builtin`), whose `/llama` and `/mcp` commands are listed after every other extension's,
//! except those named with `-e builtin:<name>`: they follow the other `-e` extensions'.

use std::path::{Path, PathBuf};

use super::types::{CommandSource, SlashCommand, SourceInfo, SourceOrigin, SourceScope};
use crate::cli::Args;
use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;
use crate::extensions::builtin;
use crate::resources::{PackageScope, ResourceScope};

/// The commands pi 1.6's built-in extensions register, in the order pi loads those extensions.
const BUILTIN_COMMANDS: [(&str, &str, &str); 2] = [
    (builtin::LLAMA_CPP, "llama", "Manage llama.cpp router models"),
    (
        builtin::MCP,
        "mcp",
        "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
    ),
];

/// What decides the labels: the settings' extension entries and packages of this cwd.
pub struct Sources {
    agent_dir: PathBuf,
    project: PathBuf,
    /// Resolved settings entries with the scope of the settings that named them.
    settings: Vec<(PathBuf, SourceScope)>,
    packages: Vec<crate::resources::PackageOrigin>,
}

fn scope_of(scope: PackageScope) -> SourceScope {
    match scope {
        PackageScope::User => SourceScope::User,
        PackageScope::Project => SourceScope::Project,
        PackageScope::Temporary => SourceScope::Temporary,
    }
}

impl Sources {
    pub fn new(cwd: &Path, settings: &SettingsManager) -> Sources {
        let paths = Paths::for_cwd(cwd);
        let project = cwd.join(".pi");
        let entries = |map: &serde_json::Map<String, serde_json::Value>, base: &Path, scope: SourceScope| {
            map.get("extensions")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .filter(|v| !v.starts_with(['-', '!']) && !builtin::is_builtin(v))
                .map(|v| {
                    (
                        pi_extensions::discovery::absolute(base, v.trim_start_matches('+')),
                        scope,
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut listed = entries(settings.project_settings(), &project, SourceScope::Project);
        listed.extend(entries(settings.global_settings(), &paths.agent_dir, SourceScope::User));
        let packages = crate::packages::package_resources(&paths, settings, false)
            .extensions
            .into_iter()
            .filter_map(|(_, scope)| match scope {
                ResourceScope::Package(origin) => Some(origin),
                _ => None,
            })
            .collect();
        Sources {
            agent_dir: paths.agent_dir,
            project,
            settings: listed,
            packages,
        }
    }

    /// The `sourceInfo` of an extension loaded from `path`.
    pub fn of(&self, path: &str) -> SourceInfo {
        let file = Path::new(path);
        let info = |source: &str, scope, origin, base_dir: Option<&Path>| SourceInfo {
            path: path.to_string(),
            source: source.to_string(),
            scope,
            origin,
            base_dir: base_dir.map(|d| d.display().to_string()),
        };
        if builtin::is_builtin(path) {
            return info("builtin", SourceScope::Temporary, SourceOrigin::TopLevel, None);
        }
        if let Some(p) = self.packages.iter().find(|p| file.starts_with(&p.base_dir)) {
            return info(&p.source, scope_of(p.scope), SourceOrigin::Package, Some(&p.base_dir));
        }
        if let Some((_, scope)) = self.settings.iter().find(|(entry, _)| file.starts_with(entry)) {
            return info("local", *scope, SourceOrigin::TopLevel, None);
        }
        if file.starts_with(self.project.join("extensions")) {
            return info(
                "auto",
                SourceScope::Project,
                SourceOrigin::TopLevel,
                Some(&self.project),
            );
        }
        if file.starts_with(self.agent_dir.join("extensions")) {
            return info("auto", SourceScope::User, SourceOrigin::TopLevel, Some(&self.agent_dir));
        }
        info("cli", SourceScope::Temporary, SourceOrigin::TopLevel, None)
    }
}

/// `listed` (the extensions' commands in load order) with those of the built-in extensions on for
/// this run, in pi 1.6's order: the built-ins named with `-e builtin:<name>` (in the command
/// line's order) right after the commands of the other `-e` extensions, which load first, and
/// the rest after every extension's. A built-in whose command an extension registered itself
/// (`taken`) is left out, as pi leaves it unloaded.
pub fn with_builtin_commands(
    mut listed: Vec<SlashCommand>,
    args: &Args,
    settings: &SettingsManager,
    taken: &[&str],
) -> Vec<SlashCommand> {
    let named = |path: &str| args.extensions.iter().position(|e| e == path);
    let mut on: Vec<_> = BUILTIN_COMMANDS
        .iter()
        .filter(|(path, name, _)| builtin::enabled(args, settings, path) && !taken.contains(name))
        .collect();
    on.sort_by_key(|(path, _, _)| named(path).unwrap_or(usize::MAX));
    let (first, rest): (Vec<_>, Vec<_>) = on.into_iter().partition(|(path, _, _)| named(path).is_some());
    let after_cli = listed.iter().take_while(|c| c.source_info.source == "cli").count();
    let rest: Vec<SlashCommand> = rest.into_iter().map(builtin_command).collect();
    listed.splice(after_cli..after_cli, first.into_iter().map(builtin_command));
    listed.extend(rest);
    listed
}

fn builtin_command((path, name, description): &(&str, &str, &str)) -> SlashCommand {
    SlashCommand {
        name: name.to_string(),
        description: Some(description.to_string()),
        source: CommandSource::Extension,
        source_info: SourceInfo {
            path: path.to_string(),
            source: "builtin".to_string(),
            scope: SourceScope::Temporary,
            origin: SourceOrigin::TopLevel,
            base_dir: None,
        },
    }
}
