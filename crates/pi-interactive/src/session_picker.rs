//! `/resume` as pi 1.6 draws it in the dock: a title with the scope, name filter and sort,
//! two key-hint rows, a search line and one row per session (forks threaded under their
//! parent, the message count and age on the right). Tab switches between this folder's
//! sessions and all of them; Ctrl+S sorts, Ctrl+N shows only named sessions, Ctrl+P shows
//! paths, Ctrl+D deletes (after a confirmation), Ctrl+R renames.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_session::SessionInfo;
use pi_tui::components::Input;
use pi_tui::{keybindings, truncate_to_width, visible_width, Component, Frame, InputEvent};

use super::dialogs::DialogResult;
use super::session_search::{filter_and_sort, Sort};
use super::theme::UiTheme;

const MAX_VISIBLE: usize = 10;

/// One shown row: the session (index into the scope's list) and its place in the thread.
struct Row {
    session: usize,
    depth: usize,
    last: bool,
    /// For each ancestor below the root: whether its branch goes on below this row.
    continues: Vec<bool>,
}

pub struct SessionPicker {
    /// The row of the search (or rename) field in the last render, for the mouse.
    field_row: usize,
    current: Vec<SessionInfo>,
    all: Vec<SessionInfo>,
    scope_all: bool,
    sort: Sort,
    named_only: bool,
    show_path: bool,
    rows: Vec<Row>,
    selected: usize,
    search: Input,
    current_file: Option<PathBuf>,
    confirming_delete: Option<PathBuf>,
    /// A message in place of the hints for a while: (is an error, text, shown until).
    status: Option<(bool, String, std::time::Instant)>,
    rename: Option<(PathBuf, Input)>,
    theme: Arc<UiTheme>,
    result: Option<DialogResult>,
    now_ms: i64,
    /// Names the session in use: its file is held by this process, so it is renamed
    /// through the session rather than by opening the file again.
    rename_current: Option<RenameCurrent>,
}

/// Gives the session in use a name.
pub type RenameCurrent = Box<dyn FnMut(String) + Send>;

/// An age as pi shows it: `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `1y`.
pub fn age(ms: i64) -> String {
    let mins = ms.max(0) / 60_000;
    let hours = ms.max(0) / 3_600_000;
    let days = ms.max(0) / 86_400_000;
    if mins < 1 {
        "now".into()
    } else if mins < 60 {
        format!("{mins}m")
    } else if hours < 24 {
        format!("{hours}h")
    } else if days < 7 {
        format!("{days}d")
    } else if days < 30 {
        format!("{}w", days / 7)
    } else if days < 365 {
        format!("{}mo", days / 30)
    } else {
        format!("{}y", days / 365)
    }
}

fn home_short(p: &str) -> String {
    match std::env::var("HOME").ok().filter(|h| !h.is_empty()) {
        Some(h) if p == h => "~".to_string(),
        Some(h) if p.starts_with(&format!("{h}/")) => format!("~{}", &p[h.len()..]),
        _ => p.to_string(),
    }
}

/// `secs` from now (how long a status message stays).
fn later(secs: u64) -> std::time::Instant {
    std::time::Instant::now() + std::time::Duration::from_secs(secs)
}

/// Move a session file to the trash with `trash` when it is there, else delete it.
fn delete_file(path: &Path) -> Result<&'static str, String> {
    let trashed = std::process::Command::new("trash")
        .arg("--")
        .arg(path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if trashed || !path.exists() {
        return Ok("Session moved to trash");
    }
    std::fs::remove_file(path)
        .map(|()| "Session deleted")
        .map_err(|e| e.to_string())
}

impl SessionPicker {
    /// `current` this folder's sessions and `all` every project's, newest first.
    pub fn new(
        current: Vec<SessionInfo>,
        all: Vec<SessionInfo>,
        current_file: Option<PathBuf>,
        theme: Arc<UiTheme>,
        now_ms: i64,
    ) -> Self {
        let mut p = SessionPicker {
            current,
            all,
            scope_all: false,
            sort: Sort::Threaded,
            named_only: false,
            show_path: false,
            rows: Vec::new(),
            selected: 0,
            search: Input::new("> "),
            field_row: 0,
            current_file,
            confirming_delete: None,
            status: None,
            rename: None,
            theme,
            result: None,
            now_ms,
            rename_current: None,
        };
        p.refilter();
        p
    }

    pub fn take_result(&mut self) -> Option<DialogResult> {
        self.result.take()
    }

    fn sessions(&self) -> &[SessionInfo] {
        if self.scope_all {
            &self.all
        } else {
            &self.current
        }
    }

    fn selected_path(&self) -> Option<PathBuf> {
        self.rows
            .get(self.selected)
            .map(|r| self.sessions()[r.session].path.clone())
    }

    /// The shown rows for the scope, name filter, sort and query (the cursor kept in range).
    fn refilter(&mut self) {
        let list = self.sessions();
        let named: Vec<usize> = (0..list.len())
            .filter(|&i| !self.named_only || list[i].name.as_deref().is_some_and(|n| !n.trim().is_empty()))
            .collect();
        let query = self.search.value().trim().to_string();
        self.rows = if self.sort == Sort::Threaded && query.is_empty() {
            threaded(list, &named)
        } else {
            let refs: Vec<&SessionInfo> = named.iter().map(|&i| &list[i]).collect();
            let index: std::collections::HashMap<&Path, usize> =
                named.iter().map(|&i| (list[i].path.as_path(), i)).collect();
            filter_and_sort(&refs, &query, self.sort)
                .into_iter()
                .filter_map(|s| index.get(s.path.as_path()))
                .map(|&i| Row {
                    session: i,
                    depth: 0,
                    last: true,
                    continues: Vec::new(),
                })
                .collect()
        };
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    fn is_current(&self, path: &Path) -> bool {
        self.current_file.as_deref() == Some(path)
    }

    fn delete(&mut self, path: PathBuf) {
        match delete_file(&path) {
            Ok(message) => {
                self.current.retain(|s| s.path != path);
                self.all.retain(|s| s.path != path);
                self.status = Some((false, message.into(), later(2)));
                self.refilter();
            }
            Err(e) => self.status = Some((true, format!("Failed to delete: {e}"), later(3))),
        }
    }

    /// Rename the session in use with `rename` (as `/name` does) instead of opening its file.
    pub fn with_current_rename(mut self, rename: RenameCurrent) -> Self {
        self.rename_current = Some(rename);
        self
    }

    fn rename_to(&mut self, path: &Path, name: &str) -> Result<(), String> {
        match self
            .rename_current
            .as_mut()
            .filter(|_| self.current_file.as_deref() == Some(path))
        {
            Some(rename) => rename(name.to_string()),
            None => {
                let mut store = pi_session::SessionManager::open(path).map_err(|e| e.to_string())?;
                store.append_session_info(name).map_err(|e| e.to_string())?;
            }
        }
        for s in self.current.iter_mut().chain(self.all.iter_mut()) {
            if s.path == path {
                s.name = Some(name.to_string());
            }
        }
        Ok(())
    }

    fn header(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let title = if self.scope_all {
            "Resume Session (All)"
        } else {
            "Resume Session (Current Folder)"
        };
        let scope = if self.scope_all {
            format!(
                "{}{}",
                t.paint("muted", "○ Current Folder | "),
                t.paint("accent", "◉ All")
            )
        } else {
            format!(
                "{}{}",
                t.paint("accent", "◉ Current Folder"),
                t.paint("muted", " | ○ All")
            )
        };
        let name = format!(
            "{}{}",
            t.paint("muted", "Name: "),
            t.paint("accent", if self.named_only { "Named" } else { "All" })
        );
        let sort = format!("{}{}", t.paint("muted", "Sort: "), t.paint("accent", self.sort.label()));
        let right = truncate_to_width(&format!("{scope}  {name}  {sort}"), width, "");
        let left = truncate_to_width(
            // Bold in the terminal's own colour, as pi 1.6 draws the title.
            &pi_tui::Style::new().bold().paint(title),
            width.saturating_sub(visible_width(&right) + 1),
            "",
        );
        let spacing = width.saturating_sub(visible_width(&left) + visible_width(&right));
        let first = format!("{left}{}{right}", " ".repeat(spacing));
        let kb = keybindings();
        let hint = |id: &str, what: &str| {
            format!(
                "{}{}",
                t.paint("dim", &kb.keys(id).join("/")),
                t.paint("muted", &format!(" {what}"))
            )
        };
        let (one, two) = if self.confirming_delete.is_some() {
            let text = format!(
                "Delete session? {} · {}",
                hint("tui.select.confirm", "confirm"),
                hint("tui.select.cancel", "cancel")
            );
            (t.paint("error", &truncate_to_width(&text, width, "…")), String::new())
        } else if let Some((error, message, _)) = self
            .status
            .as_ref()
            .filter(|(_, _, until)| std::time::Instant::now() < *until)
        {
            let token = if *error { "error" } else { "accent" };
            (t.paint(token, &truncate_to_width(message, width, "…")), String::new())
        } else {
            let sep = t.paint("muted", " · ");
            let one = format!(
                "{}{sep}{}",
                hint("tui.input.tab", "scope"),
                t.paint("muted", "re:<pattern> regex · \"phrase\" exact")
            );
            let path = if self.show_path { "(on)" } else { "(off)" };
            let two = [
                hint("app.session.toggleSort", "sort"),
                hint("app.session.toggleNamedFilter", "named"),
                hint("app.session.delete", "delete"),
                hint("app.session.togglePath", &format!("path {path}")),
                hint("app.session.rename", "rename"),
            ]
            .join(&sep);
            (truncate_to_width(&one, width, "…"), truncate_to_width(&two, width, "…"))
        };
        vec![first, one, two]
    }

    fn render_rows(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        self.search.render(width, out);
        out.push_line(String::new());
        if self.rows.is_empty() {
            let message = if self.named_only {
                if self.scope_all {
                    "  No named sessions found. Press ctrl+n to show all."
                } else {
                    "  No named sessions in current folder. Press ctrl+n to show all, or Tab to view all."
                }
            } else if self.scope_all {
                "  No sessions found"
            } else {
                "  No sessions in current folder. Press Tab to view all."
            };
            out.push_line(t.paint("muted", &truncate_to_width(message, width, "…")));
            return;
        }
        let n = self.rows.len();
        let start = self
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(n.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(n);
        // A theme whose selection background is the terminal's own (the `system` theme without
        // reported colours) marks the row by its colours alone, as pi 1.6 does.
        let selected_bg = t.bg("selectedBg");
        for i in start..end {
            let row = &self.rows[i];
            let s = &self.sessions()[row.session];
            let selected = i == self.selected;
            let prefix = if row.depth == 0 {
                String::new()
            } else {
                let mut p: String = row.continues.iter().map(|c| if *c { "│  " } else { "   " }).collect();
                p.push_str(if row.last { "└─ " } else { "├─ " });
                p
            };
            let shown = s.name.clone().unwrap_or_else(|| s.first_message.clone());
            let message: String = shown
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect::<String>()
                .trim()
                .to_string();
            let mut right = format!("{} {}", s.message_count, age(self.now_ms - s.modified_ms));
            if self.scope_all && !s.cwd.is_empty() {
                right = format!("{} {right}", home_short(&s.cwd));
            }
            if self.show_path {
                right = format!("{} {right}", home_short(&s.path.display().to_string()));
            }
            let deleting = self.confirming_delete.as_deref() == Some(s.path.as_path());
            let cursor = if selected {
                t.paint("accent", "› ")
            } else {
                "  ".into()
            };
            let room = width
                .saturating_sub(2 + visible_width(&prefix) + visible_width(&right) + 2)
                .max(10);
            let msg = truncate_to_width(&message, room, "…");
            let token = if deleting {
                Some("error")
            } else if self.is_current(&s.path) {
                Some("accent")
            } else if s.name.is_some() {
                Some("warning")
            } else {
                None
            };
            let mut styled = token.map_or(msg.clone(), |tk| t.paint(tk, &msg));
            if selected {
                styled = format!("\x1b[1m{styled}\x1b[22m");
            }
            let left = format!("{cursor}{}{styled}", t.paint("dim", &prefix));
            let spacing = width
                .saturating_sub(visible_width(&left) + visible_width(&right))
                .max(1);
            let line = format!(
                "{left}{}{}",
                " ".repeat(spacing),
                t.paint(if deleting { "error" } else { "dim" }, &right)
            );
            let line = truncate_to_width(&line, width, "");
            out.push_line(match selected_bg {
                Some(bg) if selected => pi_tui::apply_background(&line, width, bg),
                _ => line,
            });
        }
        if start > 0 || end < n {
            out.push_line(t.paint(
                "muted",
                &truncate_to_width(&format!("  ({}/{n})", self.selected + 1), width, ""),
            ));
        }
    }

    fn handle_rename_key(&mut self, k: &pi_tui::KeyEvent) {
        let kb = keybindings();
        let Some((path, input)) = &mut self.rename else { return };
        if kb.matches(k, "tui.select.cancel") {
            self.rename = None;
        } else if kb.matches(k, "tui.select.confirm") {
            let name = input.value().trim().to_string();
            if name.is_empty() {
                return;
            }
            let path = path.clone();
            self.rename = None;
            if let Err(e) = self.rename_to(&path, &name) {
                self.status = Some((true, format!("Failed to rename: {e}"), later(3)));
            }
            self.refilter();
        } else {
            input.handle_key(k);
        }
    }
}

/// Forks under the session they came from, each level by latest activity in its subtree.
fn threaded(list: &[SessionInfo], shown: &[usize]) -> Vec<Row> {
    use std::collections::HashMap;
    let index: HashMap<&Path, usize> = shown.iter().map(|&i| (list[i].path.as_path(), i)).collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for &i in shown {
        match list[i]
            .parent_session_path
            .as_deref()
            .and_then(|p| index.get(Path::new(p)))
        {
            Some(&parent) if parent != i => children.entry(parent).or_default().push(i),
            _ => roots.push(i),
        }
    }
    fn latest(i: usize, list: &[SessionInfo], children: &HashMap<usize, Vec<usize>>, depth: usize) -> i64 {
        let own = list[i].modified_ms;
        if depth > 64 {
            return own;
        }
        children.get(&i).map_or(own, |c| {
            c.iter()
                .map(|&k| latest(k, list, children, depth + 1))
                .fold(own, i64::max)
        })
    }
    let by_activity = |v: &mut Vec<usize>| {
        v.sort_by_key(|&i| std::cmp::Reverse(latest(i, list, &children, 0)));
    };
    by_activity(&mut roots);
    let mut rows = Vec::new();
    // (session, depth, continues, last)
    let mut stack: Vec<(usize, usize, Vec<bool>, bool)> = roots
        .iter()
        .enumerate()
        .rev()
        .map(|(k, &r)| (r, 0, Vec::new(), k + 1 == roots.len()))
        .collect();
    while let Some((i, depth, continues, last)) = stack.pop() {
        rows.push(Row {
            session: i,
            depth,
            last,
            continues: continues.clone(),
        });
        let mut kids = children.get(&i).cloned().unwrap_or_default();
        by_activity(&mut kids);
        for (k, &c) in kids.iter().enumerate().rev() {
            // Every level below the roots takes a column; a root's column stays blank.
            let mut cont = continues.clone();
            cont.push(depth > 0 && !last);
            stack.push((c, depth + 1, cont, k + 1 == kids.len()));
        }
    }
    rows
}

impl Component for SessionPicker {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = self.theme.clone();
        let border = t.paint("accent", &"─".repeat(width));
        let top = out.len();
        out.push_line(String::new());
        out.push_line(border.clone());
        out.push_line(String::new());
        if let Some((_, input)) = &mut self.rename {
            out.push_line(format!(" {}", pi_tui::Style::new().bold().paint("Rename Session")));
            out.push_line(String::new());
            self.field_row = out.len() - top;
            input.render(width, out);
            out.push_line(String::new());
            let kb = keybindings();
            let keys = |id: &str| kb.keys(id).join("/");
            out.push_line(format!(
                " {}",
                t.paint(
                    "muted",
                    &format!(
                        "{} to save · {} to cancel",
                        keys("tui.select.confirm"),
                        keys("tui.select.cancel")
                    )
                )
            ));
        } else {
            for l in self.header(width) {
                out.push_line(l);
            }
            out.push_line(String::new());
            // The search field is the first row of the list part.
            self.field_row = out.len() - top;
            self.render_rows(width, out);
        }
        out.push_line(String::new());
        out.push_line(border);
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(k) = event else { return false };
        if self.rename.is_some() {
            self.handle_rename_key(k);
            return true;
        }
        let kb = keybindings();
        if let Some(path) = self.confirming_delete.clone() {
            if kb.matches(k, "tui.select.confirm") {
                self.confirming_delete = None;
                self.delete(path);
            } else if kb.matches(k, "tui.select.cancel") {
                self.confirming_delete = None;
            }
            return true;
        }
        let n = self.rows.len();
        let start_delete = |p: &mut SessionPicker| match p.selected_path() {
            Some(path) if p.is_current(&path) => {
                p.status = Some((true, "Cannot delete the currently active session".into(), later(3)));
            }
            Some(path) => p.confirming_delete = Some(path),
            None => {}
        };
        if kb.matches(k, "tui.input.tab") {
            self.scope_all = !self.scope_all;
            self.selected = 0;
            self.refilter();
        } else if kb.matches(k, "app.session.toggleSort") {
            self.sort = self.sort.next();
            self.refilter();
        } else if kb.matches(k, "app.session.toggleNamedFilter") {
            self.named_only = !self.named_only;
            self.refilter();
        } else if kb.matches(k, "app.session.togglePath") {
            self.show_path = !self.show_path;
        } else if kb.matches(k, "app.session.delete") {
            start_delete(self);
        } else if kb.matches(k, "app.session.rename") {
            if let Some(r) = self.rows.get(self.selected) {
                let s = &self.sessions()[r.session];
                let mut input = Input::new("> ");
                input.set_value(s.name.as_deref().unwrap_or(""));
                input.set_focused(true);
                self.rename = Some((s.path.clone(), input));
            }
        } else if kb.matches(k, "app.session.deleteNoninvasive") && self.search.value().is_empty() {
            start_delete(self);
        } else if kb.matches(k, "tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if kb.matches(k, "tui.select.down") {
            self.selected = (self.selected + 1).min(n.saturating_sub(1));
        } else if kb.matches(k, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if kb.matches(k, "tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(n.saturating_sub(1));
        } else if kb.matches(k, "tui.select.confirm") {
            if let Some(path) = self.selected_path() {
                self.result = Some(DialogResult::Done(path.display().to_string()));
            }
        } else if kb.matches(k, "tui.select.cancel") {
            self.result = Some(DialogResult::Cancelled);
        } else {
            let before = self.search.value().to_string();
            self.search.handle_key(k);
            if self.search.value() != before {
                self.refilter();
                if !self.search.value().trim().is_empty() {
                    // A new query selects the best match.
                    self.selected = 0;
                }
            }
        }
        true
    }

    /// Only the search (or rename) field takes the mouse, as in pi 1.6: a press puts its
    /// cursor on the pressed cell.
    fn handle_mouse(&mut self, m: &pi_tui::ComponentMouse) -> bool {
        let row = self.field_row;
        let Some(at) = m.within(&(row..row + 1)) else {
            return false;
        };
        match &mut self.rename {
            Some((_, input)) => input.handle_mouse(&at),
            None => self.search.handle_mouse(&at),
        }
    }

    fn set_focused(&mut self, focused: bool) {
        self.search.set_focused(focused);
        if let Some((_, input)) = &mut self.rename {
            input.set_focused(focused);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: &str, parent: Option<&str>, modified: i64) -> SessionInfo {
        SessionInfo {
            path: format!("/s/{id}.jsonl").into(),
            id: id.into(),
            cwd: "/p".into(),
            name: None,
            parent_session_path: parent.map(|p| format!("/s/{p}.jsonl")),
            created: String::new(),
            modified_ms: modified,
            message_count: 3,
            first_message: format!("first of {id}"),
            all_messages_text: String::new(),
        }
    }

    #[test]
    fn forks_thread_under_their_parent_and_ages_are_short() {
        let list = vec![
            info("a", None, 10),
            info("b", Some("a"), 50),
            info("c", Some("a"), 20),
            info("d", None, 30),
        ];
        let rows = threaded(&list, &[0, 1, 2, 3]);
        let order: Vec<(&str, usize, bool)> = rows
            .iter()
            .map(|r| (list[r.session].id.as_str(), r.depth, r.last))
            .collect();
        // a's subtree was active last (b at 50), so it comes before d.
        assert_eq!(
            order,
            [("a", 0, false), ("b", 1, false), ("c", 1, true), ("d", 0, true)]
        );
        assert_eq!(age(30_000), "now");
        assert_eq!(age(5 * 60_000), "5m");
        assert_eq!(age(3 * 3_600_000), "3h");
        assert_eq!(age(8 * 86_400_000), "1w");
    }

    #[test]
    fn header_rows_and_keys() {
        pi_tui::set_keybindings(super::super::keys::load_keybindings(Path::new("/nonexistent")).0);
        let list = vec![info("a", None, 0), info("b", None, 0)];
        let mut p = SessionPicker::new(
            list.clone(),
            list,
            Some("/s/a.jsonl".into()),
            Arc::new(UiTheme::fallback()),
            61_000,
        );
        let mut f = Frame::default();
        p.render(100, &mut f);
        let text = pi_tui::strip_ansi(&f.to_vec().join("\n"));
        assert!(text.contains("Resume Session (Current Folder)"), "{text}");
        assert!(
            text.contains("◉ Current Folder | ○ All  Name: All  Sort: Threaded"),
            "{text}"
        );
        assert!(
            text.contains("tab scope · re:<pattern> regex · \"phrase\" exact"),
            "{text}"
        );
        assert!(text.contains("ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off) · ctrl+r rename"));
        assert!(text.contains("› first of a"), "{text}");
        assert!(text.contains("3 1m"), "{text}");
        let key = |p: &mut SessionPicker, s: &str| {
            p.handle_input(&InputEvent::Key(pi_tui::parse_key(s, false).expect("key")))
        };
        // The current session cannot be deleted.
        key(&mut p, "\x04");
        let mut f = Frame::default();
        p.render(100, &mut f);
        assert!(pi_tui::strip_ansi(&f.to_vec().join("\n")).contains("Cannot delete the currently active session"));
        key(&mut p, "\x13");
        assert_eq!(p.sort, Sort::Recent);
        key(&mut p, "\t");
        assert!(p.scope_all);
        key(&mut p, "\x1b[B");
        key(&mut p, "\r");
        assert_eq!(p.take_result(), Some(DialogResult::Done("/s/b.jsonl".into())));
    }
}
