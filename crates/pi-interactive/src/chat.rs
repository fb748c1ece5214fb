//! The chat transcript's blocks: user messages, assistant replies (markdown and thinking),
//! notices, and the header. Each caches its lines per width, so a frame costs what changed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use pi_ai::{AssistantMessage, Content, StopReason};
use pi_tui::components::Markdown;
use pi_tui::{wrap_text, Component, Frame, LineCache, Lines, Style};

use super::theme::UiTheme;

/// pi 1.6's `outputPad`: the columns before messages and tool output (0 or 1), for the whole
/// process (the app sets it from the settings; blocks read it when they are built or drawn).
static OUTPUT_PAD: AtomicUsize = AtomicUsize::new(1);

pub fn set_output_pad(pad: usize) {
    OUTPUT_PAD.store(pad.min(1), Ordering::Relaxed);
}

pub fn output_pad() -> usize {
    OUTPUT_PAD.load(Ordering::Relaxed)
}

/// `markdown.mermaid`: 0 off, 1 once a reply is complete, 2 while it streams too.
static MERMAID: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(2);

/// How new and rebuilt blocks draw Mermaid diagrams (`off`, `final`, `streaming`).
pub fn set_mermaid_mode(mode: &str) {
    let code = match mode {
        "off" => 0,
        "final" => 1,
        _ => 2,
    };
    MERMAID.store(code, Ordering::Relaxed);
}

/// Diagrams on for text that is complete (`streaming`: still coming in), and whether to say
/// why a diagram was not drawn (only once complete).
fn diagrams(md: &mut Markdown, streaming: bool) {
    let mode = MERMAID.load(Ordering::Relaxed);
    let on = if streaming { mode == 2 } else { mode > 0 };
    md.set_diagrams(on, !streaming);
}

/// The padding as text, to put before a line.
pub fn pad_str() -> &'static str {
    if output_pad() == 0 {
        ""
    } else {
        " "
    }
}

/// One empty line, shared by every block that starts with a gap.
pub fn spacer() -> Lines {
    static SPACER: OnceLock<Lines> = OnceLock::new();
    SPACER.get_or_init(|| vec![String::new()].into()).clone()
}

/// A user's message on its own background.
pub struct UserBlock {
    markdown: Markdown,
    images: Vec<pi_tui::components::Image>,
    gap: bool,
}

impl UserBlock {
    /// Lines before the message's first line of its own (the blank line above it): where
    /// pi marks the message as a prompt, the stop of the previous/next-message keys.
    pub fn mark_offset(&self) -> usize {
        usize::from(self.gap)
    }

    pub fn new(text: &str, theme: &UiTheme) -> Self {
        let mut md = Markdown::new(text.to_string(), theme.markdown.clone())
            .with_padding(output_pad(), 1)
            .with_text_style(theme.fg("userMessageText"));
        if let Some(bg) = theme.bg("userMessageBg") {
            md = md.with_background(bg);
        }
        diagrams(&mut md, false);
        UserBlock {
            markdown: md,
            images: Vec::new(),
            gap: true,
        }
    }

    /// Without the blank line before it (the first message, right under the header).
    #[must_use]
    pub fn without_gap(mut self) -> Self {
        self.gap = false;
        self
    }

    /// Whether the blank line before it is drawn (a block put back above the first message
    /// gives it its gap again).
    pub fn set_gap(&mut self, gap: bool) {
        self.gap = gap;
    }

    /// Attached images, drawn under the text.
    #[must_use]
    pub fn with_images(mut self, images: Vec<pi_tui::components::Image>) -> Self {
        self.images = images;
        self
    }

    pub fn text(&self) -> &str {
        self.markdown.text()
    }
}

impl Component for UserBlock {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if self.gap {
            out.push(spacer());
        }
        self.markdown.render(width, out);
        for i in &mut self.images {
            i.render(width, out);
        }
    }
    fn invalidate(&mut self) {
        self.markdown.invalidate();
        for i in &mut self.images {
            i.invalidate();
        }
    }
}

enum Part {
    Text(Markdown),
    Thinking(Markdown),
}

/// An assistant reply: text as markdown, thinking in italics (or one `Thinking...` line when
/// hidden), and the error or abort text at the end.
pub struct AssistantBlock {
    parts: Vec<(usize, Part)>,
    hide_thinking: bool,
    theme: Arc<UiTheme>,
    error: Option<String>,
    tail: LineCache,
    hidden_line: LineCache,
    /// What a hidden thinking block shows (`ctx.ui.setHiddenThinkingLabel`).
    hidden_label: Arc<str>,
    /// The message calls tools: pi does not mark such a reply as a stop of the
    /// previous/next-message keys.
    tool_calls: bool,
    /// Thinking parts a click showed or hid against `hide_thinking` (by content index).
    hidden_overrides: std::collections::HashMap<usize, bool>,
    /// The lines each thinking part took in the last render (from the block's first line).
    thinking_rows: Vec<(std::ops::Range<usize>, usize)>,
}

/// pi's label for a hidden thinking block.
pub const DEFAULT_HIDDEN_THINKING_LABEL: &str = "Thinking...";

static HIDDEN_LABEL: std::sync::RwLock<Option<Arc<str>>> = std::sync::RwLock::new(None);

/// The label new assistant blocks show for hidden thinking (one for the process: the app
/// sets it when an extension does).
pub fn set_hidden_thinking_label(label: Option<&str>) -> Arc<str> {
    let label: Arc<str> = Arc::from(label.unwrap_or(DEFAULT_HIDDEN_THINKING_LABEL));
    *HIDDEN_LABEL.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(label.clone());
    label
}

fn hidden_thinking_label() -> Arc<str> {
    HIDDEN_LABEL
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .unwrap_or_else(|| Arc::from(DEFAULT_HIDDEN_THINKING_LABEL))
}

impl AssistantBlock {
    pub fn new(theme: Arc<UiTheme>, hide_thinking: bool) -> Self {
        AssistantBlock {
            parts: Vec::new(),
            hide_thinking,
            theme,
            error: None,
            tail: LineCache::default(),
            hidden_line: LineCache::default(),
            hidden_label: hidden_thinking_label(),
            tool_calls: false,
            hidden_overrides: std::collections::HashMap::new(),
            thinking_rows: Vec::new(),
        }
    }

    /// A finished message (history or `message_end`).
    pub fn from_message(message: &AssistantMessage, theme: Arc<UiTheme>, hide_thinking: bool) -> Self {
        let mut b = AssistantBlock::new(theme, hide_thinking);
        b.set_message(message);
        b
    }

    fn part_mut(&mut self, index: usize, thinking: bool) -> &mut Markdown {
        let pos = match self.parts.iter().position(|(i, _)| *i == index) {
            Some(p) => p,
            None => {
                let mut md = Markdown::new(String::new(), self.theme.markdown.clone()).with_padding(output_pad(), 0);
                if !thinking {
                    diagrams(&mut md, true);
                }
                let part = if thinking {
                    Part::Thinking(md.with_text_style(Style {
                        italic: true,
                        ..self.theme.fg("thinkingText")
                    }))
                } else {
                    Part::Text(md)
                };
                self.parts.push((index, part));
                self.parts.len() - 1
            }
        };
        match &mut self.parts[pos].1 {
            Part::Text(m) | Part::Thinking(m) => m,
        }
    }

    pub fn append_text(&mut self, index: usize, delta: &str) {
        let md = self.part_mut(index, false);
        let text = format!("{}{delta}", md.text());
        md.set_text(text);
    }

    pub fn append_thinking(&mut self, index: usize, delta: &str) {
        let md = self.part_mut(index, true);
        let text = format!("{}{delta}", md.text());
        md.set_text(text);
    }

    /// Replace the content with the final message.
    pub fn set_message(&mut self, message: &AssistantMessage) {
        self.tool_calls = message.content.iter().any(|c| matches!(c, Content::ToolCall(_)));
        for (i, c) in message.content.iter().enumerate() {
            match c {
                Content::Text(t) => {
                    let md = self.part_mut(i, false);
                    md.set_text(t.text.trim().to_string());
                    diagrams(md, false);
                }
                Content::Thinking(t) => self.part_mut(i, true).set_text(t.thinking.trim().to_string()),
                _ => {}
            }
        }
        self.error = match message.stop_reason {
            // pi shows its own text for an abort, whatever the provider said.
            StopReason::Aborted => Some("Operation aborted".to_string()),
            StopReason::Error => Some(format!(
                "Error: {}",
                message.error_message.as_deref().unwrap_or("unknown error")
            )),
            _ => None,
        };
        self.tail.clear();
    }

    pub fn set_hide_thinking(&mut self, hide: bool) {
        self.hide_thinking = hide;
        // The setting wins over the blocks clicked open or shut.
        self.hidden_overrides.clear();
    }

    /// A click on line `line` of this block (as last rendered): on a thinking part it shows
    /// or hides that part alone, as pi 1.6 does. True when something changed.
    pub fn click(&mut self, line: usize) -> bool {
        let Some(&(_, index)) = self.thinking_rows.iter().find(|(rows, _)| rows.contains(&line)) else {
            return false;
        };
        let hidden = self.hidden_overrides.get(&index).copied().unwrap_or(self.hide_thinking);
        self.hidden_overrides.insert(index, !hidden);
        true
    }

    pub fn set_hidden_label(&mut self, label: Arc<str>) {
        if self.hidden_label != label {
            self.hidden_label = label;
            self.hidden_line.clear();
        }
    }

    /// A stop of the previous/next-message keys: a reply with something to show and no
    /// tool calls (its first line, the blank line above it, carries pi's prompt mark).
    pub fn is_marked(&self) -> bool {
        !self.tool_calls && self.has_content()
    }

    pub fn has_content(&self) -> bool {
        self.error.is_some()
            || self
                .parts
                .iter()
                .any(|(_, p)| matches!(p, Part::Text(m) | Part::Thinking(m) if !m.text().trim().is_empty()))
    }
}

impl Component for AssistantBlock {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if !self.has_content() {
            return;
        }
        let top = out.len();
        out.push(spacer());
        let mut first = true;
        self.thinking_rows.clear();
        for (index, part) in &mut self.parts {
            match part {
                Part::Text(m) => {
                    if m.text().trim().is_empty() {
                        continue;
                    }
                    if !first {
                        out.push(spacer());
                    }
                    m.render(width, out);
                }
                Part::Thinking(m) => {
                    if m.text().trim().is_empty() {
                        continue;
                    }
                    if !first {
                        out.push(spacer());
                    }
                    let start = out.len() - top;
                    let hidden = self.hidden_overrides.get(index).copied().unwrap_or(self.hide_thinking);
                    if hidden {
                        let lines = match self.hidden_line.get(width) {
                            Some(l) => l,
                            None => {
                                let style = Style {
                                    italic: true,
                                    ..self.theme.fg("thinkingText")
                                };
                                self.hidden_line
                                    .set(width, vec![format!("{}{}", pad_str(), style.paint(&self.hidden_label))])
                            }
                        };
                        out.push(lines);
                    } else {
                        m.render(width, out);
                    }
                    self.thinking_rows.push((start..out.len() - top, *index));
                }
            }
            first = false;
        }
        if let Some(err) = &self.error {
            let lines = match self.tail.get(width) {
                Some(l) => l,
                None => {
                    let mut lines = Vec::new();
                    if !first {
                        lines.push(String::new());
                    }
                    let pad = pad_str();
                    for l in wrap_text(err, width.saturating_sub(pad.len()).max(1)) {
                        lines.push(format!("{pad}{}", self.theme.paint("error", &l)));
                    }
                    self.tail.set(width, lines)
                }
            };
            out.push(lines);
        }
    }

    fn invalidate(&mut self) {
        for (_, p) in &mut self.parts {
            match p {
                Part::Text(m) | Part::Thinking(m) => m.invalidate(),
            }
        }
        self.tail.clear();
        self.hidden_line.clear();
    }
}

/// Plain text in one theme colour (status messages, errors, info blocks).
pub struct Notice {
    text: String,
    token: &'static str,
    theme: Arc<UiTheme>,
    gap: bool,
    /// A blank row right above and below the text too (pi's padded text blocks).
    padded: bool,
    /// A status line: the next status line replaces it while nothing came after it.
    status: bool,
    /// Made again from the session whenever the transcript is rebuilt (cache notices).
    derived: bool,
    /// A cache-warming line: the total so far and the note of the warms it stands for.
    warm: Option<(f64, Option<String>)>,
    /// Text that styles parts of itself, made again from the theme (so a theme change
    /// restyles it); its lines are not painted in `token`.
    build: Option<TextBuilder>,
    cache: LineCache,
}

/// Makes a block's styled text from the theme in use.
pub type TextBuilder = Arc<dyn Fn(&UiTheme) -> String + Send + Sync>;

impl Notice {
    pub fn new(text: impl Into<String>, token: &'static str, theme: Arc<UiTheme>) -> Self {
        Notice {
            text: text.into(),
            token,
            theme,
            gap: true,
            padded: false,
            status: false,
            derived: false,
            warm: None,
            build: None,
            cache: LineCache::default(),
        }
    }

    /// A block whose text `build` styles part by part from the theme (`/session`'s dim
    /// labels); a trailing line break leaves an empty row, as pi's text blocks do.
    pub fn themed(build: TextBuilder, theme: Arc<UiTheme>) -> Self {
        let mut n = Notice::new(String::new(), "text", theme);
        n.build = Some(build);
        n
    }

    /// Leave a blank row right above and under the text as well.
    #[must_use]
    pub fn padded(mut self) -> Self {
        self.padded = true;
        self
    }

    /// A notice the transcript rebuild makes again (so a restyle does not keep the old one).
    #[must_use]
    pub fn derived(mut self) -> Self {
        self.derived = true;
        self
    }

    pub fn is_derived(&self) -> bool {
        self.derived
    }

    /// The dim `Cache warmed: $…` line for one warm.
    pub fn cache_warmed(cost: f64, note: Option<String>, theme: Arc<UiTheme>) -> Self {
        let text = super::cache_notices::warm_text(cost, note.as_deref());
        let mut n = Notice::new(text, "dim", theme).derived();
        n.warm = Some((cost, note));
        n
    }

    /// Count one more warm with the same note into this line; false when this is not a
    /// warming line or its note differs.
    pub fn add_warm(&mut self, cost: f64, note: &Option<String>) -> bool {
        let Some((total, own)) = &mut self.warm else {
            return false;
        };
        if own != note {
            return false;
        }
        *total += cost;
        let text = super::cache_notices::warm_text(*total, note.as_deref());
        self.set_text(text);
        true
    }

    #[must_use]
    pub fn as_status(mut self) -> Self {
        self.status = true;
        self
    }

    pub fn is_status(&self) -> bool {
        self.status
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache.clear();
    }

    #[must_use]
    pub fn without_gap(mut self) -> Self {
        self.gap = false;
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Draw in `theme` from now on (a theme change keeps the chat's notices).
    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        self.theme = theme;
        self.cache.clear();
    }
}

impl Component for Notice {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let lines = match self.cache.get(width) {
            Some(l) => l,
            None => {
                let mut lines = Vec::new();
                if self.gap {
                    lines.push(String::new());
                }
                if self.padded {
                    lines.push(String::new());
                }
                if let Some(build) = &self.build {
                    let text = build(&self.theme);
                    for l in text.split('\n') {
                        for w in wrap_text(l, width.saturating_sub(2).max(1)) {
                            lines.push(format!(" {w}"));
                        }
                    }
                    return out.push(self.cache.set(width, lines));
                }
                for l in self.text.lines() {
                    // One column of padding on each side, as pi's text blocks have: the
                    // text wraps one column before the right edge.
                    for w in wrap_text(l, width.saturating_sub(2).max(1)) {
                        lines.push(format!(" {}", self.theme.paint(self.token, &w)));
                    }
                }
                if self.padded {
                    lines.push(String::new());
                }
                self.cache.set(width, lines)
            }
        };
        out.push(lines);
    }
    fn invalidate(&mut self) {
        self.cache.clear();
    }
}

/// Markdown shown as a block (e.g. `/session`), or between rules under a title (`/hotkeys`).
pub struct InfoBlock {
    text: String,
    markdown: Markdown,
    /// The title, and the rule and title styles.
    title: Option<(String, pi_tui::Style, pi_tui::Style)>,
    /// The startup notice's layout: the markdown unpadded, a blank row under it when titled.
    tight: bool,
}

impl InfoBlock {
    pub fn new(text: impl Into<String>, theme: &UiTheme) -> Self {
        let text = text.into();
        InfoBlock {
            markdown: Markdown::new(text.clone(), theme.markdown.clone()).with_padding(1, 0),
            text,
            title: None,
            tight: false,
        }
    }

    /// pi 1.6's startup notice ("What's New"): a rule, the title and a blank row (no title
    /// rows when `title` is empty), the markdown, a blank row when titled, and a rule.
    pub fn ruled(title: impl Into<String>, text: impl Into<String>, theme: &UiTheme) -> Self {
        let text = text.into();
        InfoBlock {
            markdown: Markdown::new(text.clone(), theme.markdown.clone()).with_padding(1, 0),
            text,
            title: Some((title.into(), theme.fg("border"), theme.fg("accent").bold())),
            tight: true,
        }
    }

    /// A rule, the title, the markdown with a blank line above and below, and a rule.
    pub fn titled(title: impl Into<String>, text: impl Into<String>, theme: &UiTheme) -> Self {
        let text = text.into();
        InfoBlock {
            markdown: Markdown::new(text.clone(), theme.markdown.clone()).with_padding(1, 1),
            text,
            title: Some((title.into(), theme.fg("border"), theme.fg("accent").bold())),
            tight: false,
        }
    }

    /// Draw in `theme` from now on.
    pub fn set_theme(&mut self, theme: &UiTheme) {
        let pad_y = usize::from(self.title.is_some() && !self.tight);
        self.markdown = Markdown::new(self.text.clone(), theme.markdown.clone()).with_padding(1, pad_y);
        if let Some((_, border, accent)) = &mut self.title {
            *border = theme.fg("border");
            *accent = theme.fg("accent").bold();
        }
    }
}

impl Component for InfoBlock {
    fn render(&mut self, width: usize, out: &mut Frame) {
        out.push(spacer());
        if let Some((title, border, accent)) = &self.title {
            let rule = border.paint(&"─".repeat(width));
            out.push_line(rule.clone());
            if !(self.tight && title.is_empty()) {
                out.push_line(format!(" {}", accent.paint(title)));
                out.push_line(String::new());
            }
            self.markdown.render(width, out);
            if self.tight && !title.is_empty() {
                out.push_line(String::new());
            }
            out.push_line(rule);
            return;
        }
        self.markdown.render(width, out);
    }
    fn invalidate(&mut self) {
        self.markdown.invalidate();
    }
}
