//! `Markdown`: renders markdown (headings, paragraphs, lists, quotes, code blocks with syntax
//! highlighting, tables, links, rules) to styled lines; cached per width.

use std::sync::Arc;

use pulldown_cmark::Alignment;

use super::markdown_ast::{parse, Block, Inline};
use crate::component::{Component, Frame, LineCache};
use crate::style::{apply_background, Color, Style};
use crate::width::{pad_to_width, visible_width, wrap_text};

/// Columns a nested list is indented by from its parent list's edge.
const NESTED_LIST_INDENT: usize = 4;

/// Custom code highlighter: `(code, lang)` to one string per line, or None to use the default.
pub type Highlighter = Arc<dyn Fn(&str, &str) -> Option<Vec<String>> + Send + Sync>;

/// Styles of Mermaid diagrams drawn in place of their code blocks.
#[derive(Clone, Default)]
pub struct DiagramTheme {
    pub border: Style,
    pub text: Style,
    pub edge: Style,
    pub edge_label: Style,
    /// The line under a diagram that could not be drawn.
    pub warning: Style,
}

/// Styles used by [`Markdown`].
#[derive(Clone)]
pub struct MarkdownTheme {
    pub heading: Style,
    pub link: Style,
    pub link_url: Style,
    pub code: Style,
    pub code_block: Style,
    pub code_block_border: Style,
    pub quote: Style,
    pub quote_border: Style,
    pub hr: Style,
    pub list_bullet: Style,
    pub table_border: Style,
    /// Indent of code block lines.
    pub code_block_indent: usize,
    /// Emit OSC 8 hyperlinks instead of `text (url)`.
    pub hyperlinks: bool,
    /// Replaces the built-in syntect highlighting when set.
    pub highlighter: Option<Highlighter>,
    /// Highlight code blocks at all.
    pub highlight_code: bool,
    pub diagram: DiagramTheme,
}

impl Default for MarkdownTheme {
    fn default() -> Self {
        MarkdownTheme {
            heading: Style::new().fg(Color::Basic(3)),
            link: Style::new().fg(Color::Basic(4)),
            link_url: Style::new().fg(Color::Basic(8)),
            code: Style::new().fg(Color::Basic(6)),
            code_block: Style::new().fg(Color::Basic(2)),
            code_block_border: Style::new().fg(Color::Basic(8)),
            quote: Style::new().fg(Color::Basic(8)),
            quote_border: Style::new().fg(Color::Basic(8)),
            hr: Style::new().fg(Color::Basic(8)),
            list_bullet: Style::new().fg(Color::Basic(6)),
            table_border: Style::new().fg(Color::Basic(8)),
            code_block_indent: 2,
            hyperlinks: false,
            highlighter: None,
            highlight_code: true,
            diagram: DiagramTheme::default(),
        }
    }
}

/// Markdown text rendered once per width.
#[derive(Clone)]
pub struct Markdown {
    text: String,
    padding_x: usize,
    padding_y: usize,
    theme: Arc<MarkdownTheme>,
    /// Style of plain text (e.g. thinking blocks), and an optional background for whole lines.
    text_style: Style,
    bg: Option<Color>,
    cache: LineCache,
    /// Rendered lines of each top-level block from the last render: (source, width, lines).
    blocks: Vec<(String, usize, Vec<String>)>,
    /// Draw top-level ```mermaid blocks as diagrams (see [`crate::mermaid`]).
    diagrams: bool,
    /// Say under a flowchart that could not be read why it was not drawn (not while the
    /// text is still streaming in).
    diagram_warnings: bool,
}

impl Markdown {
    pub fn new(text: impl Into<String>, theme: Arc<MarkdownTheme>) -> Self {
        Markdown {
            text: text.into(),
            padding_x: 0,
            padding_y: 0,
            theme,
            text_style: Style::new(),
            bg: None,
            cache: LineCache::default(),
            blocks: Vec::new(),
            diagrams: false,
            diagram_warnings: false,
        }
    }

    /// Draw top-level Mermaid flowcharts as diagrams; `warnings`: say why one that could not
    /// be read was not drawn. A diagram wider than the text, or another kind of diagram,
    /// stays a code block.
    pub fn set_diagrams(&mut self, on: bool, warnings: bool) {
        if (on, warnings) != (self.diagrams, self.diagram_warnings) {
            self.diagrams = on;
            self.diagram_warnings = warnings;
            self.cache.clear();
            self.blocks.clear();
        }
    }

    #[must_use]
    pub fn with_padding(mut self, x: usize, y: usize) -> Self {
        self.padding_x = x;
        self.padding_y = y;
        self
    }

    #[must_use]
    pub fn with_text_style(mut self, style: Style) -> Self {
        self.text_style = style;
        self
    }

    #[must_use]
    pub fn with_background(mut self, bg: Color) -> Self {
        self.bg = Some(bg);
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        let t = text.into();
        if t != self.text {
            self.text = t;
            self.cache.clear();
        }
    }

    pub fn set_theme(&mut self, theme: Arc<MarkdownTheme>) {
        self.theme = theme;
        self.cache.clear();
        self.blocks.clear();
    }

    /// The lines for `width` (what `render` pushes).
    pub fn lines(&mut self, width: usize) -> Vec<String> {
        if self.text.trim().is_empty() {
            return Vec::new();
        }
        let inner = width.saturating_sub(self.padding_x * 2).max(1);
        let text = self.text.replace('\t', "   ");
        let (blocks, ranges) = parse(&text);
        let r = Renderer {
            theme: &self.theme,
            base: self.text_style,
        };
        // Top-level blocks whose source is unchanged reuse their lines (a streaming message
        // only re-renders its tail).
        // Reference-style link definitions can change earlier blocks: no reuse then.
        if text.contains("]:") {
            self.blocks.clear();
        }
        let mut body = Vec::new();
        let mut fresh: Vec<(String, usize, Vec<String>)> = Vec::with_capacity(blocks.len());
        for (i, b) in blocks.iter().enumerate() {
            if i > 0 && (r.gap_between(&blocks[i - 1], b) || blank_line_between(&text, &ranges[i - 1], &ranges[i])) {
                body.push(String::new());
            }
            let source = ranges[i].clone().and_then(|rg| text.get(rg)).map(str::to_string);
            let cached = match (&source, self.blocks.get(i)) {
                (Some(src), Some((csrc, cw, lines))) if csrc == src && *cw == inner => Some(lines.clone()),
                _ => None,
            };
            let lines = cached.unwrap_or_else(|| {
                let mut l = Vec::new();
                match b {
                    Block::Code { lang, text } if self.diagrams && crate::mermaid::is_mermaid(lang) => {
                        r.diagram(b, text, inner, self.diagram_warnings, &mut l);
                    }
                    _ => r.block(b, inner, &mut l),
                }
                l
            });
            body.extend(lines.iter().cloned());
            fresh.push((
                source.unwrap_or_default(),
                if ranges[i].is_some() { inner } else { 0 },
                lines,
            ));
        }
        self.blocks = fresh;
        // Anything still wider than the width (borders, very narrow tables) wraps.
        if body.iter().any(|l| visible_width(l) > inner) {
            body = body
                .into_iter()
                .flat_map(|l| {
                    if visible_width(&l) > inner {
                        wrap_text(&l, inner)
                    } else {
                        vec![l]
                    }
                })
                .collect();
        }
        let pad = " ".repeat(self.padding_x);
        let mut lines = Vec::with_capacity(body.len() + self.padding_y * 2);
        lines.extend(std::iter::repeat_n(String::new(), self.padding_y));
        lines.extend(
            body.into_iter()
                .map(|l| if pad.is_empty() { l } else { format!("{pad}{l}") }),
        );
        lines.extend(std::iter::repeat_n(String::new(), self.padding_y));
        if let Some(bg) = self.bg {
            lines = lines.iter().map(|l| apply_background(l, width, bg)).collect();
        }
        lines
    }
}

impl Component for Markdown {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if let Some(l) = self.cache.get(width) {
            out.push(l);
            return;
        }
        let lines = self.lines(width);
        out.push(self.cache.set(width, lines));
    }

    fn invalidate(&mut self) {
        self.cache.clear();
        self.blocks.clear();
    }
}

fn merge(base: Style, over: Style) -> Style {
    Style {
        fg: over.fg.or(base.fg),
        bg: over.bg.or(base.bg),
        bold: base.bold || over.bold,
        dim: base.dim || over.dim,
        italic: base.italic || over.italic,
        underline: base.underline || over.underline,
        strikethrough: base.strikethrough || over.strikethrough,
        inverse: base.inverse || over.inverse,
    }
}

struct Renderer<'a> {
    theme: &'a MarkdownTheme,
    base: Style,
}

impl Renderer<'_> {
    /// A Mermaid block: the diagram when it can be drawn within `width`, else the code block
    /// (with `warnings`, and a flowchart that could not be read, a line saying why).
    fn diagram(&self, b: &Block, text: &str, width: usize, warnings: bool, out: &mut Vec<String>) {
        let t = &self.theme.diagram;
        let not_drawn = |why: &str, out: &mut Vec<String>| {
            self.block(b, width, out);
            // A paragraph of its own under the code, as pi 1.6 shows it.
            out.push(String::new());
            out.extend(wrap_text(
                &t.warning.paint(&format!("Mermaid diagram not rendered: {why}")),
                width,
            ));
        };
        match crate::mermaid::render(text) {
            // Parts left out: the source and why, once the text is complete (pi 1.6 draws what it
            // could while streaming).
            Ok(d) if d.width() <= width && warnings && !d.warnings.is_empty() => {
                let more = match d.warnings.len() {
                    1 => String::new(),
                    n => format!(" (+{} more)", n - 1),
                };
                not_drawn(&format!("{}{more}", d.warnings[0]), out);
            }
            Ok(d) if d.width() <= width => {
                out.extend(d.styled(|role, run| {
                    let style = match role {
                        crate::mermaid::Role::Border => t.border,
                        crate::mermaid::Role::Text => t.text,
                        crate::mermaid::Role::Edge => t.edge,
                        crate::mermaid::Role::EdgeLabel => t.edge_label,
                        // Bold in the edges' colour, as pi 1.6 draws a title.
                        crate::mermaid::Role::Title => t.edge.bold(),
                    };
                    style.paint(run)
                }));
            }
            Err(crate::mermaid::NotDrawn::Invalid(why)) if warnings => not_drawn(&why, out),
            _ => self.block(b, width, out),
        }
    }

    fn gap_between(&self, prev: &Block, next: &Block) -> bool {
        !(matches!(prev, Block::Paragraph(_)) && matches!(next, Block::List { .. }))
    }

    fn blocks(&self, blocks: &[Block], width: usize, out: &mut Vec<String>) {
        for (i, b) in blocks.iter().enumerate() {
            if i > 0 && self.gap_between(&blocks[i - 1], b) {
                out.push(String::new());
            }
            self.block(b, width, out);
        }
    }

    fn block(&self, b: &Block, width: usize, out: &mut Vec<String>) {
        let t = self.theme;
        match b {
            Block::Paragraph(inl) => out.extend(wrap_text(&self.inlines(inl, self.base), width)),
            Block::Heading(level, inl) => {
                let mut style = merge(self.base, t.heading).bold();
                if *level == 1 {
                    style = style.underline();
                }
                let mut text = self.inlines(inl, style);
                if *level >= 3 {
                    text = format!("{}{text}", style.paint(&format!("{} ", "#".repeat(*level as usize))));
                }
                out.extend(wrap_text(&text, width));
            }
            Block::Code { lang, text } => {
                out.push(t.code_block_border.paint(&format!("```{lang}")));
                let indent = " ".repeat(t.code_block_indent);
                let inner = width.saturating_sub(t.code_block_indent).max(1);
                let highlighted = if t.highlight_code {
                    match &t.highlighter {
                        Some(h) => h(text, lang),
                        None => crate::highlight::highlight(text, lang),
                    }
                } else {
                    None
                };
                let code_lines: Vec<String> = match highlighted {
                    Some(l) => l,
                    None => text.split('\n').map(|l| t.code_block.paint(l)).collect(),
                };
                for line in code_lines {
                    for w in wrap_text(&line, inner) {
                        out.push(format!("{indent}{w}"));
                    }
                }
                out.push(t.code_block_border.paint("```"));
            }
            Block::List { start, items } => {
                for (i, item) in items.iter().enumerate() {
                    let bullet = match start {
                        Some(n) => format!("{}. ", n + i as u64),
                        None => "- ".to_string(),
                    };
                    let bw = visible_width(&bullet);
                    let hang = " ".repeat(bw);
                    let mut first = true;
                    for (k, child) in item.iter().enumerate() {
                        if k > 0 && self.gap_between(&item[k - 1], child) {
                            out.push(String::new());
                        }
                        let mut lines = Vec::new();
                        if matches!(child, Block::List { .. }) {
                            // A nested list sits four columns in from its parent list's
                            // edge, whatever the parent's bullet, as pi lays lists out.
                            self.block(child, width.saturating_sub(NESTED_LIST_INDENT).max(1), &mut lines);
                            let indent = " ".repeat(NESTED_LIST_INDENT);
                            out.extend(
                                lines
                                    .into_iter()
                                    .map(|l| if l.is_empty() { l } else { format!("{indent}{l}") }),
                            );
                            first = false;
                            continue;
                        }
                        self.block(child, width.saturating_sub(bw).max(1), &mut lines);
                        for l in lines {
                            if first {
                                out.push(format!("{}{l}", t.list_bullet.paint(&bullet)));
                                first = false;
                            } else if l.is_empty() {
                                out.push(l);
                            } else {
                                out.push(format!("{hang}{l}"));
                            }
                        }
                    }
                    if first {
                        out.push(t.list_bullet.paint(&bullet));
                    }
                }
            }
            Block::Quote(children) => {
                let style = merge(t.quote, Style::new().italic());
                let inner = Renderer { theme: t, base: style };
                let mut lines = Vec::new();
                inner.blocks(children, width.saturating_sub(2).max(1), &mut lines);
                while lines.last().is_some_and(String::is_empty) {
                    lines.pop();
                }
                for l in lines {
                    out.push(format!("{}{l}", t.quote_border.paint("│ ")));
                }
            }
            Block::Rule => out.push(t.hr.paint(&"─".repeat(width.min(80)))),
            Block::Table { aligns, head, rows } => self.table(aligns, head, rows, width, out),
            Block::Html(raw) => {
                for l in raw.trim().split('\n') {
                    out.extend(wrap_text(&self.base.paint(l), width));
                }
            }
        }
    }

    fn inlines(&self, inl: &[Inline], style: Style) -> String {
        let mut s = String::new();
        for i in inl {
            self.inline(i, style, &mut s);
        }
        s
    }

    fn inline(&self, i: &Inline, style: Style, s: &mut String) {
        let t = self.theme;
        match i {
            Inline::TaskMarker(done) => s.push_str(&t.list_bullet.paint(task_marker(*done))),
            Inline::Text(text) => {
                let mut first = true;
                for seg in text.split('\n') {
                    if !first {
                        s.push('\n');
                    }
                    first = false;
                    if !seg.is_empty() {
                        s.push_str(&style.paint(seg));
                    }
                }
            }
            Inline::Code(c) => s.push_str(&merge(style, t.code).paint(c)),
            Inline::Emph(v) => s.push_str(&self.inlines(v, style.italic())),
            Inline::Strong(v) => s.push_str(&self.inlines(v, style.bold())),
            Inline::Strike(v) => s.push_str(&self.inlines(v, style.strikethrough())),
            Inline::HardBreak => s.push('\n'),
            Inline::Link { url, children } => {
                let text = self.inlines(children, merge(style, t.link).underline());
                if t.hyperlinks || super::hyperlinks() {
                    s.push_str(&format!("\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"));
                } else {
                    s.push_str(&text);
                    let plain = plain_text(children);
                    let bare = url.strip_prefix("mailto:").unwrap_or(url);
                    if plain != *url && plain != bare {
                        s.push_str(&t.link_url.paint(&format!(" ({url})")));
                    }
                }
            }
            Inline::Image { url, alt } => {
                let alt = plain_text(alt);
                let label = if alt.is_empty() { url.clone() } else { alt };
                s.push_str(&merge(style, t.link).paint(&format!("[image: {label}]")));
            }
        }
    }

    fn table(
        &self,
        aligns: &[Alignment],
        head: &[Vec<Inline>],
        rows: &[Vec<Vec<Inline>>],
        width: usize,
        out: &mut Vec<String>,
    ) {
        let t = self.theme;
        let ncols = head.len().max(rows.iter().map(Vec::len).max().unwrap_or(0));
        if ncols == 0 {
            return;
        }
        let head_style = self.base.bold();
        let render_row = |cells: &[Vec<Inline>], style: Style| -> Vec<String> {
            (0..ncols)
                .map(|c| cells.get(c).map(|x| self.inlines(x, style)).unwrap_or_default())
                .collect()
        };
        let head_cells = render_row(head, head_style);
        let body: Vec<Vec<String>> = rows.iter().map(|r| render_row(r, self.base)).collect();
        let mut natural = vec![1usize; ncols];
        for row in std::iter::once(&head_cells).chain(body.iter()) {
            for (c, cell) in row.iter().enumerate() {
                natural[c] = natural[c].max(visible_width(cell));
            }
        }
        // "│ " + cells joined by " │ " + " │"
        let overhead = 3 * ncols + 1;
        let avail = width.saturating_sub(overhead).max(ncols);
        let widths = fit_columns(&natural, avail);
        let border = |l: &str, m: &str, r: &str| {
            let segs: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            t.table_border
                .paint(&format!("{l}─{}─{r}", segs.join(&format!("─{m}─"))))
        };
        let bar = t.table_border.paint("│");
        let emit_row = |cells: &[String], out: &mut Vec<String>| {
            let wrapped: Vec<Vec<String>> = cells.iter().zip(&widths).map(|(c, w)| wrap_text(c, *w)).collect();
            let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
            for k in 0..height {
                let mut line = bar.clone();
                for (c, w) in widths.iter().enumerate() {
                    let cell = wrapped[c].get(k).map_or("", String::as_str);
                    let align = aligns.get(c).copied().unwrap_or(Alignment::None);
                    line.push(' ');
                    line.push_str(&align_cell(cell, *w, align));
                    line.push(' ');
                    line.push_str(&bar);
                }
                out.push(line);
            }
        };
        out.push(border("┌", "┬", "┐"));
        emit_row(&head_cells, out);
        out.push(border("├", "┼", "┤"));
        // Body rows are ruled off from each other too, as pi 1.6 draws tables.
        for (i, row) in body.iter().enumerate() {
            if i > 0 {
                out.push(border("├", "┼", "┤"));
            }
            emit_row(row, out);
        }
        out.push(border("└", "┴", "┘"));
    }
}

fn align_cell(cell: &str, w: usize, align: Alignment) -> String {
    let cw = visible_width(cell);
    let gap = w.saturating_sub(cw);
    match align {
        Alignment::Right => format!("{}{cell}", " ".repeat(gap)),
        Alignment::Center => format!("{}{cell}{}", " ".repeat(gap / 2), " ".repeat(gap - gap / 2)),
        _ => pad_to_width(cell, w),
    }
}

/// Shrink column widths to fit `avail`, taking from the widest columns first.
fn fit_columns(natural: &[usize], avail: usize) -> Vec<usize> {
    let mut w = natural.to_vec();
    let mut total: usize = w.iter().sum();
    while total > avail {
        let (idx, &max) = match w.iter().enumerate().max_by_key(|(_, v)| **v) {
            Some(x) => x,
            None => break,
        };
        if max <= 1 {
            break;
        }
        w[idx] -= 1;
        total -= 1;
    }
    w
}

fn task_marker(done: bool) -> &'static str {
    if done {
        "[x] "
    } else {
        "[ ] "
    }
}

fn plain_text(inl: &[Inline]) -> String {
    let mut s = String::new();
    for i in inl {
        match i {
            Inline::Text(t) | Inline::Code(t) => s.push_str(t),
            Inline::Emph(v) | Inline::Strong(v) | Inline::Strike(v) => s.push_str(&plain_text(v)),
            Inline::Link { children, .. } => s.push_str(&plain_text(children)),
            Inline::Image { alt, .. } => s.push_str(&plain_text(alt)),
            Inline::HardBreak => s.push('\n'),
            Inline::TaskMarker(done) => s.push_str(task_marker(*done)),
        }
    }
    s
}

/// Whether the source has an empty line between two top-level blocks (a list written a
/// blank line after its paragraph keeps that line, as pi shows it).
fn blank_line_between(
    text: &str,
    prev: &Option<std::ops::Range<usize>>,
    next: &Option<std::ops::Range<usize>>,
) -> bool {
    let (Some(prev), Some(next)) = (prev, next) else {
        return false;
    };
    let Some(between) = text.get(prev.start..next.start) else {
        return false;
    };
    let content_end = between.trim_end().len();
    between[content_end..].matches('\n').count() >= 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ansi::strip_ansi;

    fn plain_theme() -> Arc<MarkdownTheme> {
        Arc::new(MarkdownTheme {
            heading: Style::new(),
            link: Style::new(),
            link_url: Style::new(),
            code: Style::new(),
            code_block: Style::new(),
            code_block_border: Style::new(),
            quote: Style::new(),
            quote_border: Style::new(),
            hr: Style::new(),
            list_bullet: Style::new(),
            table_border: Style::new(),
            highlight_code: false,
            ..MarkdownTheme::default()
        })
    }

    fn render(md: &str, width: usize) -> Vec<String> {
        let mut m = Markdown::new(md, plain_theme());
        m.lines(width).iter().map(|l| strip_ansi(l)).collect()
    }

    #[test]
    fn task_markers_take_the_bullet_colour() {
        let mut theme = (*plain_theme()).clone();
        theme.list_bullet = Style::new().fg(Color::Indexed(5));
        let mut m = Markdown::new("- [x] done", Arc::new(theme));
        let line = m.lines(40)[0].clone();
        let marker = Style::new().fg(Color::Indexed(5)).paint("[x] ");
        assert!(line.contains(&marker), "{line:?}");
    }

    #[test]
    fn a_list_after_a_blank_line_keeps_the_blank_line() {
        assert_eq!(render("Intro.\n\n- one", 40), ["Intro.", "", "- one"]);
        assert_eq!(render("Intro.\n- one", 40), ["Intro.", "- one"]);
    }

    #[test]
    fn nested_lists_sit_four_columns_in_from_their_parent() {
        let lines = render(
            "- item one\n- item two\n  - nested\n    - deeper\n1. first\n   1. sub",
            40,
        );
        let lines: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
        assert!(lines.contains(&"- item two"), "{lines:#?}");
        assert!(lines.contains(&"    - nested"), "{lines:#?}");
        assert!(lines.contains(&"        - deeper"), "{lines:#?}");
        assert!(lines.contains(&"    1. sub"), "{lines:#?}");
    }

    #[test]
    fn a_sequence_diagram_with_unreadable_lines_is_drawn_only_while_streaming() {
        let md = "```mermaid\nsequenceDiagram\nA->>B: hi\nwhat\nNote A\n```";
        let lines = |warnings: bool| {
            let mut m = Markdown::new(md, plain_theme());
            m.set_diagrams(true, warnings);
            m.lines(80).iter().map(|l| strip_ansi(l)).collect::<Vec<_>>()
        };
        // Complete: the source, then the first reason and how many more, as pi 1.6 shows it.
        let done = lines(true);
        assert!(done.iter().any(|l| l.contains("what")), "{done:?}");
        assert_eq!(
            done.last().map(String::as_str),
            Some("Mermaid diagram not rendered: dropped, unreadable statement: \"what\" (+1 more)")
        );
        // Still streaming: what could be read is drawn.
        let streaming = lines(false);
        assert!(streaming.iter().any(|l| l.contains("├─────▶│")), "{streaming:?}");
        assert!(!streaming.iter().any(|l| l.contains("not rendered")), "{streaming:?}");
    }

    #[test]
    fn a_paragraph_line_keeps_its_indent() {
        // marked keeps it, and pi shows text drawn line by line aligned as written.
        let lines = render("Board:\n<[0,0]>| a\n [1,0] |  X\n   [2,0] | b", 40);
        let lines: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
        assert_eq!(lines, ["Board:", "<[0,0]>| a", " [1,0] |  X", "   [2,0] | b"]);
        // A list item's continuation lines are not indented by the list's own indent.
        let lines = render("- item\n  more", 40);
        assert_eq!(
            lines.iter().map(|l| l.trim_end()).collect::<Vec<_>>(),
            ["- item", "  more"]
        );
    }

    #[test]
    fn headings_paragraphs_and_lists() {
        let md = "# Title\n\nSome *text* here.\n- one\n- two\n  - nested\n\n### Small";
        assert_eq!(
            render(md, 40),
            [
                "Title",
                "",
                "Some text here.",
                "- one",
                "- two",
                "    - nested",
                "",
                "### Small"
            ]
        );
        assert_eq!(render("1. a\n2. b", 40), ["1. a", "2. b"]);
        assert_eq!(render("- [x] done", 40), ["- [x] done"]);
    }

    #[test]
    fn code_blocks_and_quotes() {
        assert_eq!(render("```rust\nfn x() {}\n```", 40), ["```rust", "  fn x() {}", "```"]);
        assert_eq!(render("> quoted\n> text", 40), ["│ quoted", "│ text"]);
        assert_eq!(render("a\n\n---\n\nb", 5), ["a", "", "─────", "", "b"]);
    }

    #[test]
    fn links() {
        assert_eq!(render("[site](https://x.io)", 40), ["site (https://x.io)"]);
        assert_eq!(render("<https://x.io>", 40), ["https://x.io"]);
        let mut theme = (*plain_theme()).clone();
        theme.hyperlinks = true;
        let mut m = Markdown::new("[site](https://x.io)", Arc::new(theme));
        let lines = m.lines(40);
        assert!(lines[0].contains("\x1b]8;;https://x.io\x1b\\"));
        assert_eq!(visible_width(&lines[0]), 4);
    }

    #[test]
    fn tables() {
        let md = "| a | long header |\n|---|---:|\n| 1 | 2 |\n| 3 | 4 |";
        assert_eq!(
            render(md, 40),
            [
                "┌───┬─────────────┐",
                "│ a │ long header │",
                "├───┼─────────────┤",
                "│ 1 │           2 │",
                "├───┼─────────────┤",
                "│ 3 │           4 │",
                "└───┴─────────────┘",
            ]
        );
        // Too wide: columns shrink and cells wrap; nothing exceeds the width.
        let md = "| aaaa bbbb cccc | dddd eeee |\n|---|---|\n| x | y |";
        for l in render(md, 16) {
            assert!(visible_width(&l) <= 16, "{l}");
        }
    }

    #[test]
    fn styles_survive_wrapping_and_width_is_respected() {
        let mut m = Markdown::new(
            "**bold words that wrap around** and `code` then a [link](http://example.com/very/long/path)",
            Arc::new(MarkdownTheme::default()),
        );
        for w in [10, 20, 33] {
            for l in m.lines(w) {
                assert!(visible_width(&l) <= w, "{l:?}");
            }
        }
        let lines = m.lines(10);
        assert!(lines[1].starts_with("\x1b[1m"), "{:?}", lines[1]);
    }

    #[test]
    fn streaming_reuses_unchanged_blocks() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = calls.clone();
        let mut theme = (*plain_theme()).clone();
        theme.highlight_code = true;
        theme.highlighter = Some(Arc::new(move |code: &str, _lang: &str| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Some(code.split('\n').map(str::to_string).collect())
        }));
        let mut m = Markdown::new("```rust\nfn a() {}\n```\n\nSome text", Arc::new(theme));
        let first = m.lines(40);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        m.set_text("```rust\nfn a() {}\n```\n\nSome text that grows");
        let second = m.lines(40);
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "code block re-highlighted"
        );
        assert_eq!(first[..4], second[..4]);
        assert_eq!(second[4], "Some text that grows");
        // A different width renders again.
        m.lines(20);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn code_is_highlighted_by_default() {
        let mut m = Markdown::new("```rust\nlet x = 1;\n```", Arc::new(MarkdownTheme::default()));
        let lines = m.lines(40);
        assert!(lines[1].contains("\x1b[38;2;"));
        assert_eq!(strip_ansi(&lines[1]), "  let x = 1;");
    }
}
