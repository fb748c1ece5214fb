//! The `pi config` screen: a filterable list of resources grouped by origin, with
//! checkboxes; space or enter toggles (written to the settings at once), escape closes.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use pi_tui::components::{Input, InputFieldEvent};
use pi_tui::{truncate_to_width, visible_width, Component, Frame, InputEvent, InputParser, KeyEvent, Terminal, Tui};

use super::config_groups::{build_groups, kind_label, toggle, ConfigItem, Group};
use super::locations::Locations;
use super::resolve::ResolvedPaths;
use crate::config::settings::SettingsManager;

const MAX_VISIBLE: usize = 15;

/// One row of the flattened list.
#[derive(Debug, Clone)]
enum Row {
    Group(String),
    Kind(&'static str),
    /// Index into `ConfigView::items`.
    Item(usize),
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Continue,
    Close,
}

/// The screen's state; rendering and keys only, the settings are written through
/// [`ConfigView::toggle_selected`].
pub struct ConfigView {
    items: Vec<ConfigItem>,
    all_rows: Vec<Row>,
    rows: Vec<Row>,
    selected: usize,
    search: Input,
}

fn style(code: &str, text: &str) -> String {
    format!("\x1b[{code}m{text}\x1b[0m")
}

impl ConfigView {
    pub fn new(groups: Vec<Group>) -> Self {
        let mut items = Vec::new();
        let mut all_rows = Vec::new();
        for g in groups {
            all_rows.push(Row::Group(g.label));
            for s in g.subgroups {
                all_rows.push(Row::Kind(kind_label(s.kind)));
                for item in s.items {
                    all_rows.push(Row::Item(items.len()));
                    items.push(item);
                }
            }
        }
        let mut view = ConfigView {
            items,
            rows: all_rows.clone(),
            all_rows,
            selected: 0,
            search: Input::new("> "),
        };
        view.select_first();
        view
    }

    fn select_first(&mut self) {
        self.selected = self.rows.iter().position(|r| matches!(r, Row::Item(_))).unwrap_or(0);
    }

    /// The item under the cursor.
    pub fn selected_item(&self) -> Option<&ConfigItem> {
        match self.rows.get(self.selected) {
            Some(Row::Item(i)) => self.items.get(*i),
            _ => None,
        }
    }

    fn filter(&mut self) {
        let query = self.search.value().trim().to_lowercase();
        if query.is_empty() {
            self.rows = self.all_rows.clone();
            self.select_first();
            return;
        }
        let hit = |item: &ConfigItem| {
            item.name.to_lowercase().contains(&query)
                || item.kind.key().contains(&query)
                || item.resource.path.to_string_lossy().to_lowercase().contains(&query)
        };
        // Keep the headers of groups and kinds that still have a matching item.
        let mut rows = Vec::new();
        let mut group: Option<Row> = None;
        let mut kind: Option<Row> = None;
        for row in &self.all_rows {
            match row {
                Row::Group(_) => {
                    group = Some(row.clone());
                    kind = None;
                }
                Row::Kind(_) => kind = Some(row.clone()),
                Row::Item(i) => {
                    if hit(&self.items[*i]) {
                        rows.extend(group.take());
                        rows.extend(kind.take());
                        rows.push(row.clone());
                    }
                }
            }
        }
        self.rows = rows;
        self.select_first();
    }

    fn next_item(&self, from: usize, down: bool) -> usize {
        let mut i = from;
        loop {
            i = match (down, i) {
                (true, i) if i + 1 < self.rows.len() => i + 1,
                (false, i) if i > 0 => i - 1,
                _ => return from,
            };
            if matches!(self.rows[i], Row::Item(_)) {
                return i;
            }
        }
    }

    /// Flip the selected item and write the change; returns whether anything changed.
    pub fn toggle_selected(&mut self, settings: &mut SettingsManager, loc: &Locations) -> bool {
        let Some(Row::Item(i)) = self.rows.get(self.selected) else {
            return false;
        };
        let i = *i;
        let enabled = !self.items[i].resource.enabled;
        if toggle(settings, loc, &self.items[i], enabled) {
            self.items[i].resource.enabled = enabled;
            return true;
        }
        false
    }

    /// Handle one key; `Some(true)` when the selected item should be toggled.
    pub fn handle_key(&mut self, k: &KeyEvent) -> (Outcome, bool) {
        let kb = pi_tui::keybindings();
        if kb.matches(k, "tui.select.up") {
            self.selected = self.next_item(self.selected, false);
        } else if kb.matches(k, "tui.select.down") {
            self.selected = self.next_item(self.selected, true);
        } else if kb.matches(k, "tui.select.pageUp") {
            let mut t = self.selected.saturating_sub(MAX_VISIBLE);
            while t < self.rows.len() && !matches!(self.rows[t], Row::Item(_)) {
                t += 1;
            }
            if t < self.rows.len() {
                self.selected = t;
            }
        } else if kb.matches(k, "tui.select.pageDown") {
            let mut t = (self.selected + MAX_VISIBLE).min(self.rows.len().saturating_sub(1));
            while t > 0 && !matches!(self.rows.get(t), Some(Row::Item(_))) {
                t -= 1;
            }
            if matches!(self.rows.get(t), Some(Row::Item(_))) {
                self.selected = t;
            }
        } else if kb.matches(k, "tui.select.cancel") || k.matches("ctrl+c") {
            return (Outcome::Close, false);
        } else if k.text() == Some(' ') || kb.matches(k, "tui.select.confirm") {
            return (Outcome::Continue, true);
        } else if self.search.handle_key(k) == InputFieldEvent::Changed {
            self.filter();
        }
        (Outcome::Continue, false)
    }

    fn paste(&mut self, text: &str) {
        let value = format!("{}{}", self.search.value(), text.replace('\n', " "));
        self.search.set_value(&value);
        self.filter();
    }

    fn list_lines(&self, width: usize) -> Vec<String> {
        if self.rows.is_empty() {
            return vec![style("2", "  No resources found")];
        }
        let len = self.rows.len();
        let start = self
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(len.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(len);
        let mut lines = Vec::new();
        for (i, row) in self.rows.iter().enumerate().take(end).skip(start) {
            let line = match row {
                Row::Group(label) => format!("  {}", style("1;36", label)),
                Row::Kind(label) => format!("    {}", style("2", label)),
                Row::Item(idx) => {
                    let item = &self.items[*idx];
                    let cursor = if i == self.selected { "> " } else { "  " };
                    let check = if item.resource.enabled {
                        style("32", "[x]")
                    } else {
                        style("2", "[ ]")
                    };
                    let name = if i == self.selected {
                        style("1", &item.name)
                    } else {
                        item.name.clone()
                    };
                    format!("{cursor}    {check} {name}")
                }
            };
            lines.push(truncate_to_width(&line, width, "..."));
        }
        if start > 0 || end < len {
            let total = self.rows.iter().filter(|r| matches!(r, Row::Item(_))).count();
            let current = self.rows[..self.selected]
                .iter()
                .filter(|r| matches!(r, Row::Item(_)))
                .count()
                + 1;
            lines.push(style("2", &format!("  ({current}/{total})")));
        }
        lines
    }
}

impl Component for ConfigView {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let border = style("2", &"─".repeat(width));
        let title = style("1", "Resource Configuration");
        let hint = format!(
            "{} toggle{}{} close",
            style("2", "space"),
            style("2", " · "),
            style("2", "esc")
        );
        let gap = width
            .saturating_sub(visible_width(&title) + visible_width(&hint))
            .max(1);
        out.push_line("");
        out.push_line(border.clone());
        out.push_line("");
        out.push_line(truncate_to_width(
            &format!("{title}{}{hint}", " ".repeat(gap)),
            width,
            "",
        ));
        out.push_line(style("2", "Type to filter resources"));
        out.push_line("");
        self.search.render(width, out);
        out.push_line("");
        out.extend_lines(self.list_lines(width));
        out.push_line("");
        out.push_line(border);
    }
}

/// Run the screen until it is closed.
pub fn run(resolved: &ResolvedPaths, settings: &mut SettingsManager, loc: &Locations) -> std::io::Result<()> {
    let mut view = ConfigView::new(build_groups(resolved));
    let mut term = Terminal::start()?;
    let (tx, rx) = mpsc::channel::<Option<Vec<u8>>>();
    let tx_end = tx.clone();
    pi_tui::spawn_stdin_reader(
        move |b| tx.send(Some(b.to_vec())).is_ok(),
        move || {
            let _ = tx_end.send(None);
        },
    )?;
    let (w, h) = term.size();
    let mut tui = Tui::new(w, h);
    tui.render(&mut view, &mut term)?;
    let mut parser = InputParser::new();
    let started = Instant::now();
    let mut fallback_sent = false;
    let mut pending_since: Option<Instant> = None;
    'outer: loop {
        let mut events = Vec::new();
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Some(bytes)) => {
                events = parser.feed(&bytes);
                pending_since = parser.has_pending().then(Instant::now);
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if pending_since.is_some_and(|t| t.elapsed() >= Duration::from_millis(10)) {
                    pending_since = None;
                    events = parser.flush();
                }
            }
        }
        if !fallback_sent && !term.kitty_active() && started.elapsed() > Duration::from_millis(150) {
            let _ = term.enable_fallback_keys();
            fallback_sent = true;
        }
        let size = term.size();
        let mut dirty = size != tui.size();
        if dirty {
            tui.set_size(size.0, size.1);
        }
        for ev in events {
            match ev {
                InputEvent::KittyFlags(_) => {
                    let _ = term.enable_kitty();
                    parser.set_kitty_active(true);
                }
                InputEvent::Key(k) if !k.is_release() => {
                    let (outcome, flip) = view.handle_key(&k);
                    if outcome == Outcome::Close {
                        break 'outer;
                    }
                    if flip {
                        view.toggle_selected(settings, loc);
                    }
                    dirty = true;
                }
                InputEvent::Paste(text) => {
                    view.paste(&text);
                    dirty = true;
                }
                _ => {}
            }
        }
        if dirty {
            tui.render(&mut view, &mut term)?;
        }
    }
    let _ = tui.finish(&mut term);
    let _ = term.disable_key_protocols();
    term.stop()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packages::locations::Scope;
    use crate::packages::resolve::{Origin, ResolvedResource, ResourceKind};
    use pi_tui::{render_lines, strip_ansi, Key};
    use std::path::PathBuf;

    fn resolved() -> ResolvedPaths {
        let r = |p: &str, enabled: bool, origin: Origin| ResolvedResource {
            path: PathBuf::from(p),
            enabled,
            origin,
            scope: Scope::User,
            base_dir: PathBuf::from("/a"),
            temporary: false,
        };
        ResolvedPaths {
            skills: vec![r("/p/skills/alpha/SKILL.md", true, Origin::Package("npm:x".into()))],
            prompts: vec![
                r("/a/prompts/beta.md", true, Origin::Auto),
                r("/a/prompts/gamma.md", false, Origin::Auto),
            ],
            ..Default::default()
        }
    }

    fn key(k: Key) -> KeyEvent {
        KeyEvent::plain(k)
    }

    #[test]
    fn renders_navigates_and_filters() {
        let mut view = ConfigView::new(build_groups(&resolved()));
        let text = |v: &mut ConfigView| {
            render_lines(v, 60)
                .iter()
                .map(|l| strip_ansi(l).trim_end().to_string())
                .collect::<Vec<_>>()
        };
        let lines = text(&mut view);
        let list: Vec<&str> = lines.iter().skip(8).map(String::as_str).collect();
        assert_eq!(
            list[..7],
            [
                "  npm:x (user)",
                "    Skills",
                ">     [x] alpha",
                "  User (~/.pi/agent/)",
                "    Prompts",
                "      [x] beta.md",
                "      [ ] gamma.md",
            ]
        );
        assert_eq!(view.selected_item().map(|i| i.name.as_str()), Some("alpha"));
        view.handle_key(&key(Key::Down));
        assert_eq!(view.selected_item().map(|i| i.name.as_str()), Some("beta.md"));
        let (_, flip) = view.handle_key(&key(Key::Char(' ')));
        assert!(flip);
        for c in "gam".chars() {
            view.handle_key(&key(Key::Char(c)));
        }
        assert_eq!(view.selected_item().map(|i| i.name.as_str()), Some("gamma.md"));
        assert_eq!(view.rows.len(), 3);
        assert_eq!(view.selected_item().map(|i| i.kind), Some(ResourceKind::Prompts));
        assert_eq!(view.handle_key(&key(Key::Escape)).0, Outcome::Close);
    }
}
