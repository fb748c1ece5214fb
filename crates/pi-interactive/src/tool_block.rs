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

    fn body(&mut self, inner: usize) -> Vec<String> {
        let (max, tail) = if self.user { (20, true) } else { preview(&self.name) };
        let failed = self.status == ToolStatus::Error;
        if !self.user {
            match self.name.as_str() {
                // A read that worked is its title line until expanded.
                "read" if !self.expanded && !failed => return Vec::new(),
                // A write shows what it writes; its result only when it failed.
                "write" if !failed => return self.write_body(inner),
                "edit" if !failed => {
                    if let Some(diff) = self
                        .details
                        .as_ref()
                        .and_then(|d| d.get("diff"))
                        .and_then(Value::as_str)
                    {
                        return super::diff_view::render(diff, &self.theme)
                            .iter()
                            .flat_map(|l| wrap_text(l, inner.max(1)))
                            .collect();
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
        if let Some(lines) = self.cache.get(width) {
            out.push(lines);
            for i in &mut self.images {
                i.render(width, out);
            }
            return;
        }
        if self.user {
            // The rules keep the command's colour whatever its exit code, as 1.6.
            let border_token = self.user_colour();
            let border = self.theme.paint(border_token, &"─".repeat(width));
            let pad = super::chat::pad_str();
            let inner = width.saturating_sub(pad.len()).max(1);
            let mut lines = vec![border.clone()];
            let title = self
                .theme
                .bold(border_token, &format!("$ {}", arg(&self.args, "command")));
            for l in wrap_text(&title, inner) {
                lines.push(format!("{pad}{l}"));
            }
            let output = self.body(inner);
            if !output.is_empty() {
                lines.push(String::new());
                lines.extend(
                    output
                        .into_iter()
                        .map(|l| format!("{pad}{}", truncate_to_width(&l, inner, "…"))),
                );
                // The output's closing line break, as pi keeps it.
                lines.push(String::new());
            }
            if let Some(note) = &self.footnote {
                // The exit code or cancel note sits right above the closing rule.
                lines.push(String::new());
                for l in note.lines() {
                    // Notes styled by their maker keep their colours.
                    let l = if l.contains('\x1b') {
                        l.to_string()
                    } else {
                        self.theme.paint("muted", l)
                    };
                    lines.push(format!("{pad}{l}"));
                }
            }
            lines.push(border);
            out.push(self.cache.set(width, lines));
            return;
        }
        let bg_token = match self.status {
            ToolStatus::Pending => "toolPendingBg",
            ToolStatus::Success => "toolSuccessBg",
            ToolStatus::Error => "toolErrorBg",
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
        let lines: Vec<String> = body
            .into_iter()
            .map(|l| {
                let l = format!("{pad}{}", truncate_to_width(&l, inner, "…"));
                match bg {
                    Some(c) => apply_background(&l, width, c),
                    None => l,
                }
            })
            .collect();
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
