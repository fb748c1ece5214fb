//! The file lists behind `@` references in the editor: a walk of a directory as `fd --hidden
//! --follow` does it (ignore files honoured, `.git` left out), kept per directory and
//! refreshed in the background when it is older than a couple of seconds, so a keystroke
//! never waits for a walk of a directory it has listed before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_tui::file_suggest::FileLister;

/// A list older than this is walked again (in the background) when next asked for.
const REFRESH_AFTER: Duration = Duration::from_secs(2);
/// At most this many entries of one directory are kept.
const MAX_ENTRIES: usize = 100_000;
/// A first walk done while a key waits stops after this long.
const FIRST_WALK_LIMIT: Duration = Duration::from_millis(300);

struct Cached {
    files: Arc<Vec<String>>,
    at: Instant,
    refreshing: bool,
}

/// Walked directories and their entries.
#[derive(Clone, Default)]
pub struct FileIndex {
    dirs: Arc<Mutex<HashMap<PathBuf, Cached>>>,
}

/// Entries under `dir`, relative to it, directories ending with `/`; `limit` bounds the time.
fn walk(dir: &Path, limit: Option<Duration>) -> Vec<String> {
    let started = Instant::now();
    let mut builder = ignore::WalkBuilder::new(dir);
    builder
        .hidden(false)
        .follow_links(true)
        .add_custom_ignore_filename(".fdignore")
        .filter_entry(|e| e.file_name() != ".git");
    let mut out = Vec::new();
    for entry in builder.build().flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if out.len() >= MAX_ENTRIES || limit.is_some_and(|l| started.elapsed() > l) {
            break;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let mut text = rel.to_string_lossy().replace('\\', "/");
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            text.push('/');
        }
        out.push(text);
    }
    out
}

impl FileIndex {
    /// Walk `dir` in the background now, so the first `@` finds it ready.
    pub fn prewarm(&self, dir: &Path) {
        self.refresh(dir.to_path_buf());
    }

    fn refresh(&self, dir: PathBuf) {
        let dirs = self.dirs.clone();
        std::thread::spawn(move || {
            let files = Arc::new(walk(&dir, None));
            if let Ok(mut d) = dirs.lock() {
                d.insert(
                    dir,
                    Cached {
                        files,
                        at: Instant::now(),
                        refreshing: false,
                    },
                );
            }
        });
    }

    /// The entries under `dir`: the kept list (walked again in the background when old), or
    /// a first walk now.
    pub fn list(&self, dir: &Path) -> Option<Arc<Vec<String>>> {
        let key = dir.components().collect::<PathBuf>();
        {
            let mut dirs = self.dirs.lock().ok()?;
            if let Some(c) = dirs.get_mut(&key) {
                let files = c.files.clone();
                if c.at.elapsed() > REFRESH_AFTER && !c.refreshing {
                    c.refreshing = true;
                    drop(dirs);
                    self.refresh(key);
                }
                return Some(files);
            }
        }
        if !key.is_dir() {
            return None;
        }
        let files = Arc::new(walk(&key, Some(FIRST_WALK_LIMIT)));
        if let Ok(mut d) = self.dirs.lock() {
            d.insert(
                key,
                Cached {
                    files: files.clone(),
                    at: Instant::now(),
                    refreshing: false,
                },
            );
        }
        Some(files)
    }

    /// This index as the editor's `@` file source.
    pub fn lister(&self) -> FileLister {
        let me = self.clone();
        Arc::new(move |dir: &Path| me.list(dir))
    }
}

/// The index pi's editor and a replacement editor's `@` references share.
pub fn shared() -> &'static FileIndex {
    static SHARED: std::sync::OnceLock<FileIndex> = std::sync::OnceLock::new();
    SHARED.get_or_init(FileIndex::default)
}

/// The suggestions for `@` token `prefix` under `cwd`, from the shared index.
pub fn suggestions(cwd: &Path, prefix: &str) -> Vec<pi_tui::autocomplete::AutocompleteItem> {
    pi_tui::file_suggest::suggestions(&shared().lister(), cwd, prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_like_fd_hidden_files_in_ignored_files_and_git_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/objects")).expect("mkdir");
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        std::fs::create_dir_all(root.join("target")).expect("mkdir");
        std::fs::write(root.join(".gitignore"), "target/\n").expect("write");
        std::fs::write(root.join(".env"), "x").expect("write");
        std::fs::write(root.join("src/main.rs"), "x").expect("write");
        std::fs::write(root.join("target/out"), "x").expect("write");
        let index = FileIndex::default();
        let mut files = index.list(root).expect("a directory").as_ref().clone();
        files.sort();
        assert_eq!(files, [".env", ".gitignore", "src/", "src/main.rs"]);
        assert!(index.list(&root.join("missing")).is_none());
    }

    #[test]
    fn an_old_list_is_refreshed_in_the_background() {
        let dir = tempfile::tempdir().expect("tempdir");
        let index = FileIndex::default();
        assert!(index.list(dir.path()).expect("listed").is_empty());
        std::fs::write(dir.path().join("new.txt"), "x").expect("write");
        // Still the kept list: it is fresh.
        assert!(index.list(dir.path()).expect("listed").is_empty());
        if let Ok(mut d) = index.dirs.lock() {
            for c in d.values_mut() {
                c.at -= REFRESH_AFTER * 2;
            }
        }
        let _ = index.list(dir.path());
        let deadline = Instant::now() + Duration::from_secs(5);
        while index.list(dir.path()).expect("listed").is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(index.list(dir.path()).expect("listed").as_slice(), ["new.txt"]);
    }
}
