//! `/tree`: the session's entries as a tree (depth first, the active path marked), with
//! filters and a text query; choosing an entry moves the session's leaf there.

use std::collections::HashMap;
use std::sync::Arc;

use pi_session::{Entry, EntryKind, SessionManager};
use pi_tui::components::{Input, InputFieldEvent};
use pi_tui::{keybindings, truncate_to_width, Component, Frame, InputEvent};

use super::theme::UiTheme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeFilter {
    Default,
    NoTools,
    UserOnly,
    Labeled,
    All,
}

impl TreeFilter {
    pub fn from_setting(s: &str) -> Self {
        match s {
            "no-tools" => TreeFilter::NoTools,
            "user-only" => TreeFilter::UserOnly,
            "labeled-only" => TreeFilter::Labeled,
            "all" => TreeFilter::All,
            _ => TreeFilter::Default,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Assistant,
    /// An assistant message with tool calls and no text (hidden unless it is the leaf).
    ToolCalls,
    Tool,
    /// Settings and bookkeeping (labels, model and thinking changes, extension state, the
    /// title): shown only by the `all` filter.
    Meta,
    /// Never shown (cache refresh usage records).
    Hidden,
    Other,
}

#[derive(Debug, Clone)]
pub struct TreeRow {
    pub id: String,
    parent: Option<String>,
    /// The text in its coloured pieces: (theme token, text).
    parts: Vec<(&'static str, String)>,
    /// The pieces joined, without colour (what tests read).
    #[cfg(test)]
    text: String,
    /// What a query is matched against (lower case).
    search: String,
    /// What Ctrl+X copies.
    copy: Option<String>,
    kind: Kind,
    label: Option<String>,
    /// When the label was set (ISO-8601).
    label_time: Option<String>,
    on_path: bool,
    is_leaf: bool,
}

/// Where a shown row sits in the drawn tree (pi's indentation, connector and gutter rules).
#[derive(Debug, Clone, Default)]
struct Layout {
    indent: usize,
    connector: bool,
    last: bool,
    /// Columns (in levels) that draw a `│` (or a blank) for an ancestor's branch.
    gutters: Vec<(usize, bool)>,
    /// A root among several (drawn without a connector).
    virtual_child: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeEvent {
    Selected(String),
    /// A label was set (or with `None` removed) on an entry; the selector stays open.
    Label {
        id: String,
        label: Option<String>,
    },
    /// Ctrl+X on an entry: its text (none when it has nothing to copy).
    Copy(Option<String>),
    Cancelled,
}

pub struct TreeSelector {
    rows: Vec<TreeRow>,
    visible: Vec<usize>,
    /// The layout of each shown row (by position in `visible`).
    layout: Vec<Layout>,
    multiple_roots: bool,
    selected: usize,
    /// The entry the cursor was last on, kept while filters hide and show rows.
    last_selected: Option<String>,
    filter: TreeFilter,
    query: String,
    max_visible: usize,
    theme: Arc<UiTheme>,
    event: Option<TreeEvent>,
    /// The label being edited: entry id and the text field.
    editing: Option<(String, Input)>,
    /// Focused: the search line shows its cursor (while no label is being edited).
    focused: bool,
    show_label_times: bool,
    /// Entries whose descendants are hidden.
    folded: std::collections::HashSet<String>,
    /// Nearest shown ancestor and shown children of every shown row (by row index).
    shown_parent: HashMap<usize, Option<usize>>,
    shown_children: HashMap<usize, Vec<usize>>,
}

/// Newlines and tabs as spaces, the ends trimmed.
fn normalize(s: &str) -> String {
    s.replace(['\n', '\t'], " ").trim().to_string()
}

/// The first 200 characters of a text.
fn head(s: &str) -> String {
    s.chars().take(200).collect()
}

fn text_of(content: &[pi_ai::Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            pi_ai::Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

fn home_short(p: &str) -> String {
    match std::env::var("HOME").ok().filter(|h| !h.is_empty()) {
        Some(h) if p == h => "~".to_string(),
        Some(h) if p.starts_with(&format!("{h}/")) => format!("~{}", &p[h.len()..]),
        _ => p.to_string(),
    }
}

/// A tool result's row: the call that asked for it, short.
fn format_tool_call(name: &str, args: &serde_json::Value) -> String {
    let s = |k: &str| match args.get(k) {
        Some(serde_json::Value::String(v)) => v.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    };
    let path = || {
        let p = s("path");
        let p = if p.is_empty() { s("file_path") } else { p };
        home_short(&p)
    };
    let or_dot = |p: String| if p.is_empty() { ".".to_string() } else { home_short(&p) };
    match name {
        "read" => {
            let number = |k: &str| match args.get(k) {
                Some(serde_json::Value::Number(n)) => n.as_f64(),
                Some(serde_json::Value::String(t)) if !t.trim().is_empty() => t.trim().parse().ok(),
                _ => None,
            };
            let present = |k: &str| args.get(k).is_some_and(|v| !v.is_null());
            let range = if !present("offset") && !present("limit") {
                String::new()
            } else {
                let start = if present("offset") { number("offset") } else { Some(1.0) };
                match (start, present("limit"), number("limit")) {
                    (None, _, _) => String::new(),
                    (Some(st), false, _) => format!(":{st}"),
                    (Some(_), true, None) => String::new(),
                    (Some(st), true, Some(n)) => {
                        let end = st + n - 1.0;
                        if end != 0.0 {
                            format!(":{st}-{end}")
                        } else {
                            format!(":{st}")
                        }
                    }
                }
            };
            format!("[read: {}{range}]", path())
        }
        "write" => format!("[write: {}]", path()),
        "edit" => format!("[edit: {}]", path()),
        "bash" => {
            let raw = s("command");
            let cmd: String = normalize(&raw).chars().take(50).collect();
            let more = if raw.chars().count() > 50 { "..." } else { "" };
            format!("[bash: {cmd}{more}]")
        }
        "grep" => format!("[grep: /{}/ in {}]", s("pattern"), or_dot(s("path"))),
        "find" => format!("[find: {} in {}]", s("pattern"), or_dot(s("path"))),
        "ls" => format!("[ls: {}]", or_dot(s("path"))),
        _ => {
            let json = args.to_string();
            let short: String = json.chars().take(40).collect();
            let more = if json.chars().count() > 40 { "..." } else { "" };
            format!("[{name}: {short}{more}]")
        }
    }
}

/// The row's kind, coloured text pieces, search words and copy text.
fn describe(
    e: &Entry,
    calls: &HashMap<String, (String, serde_json::Value)>,
) -> (Kind, Vec<(&'static str, String)>, String, Option<String>) {
    let one = |token: &'static str, text: String| vec![(token, text)];
    match &e.kind {
        EntryKind::Message { message, .. } => match message {
            pi_agent::AgentMessage::Llm(pi_ai::Message::User(u)) => {
                let full = u.content.text();
                let content = normalize(&head(&full));
                let search = format!("user {}", head(&full));
                (
                    Kind::User,
                    vec![("accent", "user: ".into()), ("", content)],
                    search,
                    Some(full),
                )
            }
            pi_agent::AgentMessage::Llm(pi_ai::Message::Assistant(a)) => {
                let full = text_of(&a.content);
                let text = normalize(&head(&full));
                let normal_end = matches!(a.stop_reason, pi_ai::StopReason::Stop | pi_ai::StopReason::ToolUse);
                let search = format!("assistant {}", head(&full));
                let copy = if full.trim().is_empty() {
                    a.error_message.clone()
                } else {
                    Some(full.clone())
                };
                let head_part = ("success", "assistant: ".to_string());
                if !text.is_empty() {
                    return (Kind::Assistant, vec![head_part, ("", text)], search, copy);
                }
                let kind = if normal_end { Kind::ToolCalls } else { Kind::Assistant };
                let body = if a.stop_reason == pi_ai::StopReason::Aborted {
                    ("muted", "(aborted)".to_string())
                } else if let Some(err) = &a.error_message {
                    ("error", normalize(err).chars().take(80).collect())
                } else {
                    ("muted", "(no content)".to_string())
                };
                (kind, vec![head_part, body], search, copy)
            }
            pi_agent::AgentMessage::Llm(pi_ai::Message::ToolResult(r)) => {
                let text = match calls.get(&r.tool_call_id) {
                    Some((name, args)) => format_tool_call(name, args),
                    None => format!("[{}]", r.tool_name),
                };
                let search = format!("toolResult {}", head(&text_of(&r.content)));
                let copy = Some(text_of(&r.content));
                (Kind::Tool, one("muted", text), search, copy)
            }
            pi_agent::AgentMessage::Custom(c) if c.role == "bashExecution" => {
                let cmd = c.field("command").and_then(|v| v.as_str()).unwrap_or("").to_string();
                let search = format!("bashExecution {cmd}");
                (
                    Kind::Other,
                    one("dim", format!("[bash]: {}", normalize(&cmd))),
                    search,
                    Some(cmd),
                )
            }
            pi_agent::AgentMessage::Custom(c) => {
                (Kind::Other, one("dim", format!("[{}]", c.role)), c.role.clone(), None)
            }
        },
        EntryKind::CustomMessage {
            custom_type, content, ..
        } => {
            let text = content.text();
            let search = format!("{custom_type} {}", head(&text));
            (
                Kind::Other,
                vec![
                    ("customMessageLabel", format!("[{custom_type}]: ")),
                    ("", normalize(&text)),
                ],
                search,
                Some(text),
            )
        }
        EntryKind::Compaction {
            tokens_before, summary, ..
        } => {
            let k = (tokens_before.as_f64().unwrap_or(0.0) / 1000.0).round();
            (
                Kind::Other,
                one("borderAccent", format!("[compaction: {k}k tokens]")),
                "compaction".into(),
                Some(summary.clone()),
            )
        }
        EntryKind::BranchSummary { summary, .. } => (
            Kind::Other,
            vec![("warning", "[branch summary]: ".into()), ("", normalize(summary))],
            format!("branch summary {summary}"),
            Some(summary.clone()),
        ),
        EntryKind::ModelChange { model_id, .. } => (
            Kind::Meta,
            one("dim", format!("[model: {model_id}]")),
            format!("model {model_id}"),
            None,
        ),
        EntryKind::ThinkingLevelChange { thinking_level, .. } => (
            Kind::Meta,
            one("dim", format!("[thinking: {thinking_level}]")),
            format!("thinking {thinking_level}"),
            None,
        ),
        EntryKind::Label { label, .. } => {
            let l = label.as_deref().filter(|l| !l.is_empty()).unwrap_or("(cleared)");
            (
                Kind::Meta,
                one("dim", format!("[label: {l}]")),
                format!("label {}", label.as_deref().unwrap_or("")),
                None,
            )
        }
        EntryKind::SessionInfo { name, .. } => {
            let shown = name.as_deref().unwrap_or("empty");
            (
                Kind::Meta,
                one("dim", format!("[title: {shown}]")),
                format!("title {}", name.as_deref().unwrap_or("")),
                None,
            )
        }
        EntryKind::Custom { custom_type, .. } => (
            Kind::Meta,
            one("dim", format!("[custom: {custom_type}]")),
            format!("custom {custom_type}"),
            None,
        ),
        EntryKind::Unknown { type_name, .. } if type_name == "usage" => (Kind::Hidden, Vec::new(), String::new(), None),
        EntryKind::Unknown { type_name, fields } if type_name == "context_edit" => {
            let action = if fields.get("replacement").is_some_and(|v| v.is_null()) {
                "omit"
            } else {
                "replace"
            };
            let target = fields.get("targetId").and_then(|v| v.as_str()).unwrap_or("");
            (
                Kind::Meta,
                one("dim", format!("[context {action}: {target}]")),
                format!("context edit {action} {target}"),
                None,
            )
        }
        other => (Kind::Other, Vec::new(), other.type_name().to_string(), None),
    }
}

/// The rows of the store's tree, depth first in file order with the branch holding the
/// active leaf first at every fork (as pi lists them).
pub fn tree_rows<'a>(store: &'a SessionManager) -> Vec<TreeRow> {
    let entries = store.get_entries();
    let mut labels: HashMap<String, (Option<String>, String)> = HashMap::new();
    let mut calls: HashMap<String, (String, serde_json::Value)> = HashMap::new();
    for e in entries {
        match &e.kind {
            EntryKind::Label { target_id, label, .. } => {
                labels.insert(target_id.clone(), (label.clone(), e.timestamp.clone()));
            }
            EntryKind::Message {
                message: pi_agent::AgentMessage::Llm(pi_ai::Message::Assistant(a)),
                ..
            } => {
                for tc in a.tool_calls() {
                    calls.insert(tc.id.clone(), (tc.name.clone(), tc.arguments.clone()));
                }
            }
            _ => {}
        }
    }
    let path: std::collections::HashSet<String> = store.get_branch(None).iter().map(|e| e.id.clone()).collect();
    let leaf = store.get_leaf_id().map(str::to_string);
    let mut children: HashMap<Option<&str>, Vec<&Entry>> = HashMap::new();
    // Label entries are part of the chain (later entries hang under them); the filters hide them.
    for e in entries {
        children.entry(e.parent_id.as_deref()).or_default().push(e);
    }
    // The active path holds exactly the entries whose subtree holds the leaf.
    let ordered = |list: Option<&Vec<&'a Entry>>| -> Vec<&'a Entry> {
        let list = list.cloned().unwrap_or_default();
        let (mut first, rest): (Vec<&Entry>, Vec<&Entry>) = list.into_iter().partition(|e| path.contains(&e.id));
        first.extend(rest);
        first
    };
    let mut rows = Vec::new();
    let mut stack: Vec<&Entry> = ordered(children.get(&None)).into_iter().rev().collect();
    while let Some(e) = stack.pop() {
        let (kind, parts, search, copy) = describe(e, &calls);
        let label = labels.get(&e.id).and_then(|(l, _)| l.clone()).filter(|l| !l.is_empty());
        let search = match &label {
            Some(l) => format!("{l} {search}").to_lowercase(),
            None => search.to_lowercase(),
        };
        rows.push(TreeRow {
            id: e.id.clone(),
            parent: e.parent_id.clone(),
            #[cfg(test)]
            text: parts.iter().map(|(_, t)| t.as_str()).collect(),
            parts,
            search,
            copy: copy.filter(|c| !c.trim().is_empty()),
            kind,
            label,
            label_time: labels.get(&e.id).map(|(_, t)| t.clone()),
            on_path: path.contains(&e.id),
            is_leaf: leaf.as_deref() == Some(e.id.as_str()),
        });
        for c in ordered(children.get(&Some(e.id.as_str()))).into_iter().rev() {
            stack.push(c);
        }
    }
    rows
}

impl TreeSelector {
    pub fn new(rows: Vec<TreeRow>, filter: TreeFilter, max_visible: usize, theme: Arc<UiTheme>) -> Self {
        let leaf = rows.iter().find(|r| r.is_leaf).map(|r| r.id.clone());
        let mut t = TreeSelector {
            rows,
            visible: Vec::new(),
            layout: Vec::new(),
            multiple_roots: false,
            selected: 0,
            last_selected: None,
            filter,
            query: String::new(),
            max_visible: max_visible.max(5),
            theme,
            event: None,
            editing: None,
            focused: false,
            show_label_times: false,
            folded: Default::default(),
            shown_parent: HashMap::new(),
            shown_children: HashMap::new(),
        };
        t.refilter();
        // Start on the active leaf (or the nearest shown entry above it).
        t.selected = t.nearest_shown(leaf.as_deref());
        t.last_selected = t.selected_id();
        t
    }

    fn selected_id(&self) -> Option<String> {
        self.visible.get(self.selected).map(|&i| self.rows[i].id.clone())
    }

    /// The position of `id`, or of its nearest shown ancestor; the last row otherwise.
    fn nearest_shown(&self, id: Option<&str>) -> usize {
        let index: HashMap<&str, usize> = self.rows.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
        let mut cur = id.map(str::to_string);
        while let Some(c) = cur {
            if let Some(p) = self.visible.iter().position(|&i| self.rows[i].id == c) {
                return p;
            }
            cur = index.get(c.as_str()).and_then(|&i| self.rows[i].parent.clone());
        }
        self.visible.len().saturating_sub(1)
    }

    fn shown(&self, r: &TreeRow) -> bool {
        if r.kind == Kind::Hidden || (r.kind == Kind::ToolCalls && !r.is_leaf) {
            return false;
        }
        let by_filter = match self.filter {
            TreeFilter::All => true,
            TreeFilter::Default => r.kind != Kind::Meta,
            TreeFilter::NoTools => !matches!(r.kind, Kind::Meta | Kind::Tool),
            TreeFilter::UserOnly => r.kind == Kind::User,
            TreeFilter::Labeled => r.label.is_some(),
        };
        by_filter
            && self
                .query
                .to_lowercase()
                .split_whitespace()
                .all(|token| r.search.contains(token))
    }

    fn refilter(&mut self) {
        if !self.visible.is_empty() {
            self.last_selected = self.selected_id().or(self.last_selected.take());
        }
        let index: HashMap<&str, usize> = self.rows.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
        let parent_of = |i: usize| self.rows[i].parent.as_deref().and_then(|p| index.get(p).copied());
        // Rows come parents first, so one pass finds everything under a folded entry.
        let mut hidden = vec![false; self.rows.len()];
        for i in 0..self.rows.len() {
            if let Some(p) = parent_of(i) {
                hidden[i] = hidden[p] || self.folded.contains(&self.rows[p].id);
            }
        }
        self.visible = (0..self.rows.len())
            .filter(|&i| !hidden[i] && self.shown(&self.rows[i]))
            .collect();
        let is_visible: std::collections::HashSet<usize> = self.visible.iter().copied().collect();
        self.shown_parent.clear();
        self.shown_children.clear();
        let mut roots = Vec::new();
        for &i in &self.visible {
            let mut p = parent_of(i);
            while let Some(q) = p.filter(|q| !is_visible.contains(q)) {
                p = parent_of(q);
            }
            self.shown_parent.insert(i, p);
            match p {
                Some(p) => self.shown_children.entry(p).or_default().push(i),
                None => roots.push(i),
            }
        }
        self.lay_out(&roots);
        self.selected = self.nearest_shown(self.last_selected.clone().as_deref());
        if !self.visible.is_empty() {
            self.last_selected = self.selected_id();
        }
    }

    /// Indentation, connectors and gutters of the shown rows: a fork indents its children
    /// (and the first generation after it) one level and draws `├─`/`└─` before them; a
    /// chain without forks stays flat.
    fn lay_out(&mut self, roots: &[usize]) {
        self.multiple_roots = roots.len() > 1;
        let mut by_row: HashMap<usize, Layout> = HashMap::new();
        // (row, indent, just branched, connector, last, gutters, root among several)
        type Pending = (usize, usize, bool, bool, bool, Vec<(usize, bool)>, bool);
        let multi = self.multiple_roots;
        let mut stack: Vec<Pending> = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(k, &r)| {
                (
                    r,
                    usize::from(multi),
                    multi,
                    multi,
                    k + 1 == roots.len(),
                    Vec::new(),
                    multi,
                )
            })
            .collect();
        while let Some((row, indent, branched, connector, last, gutters, virtual_child)) = stack.pop() {
            let kids = self.shown_children.get(&row).cloned().unwrap_or_default();
            let forks = kids.len() > 1;
            let child_indent = if forks || (branched && indent > 0) {
                indent + 1
            } else {
                indent
            };
            let display = if multi { indent.saturating_sub(1) } else { indent };
            let child_gutters = if connector && !virtual_child {
                let mut g = gutters.clone();
                g.push((display.saturating_sub(1), !last));
                g
            } else {
                gutters.clone()
            };
            for (k, &c) in kids.iter().enumerate().rev() {
                stack.push((
                    c,
                    child_indent,
                    forks,
                    forks,
                    k + 1 == kids.len(),
                    child_gutters.clone(),
                    false,
                ));
            }
            by_row.insert(
                row,
                Layout {
                    indent,
                    connector,
                    last,
                    gutters,
                    virtual_child,
                },
            );
        }
        self.layout = self
            .visible
            .iter()
            .map(|i| by_row.remove(i).unwrap_or_default())
            .collect();
    }

    /// The tree drawing before a row's text: gutters, the connector with its fold mark.
    fn prefix(&self, pos: usize) -> String {
        let l = &self.layout[pos];
        let row = self.visible[pos];
        let display = if self.multiple_roots {
            l.indent.saturating_sub(1)
        } else {
            l.indent
        };
        let connector = l.connector && !l.virtual_child;
        let folded = self.folded.contains(&self.rows[row].id);
        let mut out = String::new();
        for i in 0..display * 3 {
            let (level, at) = (i / 3, i % 3);
            if let Some(&(_, show)) = l.gutters.iter().find(|(p, _)| *p == level) {
                out.push(if at == 0 && show { '│' } else { ' ' });
            } else if connector && level + 1 == display {
                out.push(match at {
                    0 if l.last => '└',
                    0 => '├',
                    1 if folded => '⊞',
                    1 if self.is_foldable(row) => '⊟',
                    1 => '─',
                    _ => ' ',
                });
            } else {
                out.push(' ');
            }
        }
        out
    }

    fn status_labels(&self) -> String {
        let mut s = match self.filter {
            TreeFilter::NoTools => " [no-tools]",
            TreeFilter::UserOnly => " [user]",
            TreeFilter::Labeled => " [labeled]",
            TreeFilter::All => " [all]",
            TreeFilter::Default => "",
        }
        .to_string();
        if self.show_label_times {
            s.push_str(" [+label time]");
        }
        s
    }

    /// The help rows: the keys of each action, joined and wrapped at `width`.
    fn help_lines(&self, width: usize) -> Vec<String> {
        let kb = keybindings();
        let app = |id: &str| kb.keys(id).into_iter().next();
        let keys = |ids: &[&str]| -> String {
            let ks: Vec<String> = ids.iter().filter_map(|id| app(id)).collect();
            if ks.is_empty() {
                return String::new();
            }
            let compact = if ks.len() == 1 {
                ks[0].clone()
            } else {
                let split = |k: &str| match k.rfind('+') {
                    Some(i) => (k[..=i].to_string(), k[i + 1..].to_string()),
                    None => (String::new(), k.to_string()),
                };
                let parts: Vec<(String, String)> = ks.iter().map(|k| split(k)).collect();
                let prefix = parts[0].0.clone();
                if !prefix.is_empty() && parts.iter().all(|(p, _)| *p == prefix) {
                    format!(
                        "{prefix}{}",
                        parts.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join("/")
                    )
                } else {
                    ks.join("/")
                }
            };
            compact
                .split('/')
                .map(|k| {
                    k.split('+')
                        .map(|w| match w {
                            "pageUp" => "pgup",
                            "pageDown" => "pgdn",
                            "up" => "↑",
                            "down" => "↓",
                            "left" => "←",
                            "right" => "→",
                            w => w,
                        })
                        .collect::<Vec<_>>()
                        .join("+")
                })
                .collect::<Vec<_>>()
                .join("/")
        };
        let items: [(&[&str], &str, bool); 8] = [
            (&["tui.select.up", "tui.select.down"], "move", false),
            (&["tui.editor.cursorLeft", "tui.editor.cursorRight"], "page", false),
            (&["app.tree.foldOrUp", "app.tree.unfoldOrDown"], "branch", false),
            (&["app.message.copy"], "copy", false),
            (&["app.tree.editLabel"], "label", false),
            (&["app.tree.toggleLabelTimestamp"], "label time", false),
            (
                &[
                    "app.tree.filter.default",
                    "app.tree.filter.noTools",
                    "app.tree.filter.userOnly",
                    "app.tree.filter.labeledOnly",
                    "app.tree.filter.all",
                ],
                "filters",
                true,
            ),
            (
                &["app.tree.filter.cycleForward", "app.tree.filter.cycleBackward"],
                "cycle",
                true,
            ),
        ];
        let indent = "  ";
        let mut lines = Vec::new();
        let mut current = String::new();
        for (ids, label, label_first) in items {
            let k = keys(ids);
            let item = if k.is_empty() {
                label.to_string()
            } else if label_first {
                format!("{label} {k}")
            } else {
                format!("{k} {label}")
            };
            let fresh = if pi_tui::visible_width(&format!("{indent}{item}")) <= width {
                format!("{indent}{item}")
            } else {
                item.clone()
            };
            if current.is_empty() {
                current = fresh;
                continue;
            }
            let candidate = format!("{current} · {item}");
            if pi_tui::visible_width(&candidate) <= width {
                current = candidate;
            } else {
                lines.extend(pi_tui::wrap_text(current.trim_end(), width.max(1)));
                current = fresh;
            }
        }
        if !current.is_empty() {
            lines.extend(pi_tui::wrap_text(current.trim_end(), width.max(1)));
        }
        lines.into_iter().map(|l| self.theme.paint("muted", &l)).collect()
    }

    pub fn take_event(&mut self) -> Option<TreeEvent> {
        self.event.take()
    }

    /// Put the cursor on entry `id` (when it is shown).
    pub fn select(&mut self, id: &str) {
        if let Some(p) = self.visible.iter().position(|&i| self.rows[i].id == id) {
            self.selected = p;
            self.last_selected = Some(id.to_string());
        }
    }

    /// A shown entry with shown children that starts a branch (or is a root) can fold.
    fn is_foldable(&self, row: usize) -> bool {
        if self.shown_children.get(&row).is_none_or(|c| c.is_empty()) {
            return false;
        }
        match self.shown_parent.get(&row).copied().flatten() {
            None => true,
            Some(p) => self.shown_children.get(&p).is_some_and(|c| c.len() > 1),
        }
    }

    /// The position of the next branch start up (along the parents) or down (along first
    /// children), as Ctrl+←/→ move when there is nothing to fold.
    fn segment_start(&self, up: bool) -> usize {
        let Some(&start) = self.visible.get(self.selected) else {
            return self.selected;
        };
        let pos = |row: usize| self.visible.iter().position(|&i| i == row).unwrap_or(self.selected);
        let mut cur = start;
        if !up {
            loop {
                match self.shown_children.get(&cur).map(Vec::as_slice) {
                    None | Some([]) => return pos(cur),
                    Some([only]) => cur = *only,
                    Some([first, ..]) => return pos(*first),
                }
            }
        }
        loop {
            let Some(parent) = self.shown_parent.get(&cur).copied().flatten() else {
                return pos(cur);
            };
            if self.shown_children.get(&parent).is_some_and(|c| c.len() > 1) && pos(cur) < self.selected {
                return pos(cur);
            }
            cur = parent;
        }
    }

    fn set_label(&mut self, id: &str, label: Option<String>) {
        if let Some(r) = self.rows.iter_mut().find(|r| r.id == id) {
            r.label_time = label.as_ref().map(|_| now_iso());
            r.label = label;
        }
        self.refilter();
    }

    fn handle_label_key(&mut self, k: &pi_tui::KeyEvent) {
        let Some((id, input)) = &mut self.editing else { return };
        let kb = keybindings();
        if kb.matches(k, "tui.select.confirm") {
            let id = id.clone();
            let value = input.value().trim().to_string();
            let label = (!value.is_empty()).then_some(value);
            self.editing = None;
            self.set_label(&id, label.clone());
            self.event = Some(TreeEvent::Label { id, label });
        } else if kb.matches(k, "tui.select.cancel") {
            self.editing = None;
        } else if input.handle_key(k) == InputFieldEvent::Ignored {
            // Keys the field does not use are dropped while editing.
        }
    }

    fn set_filter(&mut self, f: TreeFilter) {
        self.filter = f;
        self.folded.clear();
        self.refilter();
    }

    /// The filter a filter key asks for: Ctrl+D resets, the others toggle their filter with
    /// the default, Ctrl+O / Shift+Ctrl+O cycle.
    fn filter_key(&self, k: &pi_tui::KeyEvent) -> Option<TreeFilter> {
        const ORDER: [TreeFilter; 5] = [
            TreeFilter::Default,
            TreeFilter::NoTools,
            TreeFilter::UserOnly,
            TreeFilter::Labeled,
            TreeFilter::All,
        ];
        let kb = keybindings();
        let toggle = |f: TreeFilter| Some(if self.filter == f { TreeFilter::Default } else { f });
        let at = ORDER.iter().position(|f| *f == self.filter).unwrap_or(0);
        if kb.matches(k, "app.tree.filter.default") {
            Some(TreeFilter::Default)
        } else if kb.matches(k, "app.tree.filter.noTools") {
            toggle(TreeFilter::NoTools)
        } else if kb.matches(k, "app.tree.filter.userOnly") {
            toggle(TreeFilter::UserOnly)
        } else if kb.matches(k, "app.tree.filter.labeledOnly") {
            toggle(TreeFilter::Labeled)
        } else if kb.matches(k, "app.tree.filter.all") {
            toggle(TreeFilter::All)
        } else if kb.matches(k, "app.tree.filter.cycleForward") {
            Some(ORDER[(at + 1) % ORDER.len()])
        } else if kb.matches(k, "app.tree.filter.cycleBackward") {
            Some(ORDER[(at + ORDER.len() - 1) % ORDER.len()])
        } else {
            None
        }
    }
}

impl Component for TreeSelector {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let border = t.paint("border", &"─".repeat(width));
        out.push_line(String::new());
        out.push_line(border.clone());
        out.push_line(truncate_to_width(
            // Bold in the terminal's own colour, as pi 1.6 draws the title.
            &format!(" {}", pi_tui::Style::new().bold().paint("  Session Tree")),
            width,
            "",
        ));
        for l in self.help_lines(width) {
            out.push_line(l);
        }
        let search = if self.query.is_empty() {
            format!("  {} ", t.paint("muted", "Type to search:"))
        } else {
            format!(
                "  {} {}",
                t.paint("muted", "Type to search:"),
                t.paint("accent", &self.query)
            )
        };
        if self.focused && self.editing.is_none() {
            // The cursor cell after the query, kept inside the width.
            let shown = truncate_to_width(&search, width.saturating_sub(1), "");
            out.push_line(format!("{shown}{}\x1b[7m \x1b[27m", pi_tui::CURSOR_MARKER));
        } else {
            out.push_line(truncate_to_width(&search, width, ""));
        }
        out.push_line(border.clone());
        out.push_line(String::new());
        if let Some((_, input)) = &mut self.editing {
            out.push_line(truncate_to_width(
                &format!("  {}", t.paint("muted", "Label (empty to remove):")),
                width,
                "",
            ));
            let mut sub = Frame::default();
            input.render(width.saturating_sub(2).max(1), &mut sub);
            for l in sub.to_vec() {
                out.push_line(truncate_to_width(&format!("  {l}"), width, ""));
            }
            let kb = keybindings();
            let hint = |id: &str, what: &str| {
                format!(
                    "{}{}",
                    t.paint("dim", &kb.keys(id).join("/")),
                    t.paint("muted", &format!(" {what}"))
                )
            };
            out.push_line(truncate_to_width(
                &format!(
                    "  {}  {}",
                    hint("tui.select.confirm", "save"),
                    hint("tui.select.cancel", "cancel")
                ),
                width,
                "",
            ));
        } else if self.visible.is_empty() {
            out.push_line(truncate_to_width(&t.paint("muted", "  No entries found"), width, ""));
            out.push_line(truncate_to_width(
                &t.paint("muted", &format!("  (0/0){}", self.status_labels())),
                width,
                "",
            ));
        } else {
            let n = self.visible.len();
            let start = self
                .selected
                .saturating_sub(self.max_visible / 2)
                .min(n.saturating_sub(self.max_visible));
            let end = (start + self.max_visible).min(n);
            // A theme whose selection background is the terminal's own (the `system` theme without
            // reported colours) marks the row by its colours alone, as pi 1.6 does.
            let selected_bg = t.bg("selectedBg");
            for pos in start..end {
                let row = &self.rows[self.visible[pos]];
                let selected = pos == self.selected;
                let cursor = if selected {
                    t.paint("accent", "› ")
                } else {
                    "  ".into()
                };
                let connector_shown = self.layout[pos].connector && !self.layout[pos].virtual_child;
                let folded = self.folded.contains(&row.id);
                let mut body = t.paint("dim", &self.prefix(pos));
                if folded && !connector_shown {
                    body.push_str(&t.paint("accent", "⊞ "));
                }
                if row.on_path {
                    body.push_str(&t.paint("accent", "• "));
                }
                if let Some(l) = &row.label {
                    body.push_str(&t.paint("warning", &format!("[{l}] ")));
                    if let Some(time) = row.label_time.as_deref().filter(|_| self.show_label_times) {
                        body.push_str(&t.paint("muted", &format!("{} ", label_time(time, &now_iso()))));
                    }
                }
                let mut text = String::new();
                for (token, piece) in &row.parts {
                    text.push_str(&if token.is_empty() {
                        piece.clone()
                    } else {
                        t.paint(token, piece)
                    });
                }
                body.push_str(&if selected { format!("[1m{text}[22m") } else { text });
                let line = truncate_to_width(&format!("{cursor}{body}"), width, "");
                out.push_line(match selected_bg {
                    Some(bg) if selected => pi_tui::apply_background(&line, width, bg),
                    _ => line,
                });
            }
            out.push_line(truncate_to_width(
                &t.paint(
                    "muted",
                    &format!("  ({}/{n}){}", self.selected + 1, self.status_labels()),
                ),
                width,
                "",
            ));
        }
        out.push_line(String::new());
        out.push_line(border);
    }

    fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        if self.editing.is_some() {
            self.handle_label_key(k);
            return true;
        }
        let kb = keybindings();
        let page = self.max_visible.max(1);
        let last = self.visible.len().saturating_sub(1);
        if kb.matches(k, "tui.select.up") {
            self.selected = if self.selected == 0 { last } else { self.selected - 1 };
        } else if kb.matches(k, "tui.select.down") {
            self.selected = if self.selected >= last { 0 } else { self.selected + 1 };
        } else if kb.matches(k, "app.tree.foldOrUp") {
            match self.visible.get(self.selected).copied() {
                Some(row) if self.is_foldable(row) && !self.folded.contains(&self.rows[row].id) => {
                    self.folded.insert(self.rows[row].id.clone());
                    self.refilter();
                }
                _ => self.selected = self.segment_start(true),
            }
        } else if kb.matches(k, "app.tree.unfoldOrDown") {
            match self.visible.get(self.selected).copied() {
                Some(row) if self.folded.contains(&self.rows[row].id) => {
                    self.folded.remove(&self.rows[row].id);
                    self.refilter();
                }
                _ => self.selected = self.segment_start(false),
            }
        } else if kb.matches(k, "tui.editor.cursorLeft") || kb.matches(k, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(page);
        } else if kb.matches(k, "tui.editor.cursorRight") || kb.matches(k, "tui.select.pageDown") {
            self.selected = (self.selected + page).min(last);
        } else if kb.matches(k, "tui.select.confirm") {
            if let Some(&i) = self.visible.get(self.selected) {
                self.event = Some(TreeEvent::Selected(self.rows[i].id.clone()));
            }
        } else if kb.matches(k, "app.message.copy") {
            let text = self.visible.get(self.selected).and_then(|&i| self.rows[i].copy.clone());
            self.event = Some(TreeEvent::Copy(text));
        } else if kb.matches(k, "tui.select.cancel") {
            if self.query.is_empty() {
                self.event = Some(TreeEvent::Cancelled);
            } else {
                self.query.clear();
                self.folded.clear();
                self.refilter();
            }
        } else if let Some(f) = self.filter_key(k) {
            self.set_filter(f);
        } else if kb.matches(k, "tui.editor.deleteCharBackward") {
            if self.query.pop().is_some() {
                self.folded.clear();
                self.refilter();
            }
        } else if kb.matches(k, "app.tree.editLabel") {
            if let Some(&i) = self.visible.get(self.selected) {
                let mut input = Input::new("> ");
                input.set_value(self.rows[i].label.as_deref().unwrap_or(""));
                input.set_focused(true);
                self.editing = Some((self.rows[i].id.clone(), input));
            }
        } else if kb.matches(k, "app.tree.toggleLabelTimestamp") {
            self.show_label_times = !self.show_label_times;
        } else if let Some(c) = k.text() {
            self.query.push(c);
            self.folded.clear();
            self.refilter();
        } else {
            return false;
        }
        true
    }
}

fn now_iso() -> String {
    pi_session::ids::now_iso()
}

/// A label's time as the tree shows it, in local time: `HH:MM` today, `M/D HH:MM` this year,
/// else `YY/M/D HH:MM`.
pub fn label_time(iso: &str, now_iso: &str) -> String {
    use chrono::{DateTime, Datelike, Local};
    let parse = |s: &str| DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Local));
    let (Some(t), Some(now)) = (parse(iso), parse(now_iso)) else {
        return String::new();
    };
    let time = t.format("%H:%M").to_string();
    if t.date_naive() == now.date_naive() {
        time
    } else if t.year() == now.year() {
        format!("{}/{} {time}", t.month(), t.day())
    } else {
        format!("{:02}/{}/{} {time}", t.year() % 100, t.month(), t.day())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(text: &str, kind: Kind, on_path: bool) -> TreeRow {
        TreeRow {
            id: text.to_string(),
            parent: None,
            parts: vec![("", text.to_string())],
            text: text.to_string(),
            search: text.to_lowercase(),
            copy: Some(text.to_string()),
            kind,
            label: None,
            label_time: None,
            on_path,
            is_leaf: false,
        }
    }

    #[test]
    fn filters_and_query_choose_rows() {
        let rows = vec![
            row("user: a", Kind::User, true),
            row("assistant: b", Kind::Assistant, true),
            row("[read]", Kind::Tool, true),
            row("[model: x]", Kind::Meta, true),
        ];
        let theme = Arc::new(UiTheme::fallback());
        let mut t = TreeSelector::new(rows, TreeFilter::Default, 10, theme);
        assert_eq!(t.visible.len(), 3);
        t.set_filter(TreeFilter::All);
        assert_eq!(t.visible.len(), 4);
        t.set_filter(TreeFilter::UserOnly);
        assert_eq!(t.visible.len(), 1);
        t.set_filter(TreeFilter::NoTools);
        t.query = "assist".into();
        t.refilter();
        assert_eq!(t.visible.len(), 1);
        let enter = pi_tui::parse_key("\r", false).expect("enter");
        t.handle_input(&InputEvent::Key(enter));
        assert_eq!(t.take_event(), Some(TreeEvent::Selected("assistant: b".into())));
    }

    #[test]
    fn shift_l_edits_a_label_and_enter_reports_it() {
        // The application's actions (app.tree.*) join the library's keys, as at startup.
        pi_tui::set_keybindings(super::super::keys::load_keybindings(std::path::Path::new("/nonexistent")).0);
        let rows = vec![
            row("user: a", Kind::User, true),
            row("assistant: b", Kind::Assistant, true),
        ];
        let mut t = TreeSelector::new(rows, TreeFilter::Default, 10, Arc::new(UiTheme::fallback()));
        let key = |s: &str| InputEvent::Key(pi_tui::parse_key(s, false).expect("key"));
        t.handle_input(&key("L"));
        assert!(t.editing.is_some());
        for c in ["m", "i", "l", "e"] {
            t.handle_input(&key(c));
        }
        t.handle_input(&key("\r"));
        let id = t.rows[t.visible[t.selected]].id.clone();
        assert_eq!(
            t.take_event(),
            Some(TreeEvent::Label {
                id: id.clone(),
                label: Some("mile".into())
            })
        );
        assert_eq!(t.rows[t.visible[t.selected]].label.as_deref(), Some("mile"));
        // An empty label removes it.
        t.handle_input(&key("L"));
        for _ in 0..4 {
            t.handle_input(&key("\x7f"));
        }
        t.handle_input(&key("\r"));
        assert_eq!(t.take_event(), Some(TreeEvent::Label { id, label: None }));
        // Shift+T only toggles the label times.
        t.handle_input(&key("T"));
        assert!(t.show_label_times && t.query.is_empty());
    }

    #[test]
    fn ctrl_arrows_fold_branches_and_filter_keys_toggle() {
        pi_tui::set_keybindings(super::super::keys::load_keybindings(std::path::Path::new("/nonexistent")).0);
        let mk = |id: &str, parent: Option<&str>| TreeRow {
            parent: parent.map(str::to_string),
            ..row(id, Kind::User, false)
        };
        // a → b → {c → e, d}
        let rows = vec![
            mk("a", None),
            mk("b", Some("a")),
            mk("c", Some("b")),
            mk("e", Some("c")),
            mk("d", Some("b")),
        ];
        let mut t = TreeSelector::new(rows, TreeFilter::Default, 10, Arc::new(UiTheme::fallback()));
        let key = |s: &str| InputEvent::Key(pi_tui::parse_key(s, false).expect("key"));
        assert_eq!(t.visible.len(), 5);
        t.select("c");
        assert!(t.is_foldable(2) && !t.is_foldable(1) && t.is_foldable(0));
        t.handle_input(&key("\x1b[1;5D")); // Ctrl+←
        assert_eq!(t.visible.len(), 4, "e is folded away");
        t.handle_input(&key("\x1b[1;5C")); // Ctrl+→
        assert_eq!(t.visible.len(), 5);
        // Nothing to fold on e: Ctrl+← goes back to the start of its branch.
        t.select("e");
        t.handle_input(&key("\x1b[1;5D"));
        assert_eq!(t.rows[t.visible[t.selected]].id, "c");
        // Ctrl+U toggles user-only and back; Ctrl+O cycles.
        t.handle_input(&key("\x15"));
        assert_eq!(t.filter, TreeFilter::UserOnly);
        t.handle_input(&key("\x15"));
        assert_eq!(t.filter, TreeFilter::Default);
        t.handle_input(&key("\x0f"));
        assert_eq!(t.filter, TreeFilter::NoTools);
    }

    #[test]
    fn entries_after_a_label_stay_in_the_tree() {
        let mut s = SessionManager::in_memory("/tmp");
        let a = s.append_message(pi_ai::Message::user_text("first")).expect("append");
        s.append_label(&a, Some("start")).expect("label");
        s.append_message(pi_ai::Message::user_text("second")).expect("append");
        let rows = tree_rows(&s);
        let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, ["user: first", "[label: start]", "user: second"]);
        assert_eq!(rows[0].label.as_deref(), Some("start"));
        let t = TreeSelector::new(rows, TreeFilter::Default, 10, Arc::new(UiTheme::fallback()));
        // The default filter hides the label entry itself.
        assert_eq!(t.visible.len(), 2);
    }

    #[test]
    fn label_times_are_short_for_today() {
        let now = "2026-03-15T12:00:00.000Z";
        let today = label_time("2026-03-15T12:00:00.000Z", now);
        assert_eq!(today.len(), 5, "{today}");
        assert!(label_time("2026-01-02T12:00:00.000Z", now).contains('/'));
        assert!(label_time("2024-01-02T12:00:00.000Z", now).starts_with("24/"));
    }
}
