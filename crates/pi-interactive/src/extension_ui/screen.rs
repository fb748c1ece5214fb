//! What extensions put on the terminal UI's screen: statuses, widgets above and below the
//! editor, a header and a footer in place of pi's, and `ctx.ui.custom()` components (in the
//! editor's place or as overlays). The components themselves live in the extension host;
//! this keeps the lines the host last sent for each and says which to ask for again: only
//! those the host marked as changed (`tui.requestRender()`) or whose width changed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use pi_tui::{truncate_to_width, wrap_text, Anchor, Component, Frame, Margin, OverlayId, OverlayOptions, SizeValue};
use serde_json::Value;

use super::super::theme::UiTheme;

/// pi shows at most this many lines of a widget given as text.
const MAX_WIDGET_LINES: usize = 10;

/// A tool renderer's answer for one block: its chat index, its call id, the call's lines and
/// the result's lines (`None`: pi's default there).
pub type ToolLines = (usize, String, Option<Vec<String>>, Option<Vec<String>>);

/// A change the host (or a reply to our requests) makes to the extension screen.
#[derive(Debug, Clone)]
pub enum ScreenChange {
    Status {
        key: String,
        text: Option<String>,
    },
    WidgetLines {
        key: String,
        lines: Option<Vec<String>>,
        below: bool,
    },
    WidgetComponent {
        key: String,
        id: u64,
        below: bool,
    },
    Header(Option<u64>),
    Footer(Option<u64>),
    Custom {
        id: u64,
        overlay: bool,
        options: Value,
        /// `blocked: {kind, message}`: what the program status reports while it is open.
        blocked: Option<(String, String)>,
    },
    CustomClose(u64),
    /// An overlay's handle asked for the keys (`focus()`): it comes to the front.
    CustomFocus(u64),
    CustomHidden {
        id: u64,
        hidden: bool,
    },
    /// The host's components changed: ask for the lines of those on screen.
    RequestRender,
    /// Lines the host sent: per component, the width they are for and the lines (`None`:
    /// unchanged since the last ones sent).
    Lines(Vec<(u64, usize, Option<Vec<String>>)>),
    /// A component's lines after a key it handled (and, for a replacement editor, its text).
    InputLines(u64, usize, Option<Vec<String>>, Option<String>),
    /// A replacement editor (`setEditorComponent`) in place of pi's, or pi's again.
    Editor(Option<u64>),
    /// The replacement editor submitted its text.
    EditorSubmit(String),
    /// The replacement editor handed an app action (a keybinding id) back to pi.
    EditorAction(String),
    /// Whether `onTerminalInput` listeners want to see the keys first.
    TerminalInput(bool),
    /// A command's argument completions for the editor text `typed` (shown only if the
    /// editor still holds it).
    Completions {
        typed: String,
        prefix: String,
        items: Vec<pi_tui::autocomplete::AutocompleteItem>,
    },
    /// The extensions' completion chain and its trigger characters (`None`: no chain).
    Autocomplete(Option<Vec<char>>),
    /// The chain's suggestions for the editor text and cursor `at` (`None`: no menu).
    Suggested {
        at: super::autocomplete::Spot,
        force: bool,
        suggestions: Option<pi_tui::autocomplete::Suggestions>,
    },
    /// An explicit Tab's request was superseded by a newer one: its answer will not come.
    SuggestedStale,
    /// The chain applied a suggestion accepted at `at`; `submit`: Enter on a command name.
    Applied {
        at: super::autocomplete::Spot,
        applied: pi_tui::autocomplete::Applied,
        submit: bool,
    },
    /// Lines of message renderers: for what they were made, and per chat block (its index
    /// and message) the lines (`None`: the renderer gave nothing).
    MessageLines {
        key: super::message_block::RenderKey,
        items: Vec<(usize, Value, Option<Vec<String>>)>,
    },
    /// Lines of tool renderers at a content width: per tool block (its index and call id)
    /// the call's and the result's lines.
    ToolLines {
        width: usize,
        items: Vec<ToolLines>,
    },
    ToolsExpanded(bool),
    /// `ctx.ui.setWorkingMessage` (`None`: pi's message again).
    WorkingMessage(Option<String>),
    WorkingVisible(bool),
    /// `ctx.ui.setWorkingIndicator` (`None`: pi's spinner again).
    WorkingIndicator(Option<super::working::Indicator>),
    /// `ctx.ui.setHiddenThinkingLabel` (`None`: pi's label again).
    HiddenThinkingLabel(Option<String>),
    EditorText(String),
    Paste(String),
    Title(String),
    /// A new extension runtime: everything extensions showed goes.
    Reset,
}

impl ScreenChange {
    /// Read one of the host's screen notifications; `None` for what is not one.
    pub fn from_notification(method: &str, params: &Value) -> Option<ScreenChange> {
        let id = || params.get("id").and_then(Value::as_u64);
        let below = |p: Option<&Value>| p.and_then(Value::as_str) == Some("belowEditor");
        Some(match method {
            "ui.setWidgetComponent" => ScreenChange::WidgetComponent {
                key: params.get("key")?.as_str()?.to_string(),
                id: id()?,
                below: below(params.get("placement")),
            },
            "ui.setHeader" => ScreenChange::Header(id()),
            "ui.setFooter" => ScreenChange::Footer(id()),
            "ui.custom" => ScreenChange::Custom {
                id: id()?,
                overlay: params.get("overlay").and_then(Value::as_bool).unwrap_or(false),
                options: params.get("overlayOptions").cloned().unwrap_or(Value::Null),
                blocked: params.get("blocked").and_then(|b| {
                    let text = |k: &str| b.get(k).and_then(Value::as_str).map(str::to_string);
                    Some((text("kind")?, text("message")?))
                }),
            },
            "ui.customClose" => ScreenChange::CustomClose(id()?),
            "ui.customFocus" => ScreenChange::CustomFocus(id()?),
            "ui.customHidden" => ScreenChange::CustomHidden {
                id: id()?,
                hidden: params.get("hidden").and_then(Value::as_bool).unwrap_or(false),
            },
            "ui.requestRender" => ScreenChange::RequestRender,
            "ui.setEditor" => ScreenChange::Editor(id()),
            "ui.editorSubmit" => ScreenChange::EditorSubmit(params.get("text")?.as_str()?.to_string()),
            "ui.editorAction" => ScreenChange::EditorAction(params.get("action")?.as_str()?.to_string()),
            "ui.terminalInput" => {
                ScreenChange::TerminalInput(params.get("active").and_then(Value::as_bool).unwrap_or(false))
            }
            "ui.setToolsExpanded" => {
                ScreenChange::ToolsExpanded(params.get("expanded").and_then(Value::as_bool).unwrap_or(false))
            }
            "ui.pasteToEditor" => ScreenChange::Paste(first_arg(params)?),
            "ui.setWorkingMessage" => {
                ScreenChange::WorkingMessage(params.get("message").and_then(Value::as_str).map(str::to_string))
            }
            "ui.setWorkingVisible" => {
                ScreenChange::WorkingVisible(params.get("visible").and_then(Value::as_bool).unwrap_or(true))
            }
            "ui.setWorkingIndicator" => {
                ScreenChange::WorkingIndicator(params.get("options").and_then(super::working::Indicator::from_options))
            }
            "ui.setHiddenThinkingLabel" => {
                ScreenChange::HiddenThinkingLabel(params.get("label").and_then(Value::as_str).map(str::to_string))
            }
            "ui.setAutocomplete" => ScreenChange::Autocomplete(super::autocomplete::parse_triggers(params)),
            "ui.reset" => ScreenChange::Reset,
            _ => return None,
        })
    }
}

fn first_arg(params: &Value) -> Option<String> {
    params
        .get("args")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .map(str::to_string)
}

enum Widget {
    Lines(Vec<String>),
    Component(u64),
}

/// A custom component shown as an overlay, and the overlay that shows its lines.
struct ShownOverlay {
    id: u64,
    overlay: OverlayId,
    options: OverlayOptions,
    hidden: bool,
}

#[derive(Default)]
struct Cached {
    /// The width the lines are for (`None`: never rendered).
    width: Option<usize>,
    lines: Vec<String>,
}

/// The lines of an extension component shown as an overlay (set by the app as they come).
#[derive(Default)]
pub struct HostLines {
    lines: Vec<String>,
}

impl HostLines {
    pub fn new() -> Self {
        HostLines { lines: Vec::new() }
    }

    pub fn set(&mut self, lines: Vec<String>) {
        self.lines = lines;
    }
}

impl Component for HostLines {
    fn render(&mut self, width: usize, out: &mut Frame) {
        out.extend_lines(self.lines.iter().map(|l| truncate_to_width(l, width, "")));
    }
}

/// Everything extensions show on the screen, as of the last lines the host sent.
pub struct ExtensionScreen {
    theme: Arc<UiTheme>,
    statuses: BTreeMap<String, String>,
    above: Vec<(String, Widget)>,
    below: Vec<(String, Widget)>,
    header: Option<u64>,
    footer: Option<u64>,
    /// Custom components in the editor's place; the last one is shown and has the keys.
    inline: Vec<u64>,
    /// A replacement editor, shown in the editor's place when no custom component is.
    editor: Option<u64>,
    /// The replacement editor's text as it last reported it.
    editor_text: Option<String>,
    /// `onTerminalInput` listeners see every key before the app.
    terminal_input: bool,
    overlays: Vec<ShownOverlay>,
    /// Custom components opened with `blocked`, in the order they opened: the program
    /// status reports the last one's kind and message until it is done (hidden or not).
    blocking: Vec<(u64, String, String)>,
    cache: HashMap<u64, Cached>,
    /// The host said its components changed since the lines were last asked for.
    stale: bool,
    /// A `ui.render` request is on its way.
    in_flight: bool,
    title: Option<String>,
}

/// What the app must do after a change that only it can carry out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Followup {
    /// Overlays to show (component ids) and to hide.
    pub show: Vec<u64>,
    pub hide: Vec<OverlayId>,
    pub header_changed: bool,
}

impl ExtensionScreen {
    pub fn new(theme: Arc<UiTheme>) -> Self {
        ExtensionScreen {
            theme,
            statuses: BTreeMap::new(),
            above: Vec::new(),
            below: Vec::new(),
            header: None,
            footer: None,
            inline: Vec::new(),
            editor: None,
            editor_text: None,
            terminal_input: false,
            overlays: Vec::new(),
            blocking: Vec::new(),
            cache: HashMap::new(),
            stale: false,
            in_flight: false,
            title: None,
        }
    }

    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        self.theme = theme;
    }

    /// The terminal title an extension set, if one did.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    pub fn set_title(&mut self, title: String) {
        self.title = Some(title);
    }

    pub fn set_status(&mut self, key: String, text: Option<String>) {
        match text {
            Some(t) => self.statuses.insert(key, t),
            None => self.statuses.remove(&key),
        };
    }

    fn remove_widget(&mut self, key: &str) {
        self.above.retain(|(k, _)| k != key);
        self.below.retain(|(k, _)| k != key);
    }

    pub fn set_widget(&mut self, key: String, widget: Option<Result<Vec<String>, u64>>, below: bool) {
        self.remove_widget(&key);
        let Some(widget) = widget else { return };
        let widget = match widget {
            Ok(lines) => Widget::Lines(lines),
            Err(id) => Widget::Component(id),
        };
        if below {
            self.below.push((key, widget));
        } else {
            self.above.push((key, widget));
        }
    }

    pub fn set_header(&mut self, id: Option<u64>) {
        self.header = id;
    }

    pub fn header(&self) -> Option<u64> {
        self.header
    }

    pub fn set_footer(&mut self, id: Option<u64>) {
        self.footer = id;
    }

    /// A replacement editor, or pi's own again (`None`).
    pub fn set_editor(&mut self, id: Option<u64>) {
        if let Some(old) = self.editor.take() {
            self.cache.remove(&old);
        }
        self.editor = id;
        self.editor_text = None;
    }

    /// The replacement editor, when one is set.
    pub fn editor(&self) -> Option<u64> {
        self.editor
    }

    /// The replacement editor reported its text.
    pub fn set_editor_text(&mut self, text: String) {
        self.editor_text = Some(text);
    }

    /// The text the replacement editor last reported.
    pub fn editor_text(&self) -> Option<&str> {
        self.editor_text.as_deref()
    }

    pub fn set_terminal_input(&mut self, on: bool) {
        self.terminal_input = on;
    }

    /// Whether keys go to `onTerminalInput` listeners first.
    pub fn terminal_input(&self) -> bool {
        self.terminal_input
    }

    /// A custom component: in the editor's place, or as an overlay the app shows.
    pub fn add_custom(&mut self, id: u64, overlay: Option<(OverlayId, OverlayOptions)>) {
        match overlay {
            Some((overlay, options)) => self.overlays.push(ShownOverlay {
                id,
                overlay,
                options,
                hidden: false,
            }),
            None => self.inline.push(id),
        }
    }

    /// The custom component `id` waits for the user: the program status says so with `kind`
    /// and `message` until it is done.
    pub fn set_blocking(&mut self, id: u64, kind: String, message: String) {
        self.blocking.retain(|(i, ..)| *i != id);
        self.blocking.push((id, kind, message));
    }

    /// The kind and message of the last custom component still waiting, if any.
    pub fn blocking(&self) -> Option<(&str, &str)> {
        self.blocking.last().map(|(_, k, m)| (k.as_str(), m.as_str()))
    }

    /// The custom component `id` is done; the overlay to hide, when it had one.
    pub fn close_custom(&mut self, id: u64) -> Option<OverlayId> {
        self.blocking.retain(|(i, ..)| *i != id);
        self.inline.retain(|&i| i != id);
        self.cache.remove(&id);
        let pos = self.overlays.iter().position(|o| o.id == id)?;
        Some(self.overlays.remove(pos).overlay)
    }

    /// Hide or show an overlay; its overlay id for the app.
    /// Bring overlay `id` to the front with the keys (a non-capturing one too, as pi-tui's
    /// `focus()` does); the app's overlay to raise with it.
    pub fn raise(&mut self, id: u64) -> Option<OverlayId> {
        let i = self.overlays.iter().position(|o| o.id == id)?;
        let mut o = self.overlays.remove(i);
        o.options.non_capturing = false;
        let overlay = o.overlay;
        self.overlays.push(o);
        Some(overlay)
    }

    pub fn set_hidden(&mut self, id: u64, hidden: bool) -> Option<OverlayId> {
        let o = self.overlays.iter_mut().find(|o| o.id == id)?;
        o.hidden = hidden;
        Some(o.overlay)
    }

    /// Everything goes (a new extension runtime); the overlays for the app to hide.
    pub fn reset(&mut self) -> Vec<OverlayId> {
        let theme = self.theme.clone();
        let overlays = self.overlays.iter().map(|o| o.overlay).collect();
        *self = ExtensionScreen::new(theme);
        overlays
    }

    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// The component that takes the keys: the newest visible overlay, else the custom
    /// component in the editor's place.
    pub fn focused(&self) -> Option<u64> {
        self.overlays
            .iter()
            .rev()
            .find(|o| !o.hidden && !o.options.non_capturing)
            .map(|o| o.id)
            .or_else(|| self.inline.last().copied())
    }

    /// The overlay showing component `id`.
    pub fn overlay_of(&self, id: u64) -> Option<OverlayId> {
        self.overlays.iter().find(|o| o.id == id).map(|o| o.overlay)
    }

    /// The lines the host last sent for `id`.
    pub fn lines_of(&self, id: u64) -> &[String] {
        self.cache.get(&id).map_or(&[], |c| c.lines.as_slice())
    }

    /// Store lines the host sent; returns the ids whose lines changed.
    pub fn store(&mut self, lines: Vec<(u64, usize, Option<Vec<String>>)>) -> Vec<u64> {
        self.in_flight = false;
        let mut changed = Vec::new();
        for (id, width, new) in lines {
            let entry = self.cache.entry(id).or_default();
            entry.width = Some(width);
            if let Some(new) = new {
                if entry.lines != new {
                    entry.lines = new;
                    changed.push(id);
                }
            }
        }
        changed
    }

    /// A component's new lines after a key (not an answer to `ui.render`).
    pub fn store_reply(&mut self, id: u64, width: usize, lines: Vec<String>) -> Vec<u64> {
        let entry = self.cache.entry(id).or_default();
        entry.width = Some(width);
        if entry.lines == lines {
            return Vec::new();
        }
        entry.lines = lines;
        vec![id]
    }

    /// A `ui.render` request failed: keep the old lines (asking again would fail again).
    pub fn fetch_failed(&mut self, items: &[(u64, usize)]) {
        self.in_flight = false;
        for &(id, width) in items {
            self.cache.entry(id).or_default().width = Some(width);
        }
    }

    /// The width an overlay with `options` gets on a `width`-column terminal (as pi-tui
    /// sizes it).
    fn overlay_width(options: &OverlayOptions, width: usize) -> usize {
        let m = options.margin;
        let avail = width.saturating_sub(m.left + m.right).max(1);
        let mut w = options.width.map_or(avail, |s| match s {
            SizeValue::Cells(n) => n,
            SizeValue::Percent(p) => width * usize::from(p.min(100)) / 100,
        });
        if let Some(min) = options.min_width {
            w = w.max(min);
        }
        w.clamp(1, avail)
    }

    /// The components on screen now and the width each is drawn at.
    fn visible(&self, width: usize) -> Vec<(u64, usize)> {
        let mut out = Vec::new();
        for (_, w) in self.above.iter().chain(&self.below) {
            if let Widget::Component(id) = w {
                out.push((*id, width));
            }
        }
        out.extend(self.header.map(|id| (id, width)));
        out.extend(self.footer.map(|id| (id, width)));
        out.extend(self.inline.last().or(self.editor.as_ref()).map(|&id| (id, width)));
        for o in self.overlays.iter().filter(|o| !o.hidden) {
            out.push((o.id, Self::overlay_width(&o.options, width)));
        }
        out
    }

    /// The components whose lines to ask the host for before drawing at `width`: all on
    /// screen after a `requestRender`, else those never drawn at this width. `None` when
    /// nothing is needed or a request is already on its way.
    pub fn wanted(&mut self, width: usize) -> Option<Vec<(u64, usize)>> {
        if self.in_flight {
            return None;
        }
        let stale = self.stale;
        let items: Vec<(u64, usize)> = self
            .visible(width)
            .into_iter()
            .filter(|(id, w)| stale || self.cache.get(id).and_then(|c| c.width) != Some(*w))
            .collect();
        self.stale = false;
        if items.is_empty() {
            return None;
        }
        self.in_flight = true;
        Some(items)
    }

    fn widget_lines(&self, widget: &Widget, width: usize, out: &mut Frame) {
        match widget {
            Widget::Lines(lines) => {
                // pi wraps each line as a text block with one column of padding each side.
                let inner = width.saturating_sub(2).max(1);
                for line in lines.iter().take(MAX_WIDGET_LINES) {
                    for part in wrap_text(line, inner) {
                        out.push_line(format!(" {part}"));
                    }
                }
                if lines.len() > MAX_WIDGET_LINES {
                    out.push_line(format!(" {}", self.theme.paint("muted", "... (widget truncated)")));
                }
            }
            Widget::Component(id) => self.component_lines(*id, width, out),
        }
    }

    fn component_lines(&self, id: u64, width: usize, out: &mut Frame) {
        out.extend_lines(self.lines_of(id).iter().map(|l| truncate_to_width(l, width, "")));
    }

    /// Widgets above the editor (pi puts a blank line before them, there either way).
    pub fn render_above(&self, width: usize, out: &mut Frame) {
        for (_, w) in &self.above {
            self.widget_lines(w, width, out);
        }
    }

    pub fn render_below(&self, width: usize, out: &mut Frame) {
        for (_, w) in &self.below {
            self.widget_lines(w, width, out);
        }
    }

    /// Whether a custom component or a replacement editor stands in the editor's place.
    pub fn shows_inline(&self) -> bool {
        !self.inline.is_empty() || self.editor.is_some()
    }

    /// The id of the custom component (or the replacement editor) in the editor's place.
    pub fn inline_target(&self) -> Option<u64> {
        self.inline.last().or(self.editor.as_ref()).copied()
    }

    /// The custom component (or the replacement editor) in the editor's place, if one is
    /// shown.
    pub fn render_inline(&self, width: usize) -> Option<Frame> {
        let id = *self.inline.last().or(self.editor.as_ref())?;
        let mut f = Frame::new();
        self.component_lines(id, width, &mut f);
        Some(f)
    }

    /// The footer: an extension's in place of pi's, else pi's and the status line.
    pub fn render_footer(&self, width: usize, footer: &mut dyn Component, out: &mut Frame) {
        if let Some(id) = self.footer {
            self.component_lines(id, width, out);
            return;
        }
        footer.render(width, out);
        if self.statuses.is_empty() {
            return;
        }
        let line = self
            .statuses
            .values()
            .map(|t| sanitize_status(t))
            .collect::<Vec<_>>()
            .join(" ");
        out.push_line(truncate_to_width(&line, width, &self.theme.paint("dim", "...")));
    }
}

/// pi's single-line status text: control whitespace to spaces, runs of spaces to one.
fn sanitize_status(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if matches!(c, '\r' | '\n' | '\t') { ' ' } else { c })
        .collect();
    let mut out = String::with_capacity(spaced.len());
    for c in spaced.chars() {
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        out.push(c);
    }
    out.trim().to_string()
}

/// pi-tui's overlay options as the host sent them; pi-tui's defaults (centred, at most 80
/// columns wide) where they are missing.
pub fn overlay_options(options: &Value) -> OverlayOptions {
    let size = |v: Option<&Value>| -> Option<SizeValue> {
        let v = v?;
        if let Some(n) = v.as_u64() {
            return Some(SizeValue::Cells(n as usize));
        }
        let p = v.as_str()?.strip_suffix('%')?.trim().parse::<f64>().ok()?;
        Some(SizeValue::Percent(p.clamp(0.0, 100.0) as u8))
    };
    let int = |k: &str| options.get(k).and_then(Value::as_i64).unwrap_or(0) as isize;
    let anchor = match options.get("anchor").and_then(Value::as_str) {
        Some("top-left") => Anchor::TopLeft,
        Some("top-right") => Anchor::TopRight,
        Some("bottom-left") => Anchor::BottomLeft,
        Some("bottom-right") => Anchor::BottomRight,
        Some("top-center") => Anchor::TopCenter,
        Some("bottom-center") => Anchor::BottomCenter,
        Some("left-center") => Anchor::LeftCenter,
        Some("right-center") => Anchor::RightCenter,
        _ => Anchor::Center,
    };
    let margin = match options.get("margin") {
        Some(Value::Number(n)) => Margin::all(n.as_u64().unwrap_or(0) as usize),
        Some(Value::Object(m)) => {
            let side = |k: &str| m.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
            Margin {
                top: side("top"),
                right: side("right"),
                bottom: side("bottom"),
                left: side("left"),
            }
        }
        _ => Margin::default(),
    };
    OverlayOptions {
        width: size(options.get("width")).or(Some(SizeValue::Cells(80))),
        min_width: options.get("minWidth").and_then(Value::as_u64).map(|n| n as usize),
        max_height: size(options.get("maxHeight")),
        anchor,
        offset_x: int("offsetX"),
        offset_y: int("offsetY"),
        row: size(options.get("row")),
        col: size(options.get("col")),
        margin,
        non_capturing: options.get("nonCapturing").and_then(Value::as_bool).unwrap_or(false),
        min_terminal: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen() -> ExtensionScreen {
        ExtensionScreen::new(Arc::new(UiTheme::fallback()))
    }

    #[test]
    fn only_components_never_drawn_at_this_width_are_asked_for() {
        let mut s = screen();
        s.set_widget("w".into(), Some(Err(1)), false);
        s.set_footer(Some(2));
        assert_eq!(s.wanted(100), Some(vec![(1, 100), (2, 100)]));
        // One request at a time.
        assert_eq!(s.wanted(100), None);
        s.store(vec![(1, 100, Some(vec!["a".into()])), (2, 100, Some(vec!["f".into()]))]);
        assert_eq!(s.wanted(100), None, "nothing changed");
        assert_eq!(s.wanted(80), Some(vec![(1, 80), (2, 80)]), "a new width");
        s.store(vec![(1, 80, None), (2, 80, None)]);
        assert_eq!(s.lines_of(1), ["a".to_string()], "unchanged lines are kept");
        s.mark_stale();
        assert_eq!(s.wanted(80), Some(vec![(1, 80), (2, 80)]), "the host said they changed");
    }

    #[test]
    fn a_replacement_editor_is_drawn_in_the_editors_place_unless_a_custom_component_is() {
        let mut s = screen();
        s.set_editor(Some(3));
        assert_eq!(s.wanted(100), Some(vec![(3, 100)]));
        s.store(vec![(3, 100, Some(vec!["editor line".into()]))]);
        assert_eq!(s.wanted(100), None, "drawn once per change or width");
        let lines = |s: &ExtensionScreen| s.render_inline(100).map(|f| f.to_vec());
        assert_eq!(lines(&s), Some(vec!["editor line".to_string()]));
        // A custom component covers it (and only it is asked for); the editor comes back after.
        s.add_custom(4, None);
        assert_eq!(s.wanted(100), Some(vec![(4, 100)]));
        s.store(vec![(4, 100, Some(vec!["custom".into()]))]);
        assert_eq!(lines(&s), Some(vec!["custom".to_string()]));
        s.close_custom(4);
        assert_eq!(lines(&s), Some(vec!["editor line".to_string()]));
        // pi's editor again.
        s.set_editor(None);
        assert_eq!(lines(&s), None);
        assert_eq!(s.focused(), None, "the editor's keys are routed apart from focus");
    }

    #[test]
    fn the_newest_overlay_has_the_keys_then_the_inline_component() {
        let mut s = screen();
        assert_eq!(s.focused(), None);
        s.add_custom(5, None);
        assert_eq!(s.focused(), Some(5));
        let mut t = pi_tui::Tui::new(10, 10);
        let oid = t.show_overlay(Box::new(HostLines::new()), OverlayOptions::default());
        s.add_custom(6, Some((oid, OverlayOptions::default())));
        assert_eq!(s.focused(), Some(6));
        assert_eq!(s.close_custom(6), Some(oid));
        assert_eq!(s.focused(), Some(5));
        assert_eq!(s.close_custom(5), None);
        assert_eq!(s.focused(), None);
    }

    #[test]
    fn statuses_sort_by_key_on_one_line_under_the_footer() {
        let mut s = screen();
        s.set_status("b".into(), Some("second\tline".into()));
        s.set_status("a".into(), Some("first  one".into()));
        let mut footer = pi_tui::components::Text::new("FOOTER");
        let mut f = Frame::new();
        s.render_footer(40, &mut footer, &mut f);
        let lines = f.to_vec();
        assert_eq!(lines.last().map(String::as_str), Some("first one second line"));
        s.set_status("a".into(), None);
        s.set_status("b".into(), None);
        let mut f = Frame::new();
        s.render_footer(40, &mut footer, &mut f);
        assert!(f.to_vec().iter().all(|l| !l.contains("second")));
    }

    #[test]
    fn text_widgets_are_padded_and_cut_at_ten_lines() {
        let mut s = screen();
        let lines: Vec<String> = (0..12).map(|i| format!("line {i}")).collect();
        s.set_widget("w".into(), Some(Ok(lines)), false);
        let mut f = Frame::new();
        s.render_above(40, &mut f);
        let out: Vec<String> = f.to_vec().iter().map(|l| pi_tui::strip_ansi(l)).collect();
        assert_eq!(out.len(), 11);
        assert_eq!(out[0], " line 0");
        assert_eq!(out[10], " ... (widget truncated)");
        s.set_widget("w".into(), None, false);
        let mut f = Frame::new();
        s.render_above(40, &mut f);
        assert!(f.is_empty());
    }

    #[test]
    fn overlay_options_default_to_a_centred_box_of_at_most_80_columns() {
        let o = overlay_options(&Value::Null);
        assert_eq!(o.anchor, Anchor::Center);
        assert_eq!(ExtensionScreen::overlay_width(&o, 100), 80);
        assert_eq!(ExtensionScreen::overlay_width(&o, 60), 60);
        let o = overlay_options(&serde_json::json!({"width": "50%", "anchor": "top-right", "margin": 2}));
        assert_eq!(o.anchor, Anchor::TopRight);
        assert_eq!(ExtensionScreen::overlay_width(&o, 100), 50);
    }
}
