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
    fn name(self) -> &'static str {
        match self {
            TreeFilter::Default => "default",
            TreeFilter::NoTools => "no-tools",
            TreeFilter::UserOnly => "user-only",
            TreeFilter::Labeled => "labeled-only",
            TreeFilter::All => "all",
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
    Meta,
    Other,
}

#[derive(Debug, Clone)]
pub struct TreeRow {
    pub id: String,
    parent: Option<String>,
    prefix: String,
    text: String,
    kind: Kind,
    label: Option<String>,
    /// When the label was set (ISO-8601).
    label_time: Option<String>,
    on_path: bool,
    is_leaf: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeEvent {
    Selected(String),
    /// A label was set (or with `None` removed) on an entry; the selector stays open.
    Label {
        id: String,
        label: Option<String>,
    },
    Cancelled,
}

pub struct TreeSelector {
    rows: Vec<TreeRow>,
    visible: Vec<usize>,
    selected: usize,
    filter: TreeFilter,
    query: String,
    max_visible: usize,
    theme: Arc<UiTheme>,
    event: Option<TreeEvent>,
    /// The label being edited: entry id and the text field.
    editing: Option<(String, Input)>,
    show_label_times: bool,
    /// Entries whose descendants are hidden.
    folded: std::collections::HashSet<String>,
    /// Nearest shown ancestor and shown children of every shown row (by row index).
    shown_parent: HashMap<usize, Option<usize>>,
    shown_children: HashMap<usize, Vec<usize>>,
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn describe(e: &Entry) -> (Kind, String) {
    match &e.kind {
        EntryKind::Message { message, .. } => {
            let m = pi_agent::AgentMessage::clone(message);
            match m {
                pi_agent::AgentMessage::Llm(pi_ai::Message::User(u)) => {
                    (Kind::User, format!("user: {}", one_line(&u.content.text())))
                }
                pi_agent::AgentMessage::Llm(pi_ai::Message::Assistant(a)) => {
                    let text: String = a
                        .content
                        .iter()
                        .filter_map(|c| match c {
                            pi_ai::Content::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    let calls: Vec<String> = a.tool_calls().map(|t| t.name.clone()).collect();
                    let normal_end = matches!(a.stop_reason, pi_ai::StopReason::Stop | pi_ai::StopReason::ToolUse);
                    if text.trim().is_empty() {
                        let kind = if normal_end { Kind::ToolCalls } else { Kind::Assistant };
                        (kind, format!("assistant: [{}]", calls.join(", ")))
                    } else {
                        (Kind::Assistant, format!("assistant: {}", one_line(&text)))
                    }
                }
                pi_agent::AgentMessage::Llm(pi_ai::Message::ToolResult(r)) => {
                    (Kind::Tool, format!("[{}]", r.tool_name))
                }
                pi_agent::AgentMessage::Custom(c) => (Kind::Other, format!("[{}]", c.role)),
            }
        }
        EntryKind::ModelChange { model_id, .. } => (Kind::Meta, format!("[model: {model_id}]")),
        EntryKind::ThinkingLevelChange { thinking_level, .. } => (Kind::Meta, format!("[thinking: {thinking_level}]")),
        EntryKind::Label { label, .. } => (
            Kind::Meta,
            format!(
                "[label: {}]",
                label.as_deref().filter(|l| !l.is_empty()).unwrap_or("(cleared)")
            ),
        ),
        // Bookkeeping entries: hidden unless the filter shows everything.
        EntryKind::SessionInfo { .. } | EntryKind::Custom { .. } => (Kind::Meta, format!("[{}]", e.kind.type_name())),
        other => (Kind::Other, format!("[{}]", other.type_name())),
    }
}

/// The rows of the store's tree, depth first in file order.
pub fn tree_rows(store: &SessionManager) -> Vec<TreeRow> {
    let entries = store.get_entries();
    let mut labels: HashMap<String, (Option<String>, String)> = HashMap::new();
    for e in entries {
        if let EntryKind::Label { target_id, label, .. } = &e.kind {
            labels.insert(target_id.clone(), (label.clone(), e.timestamp.clone()));
        }
    }
    let path: std::collections::HashSet<String> = store.get_branch(None).iter().map(|e| e.id.clone()).collect();
    let leaf = store.get_leaf_id().map(str::to_string);
    let mut children: HashMap<Option<&str>, Vec<&Entry>> = HashMap::new();
    // Label entries are part of the chain (later entries hang under them); the filters hide them.
    for e in entries {
        children.entry(e.parent_id.as_deref()).or_default().push(e);
    }
    let mut rows = Vec::new();
    // (entry, its own prefix, the prefix its descendants continue with)
    let mut stack: Vec<(&Entry, String, String)> = children
        .get(&None)
        .map(|v| v.iter().rev().map(|e| (*e, String::new(), String::new())).collect())
        .unwrap_or_default();
    while let Some((e, prefix, cont)) = stack.pop() {
        let (kind, text) = describe(e);
        rows.push(TreeRow {
            id: e.id.clone(),
            parent: e.parent_id.clone(),
            prefix,
            text,
            kind,
            label: labels.get(&e.id).and_then(|(l, _)| l.clone()).filter(|l| !l.is_empty()),
            label_time: labels.get(&e.id).map(|(_, t)| t.clone()),
            on_path: path.contains(&e.id),
            is_leaf: leaf.as_deref() == Some(e.id.as_str()),
        });
        if let Some(kids) = children.get(&Some(e.id.as_str())) {
            let branching = kids.len() > 1;
            for (k, c) in kids.iter().enumerate().rev() {
                let last = k + 1 == kids.len();
                let item = if branching {
                    (
                        format!("{cont}{}", if last { "└─ " } else { "├─ " }),
                        format!("{cont}{}", if last { "   " } else { "│  " }),
                    )
                } else {
                    (cont.clone(), cont.clone())
                };
                stack.push((c, item.0, item.1));
            }
        }
    }
    rows
}

impl TreeSelector {
    pub fn new(rows: Vec<TreeRow>, filter: TreeFilter, max_visible: usize, theme: Arc<UiTheme>) -> Self {
        let mut t = TreeSelector {
            rows,
            visible: Vec::new(),
            selected: 0,
            filter,
            query: String::new(),
            max_visible: max_visible.max(3),
            theme,
            event: None,
            editing: None,
            show_label_times: false,
            folded: Default::default(),
            shown_parent: HashMap::new(),
            shown_children: HashMap::new(),
        };
        t.refilter();
        // Start on the active leaf.
        if let Some(p) = t.visible.iter().position(|&i| t.rows[i].is_leaf) {
            t.selected = p;
        } else {
            t.selected = t.visible.len().saturating_sub(1);
        }
        t
    }

    fn shown(&self, r: &TreeRow) -> bool {
        if r.kind == Kind::ToolCalls && !r.is_leaf {
            return false;
        }
        let by_filter = match self.filter {
            TreeFilter::All => true,
            TreeFilter::Default => r.kind != Kind::Meta,
            TreeFilter::NoTools => !matches!(r.kind, Kind::Meta | Kind::Tool),
            TreeFilter::UserOnly => r.kind == Kind::User,
            TreeFilter::Labeled => r.label.is_some(),
        };
        let text = r.text.to_lowercase();
        by_filter
            && self
                .query
                .to_lowercase()
                .split_whitespace()
                .all(|token| text.contains(token))
    }

    fn refilter(&mut self) {
        let current = self.visible.get(self.selected).copied();
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
        for &i in &self.visible {
            let mut p = parent_of(i);
            while let Some(q) = p.filter(|q| !is_visible.contains(q)) {
                p = parent_of(q);
            }
            self.shown_parent.insert(i, p);
            if let Some(p) = p {
                self.shown_children.entry(p).or_default().push(i);
            }
        }
        self.selected = current
            .and_then(|c| self.visible.iter().position(|&i| i >= c))
            .unwrap_or(self.visible.len().saturating_sub(1));
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

    pub fn take_event(&mut self) -> Option<TreeEvent> {
        self.event.take()
    }

    /// Put the cursor on entry `id` (when it is shown).
    pub fn select(&mut self, id: &str) {
        if let Some(p) = self.visible.iter().position(|&i| self.rows[i].id == id) {
            self.selected = p;
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
        let t = &self.theme;
        out.push_line(t.paint("border", &"─".repeat(width)));
        let kb = keybindings();
        out.push_line(truncate_to_width(
            &format!(
                " {}  {}",
                t.bold("accent", "Session Tree"),
                t.paint(
                    "muted",
                    &format!(
                        "filter: {}{}{}",
                        self.filter.name(),
                        if self.show_label_times { " [+label time]" } else { "" },
                        if self.query.is_empty() {
                            String::new()
                        } else {
                            format!(" · search: {}", self.query)
                        },
                    )
                )
            ),
            width,
            "…",
        ));
        out.push_line(truncate_to_width(
            &t.paint(
                "dim",
                &format!(
                    " ↑↓ move · ←→ page · {}/{} fold/branch · enter select · esc cancel · {} label · {} label time · ^D ^T ^U ^L ^A filters ({} cycle)",
                    super::keys::key_hint(&kb, "app.tree.foldOrUp"),
                    super::keys::key_hint(&kb, "app.tree.unfoldOrDown"),
                    super::keys::key_hint(&kb, "app.tree.editLabel"),
                    super::keys::key_hint(&kb, "app.tree.toggleLabelTimestamp"),
                    super::keys::key_hint(&kb, "app.tree.filter.cycleForward"),
                ),
            ),
            width,
            "…",
        ));
        if let Some((_, input)) = &mut self.editing {
            out.push_line(t.paint("muted", "  Label (empty to remove):"));
            let mut sub = Frame::default();
            input.render(width.saturating_sub(2).max(1), &mut sub);
            for l in sub.to_vec() {
                out.push_line(format!("  {l}"));
            }
            out.push_line(t.paint("dim", "  enter save · esc cancel"));
            out.push_line(t.paint("border", &"─".repeat(width)));
            return;
        }
        if self.visible.is_empty() {
            out.push_line(t.paint("muted", "  No entries match"));
        }
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(self.visible.len().saturating_sub(self.max_visible));
        for (k, &i) in self.visible.iter().enumerate().skip(start).take(self.max_visible) {
            let r = &self.rows[i];
            let mut line = format!(
                "{}{} ",
                if k == self.selected { "›" } else { " " },
                if r.on_path { "•" } else { " " }
            );
            line.push_str(&r.prefix);
            if self.folded.contains(&r.id) {
                line.push_str(&t.paint("accent", "⊞ "));
            } else if self.is_foldable(i) {
                line.push_str(&t.paint("dim", "⊟ "));
            }
            if let Some(l) = &r.label {
                line.push_str(&t.paint("warning", &format!("[{l}] ")));
                if let Some(time) = r.label_time.as_deref().filter(|_| self.show_label_times) {
                    line.push_str(&t.paint("muted", &format!("{} ", label_time(time, &now_iso()))));
                }
            }
            let token = match r.kind {
                Kind::User => "accent",
                Kind::Assistant => "text",
                _ => "muted",
            };
            line.push_str(&t.paint(token, &r.text));
            if r.is_leaf {
                line.push_str(&t.paint("success", " ← active"));
            }
            let line = truncate_to_width(&line, width, "…");
            out.push_line(if k == self.selected {
                pi_tui::apply_background(&line, width, t.bg("selectedBg").unwrap_or(pi_tui::Color::Indexed(237)))
            } else {
                line
            });
        }
        out.push_line(t.paint("border", &"─".repeat(width)));
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        if self.editing.is_some() {
            self.handle_label_key(k);
            return true;
        }
        let kb = keybindings();
        if kb.matches(k, "app.tree.editLabel") {
            if let Some(&i) = self.visible.get(self.selected) {
                let mut input = Input::new("> ");
                input.set_value(self.rows[i].label.as_deref().unwrap_or(""));
                input.set_focused(true);
                self.editing = Some((self.rows[i].id.clone(), input));
            }
            return true;
        }
        if kb.matches(k, "app.tree.toggleLabelTimestamp") {
            self.show_label_times = !self.show_label_times;
            return true;
        }
        let page = self.max_visible.max(1);
        let last = self.visible.len().saturating_sub(1);
        if k.matches("up") {
            self.selected = if self.selected == 0 { last } else { self.selected - 1 };
        } else if k.matches("down") {
            self.selected = if self.selected >= last { 0 } else { self.selected + 1 };
        } else if k.matches("left") || k.matches("pageUp") {
            self.selected = self.selected.saturating_sub(page);
        } else if k.matches("right") || k.matches("pageDown") {
            self.selected = (self.selected + page).min(last);
        } else if k.matches("enter") {
            if let Some(&i) = self.visible.get(self.selected) {
                self.event = Some(TreeEvent::Selected(self.rows[i].id.clone()));
            }
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
        } else if k.matches("escape") && !self.query.is_empty() {
            self.query.clear();
            self.folded.clear();
            self.refilter();
        } else if k.matches("escape") || k.matches("ctrl+c") {
            self.event = Some(TreeEvent::Cancelled);
        } else if let Some(f) = self.filter_key(k) {
            self.set_filter(f);
        } else if k.matches("backspace") {
            self.query.pop();
            self.refilter();
        } else if let Some(c) = k.text() {
            self.query.push(c);
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
            prefix: String::new(),
            text: text.to_string(),
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
