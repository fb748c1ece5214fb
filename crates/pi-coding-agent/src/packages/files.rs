//! Finding a package's resource files: its `package.json` `pi` manifest (paths and globs,
//! `!`/`+`/`-` overrides), the conventional folders, and the filter patterns that pick among
//! them.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::resolve::ResourceKind;
use crate::resources::discovery::{
    collect_skill_files, matches_any_exact, matches_any_glob, read_dir_sorted, IgnoreRules, SkillDirMode,
};

/// The `pi` object of a folder's `package.json`.
pub(super) fn read_manifest(root: &Path) -> Option<Map<String, Value>> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let json: Value = serde_json::from_str(&text).ok()?;
    json.get("pi")?.as_object().cloned()
}

pub(super) fn string_list(value: Option<&Value>) -> Option<Vec<String>> {
    value?
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
}

pub(super) fn is_override(entry: &str) -> bool {
    entry.starts_with('!') || entry.starts_with('+') || entry.starts_with('-')
}

fn has_glob(entry: &str) -> bool {
    entry.contains('*') || entry.contains('?')
}

/// Manifest paths and globs (relative to the package root) expanded into files.
pub(super) fn files_from_manifest_entries(entries: &[String], root: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for entry in entries.iter().filter(|e| !is_override(e)) {
        if has_glob(entry) {
            paths.extend(glob_in(root, entry));
        } else {
            paths.push(crate::config::paths::resolve_against(root, Path::new(entry)));
        }
    }
    files_from_paths(&paths, kind)
}

/// Files and folders under `root` whose relative path matches `pattern` (dot entries are
/// skipped, and `node_modules` unless the pattern names it).
fn glob_in(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let Ok(glob) = globset::GlobBuilder::new(pattern).literal_separator(true).build() else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let into_modules = pattern.contains("node_modules");
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in read_dir_sorted(&dir) {
            if e.name.starts_with('.') || (e.name == "node_modules" && !into_modules) {
                continue;
            }
            let rel = e
                .path
                .strip_prefix(root)
                .unwrap_or(&e.path)
                .to_string_lossy()
                .replace('\\', "/");
            if matcher.is_match(&rel) {
                found.push(e.path.clone());
            }
            if e.is_dir {
                stack.push(e.path);
            }
        }
    }
    found.sort();
    found
}

pub(super) fn files_from_paths(paths: &[PathBuf], kind: ResourceKind) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_file() {
            files.push(p.clone());
        } else if p.is_dir() {
            files.extend(collect_resource_files(p, kind));
        }
    }
    files
}

/// The resource files of `kind` inside a folder.
pub fn collect_resource_files(dir: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    match kind {
        ResourceKind::Skills => collect_skill_files(dir, SkillDirMode::Pi),
        ResourceKind::Extensions => extension_entries(dir),
        ResourceKind::Prompts => collect_recursive(dir, ".md"),
        ResourceKind::Themes => collect_recursive(dir, ".json"),
    }
}

/// Every file ending in `ext` below `dir`, honouring ignore files.
fn collect_recursive(dir: &Path, ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, rules: &mut IgnoreRules, out: &mut Vec<PathBuf>) {
        rules.add_dir(dir);
        for e in read_dir_sorted(dir) {
            if e.name.starts_with('.') || e.name == "node_modules" || rules.ignores(&e.path, e.is_dir) {
                continue;
            }
            if e.is_dir {
                walk(&e.path, ext, rules, out);
            } else if e.is_file && e.name.ends_with(ext) {
                out.push(e.path);
            }
        }
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        let mut rules = IgnoreRules::new(dir);
        walk(dir, ext, &mut rules, &mut out);
    }
    out
}

/// The entry files of an extension folder: `package.json` `pi.extensions`, else
/// `index.ts`/`index.js`.
fn extension_folder_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Some(list) = read_manifest(dir).and_then(|m| string_list(m.get("extensions"))) {
        let found: Vec<PathBuf> = list
            .iter()
            .map(|p| crate::config::paths::resolve_against(dir, Path::new(p)))
            .filter(|p| p.exists())
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .map(|p| vec![p])
}

/// Extensions in a folder: the folder itself when it is one, else its `*.ts`/`*.js` files
/// and the sub-folders that are extensions.
pub(super) fn extension_entries(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    if let Some(entries) = extension_folder_entries(dir) {
        return entries;
    }
    let mut rules = IgnoreRules::new(dir);
    rules.add_dir(dir);
    let mut out = Vec::new();
    for e in read_dir_sorted(dir) {
        if e.name.starts_with('.') || e.name == "node_modules" || rules.ignores(&e.path, e.is_dir) {
            continue;
        }
        if e.is_file && (e.name.ends_with(".ts") || e.name.ends_with(".js")) {
            out.push(e.path);
        } else if e.is_dir {
            out.extend(extension_folder_entries(&e.path).unwrap_or_default());
        }
    }
    out
}

/// The files `patterns` leave selected: plain entries include (all when none), `!` excludes,
/// `+path` forces in, `-path` forces out.
pub fn apply_patterns(all: &[PathBuf], patterns: &[String], base: &Path) -> HashSet<PathBuf> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for p in patterns {
        if let Some(x) = p.strip_prefix('+') {
            force_in.push(x);
        } else if let Some(x) = p.strip_prefix('-') {
            force_out.push(x);
        } else if let Some(x) = p.strip_prefix('!') {
            excludes.push(x);
        } else {
            includes.push(p.as_str());
        }
    }
    let mut result: Vec<&PathBuf> = all
        .iter()
        .filter(|f| includes.is_empty() || matches_any_glob(f, &includes, base))
        .filter(|f| excludes.is_empty() || !matches_any_glob(f, &excludes, base))
        .collect();
    if !force_in.is_empty() {
        for f in all {
            if !result.contains(&f) && matches_any_exact(f, &force_in, base) {
                result.push(f);
            }
        }
    }
    result
        .into_iter()
        .filter(|f| force_out.is_empty() || !matches_any_exact(f, &force_out, base))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let base = Path::new("/p");
        let all: Vec<PathBuf> = ["/p/a/x.md", "/p/a/y.md", "/p/b/z.md"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let pick = |pats: &[&str]| {
            let mut v: Vec<PathBuf> =
                apply_patterns(&all, &pats.iter().map(|s| s.to_string()).collect::<Vec<_>>(), base)
                    .into_iter()
                    .collect();
            v.sort();
            v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(pick(&["a/*.md"]), ["/p/a/x.md", "/p/a/y.md"]);
        assert_eq!(pick(&["!x.md"]), ["/p/a/y.md", "/p/b/z.md"]);
        assert_eq!(pick(&["!a/*", "+a/x.md"]), ["/p/a/x.md", "/p/b/z.md"]);
        assert_eq!(pick(&["-b/z.md"]), ["/p/a/x.md", "/p/a/y.md"]);
    }
}
