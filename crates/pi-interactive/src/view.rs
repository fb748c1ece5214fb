//! The screen, top to bottom: transcript, queued messages, status line, editor, footer.
//! Also builds the transcript of an existing session.

use std::collections::HashMap;
use std::sync::Arc;

use pi_agent::AgentMessage;
use pi_ai::{Content, Message};
use pi_tui::components::{Capabilities, Editor, Loader};
use pi_tui::{truncate_to_width, Component, Container, Frame, LineCache, Lines};

use super::chat::{AssistantBlock, UserBlock};
use super::extension_ui::screen::ExtensionScreen;
use super::footer::Footer;
use super::theme::UiTheme;
use super::tool_block::{content_images, content_text, ToolBlock};

/// Queued steering / follow-up texts, one line each, with the dequeue hint.
pub struct Pending {
    /// `!` commands typed while the agent works: shown here until the run settles, then
    /// moved into the chat.
    bash: Vec<ToolBlock>,
    lines: Vec<String>,
    theme: Arc<UiTheme>,
    dequeue_key: String,
    cache: LineCache,
}

impl Pending {
    pub fn new(theme: Arc<UiTheme>, dequeue_key: String) -> Self {
        Pending {
            bash: Vec::new(),
            lines: Vec::new(),
            theme,
            dequeue_key,
            cache: LineCache::default(),
        }
    }

    pub fn set(&mut self, steering: &[String], follow_up: &[String]) {
        self.lines = steering
            .iter()
            .map(|s| format!("Steering: {s}"))
            .chain(follow_up.iter().map(|s| format!("Follow-up: {s}")))
            .collect();
        self.cache.clear();
    }

    /// Show a `!` command's block here while the agent works.
    pub fn push_bash(&mut self, block: ToolBlock) {
        self.bash.push(block);
    }

    /// The shown `!` command block of `id`.
    pub fn bash_mut(&mut self, id: &str) -> Option<&mut ToolBlock> {
        self.bash.iter_mut().find(|b| b.id() == id)
    }

    pub fn bash_blocks_mut(&mut self) -> impl Iterator<Item = &mut ToolBlock> {
        self.bash.iter_mut()
    }

    /// The `!` command blocks, to move into the chat.
    pub fn take_bash(&mut self) -> Vec<ToolBlock> {
        std::mem::take(&mut self.bash)
    }

    /// Carry the `!` command blocks over to a replacement (a theme change).
    pub fn with_bash(mut self, bash: Vec<ToolBlock>) -> Self {
        self.bash = bash;
        self
    }
}

impl Component for Pending {
    fn render(&mut self, width: usize, out: &mut Frame) {
        for b in &mut self.bash {
            b.render(width, out);
        }
        if self.lines.is_empty() {
            return;
        }
        let lines = match self.cache.get(width) {
            Some(l) => l,
            None => {
                // One column of padding on each side, as pi's queue lines.
                let inner = width.saturating_sub(2).max(1);
                let mut v = vec![String::new()];
                for l in &self.lines {
                    let one = l.replace(['\n', '\r'], " ");
                    v.push(format!(
                        " {}",
                        self.theme.paint("dim", &truncate_to_width(&one, inner, "..."))
                    ));
                }
                v.push(format!(
                    " {}",
                    self.theme.paint(
                        "dim",
                        &truncate_to_width(
                            &format!("↳ {} to edit all queued messages", self.dequeue_key),
                            inner,
                            "...",
                        ),
                    )
                ));
                self.cache.set(width, v)
            }
        };
        out.push(lines);
    }
}

/// Most lines per merged chunk of finished transcript.
const MERGED_CHUNK: usize = 2048;

/// The finished part of the transcript, rendered once into a few large chunks so a frame
/// costs the same whatever the length of the history.
#[derive(Default)]
pub struct Frozen {
    /// Children `..count` are finished and held in `chunks` (their own caches are dropped).
    count: usize,
    width: usize,
    chunks: Vec<Lines>,
    /// Children that should be finished, applied at the next render.
    target: usize,
    /// The first transcript line of each finished child.
    starts: Vec<usize>,
    lines: usize,
}

/// What stands in the editor's place while `/reload` runs.
const RELOADING: &str = "Reloading keybindings, extensions, skills, prompts, themes, and context files...";

/// The root component.
pub struct View {
    pub chat: Container,
    pub pending: Pending,
    pub status: Option<Loader>,
    /// The status is a bordered loader in the editor's place (`/bug`'s summary), drawn in
    /// this theme, rather than a label in the editor's border.
    pub status_box: Option<Arc<UiTheme>>,
    /// `/reload` is under way: its notice stands in the editor's place, in this theme.
    pub reloading: Option<Arc<UiTheme>>,
    /// Two blank rows where a status spinner shown above an extension's editor was (regular
    /// mode with `terminal.clearOnShrink`), so the screen does not shrink when it ends.
    pub idle_status: bool,
    pub editor: Editor,
    pub footer: Footer,
    pub frozen: Frozen,
    /// What extensions show: widgets, their header and footer, custom components.
    pub ext: ExtensionScreen,
    /// The first transcript line of each live child, as of the last render.
    pub live_starts: Vec<usize>,
}

impl View {
    /// Children `..n` of the chat will not change any more (until `thaw`).
    pub fn freeze(&mut self, n: usize) {
        self.frozen.target = n.max(self.frozen.target);
    }

    /// Child `index` is about to change: everything from it on is live again.
    pub fn thaw(&mut self, index: usize) {
        if index < self.frozen.target || index < self.frozen.count {
            self.frozen.target = self.frozen.target.min(index);
            self.drop_frozen();
        }
    }

    /// Forget the merged lines (width change, theme, toggles, rebuilds).
    pub fn drop_frozen(&mut self) {
        self.frozen.count = 0;
        self.frozen.chunks.clear();
        self.frozen.starts.clear();
        self.frozen.lines = 0;
    }

    /// The chat child drawn on transcript line `line` in the last frame.
    /// The first transcript line of child `index`, as of the last render.
    pub fn child_start(&self, index: usize) -> Option<usize> {
        self.frozen.starts.iter().chain(&self.live_starts).nth(index).copied()
    }

    pub fn child_at_line(&self, line: usize) -> Option<usize> {
        let starts = self.frozen.starts.iter().chain(&self.live_starts);
        let index = starts.take_while(|&&s| s <= line).count();
        index.checked_sub(1)
    }

    /// The transcript lines, as of the last render, where a user message or a reply without
    /// tool calls starts: the messages pi 1.6 marks with OSC 133 and the fullscreen
    /// previous/next-message keys stop at.
    pub fn marked_lines(&mut self) -> Vec<usize> {
        let starts: Vec<usize> = self.frozen.starts.iter().chain(&self.live_starts).copied().collect();
        self.chat
            .children_mut()
            .iter()
            .zip(starts)
            .filter_map(|(child, start)| {
                if let Some(user) = child.downcast_ref::<UserBlock>() {
                    Some(start + user.mark_offset())
                } else {
                    child
                        .downcast_ref::<AssistantBlock>()
                        .filter(|reply| reply.is_marked())
                        .map(|_| start)
                }
            })
            .collect()
    }

    fn render_chat(&mut self, width: usize, out: &mut Frame) {
        let target = self.frozen.target.min(self.chat.len());
        if self.frozen.width != width || target < self.frozen.count {
            self.drop_frozen();
            self.frozen.width = width;
        }
        if target > self.frozen.count {
            let children = &mut self.chat.children_mut()[self.frozen.count..target];
            let (lines, counts) = render_finished(children, width);
            for n in counts {
                self.frozen.starts.push(self.frozen.lines);
                self.frozen.lines += n;
            }
            for piece in lines.chunks(MERGED_CHUNK) {
                self.frozen.chunks.push(piece.to_vec().into());
            }
            self.frozen.count = target;
        }
        for c in &self.frozen.chunks {
            out.push(c.clone());
        }
        self.live_starts.clear();
        let base = out.len();
        for c in &mut self.chat.children_mut()[self.frozen.count..] {
            self.live_starts.push(self.frozen.lines + out.len() - base);
            c.render(width, out);
        }
    }
}

/// Below this many blocks the finished transcript is rendered on the calling thread.
const PARALLEL_RENDER_BLOCKS: usize = 256;

/// The lines of finished blocks, in order, and how many each took; their own caches are
/// dropped (the merged copy is enough, and a later re-render rebuilds them). Opening a long
/// session renders thousands of blocks at once, so they are split into runs rendered on one
/// thread per core.
fn render_finished(children: &mut [Box<dyn Component>], width: usize) -> (Vec<String>, Vec<usize>) {
    fn render_run(run: &mut [Box<dyn Component>], width: usize) -> (Vec<String>, Vec<usize>) {
        let mut f = Frame::new();
        let mut counts = Vec::with_capacity(run.len());
        for c in run {
            let before = f.len();
            c.render(width, &mut f);
            counts.push(f.len() - before);
            c.invalidate();
        }
        (f.sealed().to_vec(), counts)
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(8);
    if threads < 2 || children.len() < PARALLEL_RENDER_BLOCKS {
        return render_run(children, width);
    }
    let per_thread = children.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let mut runs = children.chunks_mut(per_thread);
        let first = runs.next().unwrap_or_default();
        let handles: Vec<_> = runs.map(|run| scope.spawn(move || render_run(run, width))).collect();
        let (mut lines, mut counts) = render_run(first, width);
        for handle in handles {
            match handle.join() {
                Ok((more, more_counts)) => {
                    lines.extend(more);
                    counts.extend(more_counts);
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        (lines, counts)
    })
}

impl View {
    /// The working indicator (and the other status spinners) rides in the editor's top
    /// border, as in pi 1.6.
    fn label_editor(&mut self) {
        let label = self.status.as_ref().filter(|_| self.status_box.is_none());
        self.editor.set_top_label(label.map(Loader::inline_text));
    }

    /// pi 1.6's status area above the widgets: the spinner on its own rows when an
    /// extension's editor (which has no border to carry it) is shown, else the rows a
    /// finished one keeps, else nothing.
    fn status_area(&mut self, width: usize) -> Vec<String> {
        if self.status_box.is_none() && self.ext.editor().is_some() {
            if let Some(loader) = self.status.as_mut() {
                return pi_tui::render_lines(loader, width);
            }
        }
        if self.idle_status && self.status.is_none() {
            return vec![" ".repeat(width); 2];
        }
        Vec::new()
    }

    /// The bordered loader when one stands in the editor's place.
    fn render_status_box(&mut self, width: usize) -> Option<Frame> {
        if let Some(t) = &self.reloading {
            let rule = t.paint("border", &"─".repeat(width));
            let mut f = Frame::new();
            f.push_line(rule.clone());
            f.push_line(String::new());
            for l in pi_tui::wrap_text(RELOADING, width.saturating_sub(2).max(1)) {
                f.push_line(format!(" {}", t.paint("muted", &l)));
            }
            f.push_line(String::new());
            f.push_line(rule);
            return Some(f);
        }
        let theme = self.status_box.as_ref()?;
        let loader = self.status.as_mut()?;
        let mut f = Frame::new();
        super::bordered_loader::render(loader, theme, width, &mut f);
        Some(f)
    }

    /// The screen in fullscreen: the transcript apart from the dock below it.
    /// The transcript at `transcript_width` (a column narrower when the scrollbar has its
    /// own) and the dock at `width`.
    pub fn screen_parts(&mut self, transcript_width: usize, width: usize) -> pi_tui::ScreenParts {
        let mut transcript = Frame::new();
        self.render_chat(transcript_width, &mut transcript);
        // Each section on its own: a dock taller than the screen shares the cut among them.
        let section = |render: &mut dyn FnMut(&mut Frame)| {
            let mut f = Frame::new();
            render(&mut f);
            f.sealed().to_vec()
        };
        let pending = section(&mut |f| self.pending.render(width, f));
        let status = self.status_area(width);
        let spacer = section(&mut |f| f.push(super::chat::spacer()));
        let widgets_above = section(&mut |f| self.ext.render_above(width, f));
        self.label_editor();
        let editor = match self.render_status_box(width) {
            Some(boxed) => boxed,
            None => match self.ext.render_inline(width) {
                Some(custom) => custom,
                None => {
                    let mut editor = Frame::new();
                    self.editor.render(width, &mut editor);
                    editor
                }
            },
        };
        let widgets_below = section(&mut |f| self.ext.render_below(width, f));
        let footer = section(&mut |f| self.ext.render_footer(width, &mut self.footer, f));
        pi_tui::ScreenParts {
            transcript: transcript.sealed(),
            above_editor: vec![pending, status, spacer, widgets_above],
            editor: editor.sealed().to_vec(),
            below_editor: vec![widgets_below, footer],
        }
    }
}

impl Component for View {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.render_chat(width, out);
        self.pending.render(width, out);
        out.extend_lines(self.status_area(width));
        out.push(super::chat::spacer());
        self.ext.render_above(width, out);
        self.label_editor();
        if let Some(boxed) = self.render_status_box(width) {
            out.extend_lines(boxed.sealed().to_vec());
        } else {
            match self.ext.render_inline(width) {
                Some(custom) => out.extend_lines(custom.to_vec()),
                None => self.editor.render(width, out),
            }
        }
        self.ext.render_below(width, out);
        self.ext.render_footer(width, &mut self.footer, out);
    }

    fn handle_input(&mut self, event: &pi_tui::InputEvent) -> bool {
        self.editor.handle_input(event)
    }

    fn invalidate(&mut self) {
        self.drop_frozen();
        self.chat.invalidate();
        self.editor.invalidate();
        self.footer.invalidate();
    }

    fn set_focused(&mut self, focused: bool) {
        self.editor.set_focused(focused);
    }
}

/// Chat blocks for stored messages; `tools` receives each tool call's block index.
/// `notices` are lines (cache misses) shown after the reply with that timestamp.
#[allow(clippy::too_many_arguments)]
pub fn build_transcript(
    messages: &[AgentMessage],
    chat: &mut Container,
    tools: &mut HashMap<String, usize>,
    theme: &Arc<UiTheme>,
    hide_thinking: bool,
    expanded: bool,
    caps: Capabilities,
    notices: &HashMap<i64, String>,
) {
    for m in messages {
        match m {
            AgentMessage::Llm(Message::User(u)) => {
                let images = match &u.content {
                    pi_ai::UserContent::Blocks(blocks) => content_images(blocks, caps),
                    pi_ai::UserContent::Text(_) => Vec::new(),
                };
                let block = UserBlock::new(&u.content.text(), theme).with_images(images);
                let first = super::header::only_header(chat);
                chat.push(Box::new(if first { block.without_gap() } else { block }));
            }
            AgentMessage::Llm(Message::Assistant(a)) => {
                chat.push(Box::new(AssistantBlock::from_message(a, theme.clone(), hide_thinking)));
                for c in &a.content {
                    if let Content::ToolCall(tc) = c {
                        let block = ToolBlock::new(&tc.id, &tc.name, tc.arguments.clone(), theme.clone(), expanded);
                        tools.insert(tc.id.clone(), chat.len());
                        chat.push(Box::new(block));
                    }
                }
                let failed = matches!(a.stop_reason, pi_ai::StopReason::Aborted | pi_ai::StopReason::Error);
                if let Some(text) = notices.get(&a.timestamp).filter(|_| !failed) {
                    chat.push(Box::new(
                        super::chat::Notice::new(text.clone(), "warning", theme.clone()).derived(),
                    ));
                }
            }
            AgentMessage::Llm(Message::ToolResult(r)) => {
                if let Some(&i) = tools.get(&r.tool_call_id) {
                    if let Some(b) = chat.child_mut::<ToolBlock>(i) {
                        b.set_details(r.details.clone());
                        b.finish(content_text(&r.content), r.is_error);
                        b.set_images(content_images(&r.content, caps));
                    }
                }
            }
            AgentMessage::Custom(c) => {
                let field = |k: &str| c.fields.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                let expand_key = pi_tui::keybindings().keys("app.tools.expand").into_iter().next();
                let summary = super::summary_block::SummaryBlock::from_message(
                    c,
                    expand_key.unwrap_or_default(),
                    expanded,
                    theme.clone(),
                );
                if let Some(block) = summary {
                    chat.push(Box::new(block));
                } else if c.role == "bashExecution" {
                    let excluded = c.fields.get("excludeFromContext").and_then(|v| v.as_bool()) == Some(true);
                    let args = serde_json::json!({"command": field("command"), "excludeFromContext": excluded});
                    let mut b = ToolBlock::user_bash("", args, theme.clone(), expanded);
                    // As 1.6 shows a saved command again: its exit code, a cancel, a cut output.
                    let exit_code = c.fields.get("exitCode").and_then(|v| v.as_i64()).map(|c| c as i32);
                    let cancelled = c.fields.get("cancelled").and_then(|v| v.as_bool()) == Some(true);
                    let truncated = c.fields.get("truncated").and_then(|v| v.as_bool()) == Some(true);
                    let path = c
                        .fields
                        .get("fullOutputPath")
                        .and_then(|v| v.as_str())
                        .filter(|_| truncated);
                    b.finish(field("output"), cancelled || exit_code.is_some_and(|c| c != 0));
                    b.set_footnote(super::tool_block::bash_notes(theme, exit_code, cancelled, path));
                    chat.push(Box::new(b));
                } else if c.fields.get("display").and_then(|v| v.as_bool()) == Some(true) {
                    chat.push(Box::new(super::extension_ui::message_block::MessageBlock::new(
                        custom_message_json(c),
                        theme.clone(),
                    )));
                }
            }
        }
    }
}

/// A custom message as extensions see it: its role and its other fields.
pub fn custom_message_json(c: &pi_agent::CustomMessage) -> serde_json::Value {
    let mut map = c.fields.clone();
    map.insert("role".into(), serde_json::Value::String(c.role.clone()));
    serde_json::Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::components::Text;

    fn blocks(n: usize) -> Vec<Box<dyn Component>> {
        (0..n)
            .map(|i| Box::new(Text::new(format!("block {i}: {}", "word ".repeat(i % 40)))) as Box<dyn Component>)
            .collect()
    }

    #[test]
    fn finished_blocks_render_in_order_whether_split_or_not() {
        let n = PARALLEL_RENDER_BLOCKS * 3 + 7;
        let mut split = blocks(n);
        let (lines, counts) = render_finished(&mut split, 30);
        let mut expected = Vec::new();
        let mut expected_counts = Vec::new();
        for mut b in blocks(n) {
            let rendered = pi_tui::render_lines(b.as_mut(), 30);
            expected_counts.push(rendered.len());
            expected.extend(rendered);
        }
        assert_eq!(lines, expected);
        assert_eq!(counts, expected_counts, "each block's line count, in order");
        assert!(lines.len() > n, "long blocks wrap");
    }
}
