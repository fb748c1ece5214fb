//! Which extension shortcuts (`pi.registerShortcut`) a key fires, with pi 1.6's rule for
//! clashes: a key bound to one of the reserved app actions stays the app's; any other
//! built-in binding gives way to the extension; of two extensions, the later one wins.

use pi_extensions::ExtensionInfo;
use pi_tui::{KeyEvent, KeyId, Keybindings};

/// The actions extensions may not take a key from (pi 1.6's list).
const RESERVED: &[&str] = &[
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.copy",
    "app.message.followUp",
    "tui.input.submit",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.input.copy",
    "tui.editor.deleteToLineEnd",
];

/// Whether `id` is a key the app keeps for itself.
fn reserved(id: &KeyId, kb: &Keybindings) -> bool {
    let event = KeyEvent::new(id.key, id.mods);
    RESERVED.iter().any(|action| kb.matches(&event, action))
}

/// The registered key (as the extension wrote it) that `k` fires, if any.
pub fn shortcut_for<'a>(k: &KeyEvent, extensions: &'a [ExtensionInfo], kb: &Keybindings) -> Option<&'a str> {
    let mut found = None;
    for ext in extensions {
        for shortcut in &ext.shortcuts {
            let Some(id) = KeyId::parse(&shortcut.key) else {
                continue;
            };
            if k.matches_id(&id) && !reserved(&id, kb) {
                found = Some(shortcut.key.as_str());
            }
        }
    }
    found
}

/// The shortcuts `/hotkeys` lists, as (key, what it does): each key once, lower-cased and
/// where it was first registered, described by the extension that gets it (its path when it
/// gave no description); keys the app keeps are left out.
pub fn listed(extensions: &[ExtensionInfo], kb: &Keybindings) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for ext in extensions {
        for shortcut in &ext.shortcuts {
            let key = shortcut.key.to_lowercase();
            if KeyId::parse(&key).is_some_and(|id| reserved(&id, kb)) {
                continue;
            }
            let what = shortcut.description.clone().unwrap_or_else(|| ext.path.clone());
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = what,
                None => out.push((key, what)),
            }
        }
    }
    out
}

/// Every action in the order pi 1.6 walks them when it names the action a key belongs to:
/// of several unreserved actions on one key, the last one in this order is named.
const ORDER_16: &[&str] = &[
    "tui.editor.cursorUp",
    "tui.editor.cursorDown",
    "tui.editor.historyPrevious",
    "tui.editor.historyNext",
    "tui.editor.cursorLeft",
    "tui.editor.cursorRight",
    "tui.editor.cursorWordLeft",
    "tui.editor.cursorWordRight",
    "tui.editor.cursorLineStart",
    "tui.editor.cursorLineEnd",
    "tui.editor.jumpForward",
    "tui.editor.jumpBackward",
    "tui.editor.pageUp",
    "tui.editor.pageDown",
    "tui.editor.deleteCharBackward",
    "tui.editor.deleteCharForward",
    "tui.editor.deleteWordBackward",
    "tui.editor.deleteWordForward",
    "tui.editor.deleteToLineStart",
    "tui.editor.deleteToLineEnd",
    "tui.editor.yank",
    "tui.editor.yankPop",
    "tui.editor.undo",
    "tui.input.newLine",
    "tui.input.submit",
    "tui.input.tab",
    "tui.input.copy",
    "tui.select.up",
    "tui.select.down",
    "tui.select.pageUp",
    "tui.select.pageDown",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.altScreen.pageUp",
    "tui.altScreen.pageDown",
    "tui.altScreen.halfPageUp",
    "tui.altScreen.halfPageDown",
    "tui.altScreen.lineUp",
    "tui.altScreen.lineDown",
    "tui.altScreen.previousPrompt",
    "tui.altScreen.nextPrompt",
    "tui.altScreen.search",
    "tui.altScreen.searchNext",
    "tui.altScreen.searchPrevious",
    "tui.altScreen.searchClose",
    "tui.altScreen.top",
    "tui.altScreen.bottom",
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.thinking.save",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.session.toggleNamedFilter",
    "app.editor.external",
    "app.message.copy",
    "app.message.followUp",
    "app.message.dequeue",
    "app.clipboard.pasteImage",
    "app.session.new",
    "app.session.tree",
    "app.session.fork",
    "app.session.resume",
    "app.tree.foldOrUp",
    "app.tree.unfoldOrDown",
    "app.tree.editLabel",
    "app.tree.toggleLabelTimestamp",
    "app.session.togglePath",
    "app.session.toggleSort",
    "app.session.rename",
    "app.session.delete",
    "app.session.deleteNoninvasive",
    "app.models.save",
    "app.models.enableAll",
    "app.models.clearAll",
    "app.models.toggleProvider",
    "app.models.reorderUp",
    "app.models.reorderDown",
    "app.tree.filter.default",
    "app.tree.filter.noTools",
    "app.tree.filter.userOnly",
    "app.tree.filter.labeledOnly",
    "app.tree.filter.all",
    "app.tree.filter.cycleForward",
    "app.tree.filter.cycleBackward",
];

/// The built-in action each key (lower-cased, as written) belongs to, and whether the app
/// keeps it: a reserved action holds its key against any other; otherwise the last wins.
fn builtin_keys(kb: &Keybindings) -> std::collections::HashMap<String, (String, bool)> {
    let mut ids: Vec<&str> = kb.definitions().iter().map(|d| d.id).collect();
    let rank = |id: &str| ORDER_16.iter().position(|o| *o == id).unwrap_or(ORDER_16.len());
    ids.sort_by_key(|id| rank(id));
    let mut out: std::collections::HashMap<String, (String, bool)> = std::collections::HashMap::new();
    for id in ids {
        let restricted = RESERVED.contains(&id);
        for key in kb.keys(id) {
            let key = key.to_lowercase();
            if out.get(&key).is_some_and(|(_, r)| *r) && !restricted {
                continue;
            }
            out.insert(key, (id.to_string(), restricted));
        }
    }
    out
}

/// pi 1.6's warnings about registered shortcuts, as (extension path, message), in
/// registration order: a key the app keeps is skipped, a key of another built-in action or
/// of an earlier extension goes to the later extension.
pub fn diagnostics(extensions: &[ExtensionInfo], kb: &Keybindings) -> Vec<(String, String)> {
    let builtin = builtin_keys(kb);
    let mut taken: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for ext in extensions {
        let path = &ext.path;
        for shortcut in &ext.shortcuts {
            let key = &shortcut.key;
            let normalized = key.to_lowercase();
            match builtin.get(&normalized) {
                Some((_, true)) => {
                    out.push((
                        path.clone(),
                        format!("Extension shortcut '{key}' from {path} conflicts with built-in shortcut. Skipping."),
                    ));
                    continue;
                }
                Some((action, false)) => out.push((
                    path.clone(),
                    format!(
                        "Extension shortcut conflict: '{key}' is built-in shortcut for {action} and {path}. Using {path}."
                    ),
                )),
                None => {}
            }
            if let Some(earlier) = taken.get(&normalized) {
                out.push((
                    path.clone(),
                    format!(
                        "Extension shortcut conflict: '{key}' registered by both {earlier} and {path}. Using {path}."
                    ),
                ));
            }
            taken.insert(normalized, path.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(keys: &[&str]) -> ExtensionInfo {
        let shortcuts: Vec<_> = keys.iter().map(|k| serde_json::json!({"key": k})).collect();
        serde_json::from_value(serde_json::json!({
            "path": "/e.ts", "resolvedPath": "/e.ts", "tools": [], "commands": [], "flags": [],
            "shortcuts": shortcuts, "events": [], "messageRenderers": [],
        }))
        .expect("extension info")
    }

    #[test]
    fn reserved_keys_stay_the_apps_and_others_go_to_the_extension() {
        let kb = pi_tui::keybindings();
        let exts = vec![ext(&["ctrl+c", "ctrl+shift+k", "alt+z"])];
        let press = |id: &str| {
            let id = KeyId::parse(id).expect("key");
            KeyEvent::new(id.key, id.mods)
        };
        // Ctrl+C clears the editor (reserved): the extension does not get it.
        assert_eq!(shortcut_for(&press("ctrl+c"), &exts, &kb), None);
        assert_eq!(shortcut_for(&press("ctrl+shift+k"), &exts, &kb), Some("ctrl+shift+k"));
        assert_eq!(shortcut_for(&press("alt+z"), &exts, &kb), Some("alt+z"));
        assert_eq!(shortcut_for(&press("alt+y"), &exts, &kb), None);
    }

    #[test]
    fn conflicts_are_worded_as_pi_16_words_them() {
        let (kb, _) = crate::keys::load_keybindings(std::path::Path::new("/nonexistent/keybindings.json"));
        let mut second = ext(&["Alt+Z"]);
        second.path = "/second.ts".into();
        let exts = vec![ext(&["ctrl+c", "ctrl+a", "ctrl+x", "alt+z", "ctrl+shift+k"]), second];
        let got: Vec<String> = diagnostics(&exts, &kb).into_iter().map(|(_, m)| m).collect();
        assert_eq!(
            got,
            [
                "Extension shortcut 'ctrl+c' from /e.ts conflicts with built-in shortcut. Skipping.",
                // Several unreserved actions use Ctrl+A; pi 1.6 names the last it walks.
                "Extension shortcut conflict: 'ctrl+a' is built-in shortcut for app.tree.filter.all and /e.ts. Using /e.ts.",
                // Ctrl+X copies the last message (reserved) before it clears the model list.
                "Extension shortcut 'ctrl+x' from /e.ts conflicts with built-in shortcut. Skipping.",
                "Extension shortcut conflict: 'Alt+Z' registered by both /e.ts and /second.ts. Using /second.ts.",
            ]
        );
    }

    #[test]
    fn listed_keys_skip_reserved_ones_and_the_later_extension_describes_a_shared_key() {
        let kb = pi_tui::keybindings();
        let mut second = ext(&["Alt+Z"]);
        second.path = "/second.ts".into();
        let exts = vec![ext(&["alt+z", "ctrl+c", "ctrl+shift+k"]), second];
        assert_eq!(
            listed(&exts, &kb),
            [
                ("alt+z".to_string(), "/second.ts".to_string()),
                ("ctrl+shift+k".to_string(), "/e.ts".to_string()),
            ]
        );
    }
}
