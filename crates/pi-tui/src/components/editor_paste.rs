//! The editor's paste handling (large pastes become markers that expand on submit and move
//! as one unit) and its autocomplete plumbing.

use super::*;
use crate::autocomplete::Suggestions;

impl Editor {
    pub(super) fn paste(&mut self, text: &str) -> EditorEvent {
        self.autocomplete = None;
        self.history_index = None;
        self.last = LastAction::None;
        self.snapshot();
        let decoded = decode_ctrl_csi_u(text);
        let mut clean: String = normalize(&decoded)
            .chars()
            .filter(|&c| c == '\n' || !c.is_control())
            .collect();
        // A pasted path right after a word gets a separating space.
        if clean.starts_with(['/', '~', '.']) {
            let before = &self.state.current()[..self.state.col];
            if before
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                clean.insert(0, ' ');
            }
        }
        let nlines = clean.split('\n').count();
        let nchars = clean.chars().count();
        if nlines > PASTE_LINES || nchars > PASTE_CHARS {
            self.paste_counter += 1;
            let id = self.paste_counter;
            let marker = if nlines > PASTE_LINES {
                format!("[paste #{id} +{nlines} lines]")
            } else {
                format!("[paste #{id} {nchars} chars]")
            };
            self.pastes.insert(id, clean);
            self.state.insert(&marker);
        } else {
            self.state.insert(&clean);
        }
        EditorEvent::Changed
    }

    /// Start of a paste marker ending exactly at the cursor.
    pub(super) fn marker_before(&self) -> Option<usize> {
        let before = &self.state.current()[..self.state.col];
        if !before.ends_with(']') {
            return None;
        }
        let start = before.rfind("[paste #")?;
        self.is_marker(&before[start..]).then_some(start)
    }

    /// End of a paste marker starting exactly at the cursor.
    pub(super) fn marker_after(&self) -> Option<usize> {
        let after = &self.state.current()[self.state.col..];
        if !after.starts_with("[paste #") {
            return None;
        }
        let end = after.find(']')? + 1;
        self.is_marker(&after[..end]).then_some(self.state.col + end)
    }

    fn is_marker(&self, text: &str) -> bool {
        let Some(rest) = text.strip_prefix("[paste #") else {
            return false;
        };
        let Some(Ok(id)) = rest.split([' ', ']']).next().map(str::parse::<u32>) else {
            return false;
        };
        self.pastes
            .get(&id)
            .is_some_and(|content| marker_forms(id, content).iter().any(|m| m == text))
    }

    /// Backspace right after a paste marker removes the whole marker.
    pub(super) fn delete_marker_backward(&mut self) -> Option<String> {
        let start = self.marker_before()?;
        let removed: String = self.state.lines[self.state.line].drain(start..self.state.col).collect();
        self.state.col = start;
        Some(removed)
    }

    /// Whether autocomplete may open on this character.
    pub(super) fn refresh_autocomplete(&mut self, force: bool) {
        let Some(p) = self.provider.as_mut() else { return };
        let s = p.suggestions(&self.state.lines, self.state.line, self.state.col, force);
        self.set_suggestions(s);
    }

    /// Show (or with None / no items, hide) autocomplete suggestions. Providers that search
    /// in the background return None from `suggestions` and deliver results here later, if
    /// the text before the cursor still ends with `prefix`.
    pub fn show_suggestions(&mut self, s: Suggestions) {
        let before = &self.state.current()[..self.state.col];
        if before.ends_with(&s.prefix) {
            self.set_suggestions(Some(s));
        }
    }

    fn set_suggestions(&mut self, s: Option<Suggestions>) {
        match s {
            Some(s) if !s.items.is_empty() => {
                let select_items: Vec<SelectItem> = s
                    .items
                    .iter()
                    .map(|i| SelectItem {
                        value: i.value.clone(),
                        label: Some(i.label.clone()),
                        description: i.description.clone(),
                    })
                    .collect();
                let mut list = SelectList::new(select_items, self.autocomplete_max_visible, self.theme.select_list);
                list.set_no_match_text("  No matches");
                self.autocomplete = Some(Autocomplete {
                    list,
                    items: s.items,
                    prefix: s.prefix,
                });
            }
            _ => self.autocomplete = None,
        }
    }

    pub(super) fn apply_completion(&mut self) -> bool {
        let Some(ac) = self.autocomplete.take() else {
            return false;
        };
        let Some(item) = ac.items.get(ac.list.selected_index()) else {
            return false;
        };
        self.snapshot();
        let Some(p) = self.provider.as_ref() else { return false };
        let a = p.apply(&self.state.lines, self.state.line, self.state.col, item, &ac.prefix);
        // The provider's answer is input: keep the cursor on a line and a character boundary.
        self.state.lines = if a.lines.is_empty() {
            vec![String::new()]
        } else {
            a.lines
        };
        self.state.line = a.line.min(self.state.lines.len() - 1);
        let line = &self.state.lines[self.state.line];
        let mut col = a.col.min(line.len());
        while !line.is_char_boundary(col) {
            col -= 1;
        }
        self.state.col = col;
        self.last = LastAction::None;
        // A directory keeps completing.
        if item.value.ends_with('/') {
            self.refresh_autocomplete(false);
        }
        true
    }
}

pub(super) fn marker_forms(id: u32, content: &str) -> Vec<String> {
    let nlines = content.split('\n').count();
    let nchars = content.chars().count();
    vec![
        format!("[paste #{id} +{nlines} lines]"),
        format!("[paste #{id} {nchars} chars]"),
    ]
}

pub(super) fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n").replace('\t', "    ")
}

/// Terminals that re-encode control bytes inside a paste as CSI-u ctrl+letter: decode them.
pub(super) fn decode_ctrl_csi_u(text: &str) -> String {
    if !text.contains("\x1b[") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(";5u") {
            if let Ok(cp) = after[..digits].parse::<u32>() {
                let decoded = match cp {
                    97..=122 => char::from_u32(cp - 96),
                    65..=90 => char::from_u32(cp - 64),
                    _ => None,
                };
                if let Some(c) = decoded {
                    out.push(c);
                    rest = &after[digits + 3..];
                    continue;
                }
            }
        }
        out.push_str("\x1b[");
        rest = after;
    }
    out.push_str(rest);
    out
}
