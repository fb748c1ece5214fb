//! Small framed dialogs shown as overlays: a titled choice list (optionally with a fuzzy
//! search line), a titled one-line text prompt, and a titled panel of lines to read. Each ends
//! with one result the loop reads.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::components::{Input, InputFieldEvent, SelectEvent, SelectItem, SelectList};
use pi_tui::{keybindings, truncate_to_width, wrap_text, Component, Frame, InputEvent};

use super::theme::UiTheme;

/// How many choices a selector shows at once (pi's selector prompts show ten).
const SELECTOR_ROWS: usize = 10;

/// How a dialog ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogResult {
    /// The chosen item's value, or the text entered.
    Done(String),
    Cancelled,
}

enum Body {
    Choice {
        list: Box<SelectList>,
        search: Option<Input>,
    },
    Prompt {
        message: String,
        input: Input,
    },
    /// Nothing to choose or type: the details are all there is.
    Message,
}

/// A choice dialog's rows as a refresh computes them again.
pub struct Refreshed {
    pub items: Vec<SelectItem>,
    pub details: Vec<String>,
    pub errors: Vec<String>,
}

/// Asked before each frame; `Some` replaces the rows (the highlighted value stays).
pub type Refresh = Box<dyn FnMut() -> Option<Refreshed> + Send>;

pub struct Dialog {
    title: String,
    /// Lines under the title (dim), then lines in the error colour.
    details: Vec<String>,
    errors: Vec<String>,
    body: Body,
    hint: String,
    theme: Arc<UiTheme>,
    result: Option<DialogResult>,
    refresh: Option<Refresh>,
    /// The list starts in the first column (pi 1.6's `/mcp` screens) instead of the second.
    flush_list: bool,
    /// pi's plain selector layout: a blank row inside each rule, ten rows of choices.
    spaced: bool,
    /// The theme colour of the rules above and below (pi 1.6's `/mcp` screens use `accent`).
    rules: &'static str,
    /// Dropped with the dialog: ends what keeps it live (a task waking the screen).
    _live: Option<tokio_util::sync::DropGuard>,
    /// A prompt's text field in the last render (row, first column), for the mouse.
    field_at: Option<(usize, usize)>,
    /// When a timed dialog gives up: its title then ends with the whole seconds left.
    deadline: Option<Instant>,
}

impl Dialog {
    /// A list of choices; with `searchable`, typing filters it fuzzily.
    pub fn choice(title: impl Into<String>, items: Vec<SelectItem>, searchable: bool, theme: Arc<UiTheme>) -> Self {
        Self::choice_rows(title, items, searchable, 8, theme)
    }

    fn choice_rows(
        title: impl Into<String>,
        items: Vec<SelectItem>,
        searchable: bool,
        rows: usize,
        theme: Arc<UiTheme>,
    ) -> Self {
        let mut list = SelectList::new(items, rows, theme.select_list());
        list.set_no_match_text("  No matching items");
        let hint = if searchable {
            "Type to search · ↑↓ navigate · enter select · esc cancel"
        } else {
            "↑↓ navigate · enter select · esc cancel"
        };
        Dialog {
            title: title.into(),
            details: Vec::new(),
            errors: Vec::new(),
            body: Body::Choice {
                list: Box::new(list),
                search: searchable.then(|| Input::new("> ")),
            },
            hint: hint.into(),
            theme,
            result: None,
            refresh: None,
            flush_list: false,
            spaced: false,
            rules: "border",
            _live: None,
            field_at: None,
            deadline: None,
        }
    }

    /// A plain list of choices laid out as pi's selector prompts are (`Summarize branch?`):
    /// the title and the key help each set off by blank rows, up to ten choices shown.
    pub fn selector(title: impl Into<String>, items: Vec<SelectItem>, theme: Arc<UiTheme>) -> Self {
        let mut dialog = Dialog::choice_rows(title, items, false, SELECTOR_ROWS, theme.clone());
        let hint = |keys: &str, what: &str| {
            format!(
                "{}{}",
                theme.paint("dim", keys),
                theme.paint("muted", &format!(" {what}"))
            )
        };
        let kb = keybindings();
        dialog.hint = [
            hint("↑↓", "navigate"),
            hint(&kb.keys("tui.select.confirm").join("/"), "select"),
            hint(&kb.keys("tui.select.cancel").join("/"), "cancel"),
        ]
        .join("  ");
        dialog.spaced = true;
        dialog
    }

    /// A titled panel of lines (dim) and errors with nothing to choose, closed by the cancel
    /// keys, as pi 1.6's `/mcp` says there are no servers.
    pub fn message(title: impl Into<String>, details: Vec<String>, errors: Vec<String>, theme: Arc<UiTheme>) -> Self {
        let hint = format!("{} close", keybindings().keys("tui.select.cancel").join("/"));
        Dialog {
            title: title.into(),
            details,
            errors,
            body: Body::Message,
            hint,
            theme,
            result: None,
            refresh: None,
            flush_list: false,
            spaced: false,
            rules: "border",
            _live: None,
            field_at: None,
            deadline: None,
        }
    }

    /// Keep a choice dialog current: `refresh` runs before each frame, and `guard` lives as
    /// long as the dialog (cancelling what wakes the screen when the rows may change).
    pub fn live(mut self, refresh: Refresh, guard: tokio_util::sync::DropGuard) -> Self {
        self.refresh = Some(refresh);
        self._live = Some(guard);
        self
    }

    /// Count down to `deadline` in the title, `Title (Ns)`, as pi 1.6's timed dialogs do
    /// (whoever opened the dialog wakes the screen each second and closes it at the end).
    pub fn counting_down(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The title as shown: with the seconds left of a timed dialog after its last line.
    fn shown_title(&self) -> String {
        match self.deadline {
            Some(deadline) => format!("{} ({}s)", self.title, seconds_left(deadline, Instant::now())),
            None => self.title.clone(),
        }
    }

    /// Draw the choices from the first column, as pi 1.6's `/mcp` screens do.
    pub fn flush_list(mut self) -> Self {
        self.flush_list = true;
        self
    }

    /// Rules in the accent colour, as pi 1.6 frames its `/mcp` screens.
    pub fn accent_rules(mut self) -> Self {
        self.rules = "accent";
        self
    }

    fn replace_rows(&mut self, rows: Refreshed) {
        self.details = rows.details;
        self.errors = rows.errors;
        if let Body::Choice { list, search } = &mut self.body {
            let selected = list.selected_item().map(|i| i.value.clone());
            let mut fresh = SelectList::new(rows.items, 8, self.theme.select_list());
            fresh.set_no_match_text("  No matching items");
            if let Some(s) = search {
                fresh.set_fuzzy_filter(s.value());
            }
            **list = fresh;
            if let Some(value) = selected {
                self.select_value(&value);
            }
        }
    }

    /// A one-line text prompt under `message`, prefilled with `initial`.
    pub fn prompt(title: impl Into<String>, message: impl Into<String>, initial: &str, theme: Arc<UiTheme>) -> Self {
        let mut input = Input::new("> ");
        input.set_value(initial);
        Dialog {
            title: title.into(),
            details: Vec::new(),
            errors: Vec::new(),
            body: Body::Prompt {
                message: message.into(),
                input,
            },
            hint: "enter confirm · esc cancel".into(),
            theme,
            result: None,
            refresh: None,
            flush_list: false,
            spaced: false,
            rules: "border",
            _live: None,
            field_at: None,
            deadline: None,
        }
    }

    /// Text under the title: facts in dim, problems in the error colour.
    pub fn with_details(mut self, details: Vec<String>, errors: Vec<String>) -> Self {
        self.details = details;
        self.errors = errors;
        self
    }

    /// The key help at the bottom.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    /// Highlight the item whose value is `value` (choice dialogs).
    pub fn select_value(&mut self, value: &str) {
        if let Body::Choice { list, .. } = &mut self.body {
            let n = list.visible_count();
            for i in 0..n {
                list.set_selected_index(i);
                if list.selected_item().is_some_and(|it| it.value == value) {
                    return;
                }
            }
            list.set_selected_index(0);
        }
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    /// The value of the highlighted item of a choice dialog (no screen previews it at the
    /// moment; the tests read it).
    #[cfg(test)]
    pub fn selected_value(&self) -> Option<&str> {
        match &self.body {
            Body::Choice { list, .. } => list.selected_item().map(|i| i.value.as_str()),
            Body::Prompt { .. } | Body::Message => None,
        }
    }
}

/// Whole seconds left until `deadline`, rounded up (never below one: the dialog closes at
/// zero).
fn seconds_left(deadline: Instant, now: Instant) -> u64 {
    let left = deadline.saturating_duration_since(now);
    let whole = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    whole.max(1)
}

/// How long a dialog with `timeout` stays: pi 1.6 counts whole seconds down from the timeout
/// rounded up, and gives up when the count reaches zero.
pub fn countdown_length(timeout: Duration) -> Duration {
    let millis = timeout.as_millis();
    let seconds = millis.div_ceil(1000).max(1);
    Duration::from_secs(u64::try_from(seconds).unwrap_or(u64::MAX))
}

impl Component for Dialog {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if let Some(rows) = self.refresh.as_mut().and_then(|r| r()) {
            self.replace_rows(rows);
        }
        let t = self.theme.clone();
        let inner = width.saturating_sub(2).max(1);
        let top = out.len();
        out.push_line(t.paint(self.rules, &"─".repeat(width)));
        if self.spaced {
            out.push_line(String::new());
        }
        // A title may hold several lines (an extension's confirm: title, then message).
        for line in self.shown_title().split('\n') {
            out.push_line(truncate_to_width(&format!(" {}", t.bold("accent", line)), width, "…"));
        }
        // pi 1.6's `/mcp` page puts its facts right under the title.
        if !self.flush_list || self.details.is_empty() {
            out.push_line(String::new());
        }
        if !self.details.is_empty() || !self.errors.is_empty() {
            // Long facts (a command line, an explanation, an error) wrap, as pi 1.6 shows them.
            // pi's selector prompts describe themselves in the text colour.
            let facts = if self.spaced { "text" } else { "dim" };
            for (lines, token) in [(&self.details, facts), (&self.errors, "error")] {
                for l in lines {
                    let wrapped = wrap_text(l, inner);
                    if wrapped.is_empty() {
                        out.push_line(String::new());
                    }
                    for w in wrapped {
                        out.push_line(format!(" {}", t.paint(token, &w)));
                    }
                }
            }
            out.push_line(String::new());
        }
        let mut sub = Frame::default();
        let list_width = if self.flush_list { width.max(1) } else { inner };
        match &mut self.body {
            Body::Choice { list, search } => {
                if let Some(s) = search {
                    s.render(inner, &mut sub);
                    sub.push_line(String::new());
                }
                list.render(list_width, &mut sub);
            }
            Body::Prompt { message, input } => {
                sub.push_line(t.paint("text", message));
                input.render(inner, &mut sub);
            }
            Body::Message => {}
        }
        let indent = if self.flush_list && matches!(self.body, Body::Choice { .. }) {
            ""
        } else {
            " "
        };
        let mut lines = sub.to_vec();
        // The prompt's field is the row under its message, after the indent.
        self.field_at = matches!(self.body, Body::Prompt { .. }).then(|| (out.len() - top + 1, indent.len()));
        // pi's selector puts its `(n/total)` line flush left, under the list's own indent.
        let scroll_info = match &self.body {
            Body::Choice { list, .. } if self.spaced && list.visible_count() > SELECTOR_ROWS => lines.pop(),
            _ => None,
        };
        for l in lines {
            out.push_line(format!("{indent}{l}"));
        }
        if let Some(info) = scroll_info {
            out.push_line(info);
        }
        // A message's lines end with their own blank row.
        if !matches!(self.body, Body::Message) {
            out.push_line(String::new());
        }
        // The selector's help is styled part by part already.
        let hint = if self.spaced {
            self.hint.clone()
        } else {
            t.paint("dim", &self.hint)
        };
        out.push_line(truncate_to_width(&format!(" {hint}"), width, ""));
        if self.spaced {
            out.push_line(String::new());
        }
        out.push_line(t.paint(self.rules, &"─".repeat(width)));
    }

    /// A prompt's text field takes a press (its cursor goes there), as pi 1.6's input does.
    fn handle_mouse(&mut self, m: &pi_tui::ComponentMouse) -> bool {
        let (Some((row, indent)), Body::Prompt { input, .. }) = (self.field_at, &mut self.body) else {
            return false;
        };
        let Some(at) = m.within(&(row..row + 1)) else {
            return false;
        };
        let at = pi_tui::ComponentMouse {
            column: at.column.saturating_sub(indent),
            ..at
        };
        input.handle_mouse(&at)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let kb = keybindings();
        match &mut self.body {
            // pi's selector stops at either end instead of wrapping, and j/k move too.
            Body::Choice { list, .. } if self.spaced => {
                let i = list.selected_index();
                let last = list.visible_count().saturating_sub(1);
                let plain = |c: char| k.key == pi_tui::Key::Char(c) && k.mods.is_empty();
                if kb.matches(k, "tui.select.up") || plain('k') {
                    list.set_selected_index(i.saturating_sub(1));
                } else if kb.matches(k, "tui.select.down") || plain('j') {
                    list.set_selected_index((i + 1).min(last));
                } else {
                    match list.handle_key(k) {
                        SelectEvent::Selected(it) => self.result = Some(DialogResult::Done(it.value)),
                        SelectEvent::Cancelled => self.result = Some(DialogResult::Cancelled),
                        _ => {}
                    }
                }
            }
            Body::Choice { list, search } => {
                let list_key = [
                    "tui.select.up",
                    "tui.select.down",
                    "tui.select.confirm",
                    "tui.select.cancel",
                ]
                .iter()
                .any(|id| kb.matches(k, id));
                if list_key || search.is_none() {
                    match list.handle_key(k) {
                        SelectEvent::Selected(it) => self.result = Some(DialogResult::Done(it.value)),
                        SelectEvent::Cancelled => self.result = Some(DialogResult::Cancelled),
                        SelectEvent::Ignored => return false,
                        _ => {}
                    }
                } else if let Some(s) = search {
                    s.handle_key(k);
                    let q = s.value().to_string();
                    list.set_fuzzy_filter(&q);
                }
            }
            Body::Prompt { input, .. } => match input.handle_key(k) {
                InputFieldEvent::Submit(v) => self.result = Some(DialogResult::Done(v)),
                InputFieldEvent::Cancelled => self.result = Some(DialogResult::Cancelled),
                InputFieldEvent::Ignored => return false,
                _ => {}
            },
            // Other keys do nothing while it is open.
            Body::Message => {
                if kb.matches(k, "tui.select.cancel") {
                    self.result = Some(DialogResult::Cancelled);
                }
            }
        }
        true
    }

    fn set_focused(&mut self, focused: bool) {
        match &mut self.body {
            Body::Choice { search: Some(s), .. } => s.set_focused(focused),
            Body::Prompt { input, .. } => input.set_focused(focused),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> InputEvent {
        InputEvent::Key(pi_tui::parse_key(s, false).expect("key"))
    }

    #[test]
    fn a_press_on_a_prompts_field_puts_its_cursor_there() {
        let mut d = Dialog::prompt("Ext", "Name?", "world", Arc::new(UiTheme::fallback()));
        let lines: Vec<String> = pi_tui::render_lines(&mut d, 60)
            .iter()
            .map(|l| pi_tui::strip_ansi(l))
            .collect();
        let row = lines.iter().position(|l| l.starts_with(" > world")).expect("field");
        // Column 0 is the indent, 1 and 2 the prompt: column 4 is the "o".
        let press = pi_tui::ComponentMouse::new(pi_tui::ComponentMouseKind::Press, row, 4);
        assert!(d.handle_mouse(&press));
        d.handle_input(&key("X"));
        d.handle_input(&key("\r"));
        assert_eq!(d.take_result(), Some(DialogResult::Done("wXorld".into())));
        // The message above it takes nothing.
        let above = pi_tui::ComponentMouse::new(pi_tui::ComponentMouseKind::Press, row - 1, 4);
        assert!(!d.handle_mouse(&above));
    }

    #[test]
    fn a_timed_dialog_counts_whole_seconds_down_after_its_last_title_line() {
        let now = Instant::now();
        assert_eq!(seconds_left(now + Duration::from_millis(5000), now), 5);
        assert_eq!(seconds_left(now + Duration::from_millis(4200), now), 5);
        assert_eq!(seconds_left(now + Duration::from_millis(4000), now), 4);
        assert_eq!(seconds_left(now, now), 1, "closed at zero, never shown");
        assert_eq!(countdown_length(Duration::from_millis(1500)), Duration::from_secs(2));
        assert_eq!(countdown_length(Duration::from_millis(3000)), Duration::from_secs(3));

        let items = vec![SelectItem::new("Yes"), SelectItem::new("No")];
        let theme = Arc::new(UiTheme::fallback());
        let mut d = Dialog::selector("Sure?\nDelete it all", items, theme)
            .counting_down(Instant::now() + Duration::from_millis(2500));
        let mut frame = Frame::default();
        d.render(40, &mut frame);
        let lines: Vec<String> = frame.to_vec().iter().map(|l| pi_tui::strip_ansi(l)).collect();
        assert_eq!(lines[2].trim(), "Sure?", "{lines:#?}");
        assert_eq!(lines[3].trim(), "Delete it all (3s)", "{lines:#?}");
    }

    #[test]
    fn typing_filters_a_searchable_choice_and_enter_picks() {
        let items = vec![
            SelectItem::new("anthropic").with_label("Anthropic"),
            SelectItem::new("openai").with_label("OpenAI"),
            SelectItem::new("google").with_label("Google"),
        ];
        let mut d = Dialog::choice("Pick", items, true, Arc::new(UiTheme::fallback()));
        for c in ["o", "p", "e"] {
            d.handle_input(&key(c));
        }
        assert_eq!(d.selected_value(), Some("openai"));
        d.handle_input(&key("\r"));
        assert_eq!(d.take_result(), Some(DialogResult::Done("openai".into())));
    }

    #[test]
    fn a_message_panel_shows_its_lines_and_closes_on_the_cancel_keys() {
        let mut d = Dialog::message(
            "Servers",
            vec!["None configured.".into()],
            vec!["config: broken".into()],
            Arc::new(UiTheme::fallback()),
        );
        let mut frame = Frame::default();
        d.render(40, &mut frame);
        let lines: Vec<String> = frame.to_vec().iter().map(|l| pi_tui::strip_ansi(l)).collect();
        let hint = lines.iter().position(|l| l.contains(" close")).expect("hint");
        assert_eq!(lines[1].trim(), "Servers");
        assert_eq!(lines[2], "");
        assert_eq!(lines[3].trim(), "None configured.");
        assert_eq!(lines[4].trim(), "config: broken");
        assert_eq!(hint, 6, "one blank row before the hint: {lines:#?}");
        d.handle_input(&key("x"));
        assert_eq!(d.take_result(), None, "other keys do nothing");
        d.handle_input(&key("\x1b"));
        assert_eq!(d.take_result(), Some(DialogResult::Cancelled));
    }

    fn plain_rows(d: &mut Dialog, width: usize) -> Vec<String> {
        let mut frame = Frame::default();
        d.render(width, &mut frame);
        frame.to_vec().iter().map(|l| pi_tui::strip_ansi(l)).collect()
    }

    #[test]
    fn the_selector_shows_ten_rows_stops_at_the_ends_and_takes_j_and_k() {
        let items = (0..14).map(|i| SelectItem::new(format!("opt{i}"))).collect();
        let mut d = Dialog::selector("Pick\nwhich one", items, Arc::new(UiTheme::fallback()));
        let rows = plain_rows(&mut d, 40);
        assert_eq!(rows[2], " Pick");
        assert_eq!(rows[3], " which one");
        assert_eq!(rows[5], " → opt0");
        assert_eq!(rows[14], "   opt9");
        assert_eq!(rows[15], "  (1/14)", "scroll info flush left: {rows:#?}");
        d.handle_input(&key("\x1b[A"));
        assert_eq!(d.selected_value(), Some("opt0"), "up at the top stays");
        d.handle_input(&key("j"));
        d.handle_input(&key("j"));
        d.handle_input(&key("k"));
        assert_eq!(d.selected_value(), Some("opt1"));
        for _ in 0..20 {
            d.handle_input(&key("\x1b[B"));
        }
        assert_eq!(d.selected_value(), Some("opt13"), "down at the bottom stays");
        d.handle_input(&key("\r"));
        assert_eq!(d.take_result(), Some(DialogResult::Done("opt13".into())));
    }

    #[test]
    fn prompt_returns_the_text_or_cancel() {
        let mut d = Dialog::prompt("Key", "Enter API key:", "", Arc::new(UiTheme::fallback()));
        for c in ["s", "k"] {
            d.handle_input(&key(c));
        }
        d.handle_input(&key("\r"));
        assert_eq!(d.take_result(), Some(DialogResult::Done("sk".into())));
        d.handle_input(&key("\x1b"));
        assert_eq!(d.take_result(), Some(DialogResult::Cancelled));
    }
}
