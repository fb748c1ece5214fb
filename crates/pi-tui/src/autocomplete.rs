//! Autocomplete: the provider interface the editor calls, and a combined provider for `/`
//! commands (with argument hints and completions), `@` file references (ranked over the file
//! lists the application supplies, see [`crate::file_suggest`]) and Tab path completion from
//! the filesystem.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::file_suggest::FileLister;
use crate::fuzzy::FuzzyMatcher;

/// One suggestion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AutocompleteItem {
    /// Text that replaces the prefix.
    pub value: String,
    pub label: String,
    pub description: Option<String>,
}

/// Suggestions for the text before the cursor; `prefix` is what a completion replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestions {
    pub items: Vec<AutocompleteItem>,
    pub prefix: String,
}

/// Result of applying a completion: new lines and cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub lines: Vec<String>,
    pub line: usize,
    pub col: usize,
}

/// Supplies completions to the editor.
pub trait AutocompleteProvider: Send {
    /// Suggestions at the cursor; `force` is an explicit Tab.
    fn suggestions(&mut self, lines: &[String], line: usize, col: usize, force: bool) -> Option<Suggestions>;

    /// Replace `prefix` before the cursor with `item`.
    fn apply(&self, lines: &[String], line: usize, col: usize, item: &AutocompleteItem, prefix: &str) -> Applied;

    /// Characters besides `@` that open the menu where a token starts (`#`, or what an
    /// application's own completions use).
    fn trigger_characters(&self) -> Vec<char> {
        Vec::new()
    }

    /// Whether the last `suggestions` call is answered later: its `None` then leaves the menu
    /// as it is until the application hands the answer to `Editor::answer_suggestions`.
    fn answers_later(&self) -> bool {
        false
    }

    /// Start applying `item` in the background; true when the provider does so (the
    /// application hands the result to `Editor::set_applied`, and submits when `submit`).
    /// The editor then only closes the menu.
    fn apply_later(
        &mut self,
        _lines: &[String],
        _line: usize,
        _col: usize,
        _item: &AutocompleteItem,
        _prefix: &str,
        _submit: bool,
    ) -> bool {
        false
    }

    /// The `/` commands offered, for a provider that keeps a list the application may change
    /// while running (e.g. a setting that adds or removes commands).
    fn commands_mut(&mut self) -> Option<&mut Vec<SlashCommand>> {
        None
    }
}

/// Completions for a command's argument, given the text typed after the command name.
pub type ArgumentCompleter = Arc<dyn Fn(&str) -> Option<Vec<AutocompleteItem>> + Send + Sync>;

/// A `/` command offered by autocomplete.
#[derive(Clone, Default)]
pub struct SlashCommand {
    pub name: String,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub complete_argument: Option<ArgumentCompleter>,
}

impl SlashCommand {
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        SlashCommand {
            name: name.into(),
            description: Some(description.into()),
            ..Default::default()
        }
    }
}

/// `/` commands, `@` files and Tab path completion.
pub struct CombinedAutocompleteProvider {
    commands: Vec<SlashCommand>,
    base: PathBuf,
    /// The files under a directory, for `@` references.
    files: Option<FileLister>,
    max_items: usize,
    matcher: FuzzyMatcher,
}

impl CombinedAutocompleteProvider {
    pub fn new(commands: Vec<SlashCommand>, base: impl Into<PathBuf>) -> Self {
        CombinedAutocompleteProvider {
            commands,
            base: base.into(),
            files: None,
            max_items: 50,
            matcher: FuzzyMatcher::new(true),
        }
    }

    /// One fixed file list (relative to the base directory) for `@` references.
    pub fn set_files(&mut self, files: Arc<Vec<String>>) {
        self.files = Some(Arc::new(move |_: &Path| Some(files.clone())));
    }

    /// Where `@` references get the files under a directory (e.g. a cached project walk).
    pub fn set_file_lister(&mut self, lister: FileLister) {
        self.files = Some(lister);
    }

    pub fn set_commands(&mut self, commands: Vec<SlashCommand>) {
        self.commands = commands;
    }

    fn command_suggestions(&mut self, before: &str) -> Option<Suggestions> {
        let query = &before[1..];
        let idx = self.matcher.filter(&self.commands, query, |c| c.name.as_str());
        let items: Vec<AutocompleteItem> = idx
            .into_iter()
            .map(|i| {
                let c = &self.commands[i];
                let description = c.description.as_deref().filter(|d| !d.is_empty());
                // A command's argument hint leads its description, as pi shows it.
                let description = match (c.argument_hint.as_deref(), description) {
                    (Some(hint), Some(d)) => Some(format!("{hint} — {d}")),
                    (Some(hint), None) => Some(hint.to_string()),
                    (None, d) => d.map(str::to_string),
                };
                AutocompleteItem {
                    value: c.name.clone(),
                    label: c.name.clone(),
                    description,
                }
            })
            .collect();
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: before.to_string(),
        })
    }

    fn argument_suggestions(&self, before: &str) -> Option<Suggestions> {
        let (name, arg) = before[1..].split_once(' ')?;
        let cmd = self.commands.iter().find(|c| c.name == name)?;
        let items = (cmd.complete_argument.as_ref()?)(arg)?;
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: arg.to_string(),
        })
    }

    fn file_suggestions(&self, token: &str) -> Option<Suggestions> {
        let items = crate::file_suggest::suggestions(self.files.as_ref()?, &self.base, token);
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: token.to_string(),
        })
    }

    fn path_suggestions(&self, token: &str) -> Option<Suggestions> {
        let (dir_part, name_part) = match token.rfind('/') {
            Some(i) => (&token[..=i], &token[i + 1..]),
            None => ("", token),
        };
        let dir: PathBuf = if let Some(rest) = dir_part.strip_prefix("~/") {
            home_dir()?.join(rest)
        } else if Path::new(dir_part).is_absolute() {
            PathBuf::from(dir_part)
        } else {
            self.base.join(dir_part)
        };
        let mut items = Vec::new();
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.to_lowercase().starts_with(&name_part.to_lowercase()) {
                continue;
            }
            // A link to a directory completes as one (`/bin/`).
            let is_dir = entry
                .file_type()
                .is_ok_and(|t| t.is_dir() || (t.is_symlink() && entry.path().is_dir()));
            let suffix = if is_dir { "/" } else { "" };
            items.push(AutocompleteItem {
                value: format!("{dir_part}{name}{suffix}"),
                label: format!("{name}{suffix}"),
                description: None,
            });
        }
        // Directories first, then by name.
        items.sort_by(|a, b| {
            (!a.label.ends_with('/'), a.label.to_lowercase()).cmp(&(!b.label.ends_with('/'), b.label.to_lowercase()))
        });
        items.truncate(self.max_items);
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: token.to_string(),
        })
    }
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// The whitespace-delimited token ending at the cursor.
fn last_token(before: &str) -> &str {
    match before.rfind(char::is_whitespace) {
        Some(i) => &before[i + before[i..].chars().next().map_or(1, char::len_utf8)..],
        None => before,
    }
}

impl AutocompleteProvider for CombinedAutocompleteProvider {
    fn commands_mut(&mut self) -> Option<&mut Vec<SlashCommand>> {
        Some(&mut self.commands)
    }

    fn suggestions(&mut self, lines: &[String], line: usize, col: usize, force: bool) -> Option<Suggestions> {
        let cur = lines.get(line)?;
        let before = &cur[..col.min(cur.len())];
        if line == 0 && before.starts_with('/') {
            return if before.contains(' ') {
                self.argument_suggestions(before)
            } else {
                self.command_suggestions(before)
            };
        }
        if let Some(token) = crate::file_suggest::at_prefix(before) {
            return self.file_suggestions(token);
        }
        let token = last_token(before);
        if force {
            return self.path_suggestions(token);
        }
        None
    }

    fn apply(&self, lines: &[String], line: usize, col: usize, item: &AutocompleteItem, prefix: &str) -> Applied {
        let mut lines = lines.to_vec();
        let Some(cur) = lines.get(line).cloned() else {
            return Applied { lines, line, col };
        };
        let mut col = col.min(cur.len());
        while !cur.is_char_boundary(col) {
            col -= 1;
        }
        // Replace the prefix only if it really is what precedes the cursor.
        let start = if cur[..col].ends_with(prefix) {
            col - prefix.len()
        } else {
            col
        };
        let (head, mut tail) = (&cur[..start], &cur[col..]);
        // A quoted path replaces the closing quote already after the cursor.
        if prefix.starts_with("@\"") && item.value.ends_with('"') && tail.starts_with('"') {
            tail = &tail[1..];
        }
        let is_command = line == 0 && prefix.starts_with('/') && head.is_empty();
        let quoted_dir = item.value.ends_with("/\"");
        let insert = if is_command {
            format!("/{} ", item.value)
        } else if item.value.ends_with('/') || quoted_dir {
            item.value.clone()
        } else if item.value.starts_with('@') {
            format!("{} ", item.value)
        } else {
            item.value.clone()
        };
        // Inside a quoted directory the cursor stays before the quote, to keep completing.
        let new_col = start + insert.len() - usize::from(quoted_dir);
        lines[line] = format!("{head}{insert}{tail}");
        Applied {
            lines,
            line,
            col: new_col,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider() -> CombinedAutocompleteProvider {
        let mut p = CombinedAutocompleteProvider::new(
            vec![
                SlashCommand::new("model", "Select model"),
                SlashCommand::new("compact", "Compact the context"),
                SlashCommand {
                    name: "theme".into(),
                    complete_argument: Some(Arc::new(|arg: &str| {
                        Some(
                            ["dark", "light"]
                                .iter()
                                .filter(|t| t.starts_with(arg))
                                .map(|t| AutocompleteItem {
                                    value: t.to_string(),
                                    label: t.to_string(),
                                    description: None,
                                })
                                .collect(),
                        )
                    })),
                    ..Default::default()
                },
            ],
            "/nonexistent",
        );
        p.set_files(Arc::new(vec![
            "src/main.rs".into(),
            "src/".into(),
            "docs/my file.md".into(),
        ]));
        p
    }

    #[test]
    fn slash_commands() {
        let mut p = provider();
        let lines = vec!["/mod".to_string()];
        let s = p.suggestions(&lines, 0, 4, false).expect("some");
        assert_eq!(s.items[0].value, "model");
        let a = p.apply(&lines, 0, 4, &s.items[0], &s.prefix);
        assert_eq!(a.lines, ["/model "]);
        assert_eq!(a.col, 7);
        let lines = vec!["/theme l".to_string()];
        let s = p.suggestions(&lines, 0, 8, false).expect("some");
        assert_eq!(s.items.len(), 1);
        let a = p.apply(&lines, 0, 8, &s.items[0], &s.prefix);
        assert_eq!(a.lines, ["/theme light"]);
    }

    #[test]
    fn at_files() {
        let mut p = provider();
        let lines = vec!["look at @main please".to_string()];
        let s = p.suggestions(&lines, 0, 13, false).expect("some");
        assert_eq!(s.items[0].value, "@src/main.rs");
        let a = p.apply(&lines, 0, 13, &s.items[0], &s.prefix);
        assert_eq!(a.lines, ["look at @src/main.rs  please"]);
        let lines = vec!["@my".to_string()];
        let s = p.suggestions(&lines, 0, 3, false).expect("some");
        assert_eq!(s.items[0].value, "@\"docs/my file.md\"");
        assert!(p.suggestions(&["plain".to_string()], 0, 5, false).is_none());
        // A quoted directory keeps the cursor inside the quotes and eats the closing one.
        let dir = AutocompleteItem {
            value: "@\"my dir/\"".into(),
            label: "my dir/".into(),
            description: None,
        };
        let lines = vec!["@\"my\" x".to_string()];
        let a = p.apply(&lines, 0, 4, &dir, "@\"my");
        assert_eq!(a.lines, ["@\"my dir/\" x"]);
        assert_eq!(a.col, 9);
    }

    #[test]
    fn argument_hints_lead_the_description() {
        let mut p = CombinedAutocompleteProvider::new(
            vec![
                SlashCommand {
                    name: "model".into(),
                    description: Some("Select model".into()),
                    argument_hint: Some("<provider/model>".into()),
                    ..Default::default()
                },
                SlashCommand {
                    name: "mine".into(),
                    argument_hint: Some("<x>".into()),
                    ..Default::default()
                },
            ],
            "/nonexistent",
        );
        let s = p.suggestions(&["/m".to_string()], 0, 2, false).expect("some");
        let mut d: Vec<(&str, Option<&str>)> = s
            .items
            .iter()
            .map(|i| (i.value.as_str(), i.description.as_deref()))
            .collect();
        d.sort();
        assert_eq!(
            d,
            [
                ("mine", Some("<x>")),
                ("model", Some("<provider/model> — Select model"))
            ]
        );
    }

    #[test]
    fn stale_prefix_inserts_without_cutting() {
        let p = provider();
        let item = AutocompleteItem {
            value: "@x".into(),
            label: "x".into(),
            description: None,
        };
        let lines = vec!["日本".to_string()];
        let a = p.apply(&lines, 0, 4, &item, "@zzzz");
        assert_eq!(a.lines, ["日@x 本"]);
    }

    #[test]
    fn tab_paths() {
        let dir = std::env::temp_dir().join(format!("pi-tui-ac-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("subdir")).expect("mkdir");
        std::fs::write(dir.join("file.txt"), "x").expect("write");
        let mut p = CombinedAutocompleteProvider::new(vec![], &dir);
        let lines = vec!["open su".to_string()];
        let s = p.suggestions(&lines, 0, 7, true).expect("some");
        assert_eq!(s.items[0].value, "subdir/");
        let a = p.apply(&lines, 0, 7, &s.items[0], &s.prefix);
        assert_eq!(a.lines, ["open subdir/"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn tab_paths_list_directories_first_with_links_and_any_case() {
        let dir = std::env::temp_dir().join(format!("pi-tui-ac-order-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("zdir")).expect("mkdir");
        std::fs::write(dir.join("Alpha"), "x").expect("write");
        std::fs::write(dir.join(".hidden"), "x").expect("write");
        std::os::unix::fs::symlink(dir.join("zdir"), dir.join("link")).expect("symlink");
        let mut p = CombinedAutocompleteProvider::new(vec![], &dir);
        let lines = vec!["cat ./".to_string()];
        let s = p.suggestions(&lines, 0, 6, true).expect("some");
        let labels: Vec<&str> = s.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["link/", "zdir/", ".hidden", "Alpha"]);
        let lines = vec!["cat ./al".to_string()];
        let s = p.suggestions(&lines, 0, 8, true).expect("some");
        assert_eq!(s.items[0].value, "./Alpha");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
