//! `@` file references: finding the `@` token before the cursor (`@src/ma`, `@"my fi`), and
//! ranking a directory's file list for it the way pi's editor does: the name must contain the
//! query (the path, when the query has a `/`; smart case), then exact names, names that start
//! with it, names that contain it and paths that contain it, directories first among equals,
//! shallow and short paths first; twenty at most.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::autocomplete::AutocompleteItem;

/// The most suggestions an `@` token lists.
const MAX_SUGGESTIONS: usize = 20;

/// Gives the files and directories under a directory, relative to it, directories ending with
/// `/` (e.g. a cached walk that honours ignore files). `None`: the directory cannot be listed.
pub type FileLister = Arc<dyn Fn(&Path) -> Option<Arc<Vec<String>>> + Send + Sync>;

/// Characters that end a path token besides whitespace (CJK punctuation, as pi-tui).
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{3000}'..='\u{303f}' | '\u{ff00}'..='\u{ff0f}' | '\u{ff1a}'..='\u{ff20}')
}

/// Characters that may open a token before `@`, each with its closer.
const WRAPPERS: [(char, char); 5] = [('(', ')'), ('[', ']'), ('{', '}'), ('<', '>'), ('`', '`')];

/// Whether the text before index `i` of `text` ends where a token may start (wrappers allowed).
fn token_starts_at(text: &str, i: usize) -> bool {
    let before = text[..i].trim_end_matches(|c| WRAPPERS.iter().any(|(o, _)| *o == c));
    before.is_empty() || before.ends_with(is_separator) || before.ends_with(['"', '\'', '='])
}

/// The `@` token ending the text before the cursor: `@"…` while a quote opened after `@` is
/// unclosed, else the last token (after whitespace, quotes or `=`, leading wrappers dropped)
/// when it starts with `@`.
pub fn at_prefix(before: &str) -> Option<&str> {
    let mut open: Option<usize> = None;
    for (i, c) in before.char_indices() {
        if c == '"' {
            open = if open.is_some() { None } else { Some(i) };
        }
    }
    if let Some(q) = open {
        if q > 0 && before[..q].ends_with('@') && token_starts_at(before, q - 1) {
            return Some(&before[q - 1..]);
        }
    }
    let start = before
        .char_indices()
        .rfind(|&(_, c)| is_separator(c) || matches!(c, '"' | '\'' | '='))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let mut token = &before[start..];
    while let Some(first) = token.chars().next() {
        let Some((_, closer)) = WRAPPERS.iter().find(|(o, _)| *o == first) else {
            break;
        };
        if token[first.len_utf8()..].contains(*closer) {
            break;
        }
        token = &token[first.len_utf8()..];
    }
    token.starts_with('@').then_some(token)
}

/// Where an `@` query searches: a directory named before its last `/` when it exists
/// (`@src/ma` searches `src` for `ma`, shown as `src/…`), else the base directory.
struct Scope {
    dir: PathBuf,
    query: String,
    shown_base: String,
}

fn scope(base: &Path, query: &str) -> Scope {
    let whole = Scope {
        dir: base.to_path_buf(),
        query: query.to_string(),
        shown_base: String::new(),
    };
    let Some(slash) = query.rfind('/') else {
        return whole;
    };
    let (shown, rest) = (&query[..=slash], &query[slash + 1..]);
    let dir = if let Some(home_rel) = shown.strip_prefix("~/") {
        match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(home_rel),
            None => return whole,
        }
    } else if shown.starts_with('/') {
        PathBuf::from(shown)
    } else {
        base.join(shown)
    };
    if !dir.is_dir() {
        return whole;
    }
    Scope {
        dir,
        query: rest.to_string(),
        shown_base: shown.to_string(),
    }
}

/// How well `path` (relative, no trailing `/`) answers `query`; 0: not at all.
fn score(path: &str, query: &str, is_dir: bool) -> u32 {
    let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    let q = query.to_lowercase();
    let s = if name == q {
        100
    } else if name.starts_with(&q) {
        80
    } else if name.contains(&q) {
        50
    } else if path.to_lowercase().contains(&q) {
        30
    } else {
        0
    };
    if is_dir && s > 0 {
        s + 10
    } else {
        s
    }
}

/// Whether the walk would list `path` for `query`: the name contains it, or with a `/` in the
/// query the absolute path does; case matters only when the query has a capital letter.
fn listed(abs_dir: &str, path: &str, query: &str) -> bool {
    if query.is_empty() {
        return true;
    }
    let hay = if query.contains('/') {
        format!("{abs_dir}/{path}")
    } else {
        path.rsplit('/').next().unwrap_or(path).to_string()
    };
    if query.chars().any(char::is_uppercase) {
        hay.contains(query)
    } else {
        hay.to_lowercase().contains(&query.to_lowercase())
    }
}

/// A path inside a completion: quoted when asked or when it has a separator in it.
fn completion_value(path: &str, quoted: bool) -> String {
    if quoted || path.chars().any(is_separator) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

/// The suggestions for `@` token `prefix` (`@query` or `@"query`), searching under `base`.
pub fn suggestions(lister: &FileLister, base: &Path, prefix: &str) -> Vec<AutocompleteItem> {
    let (raw, quoted) = match prefix.strip_prefix("@\"") {
        Some(rest) => (rest, true),
        None => (prefix.strip_prefix('@').unwrap_or(prefix), false),
    };
    let scope = scope(base, raw);
    let Some(files) = lister(&scope.dir) else {
        return Vec::new();
    };
    let abs_dir = scope.dir.to_string_lossy().trim_end_matches('/').to_string();
    // Ties go to the shorter entry as listed (a directory's `/` counts), then by name.
    let mut ranked: Vec<(u32, usize, &str, bool, &str)> = files
        .iter()
        .filter_map(|entry| {
            let is_dir = entry.ends_with('/');
            let path = entry.trim_end_matches('/');
            if path.is_empty() || !listed(&abs_dir, path, &scope.query) {
                return None;
            }
            let s = if scope.query.is_empty() {
                1
            } else {
                score(path, &scope.query, is_dir)
            };
            let depth = path.split('/').filter(|p| !p.is_empty()).count();
            (s > 0).then_some((s, depth, path, is_dir, entry.as_str()))
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then(a.4.len().cmp(&b.4.len()))
            .then_with(|| a.4.to_lowercase().cmp(&b.4.to_lowercase()))
            .then(a.4.cmp(b.4))
    });
    ranked
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, path, is_dir, _)| {
            let shown = format!("{}{path}", scope.shown_base);
            let name = path.rsplit('/').next().unwrap_or(path);
            let slash = if is_dir { "/" } else { "" };
            AutocompleteItem {
                value: completion_value(&format!("{shown}{slash}"), quoted),
                label: format!("{name}{slash}"),
                description: Some(shown),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lister(files: &[&str]) -> FileLister {
        let files: Arc<Vec<String>> = Arc::new(files.iter().map(|s| s.to_string()).collect());
        Arc::new(move |_: &Path| Some(files.clone()))
    }

    fn values(items: &[AutocompleteItem]) -> Vec<&str> {
        items.iter().map(|i| i.value.as_str()).collect()
    }

    #[test]
    fn the_at_token_is_found_after_spaces_quotes_and_wrappers() {
        assert_eq!(at_prefix("see @src/ma"), Some("@src/ma"));
        assert_eq!(at_prefix("@"), Some("@"));
        assert_eq!(at_prefix("see (@li"), Some("@li"));
        assert_eq!(at_prefix("see @\"my fi"), Some("@\"my fi"));
        assert_eq!(at_prefix("mail@host"), None);
        assert_eq!(at_prefix("see @\"done\" now"), None);
        assert_eq!(at_prefix("plain"), None);
    }

    #[test]
    fn names_rank_exact_then_prefix_then_inside_then_path() {
        let l = lister(&[
            "lib/",
            "lib/main.rs",
            "src/",
            "src/main.rs",
            "main/",
            "domain.rs",
            "xmain/",
            "xmain/a.rs",
        ]);
        let got = suggestions(&l, Path::new("/p"), "@main");
        // `xmain/a.rs` is not listed: its name lacks the query.
        assert_eq!(
            values(&got),
            ["@main/", "@lib/main.rs", "@src/main.rs", "@xmain/", "@domain.rs"]
        );
        assert_eq!(got[0].label, "main/");
        assert_eq!(got[1].description.as_deref(), Some("lib/main.rs"));
    }

    #[test]
    fn an_empty_query_lists_shallow_entries_first_and_caps_the_list() {
        let many: Vec<String> = (0..30).map(|i| format!("d/f{i:02}")).collect();
        let mut all: Vec<&str> = many.iter().map(String::as_str).collect();
        all.extend(["b.txt", "d/", ".env", "src/"]);
        let got = suggestions(&lister(&all), Path::new("/p"), "@");
        assert_eq!(got.len(), MAX_SUGGESTIONS);
        assert_eq!(values(&got)[..5], ["@d/", "@.env", "@src/", "@b.txt", "@d/f00"]);
    }

    #[test]
    fn paths_with_spaces_and_quoted_tokens_are_quoted() {
        let l = lister(&["docs/my file.md", "notes.md"]);
        assert_eq!(
            values(&suggestions(&l, Path::new("/p"), "@my")),
            ["@\"docs/my file.md\""]
        );
        assert_eq!(values(&suggestions(&l, Path::new("/p"), "@\"not")), ["@\"notes.md\""]);
    }

    #[test]
    fn smart_case_filters_by_case_only_with_capitals() {
        let l = lister(&["Readme.md", "readme.txt"]);
        assert_eq!(suggestions(&l, Path::new("/p"), "@read").len(), 2);
        assert_eq!(values(&suggestions(&l, Path::new("/p"), "@Read")), ["@Readme.md"]);
    }

    #[test]
    fn a_query_under_an_existing_directory_searches_it() {
        let dir = std::env::temp_dir().join(format!("pi-tui-at-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("mkdir");
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen_in = seen.clone();
        let l: FileLister = Arc::new(move |d: &Path| {
            seen_in.lock().expect("lock").push(d.to_path_buf());
            Some(Arc::new(vec!["main.rs".to_string(), "lib.rs".to_string()]))
        });
        let got = suggestions(&l, &dir, "@src/ma");
        assert_eq!(values(&got), ["@src/main.rs"]);
        assert_eq!(got[0].label, "main.rs");
        assert_eq!(seen.lock().expect("lock").as_slice(), [dir.join("src/")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
