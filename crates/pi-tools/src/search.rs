//! In-process file search on ripgrep's crates: content search as `rg` does it for grep, name
//! search as `fd` does it for find. Blocking; the tools run these in `spawn_blocking`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use globset::GlobBuilder;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};

fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(12)
}

/// rg's wording of a bad pattern: the regex parser's report on the pattern as written (the
/// matcher's own error shows the pattern after internal rewriting).
fn pattern_error(pattern: &str, fallback: &str) -> String {
    match regex::Regex::new(pattern) {
        Err(regex::Error::Syntax(msg)) => msg.trim().to_string(),
        _ => fallback.trim().to_string(),
    }
}

/// What to look for with `grep_search`.
#[derive(Debug, Clone)]
pub struct GrepParams {
    pub pattern: String,
    pub root: PathBuf,
    pub glob: Option<String>,
    pub ignore_case: bool,
    pub literal: bool,
    /// Stop after this many matching lines.
    pub limit: usize,
}

/// The matching lines of one file, kept in one buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatches {
    pub path: Arc<Path>,
    text: String,
    /// Line number and byte range in `text` of each matching line.
    lines: Vec<(u64, usize, usize)>,
}

impl FileMatches {
    /// `(line number, line)` pairs; a line keeps its terminator.
    pub fn lines(&self) -> impl Iterator<Item = (u64, &str)> + '_ {
        self.lines.iter().map(|&(n, start, end)| (n, &self.text[start..end]))
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// Matches grouped by file, files sorted by path, and whether the limit stopped the search.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GrepResult {
    pub files: Vec<FileMatches>,
    pub limit_reached: bool,
}

impl GrepResult {
    /// Number of matching lines.
    pub fn count(&self) -> usize {
        self.files.iter().map(FileMatches::len).sum()
    }

    /// Every match as `(path, line number, line)`.
    pub fn matches(&self) -> impl Iterator<Item = (&Path, u64, &str)> + '_ {
        self.files
            .iter()
            .flat_map(|f| f.lines().map(move |(n, l)| (&*f.path, n, l)))
    }
}

/// Collects the matching lines of one file, stopping at the shared limit.
struct MatchSink<'a> {
    count: &'a AtomicUsize,
    limit: usize,
    text: String,
    lines: Vec<(u64, usize, usize)>,
}

impl Sink for MatchSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.count.fetch_add(1, Ordering::Relaxed) >= self.limit {
            return Ok(false);
        }
        let start = self.text.len();
        match std::str::from_utf8(mat.bytes()) {
            Ok(s) => self.text.push_str(s),
            Err(_) => self.text.push_str(&String::from_utf8_lossy(mat.bytes())),
        }
        self.lines
            .push((mat.line_number().unwrap_or(0), start, self.text.len()));
        Ok(true)
    }
}

/// Search file contents like `rg --hidden [-i] [-F] [--glob G] -- PATTERN ROOT`:
/// hidden files included, .gitignore (inside git repositories), .ignore and .rgignore honoured,
/// binary files skipped. `cancel` stops the walk early.
pub fn grep_search(params: &GrepParams, cancel: &AtomicBool) -> Result<GrepResult, String> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(params.ignore_case)
        .fixed_strings(params.literal)
        .line_terminator(Some(b'\n'))
        .build(&params.pattern)
        .map_err(|e| pattern_error(&params.pattern, &e.to_string()))?;
    let mut builder = WalkBuilder::new(&params.root);
    builder
        .hidden(false)
        .add_custom_ignore_filename(".rgignore")
        .threads(threads());
    // The glob is relative to the searched directory (as rg run from there sees it); a leading
    // `./` names that directory itself.
    let glob = params.glob.as_deref().map(strip_dot_slash).filter(|g| !g.is_empty());
    if let Some(glob) = glob {
        let mut ob = OverrideBuilder::new(&params.root);
        ob.add(glob).map_err(|e| e.to_string())?;
        builder.overrides(ob.build().map_err(|e| e.to_string())?);
    }
    // One match past the limit tells "exactly N" from "more than N".
    let wanted = params.limit.max(1);
    let limit = wanted + 1;
    let count = AtomicUsize::new(0);
    let found: Mutex<Vec<FileMatches>> = Mutex::new(Vec::new());
    builder.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .build();
        let (count, found) = (&count, &found);
        Box::new(move |entry| {
            if cancel.load(Ordering::Relaxed) || count.load(Ordering::Relaxed) >= limit {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let mut sink = MatchSink {
                count,
                limit,
                text: String::new(),
                lines: Vec::new(),
            };
            let path = entry.path();
            let _ = searcher.search_path(&matcher, path, &mut sink);
            if !sink.lines.is_empty() {
                found.lock().unwrap_or_else(|e| e.into_inner()).push(FileMatches {
                    path: Arc::from(path),
                    text: sink.text,
                    lines: sink.lines,
                });
            }
            WalkState::Continue
        })
    });
    let mut files = found.into_inner().unwrap_or_else(|e| e.into_inner());
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    // Threads may overshoot the limit by a file or two before they see it; cut back to it.
    let mut kept = 0usize;
    files.retain_mut(|f| {
        let room = limit - kept;
        if room == 0 {
            return false;
        }
        f.lines.truncate(room);
        kept += f.lines.len();
        true
    });
    let limit_reached = kept > wanted;
    if limit_reached {
        let mut kept = 0usize;
        files.retain_mut(|f| {
            let room = wanted - kept;
            f.lines.truncate(room);
            kept += f.lines.len();
            room > 0
        });
    }
    Ok(GrepResult { files, limit_reached })
}

/// Batches results per walker thread; whatever is left is handed over when the thread ends.
struct Collector<'a> {
    items: Vec<String>,
    into: &'a Mutex<Vec<String>>,
}

impl Collector<'_> {
    fn flush(&mut self) {
        if !self.items.is_empty() {
            self.into
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .append(&mut self.items);
        }
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Found paths relative to the root (forward slashes, `/` after directories), sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FindResult {
    pub paths: Vec<String>,
    pub limit_reached: bool,
}

/// A pattern without its leading `./` (any number of them).
fn strip_dot_slash(pattern: &str) -> &str {
    let mut p = pattern;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// Escape the glob metacharacters of a literal path.
fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// fd's spelling of a pattern for a search under `root`: without a `/` it matches names; with
/// one it matches the absolute path, and a relative one is anchored at `root` (so `src/*.ts`
/// finds `src/a.ts` but not `pkg/src/a.ts`; `**/src/*.ts` finds both). The second value says
/// whether it matches full paths.
pub fn effective_find_pattern(pattern: &str, root: &Path) -> (String, bool) {
    let pattern = strip_dot_slash(pattern);
    if !pattern.contains('/') {
        return (pattern.to_string(), false);
    }
    if pattern.starts_with('/') {
        return (pattern.to_string(), true);
    }
    let root = root.to_string_lossy();
    let root = root.trim_end_matches('/');
    (format!("{}/{pattern}", escape_glob(root)), true)
}

/// Find files and directories by glob like `fd --glob --hidden --no-require-git`: the glob
/// matches the name (or the absolute path when it contains `/`), smart case, ignore files
/// honoured everywhere, the root itself never listed. Like fd 10 (which pi downloads), `.git`
/// is not skipped: with hidden files on it is searched like any other directory.
pub fn find_files(pattern: &str, root: &Path, limit: usize, cancel: &AtomicBool) -> Result<FindResult, String> {
    if !root.is_dir() {
        return Err(format!(
            "[fd error]: Search path '{}' is not a directory.",
            root.display()
        ));
    }
    // Smart case follows the pattern as given, not the letters of the search path.
    let smart_insensitive = !pattern.chars().any(char::is_uppercase);
    let (pattern, full_path) = effective_find_pattern(pattern, root);
    let glob = GlobBuilder::new(&pattern)
        .literal_separator(full_path)
        .case_insensitive(smart_insensitive)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("[fd error]: {e}"))?
        .compile_matcher();
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .add_custom_ignore_filename(".fdignore")
        .threads(threads());
    // One result past the limit tells "exactly N" from "more than N".
    let wanted = limit.max(1);
    let limit = wanted + 1;
    let count = AtomicUsize::new(0);
    let found: Mutex<Vec<String>> = Mutex::new(Vec::new());
    builder.build_parallel().run(|| {
        let glob = &glob;
        let (count, found) = (&count, &found);
        let mut local = Collector {
            items: Vec::new(),
            into: found,
        };
        Box::new(move |entry| {
            if cancel.load(Ordering::Relaxed) || count.load(Ordering::Relaxed) >= limit {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            let hit = if full_path {
                glob.is_match(entry.path())
            } else {
                glob.is_match(entry.file_name())
            };
            if hit {
                if count.fetch_add(1, Ordering::Relaxed) >= limit {
                    return WalkState::Quit;
                }
                let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
                let mut text = rel.to_string_lossy().replace('\\', "/");
                if entry.file_type().is_some_and(|t| t.is_dir()) {
                    text.push('/');
                }
                local.items.push(text);
                if local.items.len() >= 256 {
                    local.flush();
                }
            }
            WalkState::Continue
        })
    });
    let mut paths = found.into_inner().unwrap_or_else(|e| e.into_inner());
    paths.sort();
    let limit_reached = paths.len() > wanted;
    paths.truncate(wanted);
    Ok(FindResult { paths, limit_reached })
}
