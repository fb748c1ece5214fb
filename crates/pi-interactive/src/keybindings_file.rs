//! Reading `keybindings.json` as pi 1.6 does: old un-namespaced action names migrated (the
//! namespaced name wins when a file has both), `$schema` ignored, a byte order mark skipped,
//! and a binding whose value is not a key id or a list of key ids left out (so the action
//! keeps its default keys).

use std::collections::BTreeMap;

/// Old action names and the ones that replaced them.
const LEGACY: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];

/// Named keys a key id may end in (besides one letter or digit).
const NAMED_KEYS: &[&str] = &[
    "escape",
    "esc",
    "enter",
    "return",
    "tab",
    "space",
    "backspace",
    "delete",
    "insert",
    "clear",
    "home",
    "end",
    "pageUp",
    "pageDown",
    "up",
    "down",
    "left",
    "right",
    "f1",
    "f2",
    "f3",
    "f4",
    "f5",
    "f6",
    "f7",
    "f8",
    "f9",
    "f10",
    "f11",
    "f12",
    "`",
    "-",
    "=",
    "[",
    "]",
    "\\",
    ";",
    "'",
    ",",
    ".",
    "/",
    "!",
    "@",
    "#",
    "$",
    "%",
    "^",
    "&",
    "*",
    "(",
    ")",
    "_",
    "+",
    "|",
    "~",
    "{",
    "}",
    ":",
    "<",
    ">",
    "?",
];

const MODIFIERS: &[&str] = &["ctrl", "shift", "alt", "super"];

/// A key id as 1.6's schema accepts it: up to four distinct lower-case modifiers joined
/// with `+`, then one letter or digit or a named key (case as written in `NAMED_KEYS`).
pub fn valid_key_id(id: &str) -> bool {
    let mut rest = id;
    let mut seen: Vec<&str> = Vec::new();
    loop {
        if is_base_key(rest) {
            return true;
        }
        let Some(modifier) = MODIFIERS
            .iter()
            .find(|m| rest.strip_prefix(**m).is_some_and(|after| after.starts_with('+')))
        else {
            return false;
        };
        if seen.contains(modifier) || seen.len() == 4 {
            return false;
        }
        seen.push(modifier);
        rest = &rest[modifier.len() + 1..];
    }
}

fn is_base_key(s: &str) -> bool {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_lowercase() || c.is_ascii_digit() => true,
        _ => NAMED_KEYS.contains(&s),
    }
}

/// The keys of one binding, or `None` when 1.6 would ignore it.
fn binding_keys(value: &serde_json::Value) -> Option<Vec<String>> {
    match value {
        serde_json::Value::String(s) => valid_key_id(s).then(|| vec![s.clone()]),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|k| k.as_str().filter(|s| valid_key_id(s)).map(str::to_string))
            .collect(),
        _ => None,
    }
}

/// Parse `keybindings.json`: an object of action id → key or list of keys.
pub fn parse_user_bindings(text: &str) -> Result<BTreeMap<String, Vec<String>>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Some(obj) = value.as_object() else {
        return Err("keybindings.json must hold an object".into());
    };
    let mut out = BTreeMap::new();
    for (id, value) in obj {
        if id == "$schema" {
            continue;
        }
        let new_id = LEGACY.iter().find(|(old, _)| old == id).map(|(_, new)| *new);
        // A file that has both spellings keeps the namespaced one.
        if new_id.is_some_and(|n| obj.contains_key(n)) {
            continue;
        }
        if let Some(keys) = binding_keys(value) {
            out.insert(new_id.unwrap_or(id).to_string(), keys);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ids_follow_the_schema() {
        for ok in [
            "ctrl+x",
            "shift+ctrl+p",
            "pageUp",
            "ctrl+]",
            "alt+enter",
            "f12",
            "super+alt+shift+ctrl+a",
            "+",
        ] {
            assert!(valid_key_id(ok), "{ok}");
        }
        for bad in [
            "Ctrl+X",
            "ctrl+ctrl+x",
            "ctrl+",
            "pageup",
            "foo",
            "",
            "ctrl+f13",
            "hyper+x",
        ] {
            assert!(!valid_key_id(bad), "{bad}");
        }
    }

    #[test]
    fn legacy_names_bom_schema_and_bad_values() {
        let text = "\u{feff}{\"$schema\": \"https://pi.dev/schemas/keybindings.schema.json\",\
            \"expandTools\": \"ctrl+e\", \"app.tools.expand\": \"ctrl+y\",\
            \"treeEditLabel\": \"ctrl+l\", \"deleteSession\": [\"ctrl+k\"],\
            \"app.clear\": \"Ctrl+Q\", \"app.exit\": [\"ctrl+q\", 3], \"app.suspend\": []}";
        let user = parse_user_bindings(text).expect("parses");
        assert_eq!(user.get("app.tools.expand"), Some(&vec!["ctrl+y".to_string()]));
        assert_eq!(user.get("app.tree.editLabel"), Some(&vec!["ctrl+l".to_string()]));
        assert_eq!(user.get("app.session.delete"), Some(&vec!["ctrl+k".to_string()]));
        assert_eq!(user.get("app.suspend"), Some(&Vec::new()));
        assert!(!user.contains_key("app.clear"));
        assert!(!user.contains_key("app.exit"));
        assert!(!user.contains_key("$schema"));
        assert!(!user.contains_key("expandTools"));
    }
}
