//! Markdown parsed (pulldown-cmark) into a small block/inline tree that the renderer walks.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Inline {
    Text(String),
    Code(String),
    Emph(Vec<Inline>),
    Strong(Vec<Inline>),
    Strike(Vec<Inline>),
    Link {
        url: String,
        children: Vec<Inline>,
    },
    Image {
        url: String,
        alt: Vec<Inline>,
    },
    HardBreak,
    /// A task item's `[ ] ` / `[x] `, drawn in the list bullet's colour.
    TaskMarker(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Paragraph(Vec<Inline>),
    Heading(u8, Vec<Inline>),
    Code {
        lang: String,
        text: String,
    },
    List {
        start: Option<u64>,
        items: Vec<Vec<Block>>,
    },
    Quote(Vec<Block>),
    Rule,
    Table {
        aligns: Vec<Alignment>,
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
    Html(String),
}

enum Open {
    Root(Vec<Block>),
    Quote(Vec<Block>),
    List(Option<u64>, Vec<Vec<Block>>),
    Item(Vec<Block>),
    Para(Vec<Inline>, bool),
    Heading(u8, Vec<Inline>),
    Code(String, String),
    Html(String),
    Table(Vec<Alignment>, Vec<Vec<Inline>>, Vec<Vec<Vec<Inline>>>),
    Row(Vec<Vec<Inline>>, bool),
    Cell(Vec<Inline>),
    Emph(Vec<Inline>),
    Strong(Vec<Inline>),
    Strike(Vec<Inline>),
    Link(String, Vec<Inline>),
    Image(String, Vec<Inline>),
    /// Something we do not render; its content is dropped.
    Skip,
}

struct Builder {
    stack: Vec<Open>,
    /// Source range of the top-level element being built (None when unknown).
    cur_range: Option<std::ops::Range<usize>>,
    /// Source range of each top-level block, in order.
    ranges: Vec<Option<std::ops::Range<usize>>>,
}

impl Builder {
    fn close_implicit(&mut self) {
        if matches!(self.stack.last(), Some(Open::Para(_, true))) {
            self.pop();
        }
    }

    fn push_block(&mut self, b: Block) {
        self.close_implicit();
        match self.stack.last_mut() {
            Some(Open::Root(v)) => {
                v.push(b);
                self.ranges.push(self.cur_range.take());
            }
            Some(Open::Quote(v)) | Some(Open::Item(v)) => v.push(b),
            _ => {}
        }
    }

    fn push_inline(&mut self, i: Inline) {
        if matches!(
            self.stack.last(),
            Some(Open::Root(_)) | Some(Open::Quote(_)) | Some(Open::Item(_))
        ) {
            // Tight list items (and stray text) carry inlines without a paragraph.
            self.stack.push(Open::Para(Vec::new(), true));
        }
        match self.stack.last_mut() {
            Some(Open::Para(v, _))
            | Some(Open::Heading(_, v))
            | Some(Open::Cell(v))
            | Some(Open::Emph(v))
            | Some(Open::Strong(v))
            | Some(Open::Strike(v))
            | Some(Open::Link(_, v))
            | Some(Open::Image(_, v)) => v.push(i),
            Some(Open::Code(_, t)) | Some(Open::Html(t)) => {
                if let Inline::Text(s) = i {
                    t.push_str(&s);
                }
            }
            _ => {}
        }
    }

    fn pop(&mut self) {
        let Some(top) = self.stack.pop() else { return };
        match top {
            Open::Root(_) | Open::Skip => {}
            Open::Quote(v) => self.push_block(Block::Quote(v)),
            Open::List(start, items) => self.push_block(Block::List { start, items }),
            Open::Item(v) => {
                if let Some(Open::List(_, items)) = self.stack.last_mut() {
                    items.push(v);
                }
            }
            Open::Para(v, _) => self.push_block(Block::Paragraph(v)),
            Open::Heading(l, v) => self.push_block(Block::Heading(l, v)),
            Open::Code(lang, mut text) => {
                if text.ends_with('\n') {
                    text.pop();
                }
                self.push_block(Block::Code { lang, text })
            }
            Open::Html(t) => self.push_block(Block::Html(t)),
            Open::Table(aligns, head, rows) => self.push_block(Block::Table { aligns, head, rows }),
            Open::Row(cells, is_head) => {
                if let Some(Open::Table(_, head, rows)) = self.stack.last_mut() {
                    if is_head {
                        *head = cells;
                    } else {
                        rows.push(cells);
                    }
                }
            }
            Open::Cell(v) => {
                if let Some(Open::Row(cells, _)) = self.stack.last_mut() {
                    cells.push(v);
                }
            }
            Open::Emph(v) => self.push_inline(Inline::Emph(v)),
            Open::Strong(v) => self.push_inline(Inline::Strong(v)),
            Open::Strike(v) => self.push_inline(Inline::Strike(v)),
            Open::Link(url, v) => self.push_inline(Inline::Link { url, children: v }),
            Open::Image(url, v) => self.push_inline(Inline::Image { url, alt: v }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let block = matches!(
            tag,
            Tag::Paragraph
                | Tag::Heading { .. }
                | Tag::BlockQuote(_)
                | Tag::CodeBlock(_)
                | Tag::HtmlBlock
                | Tag::List(_)
                | Tag::Table(_)
        );
        if block {
            self.close_implicit();
        }
        let open = match tag {
            Tag::Paragraph => Open::Para(Vec::new(), false),
            Tag::Heading { level, .. } => Open::Heading(level as u8, Vec::new()),
            Tag::BlockQuote(_) => Open::Quote(Vec::new()),
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => l.split_whitespace().next().unwrap_or("").to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                Open::Code(lang, String::new())
            }
            Tag::HtmlBlock => Open::Html(String::new()),
            Tag::List(start) => Open::List(start, Vec::new()),
            Tag::Item => Open::Item(Vec::new()),
            Tag::Table(aligns) => Open::Table(aligns, Vec::new(), Vec::new()),
            Tag::TableHead => Open::Row(Vec::new(), true),
            Tag::TableRow => Open::Row(Vec::new(), false),
            Tag::TableCell => Open::Cell(Vec::new()),
            Tag::Emphasis => Open::Emph(Vec::new()),
            Tag::Strong => Open::Strong(Vec::new()),
            Tag::Strikethrough => Open::Strike(Vec::new()),
            Tag::Link { dest_url, .. } => Open::Link(dest_url.to_string(), Vec::new()),
            Tag::Image { dest_url, .. } => Open::Image(dest_url.to_string(), Vec::new()),
            _ => Open::Skip,
        };
        self.stack.push(open);
    }

    fn end(&mut self, tag: TagEnd) {
        if matches!(tag, TagEnd::Item | TagEnd::BlockQuote(_)) {
            self.close_implicit();
        }
        self.pop();
    }
}

/// Parse into top-level blocks, each with its source range when known (used to reuse the
/// rendering of unchanged blocks while a message streams in).
pub(crate) fn parse(text: &str) -> (Vec<Block>, Vec<Option<std::ops::Range<usize>>>) {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut b = Builder {
        stack: vec![Open::Root(Vec::new())],
        cur_range: None,
        ranges: Vec::new(),
    };
    for (ev, range) in Parser::new_ext(text, opts).into_offset_iter() {
        let end = range.end;
        let top_level = b.stack.len() == 1;
        if top_level && matches!(ev, Event::Start(_) | Event::Rule) {
            b.cur_range = Some(range);
        } else if top_level {
            b.cur_range = None;
        }
        match ev {
            Event::Start(tag) => b.start(tag),
            Event::End(tag) => b.end(tag),
            Event::Text(t) => b.push_inline(Inline::Text(t.to_string())),
            Event::Code(t) => b.push_inline(Inline::Code(t.to_string())),
            Event::InlineMath(t) | Event::DisplayMath(t) => b.push_inline(Inline::Code(t.to_string())),
            Event::Html(t) | Event::InlineHtml(t) => b.push_inline(Inline::Text(t.to_string())),
            Event::SoftBreak => {
                // A top-level paragraph's next line keeps its indent, as marked keeps it (pi
                // shows aligned text such as a board drawn line by line as it was written).
                let top_para = b.stack.len() == 2 && matches!(b.stack.last(), Some(Open::Para(..)));
                let indent: &str = if top_para {
                    let rest = &text[end.min(text.len())..];
                    &rest[..rest.len() - rest.trim_start_matches([' ', '\t']).len()]
                } else {
                    ""
                };
                b.push_inline(Inline::Text(format!("\n{indent}")));
            }
            Event::HardBreak => b.push_inline(Inline::HardBreak),
            Event::Rule => b.push_block(Block::Rule),
            Event::TaskListMarker(done) => b.push_inline(Inline::TaskMarker(done)),
            Event::FootnoteReference(r) => b.push_inline(Inline::Text(format!("[^{r}]"))),
        }
    }
    while b.stack.len() > 1 {
        b.pop();
    }
    let blocks = match b.stack.pop() {
        Some(Open::Root(v)) => v,
        _ => Vec::new(),
    };
    let mut ranges = b.ranges;
    ranges.resize(blocks.len(), None);
    (blocks, ranges)
}
