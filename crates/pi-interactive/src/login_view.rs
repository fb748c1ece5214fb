//! The screens of `/login` and `/logout` that take the editor's place: [`LoginChoice`] (the
//! method menu and the provider lists, with 1.6's layout and status suffixes) and
//! [`LoginFlow`] (one sign-in or key entry: title, what the flow shows, the question it asks
//! and the key hints). A flow's updates arrive through [`LoginFlow::apply`]; what the user
//! did is read back with the `take_*` methods after each key.

use std::sync::Arc;
use std::time::Instant;

use pi_oauth::{LoginEvent, Prompt};
use pi_tui::components::{Input, InputFieldEvent};
use pi_tui::fuzzy::fuzzy_filter;
use pi_tui::{hyperlink, keybindings, truncate_to_width, wrap_text, Component, Frame, InputEvent};
use tokio_util::sync::CancellationToken;

use super::dialogs::DialogResult;
use super::provider_brand::Brand;
use super::theme::UiTheme;
use pi_coding_agent::config::login_session::{Answer, LoginUpdate};

/// Rows of a provider list shown at once (1.6 shows eight).
const MAX_VISIBLE: usize = 8;

/// `keys to what`, as 1.6's key hints read (`escape/ctrl+c to cancel`).
fn key_text(id: &str) -> String {
    keybindings().keys(id).join("/")
}

/// One row of a [`LoginChoice`].
#[derive(Debug, Clone)]
pub struct ChoiceRow {
    pub value: String,
    /// The row's text (a provider name).
    pub label: String,
    /// Painted after the label (` ✦`, ` • not configured`, ` ✓ configured`).
    pub suffix: String,
}

/// A titled choice: the method menu (with a key hint) or a searchable provider list.
pub struct LoginChoice {
    title: String,
    rows: Vec<ChoiceRow>,
    /// Indices of `rows` the query keeps, best first.
    shown: Vec<usize>,
    selected: usize,
    search: Option<Input>,
    /// Text for an empty list.
    empty: String,
    theme: Arc<UiTheme>,
    result: Option<DialogResult>,
    /// The search field's row in the last render, for the mouse.
    field_row: Option<usize>,
    /// When the list opened, if its partners' names are animated (`/login`'s lists, not
    /// `/logout`'s): the animation's clock.
    brand_clock: Option<Instant>,
}

impl LoginChoice {
    /// A menu without search (the method menu): a key hint under the rows.
    pub fn menu(title: impl Into<String>, rows: Vec<ChoiceRow>, theme: Arc<UiTheme>) -> Self {
        Self::new(title.into(), rows, None, String::new(), theme)
    }

    /// A provider list: typing filters it; `empty` is said when nothing is listed.
    pub fn searchable(
        title: impl Into<String>,
        rows: Vec<ChoiceRow>,
        query: &str,
        empty: impl Into<String>,
        theme: Arc<UiTheme>,
    ) -> Self {
        let mut input = Input::new("> ");
        input.set_value(query);
        let mut me = Self::new(title.into(), rows, Some(input), empty.into(), theme);
        me.filter();
        me
    }

    fn new(title: String, rows: Vec<ChoiceRow>, search: Option<Input>, empty: String, theme: Arc<UiTheme>) -> Self {
        LoginChoice {
            field_row: None,
            title,
            shown: (0..rows.len()).collect(),
            rows,
            selected: 0,
            search,
            empty,
            theme,
            result: None,
            brand_clock: None,
        }
    }

    /// Animate the highlighted partner's name (Radius, OpenRouter) as pi 1.6's `/login` does.
    pub fn with_brand_animation(mut self) -> Self {
        self.brand_clock = Some(Instant::now());
        self
    }

    /// Whether the highlighted row is animated, so the screen must be drawn again each frame.
    pub fn animating(&self) -> bool {
        self.brand_clock.is_some() && self.selected_value().and_then(Brand::of).is_some()
    }

    fn filter(&mut self) {
        let query = self
            .search
            .as_ref()
            .map(|s| s.value().trim().to_string())
            .unwrap_or_default();
        self.shown = if query.is_empty() {
            (0..self.rows.len()).collect()
        } else {
            let keys: Vec<String> = self.rows.iter().map(|r| format!("{} {}", r.label, r.value)).collect();
            fuzzy_filter(&keys, &query, |k| k.as_str())
        };
        // A query puts its best match on top, highlighted.
        self.selected = 0;
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    /// The value of the highlighted row.
    pub fn selected_value(&self) -> Option<&str> {
        self.shown
            .get(self.selected)
            .and_then(|&i| self.rows.get(i))
            .map(|r| r.value.as_str())
    }
}

impl Component for LoginChoice {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let border = t.paint("border", &"─".repeat(width));
        let line = |s: String| truncate_to_width(&format!(" {s}"), width, "…");
        let top = out.len();
        out.push_line(border.clone());
        out.push_line(String::new());
        out.push_line(line(t.bold("accent", &self.title)));
        out.push_line(String::new());
        self.field_row = self.search.is_some().then(|| out.len() - top);
        if let Some(search) = &mut self.search {
            let mut sub = Frame::default();
            search.render(width, &mut sub);
            for l in sub.to_vec() {
                out.push_line(l);
            }
            out.push_line(String::new());
        }
        let n = self.shown.len();
        let (start, end) = if self.search.is_some() {
            let start = self
                .selected
                .saturating_sub(MAX_VISIBLE / 2)
                .min(n.saturating_sub(MAX_VISIBLE));
            (start, (start + MAX_VISIBLE).min(n))
        } else {
            (0, n)
        };
        for (pos, &i) in self.shown.iter().enumerate().take(end).skip(start) {
            let row = &self.rows[i];
            let brand = self.brand_clock.zip(Brand::of(&row.value));
            let text = if let (true, Some((clock, brand))) = (pos == self.selected, brand) {
                let name = brand.paint(&row.label, clock.elapsed(), t.appearance() == "light");
                format!("{}{name}", t.paint("accent", "→ "))
            } else if pos == self.selected {
                format!("{}{}", t.paint("accent", "→ "), t.paint("accent", &row.label))
            } else {
                format!("  {}", t.paint("text", &row.label))
            };
            out.push_line(line(format!("{text}{}", row.suffix)));
        }
        if start > 0 || end < n {
            out.push_line(line(t.paint("muted", &format!("  ({}/{n})", self.selected + 1))));
        }
        if n == 0 {
            let text = if self.rows.is_empty() {
                self.empty.as_str()
            } else {
                "No matching providers"
            };
            out.push_line(line(t.paint("muted", &format!("  {text}"))));
        }
        out.push_line(String::new());
        if self.search.is_none() {
            let hint = format!(
                "{}  {}  {}",
                t.paint("dim", "↑↓ navigate"),
                t.paint("dim", &format!("{} select", key_text("tui.select.confirm"))),
                t.paint("dim", &format!("{} cancel", key_text("tui.select.cancel"))),
            );
            out.push_line(line(hint));
            out.push_line(String::new());
        }
        out.push_line(border);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let kb = keybindings();
        let n = self.shown.len();
        // The ends stop the selection (pi 1.6's login lists do not wrap around).
        if kb.matches(k, "tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if kb.matches(k, "tui.select.down") {
            self.selected = (self.selected + 1).min(n.saturating_sub(1));
        } else if kb.matches(k, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if kb.matches(k, "tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(n.saturating_sub(1));
        } else if kb.matches(k, "tui.select.confirm") {
            if let Some(v) = self.selected_value() {
                self.result = Some(DialogResult::Done(v.to_string()));
            }
        } else if kb.matches(k, "tui.select.cancel") {
            self.result = Some(DialogResult::Cancelled);
        } else if let Some(search) = &mut self.search {
            let before = search.value().to_string();
            search.handle_key(k);
            if search.value() != before {
                self.filter();
            }
        } else {
            return false;
        }
        true
    }

    fn set_focused(&mut self, focused: bool) {
        if let Some(s) = &mut self.search {
            s.set_focused(focused);
        }
    }

    /// The search field takes a press (its cursor goes there), as pi 1.6's input does.
    fn handle_mouse(&mut self, m: &pi_tui::ComponentMouse) -> bool {
        let (Some(row), Some(search)) = (self.field_row, &mut self.search) else {
            return false;
        };
        m.within(&(row..row + 1)).is_some_and(|at| search.handle_mouse(&at))
    }
}

/// What a flow's input answers: the running sign-in, or the screen itself (an API key).
enum Target {
    Flow(Answer),
    Local,
}

/// A question of the flow with its answer.
enum Pending {
    Input {
        input: Input,
        target: Target,
    },
    Select {
        message: String,
        options: Vec<(String, String)>,
        selected: usize,
        answer: Answer,
    },
}

/// One piece of a flow's content.
enum Piece {
    Blank,
    /// Themed text, wrapped to the width.
    Text(String, &'static str),
    /// Already themed; truncated to the width.
    Styled(String),
    /// Where the pending input is drawn.
    Input,
    /// An answered input: `> answer`, where the field was (at the left edge, as it was drawn).
    Answered(String),
}

/// The device code Enter acts on (open the page, copy the code), once.
struct DeviceAction {
    code: String,
    uri: String,
    /// Index of the hint row in the content, replaced by the action's progress.
    hint: usize,
}

/// What the user asked of a flow that the app carries out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowRequest {
    /// Copy this text to the clipboard (the sign-in URL).
    CopyUrl(String),
    /// Open `uri` and copy `code` (a device code).
    OpenAndCopy { uri: String, code: String },
}

/// One sign-in (or API-key entry) on screen.
pub struct LoginFlow {
    id: u64,
    title: String,
    content: Vec<Piece>,
    pending: Option<Pending>,
    auth_url: Option<String>,
    /// Index of the URL's hint row (its copy state).
    url_hint: Option<usize>,
    device: Option<DeviceAction>,
    cancel: CancellationToken,
    theme: Arc<UiTheme>,
    focused: bool,
    result: Option<DialogResult>,
    request: Option<FlowRequest>,
    /// The text field's row in the last render, for the mouse.
    field_row: Option<usize>,
    /// A line under the title of the flow's method menu (Radius introduces itself there).
    intro: Option<String>,
}

impl LoginFlow {
    /// A sign-in numbered `id`; `cancel` stops it.
    pub fn new(id: u64, title: impl Into<String>, cancel: CancellationToken, theme: Arc<UiTheme>) -> Self {
        LoginFlow {
            field_row: None,
            id,
            title: title.into(),
            content: Vec::new(),
            pending: None,
            auth_url: None,
            url_hint: None,
            device: None,
            cancel,
            theme,
            focused: false,
            result: None,
            request: None,
            intro: None,
        }
    }

    /// Show `text` under the title of the flow's method menu.
    pub fn with_intro(mut self, text: impl Into<String>) -> Self {
        self.intro = Some(text.into());
        self
    }

    /// An API-key entry: `message` over an input whose text is the result.
    pub fn key_entry(
        title: impl Into<String>,
        message: &str,
        details: Vec<(String, &'static str)>,
        theme: Arc<UiTheme>,
    ) -> Self {
        let mut me = Self::new(0, title, CancellationToken::new(), theme);
        if !details.is_empty() {
            me.content.push(Piece::Blank);
            for (text, style) in details {
                me.content.push(Piece::Text(text, style));
            }
        }
        me.ask_input(message, "", Target::Local, true);
        me
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    pub fn take_request(&mut self) -> Option<FlowRequest> {
        self.request.take()
    }

    /// A copy of the sign-in URL finished.
    pub fn url_copied(&mut self, result: Result<(), String>) {
        if let Some(i) = self.url_hint {
            let text = match result {
                Ok(()) => self.theme.paint("success", "Copied URL to clipboard"),
                Err(e) => self.theme.paint("error", &e),
            };
            let hint = self.url_hint_text(&text);
            if let Some(p) = self.content.get_mut(i) {
                *p = Piece::Styled(hint);
            }
        }
    }

    /// The device code's copy finished.
    pub fn code_copied(&mut self, ok: bool) {
        self.device_status(if ok {
            "Code copied to clipboard"
        } else {
            "Copy code manually"
        });
    }

    fn device_status(&mut self, text: &str) {
        let Some(i) = self.device.as_ref().map(|d| d.hint).or(self.device_hint_row()) else {
            return;
        };
        if let Some(p) = self.content.get_mut(i) {
            *p = Piece::Text(text.to_string(), "dim");
        }
    }

    /// The hint row of a device code whose action was taken.
    fn device_hint_row(&self) -> Option<usize> {
        self.content
            .iter()
            .position(|p| matches!(p, Piece::Text(t, "dim") if t == "Copying code..."))
    }

    fn url_hint_text(&self, suffix: &str) -> String {
        let t = &self.theme;
        let url = self.auth_url.as_deref().unwrap_or_default();
        format!(
            "{} {} {suffix}",
            t.paint("dim", &hyperlink("Ctrl+click to open", url)),
            t.paint("dim", "•")
        )
    }

    fn key_hint(&self, id: &str, what: &str) -> String {
        format!(
            "{}{}",
            self.theme.paint("dim", &key_text(id)),
            self.theme.paint("muted", &format!(" {what}"))
        )
    }

    /// Show what the flow reports or ask what it asks.
    pub fn apply(&mut self, update: LoginUpdate) {
        match update {
            LoginUpdate::Show(LoginEvent::AuthUrl { url, instructions }) => {
                self.device = None;
                self.content.clear();
                self.content.push(Piece::Blank);
                self.content
                    .push(Piece::Styled(self.theme.paint("accent", &hyperlink(&url, &url))));
                self.auth_url = Some(url);
                let hint = self.url_hint_text(&self.key_hint("app.message.copy", "to copy"));
                self.url_hint = Some(self.content.len());
                self.content.push(Piece::Styled(hint));
                if !instructions.is_empty() {
                    self.content.push(Piece::Blank);
                    self.content.push(Piece::Text(instructions, "warning"));
                }
            }
            LoginUpdate::Show(LoginEvent::DeviceCode {
                user_code,
                verification_uri,
                ..
            }) => {
                self.auth_url = None;
                self.url_hint = None;
                self.content.clear();
                self.content.push(Piece::Blank);
                let shown = verification_uri
                    .trim_start_matches("https://")
                    .trim_start_matches("http://")
                    .to_string();
                self.content.push(Piece::Styled(
                    self.theme.paint("accent", &hyperlink(&shown, &verification_uri)),
                ));
                self.content.push(Piece::Styled(
                    self.theme
                        .paint("dim", &hyperlink("Ctrl+click to open", &verification_uri)),
                ));
                self.content.push(Piece::Blank);
                self.content
                    .push(Piece::Text(format!("Enter code: {user_code}"), "warning"));
                let hint = format!(
                    "({})",
                    self.key_hint("tui.select.confirm", "to open browser and copy code")
                );
                self.device = Some(DeviceAction {
                    code: user_code,
                    uri: verification_uri,
                    hint: self.content.len(),
                });
                self.content.push(Piece::Styled(hint));
                self.content.push(Piece::Blank);
                self.content
                    .push(Piece::Text("Waiting for authentication...".into(), "dim"));
                let cancel = format!("({})", self.key_hint("tui.select.cancel", "to cancel"));
                self.content.push(Piece::Styled(cancel));
            }
            LoginUpdate::Show(LoginEvent::Progress(message)) => self.content.push(Piece::Text(message, "dim")),
            LoginUpdate::Ask { prompt, answer } => match prompt {
                Prompt::Select { message, options } => {
                    self.pending = Some(Pending::Select {
                        message: message.to_string(),
                        options: options
                            .iter()
                            .map(|o| (o.id.to_string(), o.label.to_string()))
                            .collect(),
                        selected: 0,
                        answer,
                    });
                }
                Prompt::Text { message, placeholder } => {
                    self.content.push(Piece::Blank);
                    self.content.push(Piece::Text(message.to_string(), "text"));
                    if !placeholder.is_empty() {
                        self.content.push(Piece::Text(format!("e.g., {placeholder}"), "dim"));
                    }
                    self.ask_input("", "", Target::Flow(answer), true);
                }
                Prompt::ManualCode { message, .. } => {
                    self.device = None;
                    self.ask_input(&message, "dim", Target::Flow(answer), false);
                }
            },
            // The app closes the screen when the flow ends.
            LoginUpdate::Finished(_) => {}
        }
    }

    /// An input under `message` (none when empty), with the cancel (and submit) hint.
    fn ask_input(&mut self, message: &str, style: &'static str, target: Target, submit_hint: bool) {
        if !message.is_empty() {
            self.content.push(Piece::Blank);
            self.content.push(Piece::Text(
                message.to_string(),
                if style.is_empty() { "text" } else { style },
            ));
        }
        self.content.push(Piece::Input);
        let hint = if submit_hint {
            format!(
                "({} {})",
                self.key_hint("tui.select.cancel", "to cancel,"),
                self.key_hint("tui.select.confirm", "to submit")
            )
        } else {
            format!("({})", self.key_hint("tui.select.cancel", "to cancel"))
        };
        self.content.push(Piece::Styled(hint));
        let mut input = Input::new("> ");
        input.set_focused(self.focused);
        self.pending = Some(Pending::Input { input, target });
    }

    fn cancel(&mut self) {
        self.device = None;
        self.cancel.cancel();
        // Dropping a flow's answer cancels the question too.
        self.pending = None;
        self.result = Some(DialogResult::Cancelled);
    }

    fn submit(&mut self, value: String) {
        let Some(Pending::Input { target, .. }) = self.pending.take() else {
            return;
        };
        if let Some(p) = self.content.iter_mut().find(|p| matches!(p, Piece::Input)) {
            *p = Piece::Answered(value.clone());
        }
        match target {
            Target::Flow(answer) => answer.send(value),
            Target::Local => self.result = Some(DialogResult::Done(value)),
        }
    }
}

impl Component for LoginFlow {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let inner = width.saturating_sub(2).max(1);
        let border = t.paint("border", &"─".repeat(width));
        let top = out.len();
        self.field_row = None;
        out.push_line(border.clone());
        if let Some(Pending::Select {
            message,
            options,
            selected,
            ..
        }) = &self.pending
        {
            // The flow's method menu stands in for the dialog until it is answered.
            out.push_line(String::new());
            out.push_line(truncate_to_width(
                &format!(" {}", t.bold("accent", message)),
                width,
                "…",
            ));
            out.push_line(String::new());
            if let Some(intro) = &self.intro {
                for l in wrap_text(intro, inner) {
                    out.push_line(format!(" {}", t.paint("text", &l)));
                }
                out.push_line(String::new());
            }
            for (i, (_, label)) in options.iter().enumerate() {
                let row = if i == *selected {
                    format!("{}{}", t.paint("accent", "→ "), t.paint("accent", label))
                } else {
                    format!("  {}", t.paint("text", label))
                };
                out.push_line(truncate_to_width(&format!(" {row}"), width, "…"));
            }
            out.push_line(String::new());
            out.push_line(truncate_to_width(
                &format!(
                    " {}",
                    t.paint(
                        "dim",
                        &format!(
                            "↑↓ navigate  {} select  {} cancel",
                            key_text("tui.select.confirm"),
                            key_text("tui.select.cancel")
                        )
                    )
                ),
                width,
                "",
            ));
            out.push_line(String::new());
            out.push_line(border);
            return;
        }
        out.push_line(truncate_to_width(
            &format!(" {}", t.bold("accent", &self.title)),
            width,
            "…",
        ));
        for piece in &self.content {
            match piece {
                Piece::Blank => out.push_line(String::new()),
                Piece::Text(text, style) => {
                    for l in wrap_text(text, inner) {
                        out.push_line(format!(" {}", t.paint(style, &l)));
                    }
                }
                Piece::Styled(s) => out.push_line(truncate_to_width(&format!(" {s}"), width, "…")),
                Piece::Answered(s) => out.push_line(truncate_to_width(&format!("> {s}"), width, "…")),
                Piece::Input => {
                    if let Some(Pending::Input { input, .. }) = &mut self.pending {
                        self.field_row = Some(out.len() - top);
                        let mut sub = Frame::default();
                        input.render(width, &mut sub);
                        for l in sub.to_vec() {
                            out.push_line(l);
                        }
                    }
                }
            }
        }
        out.push_line(border);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        let kb = keybindings();
        if let Some(Pending::Select { options, selected, .. }) = &mut self.pending {
            let n = options.len().max(1);
            // As pi 1.6's selector: the ends stop the selection.
            if kb.matches(k, "tui.select.up") {
                *selected = selected.saturating_sub(1);
            } else if kb.matches(k, "tui.select.down") {
                *selected = (*selected + 1).min(n - 1);
            } else if kb.matches(k, "tui.select.confirm") {
                if let Some(Pending::Select {
                    options,
                    selected,
                    answer,
                    ..
                }) = self.pending.take()
                {
                    match options.get(selected) {
                        Some((id, _)) => answer.send(id.clone()),
                        None => self.cancel(),
                    }
                }
            } else if kb.matches(k, "tui.select.cancel") {
                self.cancel();
            }
            return true;
        }
        if kb.matches(k, "tui.select.cancel") {
            self.cancel();
            return true;
        }
        if self.auth_url.is_some() && kb.matches(k, "app.message.copy") {
            self.request = self.auth_url.clone().map(FlowRequest::CopyUrl);
            return true;
        }
        let waiting_for_text = matches!(self.pending, Some(Pending::Input { .. }));
        if !waiting_for_text && kb.matches(k, "tui.select.confirm") {
            if let Some(action) = self.device.take() {
                // Once: a second Enter must not open more browsers.
                if let Some(p) = self.content.get_mut(action.hint) {
                    *p = Piece::Text("Copying code...".into(), "dim");
                }
                self.request = Some(FlowRequest::OpenAndCopy {
                    uri: action.uri,
                    code: action.code,
                });
            }
            return true;
        }
        if let Some(Pending::Input { input, .. }) = &mut self.pending {
            if let InputFieldEvent::Submit(v) = input.handle_key(k) {
                self.submit(v);
            }
        }
        true
    }

    fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
        if let Some(Pending::Input { input, .. }) = &mut self.pending {
            input.set_focused(focused);
        }
    }

    /// The text field takes a press (its cursor goes there), as pi 1.6's input does.
    fn handle_mouse(&mut self, m: &pi_tui::ComponentMouse) -> bool {
        let (Some(row), Some(Pending::Input { input, .. })) = (self.field_row, &mut self.pending) else {
            return false;
        };
        m.within(&(row..row + 1)).is_some_and(|at| input.handle_mouse(&at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::{render_lines, strip_ansi};

    fn key(s: &str) -> InputEvent {
        InputEvent::Key(pi_tui::parse_key(s, false).expect("key"))
    }

    fn plain(c: &mut dyn Component) -> Vec<String> {
        render_lines(c, 60)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_string())
            .collect()
    }

    fn rows(names: &[&str]) -> Vec<ChoiceRow> {
        names
            .iter()
            .map(|n| ChoiceRow {
                value: n.to_lowercase(),
                label: n.to_string(),
                suffix: " • not configured".into(),
            })
            .collect()
    }

    #[test]
    fn a_provider_list_filters_pages_and_picks() {
        let names = [
            "Anthropic",
            "GitHub Copilot",
            "OpenAI",
            "A1",
            "A2",
            "A3",
            "A4",
            "A5",
            "A6",
            "xAI",
        ];
        let mut c = LoginChoice::searchable(
            "Select provider to configure:",
            rows(&names),
            "",
            "none",
            Arc::new(UiTheme::fallback()),
        );
        let lines = plain(&mut c);
        assert_eq!(lines[2], " Select provider to configure:");
        assert_eq!(lines[6], " → Anthropic • not configured");
        assert!(lines.contains(&"   (1/10)".to_string()), "{lines:?}");
        for ch in ["x", "a", "i"] {
            c.handle_input(&key(ch));
        }
        assert_eq!(c.selected_value(), Some("xai"));
        c.handle_input(&key("\r"));
        assert_eq!(c.take_result(), Some(DialogResult::Done("xai".into())));
    }

    #[test]
    fn the_selection_stops_at_the_ends_and_only_partners_animate() {
        let mut c = LoginChoice::menu(
            "m",
            rows(&["Radius", "OpenRouter", "Other"]),
            Arc::new(UiTheme::fallback()),
        )
        .with_brand_animation();
        c.handle_input(&key("\x1b[A"));
        assert_eq!(c.selected_value(), Some("radius"));
        assert!(c.animating());
        c.handle_input(&key("\x1b[B"));
        assert!(c.animating(), "OpenRouter glows");
        for _ in 0..3 {
            c.handle_input(&key("\x1b[B"));
        }
        assert_eq!(c.selected_value(), Some("other"));
        assert!(!c.animating());
        // Without the animation (the /logout list) nothing is animated.
        let c = LoginChoice::menu("m", rows(&["Radius"]), Arc::new(UiTheme::fallback()));
        assert!(!c.animating());
    }

    #[test]
    fn a_flow_shows_a_device_code_and_answers_a_question() {
        let cancel = CancellationToken::new();
        let mut f = LoginFlow::new(
            1,
            "Login to GitHub Copilot",
            cancel.clone(),
            Arc::new(UiTheme::fallback()),
        );
        f.set_focused(true);
        let (tx, rx) = tokio::sync::oneshot::channel();
        f.apply(LoginUpdate::Ask {
            prompt: Prompt::Text {
                message: "GitHub Enterprise URL/domain (blank for github.com)".into(),
                placeholder: "company.ghe.com".into(),
            },
            answer: Answer::replying_on(tx),
        });
        let lines = plain(&mut f);
        assert!(lines.iter().any(|l| l == " e.g., company.ghe.com"), "{lines:?}");
        for ch in ["a", "\r"] {
            f.handle_input(&key(ch));
        }
        assert_eq!(rx.blocking_recv().ok().as_deref(), Some("a"));
        // The answer stays where the field was, at the left edge as the field is drawn.
        let lines = plain(&mut f);
        assert!(lines.iter().any(|l| l == "> a"), "{lines:?}");
        f.apply(LoginUpdate::Show(LoginEvent::DeviceCode {
            user_code: "ABCD-1234".into(),
            verification_uri: "https://github.com/login/device".into(),
            interval_seconds: None,
            expires_in_seconds: None,
        }));
        let lines = plain(&mut f);
        assert!(lines.contains(&" github.com/login/device".to_string()), "{lines:?}");
        assert!(lines.contains(&" Enter code: ABCD-1234".to_string()), "{lines:?}");
        f.handle_input(&key("\r"));
        assert_eq!(
            f.take_request(),
            Some(FlowRequest::OpenAndCopy {
                uri: "https://github.com/login/device".into(),
                code: "ABCD-1234".into()
            })
        );
        f.handle_input(&key("\r"));
        assert_eq!(f.take_request(), None, "the code is acted on once");
        f.handle_input(&key("\x1b"));
        assert!(cancel.is_cancelled());
        assert_eq!(f.take_result(), Some(DialogResult::Cancelled));
    }
}
