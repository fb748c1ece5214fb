//! Path resolution for tool arguments: `@` prefix, `~`, Unicode spaces, cwd, macOS name variants.

use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// Spaces models and terminals sometimes put in paths where a plain space is meant.
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

fn home_dir() -> Option<String> {
    std::env::var("HOME").ok().filter(|h| !h.is_empty())
}

/// Strip a leading `@`, turn Unicode spaces into spaces, expand `~` and `~/`.
pub fn expand_path(path: &str) -> String {
    let path = path.strip_prefix('@').unwrap_or(path);
    let normalized: String = path
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    if normalized == "~" {
        if let Some(home) = home_dir() {
            return home;
        }
    } else if let Some(rest) = normalized.strip_prefix("~/") {
        if let Some(home) = home_dir() {
            return format!("{}/{}", home.trim_end_matches('/'), rest);
        }
    }
    normalized
}

/// Lexically clean a path the way Node's `path.resolve` does: drop `.`, fold `..`, no trailing slash.
pub fn normalize_lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Resolve a tool path against the session cwd.
pub fn resolve_to_cwd(path: &str, cwd: &Path) -> PathBuf {
    let expanded = expand_path(path);
    let p = Path::new(&expanded);
    if p.is_absolute() {
        normalize_lexical(p)
    } else {
        normalize_lexical(&cwd.join(p))
    }
}

fn exists(p: &str) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Narrow no-break space before `AM.`/`PM.` (any case), as in macOS screenshot names.
fn am_pm_variant(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < path.len() {
        let rest = &bytes[i..];
        if rest.len() >= 4
            && rest[0] == b' '
            && matches!(rest[1].to_ascii_uppercase(), b'A' | b'P')
            && rest[2].eq_ignore_ascii_case(&b'M')
            && rest[3] == b'.'
        {
            out.push('\u{202F}');
            out.push_str(&path[i + 1..i + 4]);
            i += 4;
            continue;
        }
        let ch_len = path[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&path[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// Resolve a path for reading: when it does not exist, try the macOS spellings of the same name.
pub fn resolve_read_path(path: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(path, cwd);
    let Some(text) = resolved.to_str() else {
        return resolved;
    };
    if exists(text) {
        return resolved;
    }
    let am_pm = am_pm_variant(text);
    if am_pm != text && exists(&am_pm) {
        return PathBuf::from(am_pm);
    }
    let nfd: String = text.nfd().collect();
    if nfd != text && exists(&nfd) {
        return PathBuf::from(nfd);
    }
    let curly = text.replace('\'', "\u{2019}");
    if curly != text && exists(&curly) {
        return PathBuf::from(curly);
    }
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    if nfd_curly != text && exists(&nfd_curly) {
        return PathBuf::from(nfd_curly);
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_prefix_and_unicode_spaces_are_cleaned() {
        assert_eq!(expand_path("@src/a\u{00A0}b.txt"), "src/a b.txt");
    }

    #[test]
    fn relative_paths_join_the_cwd_and_fold_dots() {
        let p = resolve_to_cwd("./a/../b.txt", Path::new("/home/user/proj"));
        assert_eq!(p, PathBuf::from("/home/user/proj/b.txt"));
        assert_eq!(resolve_to_cwd("/etc/x", Path::new("/w")), PathBuf::from("/etc/x"));
        assert_eq!(resolve_to_cwd(".", Path::new("/w/")), PathBuf::from("/w"));
    }

    #[test]
    fn tilde_expands_to_home() {
        if let Some(home) = home_dir() {
            let p = resolve_to_cwd("~/x", Path::new("/w"));
            assert_eq!(p, normalize_lexical(&Path::new(&home).join("x")));
        }
    }

    #[test]
    fn am_pm_gets_a_narrow_space() {
        assert_eq!(am_pm_variant("Shot 10.00.00 pm.png"), "Shot 10.00.00\u{202F}pm.png");
    }

    #[test]
    fn macos_variants_are_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let touch = |name: &str| std::fs::write(dir.path().join(name), b"x").expect("write");
        let found = |asked: &str| resolve_read_path(asked, dir.path());
        // Screenshot names use a narrow no-break space before AM/PM.
        touch("Shot 1.02.03\u{202F}PM.png");
        assert_eq!(
            found("Shot 1.02.03 PM.png"),
            dir.path().join("Shot 1.02.03\u{202F}PM.png")
        );
        // Names stored decomposed (NFD).
        touch("cafe\u{0301}.txt");
        assert_eq!(found("caf\u{00e9}.txt"), dir.path().join("cafe\u{0301}.txt"));
        // A curly apostrophe where a straight one was typed.
        touch("it\u{2019}s.txt");
        assert_eq!(found("it's.txt"), dir.path().join("it\u{2019}s.txt"));
        // Both at once, as in French screenshot names.
        touch("d\u{2019}e\u{0301}cran.png");
        assert_eq!(
            found("d'\u{00e9}cran.png"),
            dir.path().join("d\u{2019}e\u{0301}cran.png")
        );
        // Nothing matches: the plain resolution comes back.
        assert_eq!(found("none.txt"), dir.path().join("none.txt"));
    }
}
