//! The editor's autocomplete menu: when typing opens it (a `/` command line, `@` or a
//! provider's trigger character where a token starts, a word character inside such a token),
//! asking the provider, and accepting a suggestion. Providers that answer in the background
//! (an application's own completions) hand their answers back through the public methods.

use super::*;
use crate::autocomplete::{Applied, Suggestions};

/// What accepting the selected suggestion did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Accepted {
    /// No menu, or nothing selected.
    Nothing,
    /// The text changed.
    Now,
    /// The provider applies it in the background.
    Later,
}

/// Characters that may open a token before its trigger character (`(@file`, `` `@file ``).
const TOKEN_OPENERS: [char; 5] = ['(', '[', '{', '<', '`'];

/// Whether `before` (the text before a trigger character) ends where a token starts.
fn at_token_start(before: &str) -> bool {
    let trimmed = before.trim_end_matches(TOKEN_OPENERS);
    trimmed.is_empty() || trimmed.ends_with(char::is_whitespace)
}

/// Whether the token ending at the cursor opens with `@` or one of `triggers`.
fn in_trigger_token(before: &str, triggers: &[char]) -> bool {
    let start = before
        .rfind(char::is_whitespace)
        .map_or(0, |i| i + before[i..].chars().next().map_or(1, char::len_utf8));
    let token = before[start..].trim_start_matches(TOKEN_OPENERS);
    token.starts_with(|c: char| c == '@' || triggers.contains(&c))
}

impl Editor {
    /// After `c` was typed: ask for suggestions where pi-tui's editor would.
    pub(super) fn typed_for_autocomplete(&mut self, c: char) {
        if self.autocomplete.is_some() {
            self.refresh_autocomplete(false);
            return;
        }
        let triggers = self
            .provider
            .as_ref()
            .map(|p| p.trigger_characters())
            .unwrap_or_default();
        let before = &self.state.current()[..self.state.col];
        let prev = &before[..before.len() - c.len_utf8()];
        // `/` opens the command menu at the start of the message; inside a `/command` line a
        // word character asks again (the name, or its argument once typed).
        let slash_line = self.state.line == 0 && before.trim_start().starts_with('/');
        let word_char = c.is_alphanumeric() || matches!(c, '.' | '-' | '_');
        let in_command = slash_line && ((c == '/' && prev.trim().is_empty()) || word_char);
        let trigger = (c == '@' || triggers.contains(&c)) && at_token_start(prev);
        // Any character of a token opened by a trigger asks again (`@src/`, `@"my fi`).
        let word = !c.is_whitespace()
            && (in_trigger_token(before, &triggers) || crate::file_suggest::at_prefix(before).is_some());
        if in_command || trigger || word {
            self.refresh_autocomplete(false);
        }
    }

    /// Inside a `/command` line (first line) or a token opened by `@` or a trigger character.
    pub(super) fn in_completable_context(&self) -> bool {
        let triggers = self
            .provider
            .as_ref()
            .map(|p| p.trigger_characters())
            .unwrap_or_default();
        let before = &self.state.current()[..self.state.col];
        (self.state.line == 0 && before.trim_start().starts_with('/')) || in_trigger_token(before, &triggers)
    }

    pub(super) fn refresh_autocomplete(&mut self, force: bool) {
        let Some(p) = self.provider.as_mut() else { return };
        let s = p.suggestions(&self.state.lines, self.state.line, self.state.col, force);
        // An answer still to come leaves the menu as it is; for Tab, the answer may complete
        // the text, so what is typed meanwhile waits for it as for a completion.
        if s.is_none() && p.answers_later() {
            self.applying |= force;
            return;
        }
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

    /// A provider's later answer for the text as it is now (the caller checked): shows the
    /// menu, or closes it for `None`. An explicit Tab (`force`) with one suggestion accepts it.
    pub fn answer_suggestions(&mut self, s: Option<Suggestions>, force: bool) {
        self.applying = false;
        let single = s.as_ref().is_some_and(|s| s.items.len() == 1);
        self.set_suggestions(s);
        if force && single {
            self.apply_completion(false);
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
                // Command names take a narrower first column, as pi-tui lays them out.
                if s.prefix.starts_with('/') {
                    list.set_primary_column(12, 32);
                }
                // The item that is the prefix, else the first that starts with it.
                let best = s
                    .items
                    .iter()
                    .position(|i| i.value == s.prefix)
                    .or_else(|| s.items.iter().position(|i| i.value.starts_with(&s.prefix)));
                if let Some(i) = best {
                    list.set_selected_index(i);
                }
                self.autocomplete = Some(Autocomplete {
                    list,
                    items: s.items,
                    prefix: s.prefix,
                });
            }
            _ => self.autocomplete = None,
        }
    }

    /// Accept the selected suggestion; `submit`: Enter on a command name, which submits once
    /// the completion is in.
    pub(super) fn apply_completion(&mut self, submit: bool) -> Accepted {
        let Some(ac) = self.autocomplete.take() else {
            return Accepted::Nothing;
        };
        let Some(item) = ac.items.get(ac.list.selected_index()) else {
            return Accepted::Nothing;
        };
        let Some(p) = self.provider.as_mut() else {
            return Accepted::Nothing;
        };
        let (lines, line, col) = (&self.state.lines, self.state.line, self.state.col);
        if p.apply_later(lines, line, col, item, &ac.prefix, submit) {
            // The menu stays up until the completion is in, so the two change in one frame.
            self.applying = true;
            self.autocomplete = Some(ac);
            return Accepted::Later;
        }
        let a = p.apply(lines, line, col, item, &ac.prefix);
        self.set_applied(a);
        // A directory keeps completing.
        if item.value.ends_with('/') || item.value.ends_with("/\"") {
            self.refresh_autocomplete(false);
        }
        Accepted::Now
    }

    /// Put in a completion's result (a provider's, now or from the background).
    pub fn set_applied(&mut self, a: Applied) {
        self.snapshot();
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
        self.autocomplete = None;
        self.applying = false;
    }

    /// Whether a completion the provider applies in the background (or its answer to Tab) is
    /// still to come: the
    /// application holds the keys typed meanwhile and hands them on after `set_applied`, so
    /// none is lost or put before the completion.
    pub fn is_applying(&self) -> bool {
        self.applying
    }

    /// Give up waiting for a background completion (its answer will not come, or no longer
    /// applies): the menu it kept up closes.
    pub fn stop_applying(&mut self) {
        if self.applying {
            self.autocomplete = None;
        }
        self.applying = false;
    }

    /// Submit as Enter does (after a completion applied in the background); `None` while
    /// submitting is disabled.
    pub fn submit_now(&mut self) -> Option<String> {
        if self.disable_submit {
            return None;
        }
        match self.submit() {
            EditorEvent::Submit(text) => Some(text),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_open_where_a_token_starts() {
        assert!(at_token_start(""));
        assert!(at_token_start("see "));
        assert!(at_token_start("see ("));
        assert!(at_token_start("`"));
        assert!(!at_token_start("mail"));
        assert!(in_trigger_token("see #12", &['#']));
        assert!(in_trigger_token("see (@src", &[]));
        assert!(!in_trigger_token("see #12", &[]));
        assert!(!in_trigger_token("a#b c", &['#']));
    }
}
