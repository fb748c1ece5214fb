//! Finding resource files: directory walks that honour `.gitignore`, `.ignore` and
//! `.fdignore`, and the settings filters (`!pattern`, `+path`, `-path`, globs).

use std::fs;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::config::paths::{expand_resource_path, resolve_against};

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// Ignore rules gathered while walking down from `root`; a sub-folder's rules are prefixed
/// with its path relative to the root.
pub(crate) struct IgnoreRules {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Option<Gitignore>,
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        IgnoreRules {
            root: root.to_path_buf(),
            lines: Vec::new(),
            matcher: None,
        }
    }

    /// Read the ignore files of `dir` (a folder at or below the root).
    pub(crate) fn add_dir(&mut self, dir: &Path) {
        let prefix = match dir.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/", to_posix(rel)),
            _ => String::new(),
        };
        let mut added = false;
        for name in IGNORE_FILE_NAMES {
            let Ok(content) = fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for line in content.lines() {
                if let Some(pattern) = prefix_pattern(line, &prefix) {
                    self.lines.push(pattern);
                    added = true;
                }
            }
        }
        if added {
            let mut builder = GitignoreBuilder::new(&self.root);
            for line in &self.lines {
                let _ = builder.add_line(None, line);
            }
            self.matcher = builder.build().ok();
        }
    }

    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let Some(matcher) = &self.matcher else { return false };
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        matcher.matched(rel, is_dir).is_ignore()
    }
}

fn prefix_pattern(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let mut pattern = line;
    let mut negated = false;
    if let Some(rest) = pattern.strip_prefix('!') {
        negated = true;
        pattern = rest;
    } else if pattern.starts_with("\\!") {
        pattern = &pattern[1..];
    }
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let prefixed = format!("{prefix}{pattern}");
    Some(if negated { format!("!{prefixed}") } else { prefixed })
}

pub(crate) fn to_posix(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// A directory entry with symlinks followed; broken links are `None`.
pub(crate) struct Entry {
    pub name: String,
    pub path: PathBuf,
    pub is_dir: bool,
    pub is_file: bool,
}

pub(crate) fn read_dir_sorted(dir: &Path) -> Vec<Entry> {
    let Ok(read) = fs::read_dir(dir) else { return Vec::new() };
    let mut entries: Vec<Entry> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            let meta = fs::metadata(&path).ok()?;
            Some(Entry {
                name: e.file_name().to_string_lossy().into_owned(),
                path,
                is_dir: meta.is_dir(),
                is_file: meta.is_file(),
            })
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    entries
}

/// How a skills folder is scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillDirMode {
    /// pi's own folders: top-level `*.md` files are skills too.
    Pi,
    /// `.agents/skills` folders: only `SKILL.md` folders.
    Agents,
}

/// Skill files under `dir`: a folder with `SKILL.md` is a skill and is not descended;
/// otherwise sub-folders are searched (dot entries and `node_modules` skipped), and in
/// [`SkillDirMode::Pi`] the top-level `*.md` files count as well.
pub fn collect_skill_files(dir: &Path, mode: SkillDirMode) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.is_dir() {
        let mut rules = IgnoreRules::new(dir);
        collect_skills_in(dir, dir, mode, &mut rules, &mut out);
    }
    out
}

fn collect_skills_in(dir: &Path, root: &Path, mode: SkillDirMode, rules: &mut IgnoreRules, out: &mut Vec<PathBuf>) {
    rules.add_dir(dir);
    let entries = read_dir_sorted(dir);
    if let Some(skill) = entries.iter().find(|e| e.name == "SKILL.md" && e.is_file) {
        if !rules.ignores(&skill.path, false) {
            out.push(skill.path.clone());
            return;
        }
    }
    for e in &entries {
        if e.name.starts_with('.') || e.name == "node_modules" {
            continue;
        }
        if rules.ignores(&e.path, e.is_dir) {
            continue;
        }
        if e.is_dir {
            collect_skills_in(&e.path, root, mode, rules, out);
        } else if e.is_file && mode == SkillDirMode::Pi && dir == root && e.name.ends_with(".md") {
            out.push(e.path.clone());
        }
    }
}

/// Files directly in `dir` ending in `ext` (not recursive; dot entries, `node_modules` and
/// ignored files skipped).
pub fn collect_top_level_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    let mut rules = IgnoreRules::new(dir);
    rules.add_dir(dir);
    read_dir_sorted(dir)
        .into_iter()
        .filter(|e| !e.name.starts_with('.') && e.name != "node_modules")
        .filter(|e| e.is_file && e.name.ends_with(ext) && !rules.ignores(&e.path, false))
        .map(|e| e.path)
        .collect()
}

/// `.agents/skills` in `cwd` and each ancestor, up to the git repository root (or the
/// filesystem root outside a repository).
pub fn ancestor_agents_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let git_root = cwd.ancestors().find(|d| d.join(".git").exists());
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if Some(dir) == git_root {
            break;
        }
    }
    dirs
}

/// Resolve a settings or CLI resource path: `~` expanded, relative to `base`.
pub fn resolve_resource_path(path: &str, base: &Path, home: &Path) -> PathBuf {
    resolve_against(base, &expand_resource_path(path, home))
}

/// Whether a settings entry is a filter rather than a path.
pub fn is_pattern(entry: &str) -> bool {
    entry.starts_with('!')
        || entry.starts_with('+')
        || entry.starts_with('-')
        || entry.contains('*')
        || entry.contains('?')
}

fn glob_matches(pattern: &str, text: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(text))
        .unwrap_or(false)
}

/// The names a filter may match: the path relative to `base`, the file name, the absolute
/// path, and for `SKILL.md` the same three for its folder.
fn candidates(path: &Path, base: &Path) -> Vec<String> {
    let rel = |p: &Path| to_posix(p.strip_prefix(base).unwrap_or(p));
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut out = vec![rel(path), name(path), to_posix(path)];
    if name(path) == "SKILL.md" {
        if let Some(parent) = path.parent() {
            out.extend([rel(parent), name(parent), to_posix(parent)]);
        }
    }
    out
}

pub(crate) fn matches_any_glob(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let names = candidates(path, base);
    patterns.iter().any(|p| names.iter().any(|n| glob_matches(p, n)))
}

pub(crate) fn matches_any_exact(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let names = candidates(path, base);
    // File name alone does not count for exact matches.
    let names: Vec<&String> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1 && *i != 4)
        .map(|(_, n)| n)
        .collect();
    patterns.iter().any(|p| {
        let p = p.strip_prefix("./").unwrap_or(p).replace('\\', "/");
        names.iter().any(|n| **n == p)
    })
}

/// Whether settings filters leave `path` enabled: `!glob` excludes, `+path` forces in,
/// `-path` forces out (in that order of strength). With `include_globs`, plain glob entries
/// are inclusions: a path must match one of them.
pub fn is_enabled(path: &Path, entries: &[String], base: &Path, include_globs: bool) -> bool {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for e in entries {
        if let Some(p) = e.strip_prefix('+') {
            force_in.push(p);
        } else if let Some(p) = e.strip_prefix('-') {
            force_out.push(p);
        } else if let Some(p) = e.strip_prefix('!') {
            excludes.push(p);
        } else if is_pattern(e) {
            includes.push(e.as_str());
        }
    }
    let mut enabled = !include_globs || includes.is_empty() || matches_any_glob(path, &includes, base);
    if !excludes.is_empty() && matches_any_glob(path, &excludes, base) {
        enabled = false;
    }
    if matches_any_exact(path, &force_in, base) {
        enabled = true;
    }
    if matches_any_exact(path, &force_out, base) {
        enabled = false;
    }
    enabled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters() {
        let base = Path::new("/p/.pi");
        let f = Path::new("/p/.pi/skills/tool/SKILL.md");
        let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(is_enabled(f, &e(&[]), base, false));
        assert!(!is_enabled(f, &e(&["!tool"]), base, false));
        assert!(!is_enabled(f, &e(&["!skills/*"]), base, false));
        assert!(is_enabled(f, &e(&["!tool", "+skills/tool"]), base, false));
        assert!(!is_enabled(f, &e(&["+skills/tool", "-skills/tool"]), base, false));
        assert!(!is_enabled(f, &e(&["other*"]), base, true));
        assert!(is_enabled(f, &e(&["too*"]), base, true));
    }
}
