//! Extension commands in the editor's slash menu, after the built-ins: each with its
//! description, prefixed as pi 1.6 tags them by where the extension came from (`[u]` the
//! user's, `[p]` the project's, `[t]` for this run's `-e`; built-in extensions untagged).
//! A name several extensions register is listed numbered (`name:1`, `name:2`), the name
//! each is run by; a name a built-in already has is left out, as pi leaves it out of
//! autocomplete.
//! A command with `getArgumentCompletions` completes its argument: the host is asked in the
//! background and the answer opens the menu once it comes, if the text still asks for it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pi_extensions::ExtensionRunner;
use pi_tui::autocomplete::{ArgumentCompleter, AutocompleteItem, SlashCommand};
use serde_json::{json, Value};

use super::super::effect::Effect;
use super::super::events::{Msg, UiSender};
use super::screen::ScreenChange;

/// An extension's completions that take longer than this are not shown.
const COMPLETION_TIMEOUT: Duration = Duration::from_secs(5);

/// Items as `getArgumentCompletions` returns them: `{value, label?, description?}`.
pub fn parse_items(answer: &Value) -> Vec<AutocompleteItem> {
    let Some(items) = answer.get("items").and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let value = item.get("value").and_then(Value::as_str)?.to_string();
            Some(AutocompleteItem {
                label: item.get("label").and_then(Value::as_str).unwrap_or(&value).to_string(),
                description: item.get("description").and_then(Value::as_str).map(str::to_string),
                value,
            })
        })
        .collect()
}

/// The completer of command `name`: answers nothing at once, asks the host, and sends the
/// items to the app as a screen change for the text `/name <prefix>`.
fn argument_completer(runner: Arc<ExtensionRunner>, name: String, tx: UiSender) -> ArgumentCompleter {
    Arc::new(move |prefix: &str| {
        if tokio::runtime::Handle::try_current().is_err() {
            return None;
        }
        let (runner, name, tx, prefix) = (runner.clone(), name.clone(), tx.clone(), prefix.to_string());
        tokio::spawn(async move {
            let params = json!({ "name": &name, "prefix": &prefix });
            let Ok(answer) = runner
                .ui_request("ui.argumentCompletions", params, COMPLETION_TIMEOUT)
                .await
            else {
                return;
            };
            let items = parse_items(&answer);
            if items.is_empty() {
                return;
            }
            let change = ScreenChange::Completions {
                typed: format!("/{name} {prefix}"),
                prefix,
                items,
            };
            tx.send(Msg::Then(Box::new(move |_| vec![Effect::Extension(change)])))
                .await;
        });
        None
    })
}

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
    runner: &Arc<ExtensionRunner>,
    builtins: &[SlashCommand],
    agent_dir: &Path,
    cwd: &Path,
    tx: &UiSender,
) -> Vec<SlashCommand> {
    let registrations = runner.registrations();
    let commands = registrations.commands();
    // Each under the name it is run by (`name:1`, `name:2` when several extensions share a
    // name, as pi 1.6 numbers them).
    let invocations = registrations.command_invocations();
    let mut out: Vec<SlashCommand> = Vec::new();
    for ((ext, command), invocation) in commands.into_iter().zip(invocations) {
        if builtins.iter().chain(&out).any(|c| c.name == invocation) {
            continue;
        }
        let description = command.description.clone().unwrap_or_default();
        let description = match source_tag(&ext.path, agent_dir, cwd) {
            Some(tag) if description.is_empty() => format!("[{tag}]"),
            Some(tag) => format!("[{tag}] {description}"),
            None => description,
        };
        let mut entry = SlashCommand::new(invocation.clone(), description);
        if command.has_completions {
            entry.complete_argument = Some(argument_completer(runner.clone(), invocation, tx.clone()));
        }
        out.push(entry);
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

    #[test]
    fn completion_items_need_a_value_and_default_their_label_to_it() {
        let answer = json!({"items": [
            {"value": "alpha", "description": "first"},
            {"value": "beta", "label": "Beta"},
            {"label": "no value"},
        ]});
        let items = parse_items(&answer);
        assert_eq!(items.len(), 2);
        assert_eq!(
            (items[0].label.as_str(), items[0].description.as_deref()),
            ("alpha", Some("first"))
        );
        assert_eq!(items[1].label, "Beta");
        assert!(parse_items(&json!({"items": null})).is_empty());
    }
}
