//! `ctx.ui.addAutocompleteProvider` in pi's editor: while extensions stack providers on
//! pi's completions, the editor's provider asks the host's chain (`ui.autocomplete`) for
//! suggestions and for applying one, sending pi's own suggestions for the spot along (the
//! chain's bottom answers with them). The answers come back as screen changes, used only
//! while the editor still holds the text they were asked for. Without a chain pi's own
//! completions answer at once, as before.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_extensions::ExtensionRunner;
use pi_tui::autocomplete::{Applied, AutocompleteItem, AutocompleteProvider, Suggestions};
use serde_json::{json, Value};

use super::super::effect::Effect;
use super::super::events::{Msg, UiSender};
use super::screen::ScreenChange;

/// An extension's answer that takes longer than this is not waited for.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// pi-tui's editor opens the menu on `#` as well as `@`, for providers that complete it.
const DEFAULT_TRIGGERS: [char; 1] = ['#'];

/// The number of the next suggestion request. Each request is sent from a task of its own,
/// so two asked for keys of one write may reach the host in either order; the number, taken
/// here in the order the keys were typed, tells the host which one is the newest.
static NEXT_REQUEST: AtomicU64 = AtomicU64::new(0);

/// Whether extensions stacked providers, and their trigger characters; shared by the
/// editor's provider and the app, which sets it from the host's `ui.setAutocomplete`.
#[derive(Default)]
pub struct Chain {
    triggers: Mutex<Option<Vec<char>>>,
}

impl Chain {
    /// The chain's trigger characters (`None`: no extension provider).
    pub fn set(&self, triggers: Option<Vec<char>>) {
        if let Ok(mut t) = self.triggers.lock() {
            *t = triggers;
        }
    }

    fn triggers(&self) -> Option<Vec<char>> {
        self.triggers.lock().ok().and_then(|t| t.clone())
    }
}

/// Trigger characters as the host lists them: single characters, not `/` or whitespace.
pub fn parse_triggers(params: &Value) -> Option<Vec<char>> {
    let list = params.get("triggerCharacters")?.as_array()?;
    let mut out: Vec<char> = Vec::new();
    for c in list.iter().filter_map(Value::as_str) {
        let mut chars = c.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if c != '/' && !c.is_whitespace() && !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Some(out)
}

/// Where a request was made: the editor's lines and cursor (byte column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    pub lines: Vec<String>,
    pub line: usize,
    pub col: usize,
}

impl Spot {
    fn new(lines: &[String], line: usize, col: usize) -> Self {
        Spot {
            lines: lines.to_vec(),
            line,
            col,
        }
    }

    /// Whether the editor still holds this text with the cursor here.
    pub fn is_now(&self, lines: &[String], cursor: (usize, usize)) -> bool {
        self.lines == lines && (self.line, self.col) == cursor
    }

    /// The cursor column in UTF-16 units, as JS strings count.
    fn js_col(&self) -> usize {
        self.lines.get(self.line).map_or(0, |l| utf16_col(l, self.col))
    }
}

/// A byte column of `line` in UTF-16 units.
fn utf16_col(line: &str, col: usize) -> usize {
    let mut col = col.min(line.len());
    while !line.is_char_boundary(col) {
        col -= 1;
    }
    line[..col].encode_utf16().count()
}

/// A UTF-16 column of `line` as a byte column (inside a character: its start).
fn byte_col(line: &str, units: usize) -> usize {
    let mut n = 0;
    for (i, c) in line.char_indices() {
        if n + c.len_utf16() > units {
            return i;
        }
        n += c.len_utf16();
    }
    line.len()
}

fn item_json(item: &AutocompleteItem) -> Value {
    json!({ "value": &item.value, "label": &item.label, "description": &item.description })
}

fn suggestions_json(s: &Suggestions) -> Value {
    json!({ "items": s.items.iter().map(item_json).collect::<Vec<_>>(), "prefix": &s.prefix })
}

/// The host's `{items, prefix}` (null or no items: none).
fn parse_suggestions(v: &Value) -> Option<Suggestions> {
    let items = super::slash::parse_items(v);
    let prefix = v.get("prefix").and_then(Value::as_str)?.to_string();
    (!items.is_empty()).then_some(Suggestions { items, prefix })
}

/// The host's `{lines, cursorLine, cursorCol}` (a UTF-16 column) as an editor result.
fn parse_applied(v: &Value) -> Option<Applied> {
    let lines: Vec<String> = v
        .get("lines")?
        .as_array()?
        .iter()
        .map(|l| l.as_str().unwrap_or_default().to_string())
        .collect();
    let line = usize::try_from(v.get("cursorLine")?.as_u64()?).ok()?;
    let units = usize::try_from(v.get("cursorCol")?.as_u64()?).ok()?;
    let col = lines.get(line).map_or(0, |l| byte_col(l, units));
    Some(Applied { lines, line, col })
}

/// pi's completions with the extensions' chain on top.
pub struct Stacked<P> {
    base: P,
    chain: Arc<Chain>,
    runner: Arc<ExtensionRunner>,
    tx: UiSender,
    /// The last `suggestions` went to the host.
    asked: bool,
}

impl<P: AutocompleteProvider> Stacked<P> {
    pub fn new(base: P, chain: Arc<Chain>, runner: Arc<ExtensionRunner>, tx: UiSender) -> Self {
        Stacked {
            base,
            chain,
            runner,
            tx,
            asked: false,
        }
    }
}

impl<P: AutocompleteProvider> AutocompleteProvider for Stacked<P> {
    fn commands_mut(&mut self) -> Option<&mut Vec<pi_tui::autocomplete::SlashCommand>> {
        self.base.commands_mut()
    }

    fn suggestions(&mut self, lines: &[String], line: usize, col: usize, force: bool) -> Option<Suggestions> {
        let base = self.base.suggestions(lines, line, col, force);
        self.asked = self.chain.triggers().is_some() && tokio::runtime::Handle::try_current().is_ok();
        if !self.asked {
            return base;
        }
        let at = Spot::new(lines, line, col);
        let params = json!({
            "op": "suggest",
            "seq": NEXT_REQUEST.fetch_add(1, Ordering::Relaxed),
            "lines": &at.lines,
            "line": line,
            "col": at.js_col(),
            "force": force,
            "base": base.as_ref().map(suggestions_json),
        });
        let runner = self.runner.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let suggestions = match runner.ui_request("ui.autocomplete", params, ANSWER_TIMEOUT).await {
                // A newer request is being answered: nothing to show, but a Tab waiting for
                // this answer must stop holding the keys typed after it.
                Ok(answer) if answer.get("stale").and_then(Value::as_bool) == Some(true) => {
                    if !force {
                        return;
                    }
                    None
                }
                Ok(answer) => Some(answer.get("suggestions").and_then(parse_suggestions)),
                // A host that is gone or slow: pi's own.
                Err(_) => Some(base),
            };
            let change = match suggestions {
                Some(suggestions) => ScreenChange::Suggested { at, force, suggestions },
                None => ScreenChange::SuggestedStale,
            };
            tx.send(Msg::Then(Box::new(move |_| vec![Effect::Extension(change)])))
                .await;
        });
        None
    }

    fn apply(&self, lines: &[String], line: usize, col: usize, item: &AutocompleteItem, prefix: &str) -> Applied {
        self.base.apply(lines, line, col, item, prefix)
    }

    fn trigger_characters(&self) -> Vec<char> {
        match self.chain.triggers() {
            Some(mut triggers) => {
                for c in DEFAULT_TRIGGERS {
                    if !triggers.contains(&c) {
                        triggers.insert(0, c);
                    }
                }
                triggers
            }
            None => self.base.trigger_characters(),
        }
    }

    fn answers_later(&self) -> bool {
        self.asked
    }

    fn apply_later(
        &mut self,
        lines: &[String],
        line: usize,
        col: usize,
        item: &AutocompleteItem,
        prefix: &str,
        submit: bool,
    ) -> bool {
        if self.chain.triggers().is_none() || tokio::runtime::Handle::try_current().is_err() {
            return false;
        }
        let at = Spot::new(lines, line, col);
        let fallback = self.base.apply(lines, line, col, item, prefix);
        let params = json!({
            "op": "apply",
            "lines": &at.lines,
            "line": line,
            "col": at.js_col(),
            "item": item_json(item),
            "prefix": prefix,
        });
        let runner = self.runner.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let answer = runner.ui_request("ui.autocomplete", params, ANSWER_TIMEOUT).await;
            let applied = answer
                .ok()
                .and_then(|a| a.get("applied").and_then(parse_applied))
                .unwrap_or(fallback);
            let change = ScreenChange::Applied { at, applied, submit };
            tx.send(Msg::Then(Box::new(move |_| vec![Effect::Extension(change)])))
                .await;
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_convert_between_bytes_and_utf16_units() {
        let line = "é🙂#x";
        // é: 2 bytes, 1 unit; 🙂: 4 bytes, 2 units.
        assert_eq!(utf16_col(line, 0), 0);
        assert_eq!(utf16_col(line, 2), 1);
        assert_eq!(utf16_col(line, 6), 3);
        assert_eq!(utf16_col(line, line.len()), 5);
        assert_eq!(byte_col(line, 3), 6);
        assert_eq!(byte_col(line, 5), line.len());
        // Inside the surrogate pair: the character's start.
        assert_eq!(byte_col(line, 2), 2);
        assert_eq!(byte_col(line, 99), line.len());
    }

    #[test]
    fn trigger_characters_are_single_and_not_slash_or_space() {
        let t = parse_triggers(&json!({"triggerCharacters": ["$", "$", "/", " ", "ab", "#"]}));
        assert_eq!(t, Some(vec!['$', '#']));
        assert_eq!(parse_triggers(&json!({"triggerCharacters": null})), None);
    }

    #[test]
    fn answers_read_as_editor_values() {
        let s = parse_suggestions(&json!({"items": [{"value": "#1", "label": "#1"}], "prefix": "#"}));
        assert_eq!(s.map(|s| (s.items.len(), s.prefix)), Some((1, "#".to_string())));
        assert!(parse_suggestions(&json!({"items": [], "prefix": "#"})).is_none());
        let a = parse_applied(&json!({"lines": ["é ${PATH}"], "cursorLine": 0, "cursorCol": 9}));
        assert_eq!(
            a,
            Some(Applied {
                lines: vec!["é ${PATH}".into()],
                line: 0,
                col: 10
            })
        );
        assert!(parse_applied(&json!({"lines": ["x"], "cursorLine": -1, "cursorCol": 0})).is_none());
    }
}
