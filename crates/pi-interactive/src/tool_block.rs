//! A tool call and its result: a coloured box (pending / success / error) with a title built
//! from the arguments and a collapsed preview of the output (Ctrl+O expands all).

use std::sync::Arc;

use pi_ai::Content;
use pi_tui::components::{Capabilities, Image};
use pi_tui::{apply_background, truncate_to_width, wrap_text, Component, Frame, LineCache};
use serde_json::Value;

use super::chat::spacer;
use super::theme::UiTheme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    Pending,
    Success,
    Error,
}

pub struct ToolBlock {
    pub id: String,
    name: String,
    args: Value,
    status: ToolStatus,
    output: String,
    expanded: bool,
    /// Shown under the output (exit code, cancelled, ...).
    footnote: Option<String>,
    theme: Arc<UiTheme>,
    cache: LineCache,
    images: Vec<Image>,
    /// A user's `!` command: framed by border lines, the last 20 lines shown.
    user: bool,
    started: std::time::Instant,
    /// Wrapped-line count of the output's complete lines, kept across appends so a
    /// collapsed tail preview reads only what was added.
    wraps: WrapCount,
    /// An edit's preview (its diff, or the error it will fail with) and the arguments it
    /// was worked out for.
    edit_preview: Option<Result<String, String>>,
    preview_key: Option<String>,
    /// A `!` command's output: bytes scanned so far and the line breaks among them.
    newlines: (usize, usize),
    /// An extension tool's own rendering of the call and the result (`renderCall` /
    /// `renderResult`), when it has one.
    pub ext: Option<super::extension_ui::tool_render::ToolRender>,
    details: Option<Value>,
}

/// How many wrapped lines the output's first `bytes` bytes (whole lines) make at `width`.
#[derive(Debug, Default, Clone, Copy)]
struct WrapCount {
    width: usize,
    bytes: usize,
    lines: usize,
    /// Source lines wrapped so far (what rendering cost).
    #[cfg(test)]
    wrapped: usize,
}

/// Inline images of a content list, drawn with `caps` (a text placeholder without a protocol).
pub fn content_images(content: &[Content], caps: Capabilities) -> Vec<Image> {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Image(i) => Some(Image::new(i.data.clone(), i.mime_type.clone(), caps)),
            _ => None,
        })
        .collect()
}

/// The text of a result's content (images are drawn separately).
pub fn content_text(content: &[Content]) -> String {
    let mut out = String::new();
    for c in content {
        if let Content::Text(t) = c {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&t.text);
        }
    }
    out
}

/// The lines under a finished `!` command, coloured as 1.6: a cancel and a cut output warn,
/// an exit code other than 0 is an error. `None` when there is nothing to say.
pub fn bash_notes(t: &UiTheme, exit_code: Option<i32>, cancelled: bool, full_output: Option<&str>) -> Option<String> {
    let mut notes = Vec::new();
    if cancelled {
        notes.push(t.paint("warning", "(cancelled)"));
    } else if let Some(c) = exit_code.filter(|c| *c != 0) {
        notes.push(t.paint("error", &format!("(exit {c})")));
    }
    if let Some(p) = full_output {
        notes.push(t.paint("warning", &format!("Output truncated. Full output: {p}")));
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// Logical lines of a `!` command's output shown until expanded.
const USER_PREVIEW: usize = 20;

fn arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Show paths under the home folder with `~`.
fn short_path(p: &str) -> String {
    if let Some(home) = std::env::var_os("HOME") {
        let home = home.to_string_lossy().to_string();
        if !home.is_empty() {
            if let Some(rest) = p.strip_prefix(&home) {
                return format!("~{rest}");
            }
        }
    }
    p.to_string()
}

/// Lines of collapsed preview per tool, and whether the tail (not the head) is shown.
fn preview(name: &str) -> (usize, bool) {
    match name {
        "bash" => (5, true),
        "read" | "write" => (10, false),
        "ls" | "find" => (20, false),
        "grep" => (15, false),
        _ => (10, false),
    }
}

impl ToolBlock {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        args: Value,
        theme: Arc<UiTheme>,
        expanded: bool,
    ) -> Self {
        ToolBlock {
            id: id.into(),
            name: name.into(),
            args,
            status: ToolStatus::Pending,
            output: String::new(),
            expanded,
            footnote: None,
            theme,
            cache: LineCache::default(),
            images: Vec::new(),
            user: false,
            started: std::time::Instant::now(),
            wraps: WrapCount::default(),
            newlines: (0, 0),
            edit_preview: None,
            preview_key: None,
            ext: None,
            details: None,
        }
    }

    /// A block for a user's `!` / `!!` command.
    pub fn user_bash(id: impl Into<String>, args: Value, theme: Arc<UiTheme>, expanded: bool) -> Self {
        let mut b = ToolBlock::new(id, "bash", args, theme, expanded);
        b.user = true;
        b
    }

    pub fn status(&self) -> ToolStatus {
        self.status
    }

    /// The tool call's id (`user-bash-N` for a `!` command).
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn args(&self) -> &Value {
        &self.args
    }

    pub fn output(&self) -> &str {
        &self.output
    }

    /// A `!command` typed by the user (pi 1.6's bash block takes no clicks).
    pub fn is_user_bash(&self) -> bool {
        self.user
    }

    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// The result's details, for an extension's result renderer.
    pub fn set_details(&mut self, details: Option<Value>) {
        self.details = details;
    }

    pub fn details(&self) -> Option<&Value> {
        self.details.as_ref()
    }

    /// The extension's lines changed: draw again.
    pub fn invalidate_render(&mut self) {
        self.cache.clear();
    }

    pub fn set_args(&mut self, args: Value) {
        self.args = args;
        self.cache.clear();
    }

    pub fn set_output(&mut self, output: String) {
        self.output = output;
        self.wraps = WrapCount::default();
        self.newlines = (0, 0);
        self.cache.clear();
    }

    /// More live output after what is shown (a `!` command's next chunk).
    pub fn append_output(&mut self, chunk: &str) {
        self.output.push_str(chunk);
        self.cache.clear();
    }

    /// The tool started running now (the block may have appeared while its call streamed).
    pub fn mark_started(&mut self) {
        self.started = std::time::Instant::now();
    }

    /// The run time under a live bash tool's output (`Took 1.2s`).
    pub fn finish_timed(&mut self, output: String, is_error: bool) {
        if self.name == "bash" && !self.user {
            let secs = self.started.elapsed().as_secs_f64();
            self.footnote = Some(format!("Took {secs:.1}s"));
        }
        self.finish(output, is_error);
    }

    pub fn finish(&mut self, output: String, is_error: bool) {
        self.output = output;
        self.wraps = WrapCount::default();
        self.newlines = (0, 0);
        self.status = if is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Success
        };
        self.cache.clear();
    }

    pub fn set_images(&mut self, images: Vec<Image>) {
        self.images = images;
    }

    /// `terminal.imageWidthCells` changed: the images shown are fitted to the new width.
    pub fn set_image_width(&mut self, cols: usize) {
        for image in &mut self.images {
            image.set_max_cols(cols);
        }
        self.cache.clear();
    }

    pub fn set_footnote(&mut self, note: Option<String>) {
        self.footnote = note;
        self.cache.clear();
    }

    pub fn set_expanded(&mut self, expanded: bool) {
        if self.expanded != expanded {
            self.expanded = expanded;
            self.cache.clear();
        }
    }

    fn title(&self) -> String {
        let t = &self.theme;
        let a = &self.args;
        let bold = |s: &str| t.bold("toolTitle", s);
        match self.name.as_str() {
            "bash" if self.user => {
                let command = arg(a, "command");
                let shown = command.strip_prefix('!').unwrap_or(command);
                t.bold(self.user_colour(), &format!("$ {shown}"))
            }
            "bash" => bold(&format!("$ {}", arg(a, "command"))),
            "read" => {
                let mut s = format!("{} {}", bold("read"), t.paint("accent", &short_path(arg(a, "path"))));
                let offset = a.get("offset").and_then(Value::as_u64);
                let limit = a.get("limit").and_then(Value::as_u64);
                if offset.is_some() || limit.is_some() {
                    let start = offset.unwrap_or(1);
                    let range = match limit {
                        Some(l) => format!(":{start}-{}", start + l.saturating_sub(1)),
                        None => format!(":{start}"),
                    };
                    s.push_str(&t.paint("warning", &range));
                }
                s
            }
            "write" | "edit" | "ls" => {
                let p = arg(a, "path");
                let p = if p.is_empty() { "." } else { p };
                format!("{} {}", bold(&self.name), t.paint("accent", &short_path(p)))
            }
            "find" | "grep" => {
                let p = arg(a, "path");
                let p = if p.is_empty() { "." } else { p };
                let pattern = arg(a, "pattern");
                let pat = if self.name == "grep" {
                    format!("/{pattern}/")
                } else {
                    pattern.to_string()
                };
                format!(
                    "{} {} {}",
                    bold(&self.name),
                    t.paint("accent", &pat),
                    t.paint("toolOutput", &format!("in {}", short_path(p)))
                )
            }
            _ => {
                let args = if a.is_null() { String::new() } else { a.to_string() };
                format!("{} {}", bold(&self.name), t.paint("muted", &args))
            }
        }
    }

    /// A `!` command's colour (rules and title); a `!!` one, kept out of the context, is dim.
    fn user_colour(&self) -> &'static str {
        // `!!` commands (kept out of the model's context) are drawn dim.
        if self.args.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
            "dim"
        } else {
            "bashMode"
        }
    }

    /// The colour of the output: pi keeps a failed tool's output in the output colour (the
    /// block's background tells the failure), except a file change's error.
    fn output_token(&self) -> &'static str {
        let changes_files = matches!(self.name.as_str(), "write" | "edit") && !self.user;
        if self.user {
            // A `!` command's output is muted whatever its exit code; the code says it.
            "muted"
        } else if self.status == ToolStatus::Error && changes_files {
            "error"
        } else {
            "toolOutput"
        }
    }

    /// The content a write puts in its file: the first ten lines until expanded.
    fn write_body(&self, inner: usize) -> Vec<String> {
        let t = &self.theme;
        let content = arg(&self.args, "content").replace("\r\n", "\n");
        let mut lines: Vec<&str> = content.split('\n').collect();
        while lines.last() == Some(&"") {
            lines.pop();
        }
        let total = lines.len();
        let shown = if self.expanded { total } else { total.min(10) };
        let mut out: Vec<String> = lines[..shown]
            .iter()
            .flat_map(|l| wrap_text(&l.replace('\t', "   "), inner.max(1)))
            .map(|l| t.paint("toolOutput", &l))
            .collect();
        if shown < total {
            out.push(t.paint(
                "muted",
                &format!("... ({} more lines, {total} total, ctrl+o to expand)", total - shown),
            ));
        }
        out
    }

    /// The collapsed tail preview of plain output (a bash command's last lines): wraps the
    /// lines added since the last render and the few shown, not the whole output.
    fn tail_body(&mut self, inner: usize, max: usize) -> Vec<String> {
        let width = inner.max(1);
        let wrap = |l: &str| wrap_text(&l.replace('\t', "   "), width);
        let text = self.output.trim_end_matches('\n');
        if text.trim().is_empty() {
            return Vec::new();
        }
        let complete = text.rfind('\n').map_or(0, |i| i + 1);
        if self.wraps.width != width || self.wraps.bytes > complete {
            self.wraps = WrapCount {
                width,
                ..WrapCount::default()
            };
        }
        for l in text[self.wraps.bytes..complete].split_terminator('\n') {
            self.wraps.lines += wrap(l).len();
            #[cfg(test)]
            {
                self.wraps.wrapped += 1;
            }
        }
        self.wraps.bytes = complete;
        // The last lines, from the end back until `max` wrapped lines are gathered.
        let mut tail: Vec<String> = Vec::new();
        for l in text.rsplit('\n') {
            let mut w = wrap(l);
            w.extend(tail);
            tail = w;
            if tail.len() > max {
                break;
            }
        }
        let last = wrap(&text[complete..]).len();
        let total = self.wraps.lines + last;
        let token = self.output_token();
        let t = &self.theme;
        if total <= max {
            return tail.iter().map(|l| t.paint(token, l)).collect();
        }
        let hidden = total - max;
        let mut out = vec![t.paint("muted", &format!("... ({hidden} earlier lines, ctrl+o to expand)"))];
        out.extend(tail[tail.len() - max..].iter().map(|l| t.paint(token, l)));
        out
    }

    /// A `!` command as 1.6 frames it, down to its output: the rule in the command's colour,
    /// the command, its output (collapsed: the last 20 logical lines, cut to 20 screen lines).
    fn user_head(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        // The rules keep the command's colour whatever its exit code, as 1.6.
        let colour = self.user_colour();
        let border = t.paint(colour, &"─".repeat(width));
        let pad = super::chat::pad_str();
        let inner = width.saturating_sub(pad.len()).max(1);
        let padded = |l: &str| format!("{pad}{}", truncate_to_width(l, inner, "…"));
        let mut lines = vec![border];
        let title = t.bold(colour, &format!("$ {}", arg(&self.args, "command")));
        lines.extend(wrap_text(&title, inner).iter().map(|l| format!("{pad}{l}")));
        // Lines are counted as they arrive, so a long live output is not read again per frame.
        let (scanned, newlines) = if self.newlines.0 <= self.output.len() {
            self.newlines
        } else {
            (0, 0)
        };
        let count = newlines
            + self.output.as_bytes()[scanned..]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
        self.newlines = (self.output.len(), count);
        let total = self.user_line_count();
        if total > 0 {
            let mut shown: Vec<&str> = if self.expanded {
                self.output.split('\n').collect()
            } else {
                self.output.rsplitn(USER_PREVIEW + 1, '\n').take(USER_PREVIEW).collect()
            };
            if !self.expanded {
                shown.reverse();
            }
            // The output starts with a blank line, which the collapsed cut may drop too.
            let mut body = vec![String::new()];
            for l in shown {
                let l = l.strip_suffix('\r').unwrap_or(l);
                let l = t.paint("muted", &l.replace('\t', "   "));
                body.extend(wrap_text(&l, inner));
            }
            if !self.expanded && body.len() > USER_PREVIEW {
                body.drain(..body.len() - USER_PREVIEW);
            }
            lines.extend(
                body.iter()
                    .map(|l| if l.is_empty() { String::new() } else { padded(l) }),
            );
        }
        lines
    }

    /// The output's logical lines (as counted by the last `user_head`).
    fn user_line_count(&self) -> usize {
        if self.output.is_empty() {
            0
        } else {
            self.newlines.1 + 1
        }
    }

    /// The rest of a `!` command's frame: while it runs, 1.6's loader; once it ended, how
    /// many lines are hidden with the expand key, then the exit code or cancel note; the
    /// closing rule.
    fn user_tail(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let colour = self.user_colour();
        let pad = super::chat::pad_str();
        let inner = width.saturating_sub(pad.len()).max(1);
        let padded = |l: &str| format!("{pad}{}", truncate_to_width(l, inner, "…"));
        let hidden = self.user_line_count().saturating_sub(USER_PREVIEW);
        let mut lines = Vec::new();
        if self.status == ToolStatus::Pending {
            // 1.6's loader while the command runs: a blank line, then the spinner (its frame
            // from the time it has run, so every redraw moves it on) and the cancel keys.
            let frames = pi_tui::components::DEFAULT_FRAMES;
            let step = pi_tui::components::DEFAULT_INTERVAL.as_millis().max(1);
            let frame = frames[(self.started.elapsed().as_millis() / step) as usize % frames.len()];
            let keys = pi_tui::keybindings().keys("tui.select.cancel").join("/");
            let message = format!("Running... ({keys} to cancel)");
            lines.push(String::new());
            lines.push(padded(&format!(
                "{} {}",
                t.paint(colour, frame),
                t.paint("muted", &message)
            )));
        } else {
            let mut notes = Vec::new();
            if hidden > 0 {
                let keys = pi_tui::keybindings().keys("app.tools.expand").join("/");
                let (open, what) = if self.expanded {
                    ("(".to_string(), "to collapse")
                } else {
                    (format!("... {hidden} more lines ("), "to expand")
                };
                notes.push(format!(
                    "{}{}{}{}",
                    t.paint("muted", &open),
                    t.paint("dim", &keys),
                    t.paint("muted", &format!(" {what}")),
                    t.paint("muted", ")")
                ));
            }
            if let Some(note) = &self.footnote {
                // Notes styled by their maker keep their colours.
                notes.extend(note.lines().map(|l| {
                    if l.contains('\x1b') {
                        l.to_string()
                    } else {
                        t.paint("muted", l)
                    }
                }));
            }
            if !notes.is_empty() {
                lines.push(String::new());
                lines.extend(notes.iter().map(|l| format!("{pad}{l}")));
            }
        }
        lines.push(t.paint(colour, &"─".repeat(width)));
        lines
    }

    /// The arguments are complete (the reply that carries the call ended): an edit works
    /// out its preview now, as 1.6 does, once per set of arguments. Returns the arguments
    /// to preview and their key when one is due; the file is read off the UI thread and
    /// the outcome handed to [`ToolBlock::set_edit_preview`].
    pub fn args_complete(&mut self) -> Option<(String, Value)> {
        if self.name != "edit" || self.user || self.status != ToolStatus::Pending {
            return None;
        }
        let key = self.args.to_string();
        if self.preview_key.as_deref() == Some(key.as_str()) {
            return None;
        }
        self.preview_key = Some(key.clone());
        Some((key, self.args.clone()))
    }

    /// An edit's preview worked out for the arguments `key` names: kept unless the
    /// arguments changed since, or the edit already finished.
    pub fn set_edit_preview(&mut self, key: &str, preview: Option<Result<String, String>>) {
        if self.preview_key.as_deref() != Some(key) || self.status != ToolStatus::Pending {
            return;
        }
        self.edit_preview = preview;
        self.cache.clear();
    }

    /// What the edit's box shows under its title: the result's diff once it succeeded, else
    /// the preview (the diff it will make, or the error it will fail with).
    fn edit_box(&self, inner: usize) -> Option<Vec<String>> {
        let result_diff = self
            .details
            .as_ref()
            .filter(|_| self.status == ToolStatus::Success)
            .and_then(|d| d.get("diff"))
            .and_then(Value::as_str);
        let preview = self.edit_preview.as_ref().map(|p| p.as_ref().map(String::as_str));
        let lines = match (result_diff, preview) {
            (Some(diff), _) | (None, Some(Ok(diff))) => super::diff_view::render(diff, &self.theme),
            (None, Some(Err(e))) => e.split('\n').map(|l| self.theme.paint("error", l)).collect(),
            (None, None) => return None,
        };
        Some(lines.iter().flat_map(|l| wrap_text(l, inner.max(1))).collect())
    }

    /// The box's colour: how the preview went once there is one (so a failing edit shows
    /// red before it ran), else how the call went.
    fn edit_bg(&self) -> &'static str {
        match &self.edit_preview {
            Some(Ok(_)) => "toolSuccessBg",
            Some(Err(_)) => "toolErrorBg",
            None => match self.status {
                ToolStatus::Pending => "toolPendingBg",
                ToolStatus::Success => "toolSuccessBg",
                ToolStatus::Error => "toolErrorBg",
            },
        }
    }

    /// A failed edit's error under its box (no background), unless the preview said it.
    fn edit_error_lines(&self, inner: usize) -> Vec<String> {
        let text = self.output.trim_end_matches('\n');
        let said = matches!(&self.edit_preview, Some(Err(e)) if e == text);
        if self.status != ToolStatus::Error || text.is_empty() || said {
            return Vec::new();
        }
        let mut out = vec![String::new()];
        for l in text.split('\n') {
            out.extend(wrap_text(&self.theme.paint("error", l), inner.max(1)));
        }
        out
    }

    fn body(&mut self, inner: usize) -> Vec<String> {
        let (max, tail) = if self.user { (20, true) } else { preview(&self.name) };
        let failed = self.status == ToolStatus::Error;
        if !self.user {
            match self.name.as_str() {
                // A read that worked is its title line until expanded.
                "read" if !self.expanded && !failed => return Vec::new(),
                // A write shows what it writes; its result only when it failed.
                "write" if !failed => return self.write_body(inner),
                "edit" => {
                    if let Some(lines) = self.edit_box(inner) {
                        return lines;
                    }
                    // A failed edit's error goes under the box (`edit_error_lines`).
                    if failed {
                        return Vec::new();
                    }
                }
                _ => {}
            }
        }
        // Write and edit blocks show their arguments, not the output.
        let shows_args = self.name == "edit" && self.status == ToolStatus::Success;
        let plain = !shows_args;
        if tail && plain && !self.expanded {
            return self.tail_body(inner, max);
        }
        let t = &self.theme;
        let text = if self.name == "edit" && self.status == ToolStatus::Success {
            edit_diff(&self.args, t)
        } else {
            self.output.clone()
        };
        let text = text.trim_end_matches('\n');
        if text.trim().is_empty() {
            return Vec::new();
        }
        let mut lines: Vec<String> = Vec::new();
        for l in text.split('\n') {
            let l = l.replace('\t', "   ");
            lines.extend(wrap_text(&l, inner.max(1)));
        }
        let (max, tail) = if self.user { (20, true) } else { preview(&self.name) };
        let token = self.output_token();
        let paint = |l: &str| {
            if self.name == "edit" {
                l.to_string()
            } else {
                t.paint(token, l)
            }
        };
        if self.expanded || lines.len() <= max {
            return lines.iter().map(|l| paint(l)).collect();
        }
        let hidden = lines.len() - max;
        let which = if tail { "earlier" } else { "more" };
        let hint = t.paint("muted", &format!("... ({hidden} {which} lines, ctrl+o to expand)"));
        if tail {
            let mut out = vec![hint];
            out.extend(lines[hidden..].iter().map(|l| paint(l)));
            out
        } else {
            let mut out: Vec<String> = lines[..max].iter().map(|l| paint(l)).collect();
            out.push(hint);
            out
        }
    }
}

/// The edit's old and new text as removed / added lines.
fn edit_diff(args: &Value, t: &UiTheme) -> String {
    let mut out = Vec::new();
    let pairs: Vec<(String, String)> = match args.get("edits").and_then(Value::as_array) {
        Some(edits) => edits
            .iter()
            .map(|e| (arg(e, "oldText").to_string(), arg(e, "newText").to_string()))
            .collect(),
        None => vec![(arg(args, "oldText").to_string(), arg(args, "newText").to_string())],
    };
    for (old, new) in pairs {
        for l in old.lines() {
            out.push(t.paint("toolDiffRemoved", &format!("-{l}")));
        }
        for l in new.lines() {
            out.push(t.paint("toolDiffAdded", &format!("+{l}")));
        }
    }
    out.join("\n")
}

impl Component for ToolBlock {
    fn render(&mut self, width: usize, out: &mut Frame) {
        out.push(spacer());
        if self.user && self.status == ToolStatus::Pending {
            // The spinner moves on every frame: the part above it is kept until more
            // output comes.
            let head = match self.cache.get(width) {
                Some(head) => head,
                None => {
                    let head = self.user_head(width);
                    self.cache.set(width, head)
                }
            };
            out.push(head);
            out.push(self.user_tail(width).into());
            return;
        }
        if let Some(lines) = self.cache.get(width) {
            out.push(lines);
            for i in &mut self.images {
                i.render(width, out);
            }
            return;
        }
        if self.user {
            let mut lines = self.user_head(width);
            lines.extend(self.user_tail(width));
            out.push(self.cache.set(width, lines));
            return;
        }
        // An edit draws its own box, as 1.6's edit renderer does.
        let edit_shell = self.name == "edit" && self.ext.is_none();
        let bg_token = if edit_shell {
            self.edit_bg()
        } else {
            match self.status {
                ToolStatus::Pending => "toolPendingBg",
                ToolStatus::Success => "toolSuccessBg",
                ToolStatus::Error => "toolErrorBg",
            }
        };
        let pad = super::chat::pad_str();
        let inner = width.saturating_sub(2 * pad.len()).max(1);
        let mut body = vec![String::new()];
        match self.ext.as_ref().and_then(|e| e.call_lines(inner)) {
            Some(call) => body.extend(call.iter().cloned()),
            None => body.extend(wrap_text(&self.title(), inner)),
        }
        match self.ext.as_ref().and_then(|e| e.result_lines(inner)) {
            Some(result) => body.extend(result.iter().cloned()),
            None => {
                let output = self.body(inner);
                if !output.is_empty() {
                    body.push(String::new());
                    body.extend(output);
                }
            }
        }
        if let Some(note) = &self.footnote {
            body.push(String::new());
            body.push(self.theme.paint("muted", note));
        }
        body.push(String::new());
        let bg = self.theme.bg(bg_token);
        let mut lines: Vec<String> = body
            .into_iter()
            .map(|l| {
                let l = format!("{pad}{}", truncate_to_width(&l, inner, "…"));
                match bg {
                    Some(c) => apply_background(&l, width, c),
                    None => l,
                }
            })
            .collect();
        if edit_shell {
            let below = self.edit_error_lines(inner);
            lines.extend(below.iter().map(|l| {
                if l.is_empty() {
                    String::new()
                } else {
                    format!("{pad}{l}")
                }
            }));
        }
        out.push(self.cache.set(width, lines));
        for i in &mut self.images {
            i.render(width, out);
        }
    }

    fn invalidate(&mut self) {
        self.cache.clear();
        for i in &mut self.images {
            i.invalidate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::{render_lines, strip_ansi};
    use serde_json::json;

    fn plain(b: &mut ToolBlock, w: usize) -> Vec<String> {
        render_lines(b, w)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_string())
            .collect()
    }

    #[test]
    fn bash_preview_shows_the_last_lines_until_expanded() {
        let theme = Arc::new(UiTheme::fallback());
        let mut b = ToolBlock::new("1", "bash", json!({"command": "seq 12"}), theme, false);
        let out: Vec<String> = (1..=12).map(|n| n.to_string()).collect();
        b.finish(out.join("\n"), false);
        let lines = plain(&mut b, 50);
        assert_eq!(
            lines,
            vec![
                "",
                "",
                " $ seq 12",
                "",
                " ... (7 earlier lines, ctrl+o to expand)",
                " 8",
                " 9",
                " 10",
                " 11",
                " 12",
                ""
            ]
        );
        b.set_expanded(true);
        let lines = plain(&mut b, 50);
        assert!(lines.contains(&" 1".to_string()));
        assert_eq!(lines.len(), 2 + 2 + 12 + 1);
    }

    /// The app's default keys (the expand key is Ctrl+O).
    fn bind_expand_key() {
        pi_tui::set_keybindings(super::super::keys::load_keybindings(std::path::Path::new("/nonexistent")).0);
    }

    #[test]
    fn a_long_bang_command_says_what_is_hidden_below_its_output() {
        bind_expand_key();
        let theme = Arc::new(UiTheme::fallback());
        let mut b = ToolBlock::user_bash("u", json!({"command": "seq 30"}), theme, false);
        let out: String = (1..=30).map(|n| format!("{n}\n")).collect();
        b.append_output(&out);
        // While it runs nothing is said about hidden lines.
        let running = plain(&mut b, 40);
        assert!(!running.iter().any(|l| l.contains("more lines")), "{running:#?}");
        b.finish(out, false);
        let lines = plain(&mut b, 40);
        let rule = "─".repeat(40);
        let mut want = vec![String::new(), rule.clone(), " $ seq 30".into()];
        want.extend((12..=30).map(|n| format!(" {n}")));
        want.extend([
            String::new(),
            String::new(),
            " ... 11 more lines (ctrl+o to expand)".into(),
            rule.clone(),
        ]);
        assert_eq!(lines, want);
        b.set_expanded(true);
        let lines = plain(&mut b, 40);
        let mut want = vec![String::new(), rule.clone(), " $ seq 30".into(), String::new()];
        want.extend((1..=30).map(|n| format!(" {n}")));
        want.extend([String::new(), String::new(), " (ctrl+o to collapse)".into(), rule]);
        assert_eq!(lines, want);
    }

    #[test]
    fn the_hidden_count_and_the_exit_code_share_the_status_lines() {
        bind_expand_key();
        let theme = Arc::new(UiTheme::fallback());
        let mut b = ToolBlock::user_bash("u", json!({"command": "x"}), theme, false);
        let out: String = (1..=25).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n");
        b.finish(out, true);
        b.set_footnote(Some("(exit 2)".into()));
        let lines = plain(&mut b, 40);
        let n = lines.len();
        assert_eq!(lines[n - 5], " line 25");
        assert_eq!(lines[n - 4], "");
        assert_eq!(lines[n - 3], " ... 5 more lines (ctrl+o to expand)");
        assert_eq!(lines[n - 2], " (exit 2)");
        // A short output keeps its leading blank line and needs no hint.
        b.finish("a\nb\n".into(), false);
        b.set_footnote(None);
        let lines = plain(&mut b, 40);
        assert_eq!(lines[3..], ["", " a", " b", "", &"─".repeat(40)]);
    }

    /// What the app does when the reply ends: the preview worked out for the block's due
    /// arguments (on the blocking pool there), handed back to it.
    fn preview_now(b: &mut ToolBlock, cwd: &std::path::Path) {
        let (key, args) = b.args_complete().expect("a preview is due");
        b.set_edit_preview(&key, pi_tools::edit::preview(&args, cwd));
        assert!(b.args_complete().is_none(), "once per set of arguments");
    }

    #[test]
    fn an_edit_shows_its_preview_until_the_result_and_an_unforeseen_error_under_its_box() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").expect("file");
        let theme = Arc::new(UiTheme::fallback());
        let args = json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]});
        let mut b = ToolBlock::new("1", "edit", args, theme, false);
        assert_eq!(plain(&mut b, 40)[2..], [" edit a.txt", ""]);
        preview_now(&mut b, dir.path());
        let lines = plain(&mut b, 40);
        assert!(
            lines.contains(&" -2 two".to_string()) && lines.contains(&" +2 2".to_string()),
            "{lines:#?}"
        );
        assert_eq!(b.edit_bg(), "toolSuccessBg");
        // The file changed in between: the edit failed after all. The preview stays in the
        // box and the error follows under it, without the box's background.
        b.finish("Could not find the exact text in a.txt.".into(), true);
        let lines = render_lines(&mut b, 80);
        let last = lines.last().expect("a line");
        assert_eq!(strip_ansi(last), " Could not find the exact text in a.txt.");
        assert!(!last.contains("\x1b[48"), "{last:?}");
        assert_eq!(b.edit_bg(), "toolSuccessBg");
        // An edit the preview already said would fail says it once.
        let args = json!({"path": "nope.txt", "oldText": "a", "newText": "b"});
        let mut b = ToolBlock::new("2", "edit", args, Arc::new(UiTheme::fallback()), false);
        preview_now(&mut b, dir.path());
        assert_eq!(b.edit_bg(), "toolErrorBg");
        b.finish("Could not edit file: nope.txt. Error code: ENOENT.".into(), true);
        let lines = plain(&mut b, 60);
        let said = lines.iter().filter(|l| l.contains("Error code: ENOENT")).count();
        assert_eq!(said, 1, "{lines:#?}");
    }

    #[test]
    fn read_title_shows_path_and_range() {
        let theme = Arc::new(UiTheme::fallback());
        let mut b = ToolBlock::new(
            "1",
            "read",
            json!({"path": "src/a.rs", "offset": 5, "limit": 10}),
            theme,
            false,
        );
        let lines = plain(&mut b, 40);
        assert_eq!(lines[2], " read src/a.rs:5-14");
    }

    /// What the preview showed before it was made incremental: every line wrapped.
    fn full_wrap_preview(text: &str, width: usize, max: usize) -> Vec<String> {
        let text = text.trim_end_matches('\n');
        if text.trim().is_empty() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for l in text.split('\n') {
            lines.extend(wrap_text(&l.replace('\t', "   "), width));
        }
        if lines.len() <= max {
            return lines;
        }
        let hidden = lines.len() - max;
        let mut out = vec![format!("... ({hidden} earlier lines, ctrl+o to expand)")];
        out.extend(lines[hidden..].iter().cloned());
        out
    }

    #[test]
    fn a_growing_command_output_previews_as_before_and_wraps_only_what_was_added() {
        let theme = Arc::new(UiTheme::fallback());
        let mut b = ToolBlock::user_bash("u", json!({"command": "x"}), theme, false);
        let chunks = [
            "short\n",
            "",
            "\tindented\n\n",
            "a line long enough to wrap at thirty columns wide\n",
            "partial",
            " line\n",
            "\n\n",
            "x\ny\nz",
        ];
        let mut all = String::new();
        for round in 0..40 {
            for c in chunks {
                b.append_output(c);
                all.push_str(c);
                let shown: Vec<String> = b.tail_body(29, 20).iter().map(|l| strip_ansi(l)).collect();
                assert_eq!(shown, full_wrap_preview(&all, 29, 20), "round {round} after {c:?}");
            }
        }
        // Each source line was wrapped once for the count, not once per render.
        let source_lines = all.trim_end_matches('\n').matches('\n').count();
        assert_eq!(b.wraps.wrapped, source_lines);
        // A replaced output is counted afresh.
        b.set_output("one\ntwo".into());
        let shown: Vec<String> = b.tail_body(29, 20).iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(shown, ["one", "two"]);
    }
}
