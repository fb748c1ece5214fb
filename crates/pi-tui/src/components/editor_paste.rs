//! The editor's paste handling: large pastes become markers that expand on submit and move
//! as one unit.

use super::*;

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

    /// Byte ranges of the paste markers on the cursor's line (they move as one word).
    pub(super) fn marker_ranges(&self) -> Vec<(usize, usize)> {
        let line = self.state.current();
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(i) = line[from..].find("[paste #") {
            let start = from + i;
            match line[start..].find(']') {
                Some(e) if self.is_marker(&line[start..start + e + 1]) => {
                    out.push((start, start + e + 1));
                    from = start + e + 1;
                }
                _ => from = start + 1,
            }
        }
        out
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
        if let Some(id) = marker_id(&removed) {
            self.forget_paste(id);
        }
        Some(removed)
    }

    /// Drop paste `id` and renumber the later ones down by one (store and markers), so the
    /// next paste takes the freed number as pi-tui does.
    fn forget_paste(&mut self, id: u32) {
        self.pastes.remove(&id);
        self.paste_counter = self.paste_counter.saturating_sub(1);
        let later: Vec<u32> = self.pastes.range(id + 1..).map(|(k, _)| *k).collect();
        for k in later {
            if let Some(content) = self.pastes.remove(&k) {
                self.pastes.insert(k - 1, content);
            }
        }
        for line in &mut self.state.lines {
            if line.contains("[paste #") {
                *line = renumber_markers(line, id);
            }
        }
    }
}

/// The id of a `[paste #N ...]` marker.
fn marker_id(marker: &str) -> Option<u32> {
    let rest = marker.strip_prefix("[paste #")?;
    rest.split([' ', ']']).next()?.parse().ok()
}

/// `line` with every marker numbered above `removed` taken down by one.
fn renumber_markers(line: &str, removed: u32) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find("[paste #") {
        out.push_str(&rest[..i + 8]);
        rest = &rest[i + 8..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let closes = rest[digits..].starts_with([']', ' ']) && rest[digits..].contains(']');
        match rest[..digits].parse::<u32>() {
            Ok(n) if closes && n > removed => {
                out.push_str(&(n - 1).to_string());
                rest = &rest[digits..];
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
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
