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
