//! The application's keybindings: pi's `app.*` actions with their default keys, merged with
//! the library's and with the user's `keybindings.json`.

use std::collections::BTreeMap;
use std::path::Path;

use pi_tui::{KeybindingDef, Keybindings, TUI_KEYBINDINGS};

macro_rules! defs {
    ($( $id:literal => [$($k:literal),*], $d:literal; )*) => {
        &[ $( KeybindingDef { id: $id, default_keys: &[$($k),*], description: $d }, )* ]
    };
}

/// pi's application actions.
pub const APP_KEYBINDINGS: &[KeybindingDef] = defs! {
    "app.interrupt" => ["escape"], "Cancel or abort";
    "app.clear" => ["ctrl+c"], "Clear editor";
    "app.exit" => ["ctrl+d"], "Exit (when editor is empty)";
    "app.suspend" => ["ctrl+z"], "Suspend to background";
    "app.thinking.cycle" => ["shift+tab"], "Cycle thinking level";
    "app.thinking.save" => ["ctrl+s"], "Save thinking level";
    "app.thinking.toggle" => ["ctrl+t"], "Toggle thinking blocks";
    "app.model.cycleForward" => ["ctrl+p"], "Cycle to next model";
    "app.model.cycleBackward" => ["shift+ctrl+p"], "Cycle to previous model";
    "app.model.select" => ["ctrl+l"], "Open model selector";
    "app.tools.expand" => ["ctrl+o"], "Toggle tool output expansion";
    "app.editor.external" => ["ctrl+g"], "Open external editor";
    "app.message.followUp" => ["alt+enter"], "Queue follow-up message";
    "app.message.dequeue" => ["alt+up"], "Restore queued messages to editor";
    "app.message.copy" => ["ctrl+x"], "Copy selection or last assistant message";
    "app.clipboard.pasteImage" => ["ctrl+v"], "Paste image from clipboard";
    "app.session.new" => [], "Start a new session";
    "app.session.tree" => [], "Open session tree";
    "app.session.fork" => [], "Fork current session";
    "app.session.resume" => [], "Resume a session";
    "app.session.toggleNamedFilter" => ["ctrl+n"], "Toggle named session filter";
    "app.session.togglePath" => ["ctrl+p"], "Toggle session path display";
    "app.session.toggleSort" => ["ctrl+s"], "Toggle session sort mode";
    "app.session.rename" => ["ctrl+r"], "Rename session";
    "app.session.delete" => ["ctrl+d"], "Delete session";
    "app.session.deleteNoninvasive" => ["ctrl+backspace"], "Delete session when query is empty";
    "app.tree.foldOrUp" => ["ctrl+left", "alt+left"], "Fold a tree branch or move to its start";
    "app.tree.unfoldOrDown" => ["ctrl+right", "alt+right"], "Unfold a tree branch or move to the next branch";
    "app.tree.filter.default" => ["ctrl+d"], "Tree: default filter";
    "app.tree.filter.noTools" => ["ctrl+t"], "Tree: toggle hiding tool results";
    "app.tree.filter.userOnly" => ["ctrl+u"], "Tree: toggle user messages only";
    "app.tree.filter.labeledOnly" => ["ctrl+l"], "Tree: toggle labeled entries only";
    "app.tree.filter.all" => ["ctrl+a"], "Tree: toggle showing every entry";
    "app.tree.filter.cycleForward" => ["ctrl+o"], "Tree: next filter";
    "app.tree.filter.cycleBackward" => ["shift+ctrl+o"], "Tree: previous filter";
    "app.tree.editLabel" => ["shift+l"], "Edit a tree entry's label";
    "app.tree.toggleLabelTimestamp" => ["shift+t"], "Show or hide label times in the tree";
    "app.models.save" => ["ctrl+s"], "Save the model set to settings";
    "app.models.enableAll" => ["ctrl+a"], "Enable every model";
    "app.models.clearAll" => ["ctrl+x"], "Disable every model";
    "app.models.toggleProvider" => ["ctrl+p"], "Toggle all models of a provider";
    "app.models.reorderUp" => ["alt+up"], "Move a model up";
    "app.models.reorderDown" => ["alt+down"], "Move a model down";
};

pub use super::keybindings_file::parse_user_bindings;

/// Build the effective keybindings from the library's and the application's actions and the
/// user's file (missing file: defaults; broken file: defaults plus a warning).
pub fn load_keybindings(path: &Path) -> (Keybindings, Option<String>) {
    let mut defs = TUI_KEYBINDINGS.to_vec();
    defs.extend_from_slice(APP_KEYBINDINGS);
    if windows_keybindings(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty())) {
        for def in &mut defs {
            if let Some(keys) = windows_default(def.id) {
                def.default_keys = keys;
            }
        }
    }
    let (user, warning) = match std::fs::read_to_string(path) {
        Ok(text) => match parse_user_bindings(&text) {
            Ok(u) => (u, None),
            Err(e) => (BTreeMap::new(), Some(format!("Could not read {}: {e}", path.display()))),
        },
        Err(_) => (BTreeMap::new(), None),
    };
    (Keybindings::new(defs, user), warning)
}

/// pi 1.6 gives Windows and WSL (Linux with `WSL_DISTRO_NAME` or `WSL_INTEROP` set) other
/// default keys where their terminals take the usual ones.
fn windows_keybindings(is_set: impl Fn(&str) -> bool) -> bool {
    cfg!(windows) || (cfg!(target_os = "linux") && (is_set("WSL_DISTRO_NAME") || is_set("WSL_INTEROP")))
}

/// An action's default keys on Windows and WSL, where they differ.
fn windows_default(id: &str) -> Option<&'static [&'static str]> {
    Some(match id {
        "app.model.cycleBackward" => &["alt+p"],
        "app.message.followUp" => &["ctrl+q"],
        "app.message.dequeue" => &["alt+q"],
        "app.clipboard.pasteImage" => &["alt+v", "ctrl+v"],
        "tui.editor.undo" if cfg!(windows) => &["ctrl+z"],
        "tui.editor.undo" => &["alt+z"],
        "app.suspend" if cfg!(windows) => &[],
        "tui.altScreen.previousPrompt" => &["ctrl+up"],
        "tui.altScreen.nextPrompt" => &["ctrl+down"],
        "tui.altScreen.search" => &["ctrl+f"],
        _ => return None,
    })
}

/// The first key of an action, as shown in hints (`""` when unbound).
pub fn key_hint(kb: &Keybindings, id: &str) -> String {
    kb.keys(id).into_iter().next().unwrap_or_default()
}

/// The first key of an action as pi's hints spell it for people: `Ctrl+S`, `Shift+Tab`.
pub fn key_display(kb: &Keybindings, id: &str) -> String {
    capitalized(&key_hint(kb, id))
}

/// Every key of an action, spelled as [`key_display`] spells the first.
pub fn keys_display(kb: &Keybindings, id: &str) -> Vec<String> {
    kb.keys(id).iter().map(|key| capitalized(key)).collect()
}

/// A key with each part capitalised, as pi spells keys for people (`ctrl+shift+k` is `Ctrl+Shift+K`).
pub fn capitalized(key: &str) -> String {
    key.split('+')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join("+")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::parse_key;

    #[test]
    fn user_file_remaps_app_actions() {
        let user = parse_user_bindings(r#"{"app.interrupt": "ctrl+x", "expandTools": ["ctrl+e"]}"#).expect("parses");
        let mut defs = TUI_KEYBINDINGS.to_vec();
        defs.extend_from_slice(APP_KEYBINDINGS);
        let kb = Keybindings::new(defs, user);
        let esc = parse_key("\x1b", false).expect("esc");
        let ctrl_x = parse_key("\x18", false).expect("ctrl+x");
        assert!(!kb.matches(&esc, "app.interrupt"));
        assert!(kb.matches(&ctrl_x, "app.interrupt"));
        assert_eq!(kb.keys("app.tools.expand"), vec!["ctrl+e"]);
        assert!(parse_user_bindings("[1]").is_err());
        assert_eq!(key_display(&kb, "app.models.save"), "Ctrl+S");
    }
}
