//! Extension commands in the editor's slash menu, after the built-ins: each with its
//! description, prefixed as pi 1.6 tags them by where the extension came from (`[u]` the
//! user's, `[p]` the project's, `[t]` for this run's `-e`; built-in extensions untagged).
//! A name a built-in already has is left out, as pi leaves it out of autocomplete.

use std::path::Path;

use pi_extensions::ExtensionRunner;
use pi_tui::autocomplete::SlashCommand;

/// pi's source tag of an extension at `path`.
fn source_tag(path: &str, agent_dir: &Path, cwd: &Path) -> Option<&'static str> {
    if path.starts_with("builtin:") {
        return None;
    }
    let p = Path::new(path);
    Some(if p.starts_with(agent_dir) {
        "u"
    } else if p.starts_with(cwd.join(".pi")) {
        "p"
    } else {
        "t"
    })
}

/// The slash-menu entries of the extensions' commands not named like one of `builtins`.
pub fn extension_commands(
    runner: &ExtensionRunner,
    builtins: &[SlashCommand],
    agent_dir: &Path,
    cwd: &Path,
) -> Vec<SlashCommand> {
    let registrations = runner.registrations();
    let mut out: Vec<SlashCommand> = Vec::new();
    for (ext, command) in registrations.commands() {
        if builtins.iter().chain(&out).any(|c| c.name == command.name) {
            continue;
        }
        let description = command.description.clone().unwrap_or_default();
        let description = match source_tag(&ext.path, agent_dir, cwd) {
            Some(tag) if description.is_empty() => format!("[{tag}]"),
            Some(tag) => format!("[{tag}] {description}"),
            None => description,
        };
        out.push(SlashCommand::new(command.name.clone(), description));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_tagged_by_where_they_came_from() {
        let agent = Path::new("/home/u/.pi/agent");
        let cwd = Path::new("/work/proj");
        assert_eq!(source_tag("/home/u/.pi/agent/extensions/a.ts", agent, cwd), Some("u"));
        assert_eq!(source_tag("/work/proj/.pi/extensions/b.ts", agent, cwd), Some("p"));
        assert_eq!(source_tag("/tmp/c.ts", agent, cwd), Some("t"));
        assert_eq!(source_tag("builtin:mcp", agent, cwd), None);
    }
}
