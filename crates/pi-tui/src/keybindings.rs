//! Keybindings: named actions (`tui.editor.cursorLeft`, ...) mapped to key ids, with the
//! library's defaults, user overrides and conflict reporting.

use std::collections::{BTreeMap, HashMap};

use crate::keys::{KeyEvent, KeyId};

/// One bindable action: its default keys and a description for help screens.
#[derive(Debug, Clone)]
pub struct KeybindingDef {
    pub id: &'static str,
    pub default_keys: &'static [&'static str],
    pub description: &'static str,
}

macro_rules! defs {
    ($( $id:literal => [$($k:literal),*], $d:literal; )*) => {
        &[ $( KeybindingDef { id: $id, default_keys: &[$($k),*], description: $d }, )* ]
    };
}

/// The library's actions (editor, input, select lists) and their default keys.
pub const TUI_KEYBINDINGS: &[KeybindingDef] = defs! {
    "tui.editor.cursorUp" => ["up"], "Move cursor up";
    "tui.editor.cursorDown" => ["down"], "Move cursor down";
    "tui.editor.cursorLeft" => ["left", "ctrl+b"], "Move cursor left";
    "tui.editor.cursorRight" => ["right", "ctrl+f"], "Move cursor right";
    "tui.editor.cursorWordLeft" => ["alt+left", "ctrl+left", "alt+b"], "Move cursor word left";
    "tui.editor.cursorWordRight" => ["alt+right", "ctrl+right", "alt+f"], "Move cursor word right";
    "tui.editor.cursorLineStart" => ["home", "ctrl+a"], "Move to line start";
    "tui.editor.cursorLineEnd" => ["end", "ctrl+e"], "Move to line end";
    "tui.editor.jumpForward" => ["ctrl+]"], "Jump forward to character";
    "tui.editor.jumpBackward" => ["ctrl+alt+]"], "Jump backward to character";
    "tui.editor.pageUp" => ["pageUp", "ctrl+pageUp"], "Page up";
    "tui.editor.pageDown" => ["pageDown", "ctrl+pageDown"], "Page down";
    "tui.editor.deleteCharBackward" => ["backspace"], "Delete character backward";
    "tui.editor.deleteCharForward" => ["delete", "ctrl+d"], "Delete character forward";
    "tui.editor.deleteWordBackward" => ["ctrl+w", "alt+backspace"], "Delete word backward";
    "tui.editor.deleteWordForward" => ["alt+d", "alt+delete"], "Delete word forward";
    "tui.editor.deleteToLineStart" => ["ctrl+u"], "Delete to line start";
    "tui.editor.deleteToLineEnd" => ["ctrl+k"], "Delete to line end";
    "tui.editor.yank" => ["ctrl+y"], "Yank";
    "tui.editor.yankPop" => ["alt+y"], "Yank pop";
    "tui.editor.undo" => ["ctrl+-"], "Undo";
    "tui.editor.historyPrevious" => [], "Previous history entry";
    "tui.editor.historyNext" => [], "Next history entry";
    "tui.input.newLine" => ["shift+enter", "ctrl+j"], "Insert newline";
    "tui.input.submit" => ["enter"], "Submit input";
    "tui.input.tab" => ["tab"], "Tab / autocomplete";
    "tui.input.copy" => ["ctrl+c"], "Copy selection";
    "tui.select.up" => ["up"], "Move selection up";
    "tui.select.down" => ["down"], "Move selection down";
    "tui.select.pageUp" => ["pageUp"], "Selection page up";
    "tui.select.pageDown" => ["pageDown"], "Selection page down";
    "tui.select.confirm" => ["enter"], "Confirm selection";
    "tui.select.cancel" => ["escape", "ctrl+c"], "Cancel selection";
    "tui.altScreen.pageUp" => ["pageUp"], "Scroll the transcript up a page";
    "tui.altScreen.pageDown" => ["pageDown"], "Scroll the transcript down a page";
    "tui.altScreen.halfPageUp" => [], "Scroll the transcript up half a page";
    "tui.altScreen.halfPageDown" => [], "Scroll the transcript down half a page";
    "tui.altScreen.lineUp" => [], "Scroll the transcript up a line";
    "tui.altScreen.lineDown" => [], "Scroll the transcript down a line";
    "tui.altScreen.previousPrompt" => ["ctrl+shift+up", "ctrl+up"], "Scroll to the previous message";
    "tui.altScreen.nextPrompt" => ["ctrl+shift+down", "ctrl+down"], "Scroll to the next message";
    "tui.altScreen.top" => ["ctrl+home"], "Scroll to the start of the transcript";
    "tui.altScreen.search" => ["ctrl+shift+f"], "Search the transcript";
    "tui.altScreen.searchNext" => ["enter", "ctrl+g"], "Next search match";
    "tui.altScreen.searchPrevious" => ["shift+enter", "ctrl+shift+g"], "Previous search match";
    "tui.altScreen.searchClose" => ["escape"], "Close the search";
    "tui.altScreen.bottom" => ["ctrl+end"], "Scroll to the end of the transcript and follow it";
};

/// Two or more actions the user bound to the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeybindingConflict {
    pub key: String,
    pub ids: Vec<String>,
}

/// Resolved keybindings: defaults overridden per action by the user's entries.
#[derive(Debug, Clone)]
pub struct Keybindings {
    defs: Vec<KeybindingDef>,
    user: BTreeMap<String, Vec<String>>,
    keys: HashMap<String, Vec<String>>,
    parsed: HashMap<String, Vec<KeyId>>,
    conflicts: Vec<KeybindingConflict>,
}

impl Default for Keybindings {
    fn default() -> Self {
        Self::new(TUI_KEYBINDINGS.to_vec(), BTreeMap::new())
    }
}

impl Keybindings {
    /// `defs` lists every known action; `user` maps action ids to the keys that replace the
    /// defaults (an empty list unbinds). Unknown ids in `user` are ignored.
    pub fn new(defs: Vec<KeybindingDef>, user: BTreeMap<String, Vec<String>>) -> Self {
        let mut kb = Keybindings {
            defs,
            user,
            keys: HashMap::new(),
            parsed: HashMap::new(),
            conflicts: Vec::new(),
        };
        kb.rebuild();
        kb
    }

    /// Add more actions (e.g. the application's own) keeping the user's overrides.
    pub fn extend(&mut self, defs: impl IntoIterator<Item = KeybindingDef>) {
        self.defs.extend(defs);
        self.rebuild();
    }

    pub fn set_user_bindings(&mut self, user: BTreeMap<String, Vec<String>>) {
        self.user = user;
        self.rebuild();
    }

    fn rebuild(&mut self) {
        self.keys.clear();
        self.parsed.clear();
        self.conflicts.clear();
        let known: std::collections::HashSet<&str> = self.defs.iter().map(|d| d.id).collect();
        let mut claims: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (id, keys) in &self.user {
            if !known.contains(id.as_str()) {
                continue;
            }
            for k in dedup(keys.iter().map(String::as_str)) {
                claims.entry(k).or_default().push(id.clone());
            }
        }
        for (key, ids) in claims {
            if ids.len() > 1 {
                self.conflicts.push(KeybindingConflict { key, ids });
            }
        }
        for d in &self.defs {
            let keys = match self.user.get(d.id) {
                Some(u) => dedup(u.iter().map(String::as_str)),
                None => dedup(d.default_keys.iter().copied()),
            };
            let parsed = keys.iter().filter_map(|k| KeyId::parse(k)).collect();
            self.parsed.insert(d.id.to_string(), parsed);
            self.keys.insert(d.id.to_string(), keys);
        }
    }

    /// Whether `ev` triggers the action `id`.
    pub fn matches(&self, ev: &KeyEvent, id: &str) -> bool {
        self.parsed
            .get(id)
            .is_some_and(|keys| keys.iter().any(|k| ev.matches_id(k)))
    }

    /// The keys bound to `id`, as written.
    pub fn keys(&self, id: &str) -> Vec<String> {
        self.keys.get(id).cloned().unwrap_or_default()
    }

    pub fn definition(&self, id: &str) -> Option<&KeybindingDef> {
        self.defs.iter().find(|d| d.id == id)
    }

    pub fn definitions(&self) -> &[KeybindingDef] {
        &self.defs
    }

    pub fn conflicts(&self) -> &[KeybindingConflict] {
        &self.conflicts
    }
}

fn dedup<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in keys {
        if !out.iter().any(|o| o == k) {
            out.push(k.to_string());
        }
    }
    out
}

static GLOBAL: std::sync::OnceLock<std::sync::RwLock<std::sync::Arc<Keybindings>>> = std::sync::OnceLock::new();

fn global() -> &'static std::sync::RwLock<std::sync::Arc<Keybindings>> {
    GLOBAL.get_or_init(|| std::sync::RwLock::new(std::sync::Arc::new(Keybindings::default())))
}

/// The keybindings components consult (the library defaults until `set_keybindings`).
pub fn keybindings() -> std::sync::Arc<Keybindings> {
    match global().read() {
        Ok(g) => g.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Replace the keybindings components consult.
pub fn set_keybindings(kb: Keybindings) {
    let mut g = match global().write() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    *g = std::sync::Arc::new(kb);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::parse_key;

    #[test]
    fn defaults_and_overrides() {
        let ev = |s: &str| parse_key(s, false).expect("parses");
        let kb = Keybindings::default();
        assert!(kb.matches(&ev("\x02"), "tui.editor.cursorLeft"));
        assert!(kb.matches(&ev("\x1b[D"), "tui.editor.cursorLeft"));
        assert!(kb.matches(&ev("\x1b"), "tui.select.cancel"));
        assert!(!kb.matches(&ev("\x1b"), "no.such.action"));

        let mut user = BTreeMap::new();
        user.insert("tui.editor.cursorLeft".to_string(), vec!["ctrl+h".to_string()]);
        user.insert("tui.editor.undo".to_string(), vec!["ctrl+h".to_string()]);
        let kb = Keybindings::new(TUI_KEYBINDINGS.to_vec(), user);
        assert!(!kb.matches(&ev("\x1b[D"), "tui.editor.cursorLeft"));
        assert!(kb.matches(&ev("\x1b[104;5u"), "tui.editor.cursorLeft"));
        assert_eq!(kb.conflicts().len(), 1);
        assert_eq!(kb.keys("tui.editor.cursorLeft"), vec!["ctrl+h"]);
    }
}
