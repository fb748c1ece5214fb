//! What the slash menu shows beside the built-in names, as pi 1.6 does: argument hints
//! (`/model <provider/model>`, `/thinking <level>`, `/login <provider>`, `/bug <description>`),
//! the argument completions of `/model` and `/thinking`, the prompt templates with their
//! `argument-hint`, and `/skill:name` for each skill, described with where it came from.

use std::sync::Arc;

use pi_tui::autocomplete::{AutocompleteItem, SlashCommand};
use pi_tui::fuzzy::FuzzyMatcher;

use pi_coding_agent::resources::loader::Resources;
use pi_coding_agent::resources::{PackageScope, ResourceScope};
use pi_coding_agent::session::AgentSession;

/// The built-ins that take an argument, with pi's hint for it.
const HINTS: [(&str, &str); 4] = [
    ("model", "<provider/model>"),
    ("thinking", "<level>"),
    ("bug", "<description>"),
    ("login", "<provider>"),
];

/// Items of `candidates` (value, label, description) whose search text matches `prefix`.
fn fuzzy_items(
    candidates: Vec<(String, String, Option<String>, String)>,
    prefix: &str,
) -> Option<Vec<AutocompleteItem>> {
    if candidates.is_empty() {
        return None;
    }
    // Case does not matter here, as in pi's fuzzy filter.
    let candidates: Vec<_> = candidates
        .into_iter()
        .map(|(v, l, d, search)| (v, l, d, search.to_lowercase()))
        .collect();
    let mut matcher = FuzzyMatcher::new(false);
    let picked = matcher.filter(&candidates, &prefix.trim().to_lowercase(), |c| c.3.as_str());
    Some(
        picked
            .into_iter()
            .map(|i| {
                let (value, label, description, _) = &candidates[i];
                AutocompleteItem {
                    value: value.clone(),
                    label: label.clone(),
                    description: description.clone(),
                }
            })
            .collect(),
    )
}

/// Give the built-ins their hints and `/model` and `/thinking` their completions.
pub fn add_builtin_arguments(commands: &mut [SlashCommand], session: &AgentSession) {
    for c in commands.iter_mut() {
        if let Some((_, hint)) = HINTS.iter().find(|(n, _)| *n == c.name) {
            c.argument_hint = Some((*hint).to_string());
        }
        match c.name.as_str() {
            "model" => {
                let session = session.clone();
                c.complete_argument = Some(Arc::new(move |prefix: &str| {
                    let scoped = session.scoped_models();
                    let models: Vec<pi_ai::Model> = if scoped.is_empty() {
                        session.available_models()
                    } else {
                        scoped.into_iter().map(|s| s.model).collect()
                    };
                    let candidates = models
                        .into_iter()
                        .map(|m| {
                            let full = format!("{}/{}", m.provider, m.id);
                            let search = format!("{} {} {}", m.id, m.provider, full);
                            (full, m.id.clone(), Some(m.provider.to_string()), search)
                        })
                        .collect();
                    fuzzy_items(candidates, prefix)
                }));
            }
            "thinking" => {
                let session = session.clone();
                c.complete_argument = Some(Arc::new(move |prefix: &str| {
                    let candidates = session
                        .available_thinking_levels()
                        .into_iter()
                        .map(|l| {
                            let l = l.to_string();
                            (l.clone(), l.clone(), None, l)
                        })
                        .collect();
                    fuzzy_items(candidates, prefix)
                }));
            }
            "login" => {
                let session = session.clone();
                c.complete_argument = Some(Arc::new(move |prefix: &str| {
                    let candidates = super::login::completion_candidates(&session)
                        .into_iter()
                        .map(|(id, description)| {
                            let search = format!("{id} {description}");
                            (id.clone(), id, Some(description), search)
                        })
                        .collect();
                    fuzzy_items(candidates, prefix)
                }));
            }
            "mcp" => {
                // The first word: the action (the servers for it come from the MCP menu).
                c.complete_argument = Some(Arc::new(|prefix: &str| {
                    let words: Vec<&str> = prefix.split_whitespace().collect();
                    if words.len() > 1 || (words.len() == 1 && prefix.ends_with(char::is_whitespace)) {
                        return None;
                    }
                    let action = words.first().copied().unwrap_or("");
                    let items: Vec<AutocompleteItem> = ["login", "logout", "reconnect"]
                        .iter()
                        .filter(|a| a.starts_with(action))
                        .map(|a| AutocompleteItem {
                            value: format!("{a} "),
                            label: (*a).to_string(),
                            description: None,
                        })
                        .collect();
                    (!items.is_empty()).then_some(items)
                }));
            }
            _ => {}
        }
    }
}

/// pi's tag of where a prompt or skill came from: `u`, `p`, `t`, or a package's
/// `u:npm:name` / `u:git:host/path`.
fn source_tag(scope: &ResourceScope) -> &'static str {
    match scope {
        ResourceScope::User => "u",
        ResourceScope::Project => "p",
        ResourceScope::Path => "t",
        ResourceScope::Package(o) => match o.scope {
            PackageScope::User => "u",
            PackageScope::Project => "p",
            PackageScope::Temporary => "t",
        },
    }
}

fn tagged(description: &str, scope: &ResourceScope) -> String {
    let tag = match scope {
        ResourceScope::Package(o) if o.source.starts_with("npm:") || o.source.starts_with("git:") => {
            format!("{}:{}", source_tag(scope), o.source)
        }
        _ => source_tag(scope).to_string(),
    };
    if description.is_empty() {
        format!("[{tag}]")
    } else {
        format!("[{tag}] {description}")
    }
}

/// The prompt templates' commands (after the built-ins).
pub fn template_commands(resources: &Resources) -> Vec<SlashCommand> {
    resources
        .templates()
        .iter()
        .map(|t| SlashCommand {
            name: t.name.clone(),
            description: Some(tagged(&t.description, &t.scope)),
            argument_hint: t.argument_hint.clone(),
            complete_argument: None,
        })
        .collect()
}

/// `/skill:name` for each skill (last in the menu), when skill commands are on.
pub fn skill_commands(resources: &Resources) -> Vec<SlashCommand> {
    resources
        .skills()
        .iter()
        .map(|s| SlashCommand::new(format!("skill:{}", s.name), tagged(&s.description, &s.scope)))
        .collect()
}

/// Turn the skill commands in `commands` on or off (`enableSkillCommands` changed): they
/// are dropped, and when `on` put back last, as the menu is built at startup.
pub fn set_skill_commands(commands: &mut Vec<SlashCommand>, resources: &Resources, on: bool) {
    let skills = skill_commands(resources);
    commands.retain(|c| !skills.iter().any(|s| s.name == c.name));
    if on {
        commands.extend(skills);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_coding_agent::resources::PackageOrigin;

    #[test]
    fn descriptions_carry_the_source_tag() {
        assert_eq!(tagged("Review a file", &ResourceScope::User), "[u] Review a file");
        assert_eq!(tagged("", &ResourceScope::Project), "[p]");
        let pkg = ResourceScope::Package(PackageOrigin {
            source: "npm:pi-tools".into(),
            scope: PackageScope::User,
            base_dir: "/x".into(),
        });
        assert_eq!(tagged("Do it", &pkg), "[u:npm:pi-tools] Do it");
    }

    #[test]
    fn fuzzy_items_keep_value_label_and_description() {
        let c = vec![
            (
                "p/alpha".to_string(),
                "alpha".to_string(),
                Some("p".to_string()),
                "alpha p".to_string(),
            ),
            (
                "p/beta".to_string(),
                "beta".to_string(),
                Some("p".to_string()),
                "beta p".to_string(),
            ),
        ];
        let items = fuzzy_items(c, "BET").expect("some");
        assert_eq!(items.len(), 1);
        assert_eq!((items[0].value.as_str(), items[0].label.as_str()), ("p/beta", "beta"));
        assert!(fuzzy_items(Vec::new(), "").is_none());
    }
}
