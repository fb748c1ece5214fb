//! Which extension files to load, in pi 1.6's order: `-e` paths, settings `extensions`
//! entries, the project's `.pi/extensions/` (only when the project is trusted) and
//! `<agentDir>/extensions/`, then the settings' packages. The first occurrence of a file (by
//! real path) wins.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::protocol::{ExtensionSource, LoadError};

/// One `extensions` entry of a settings file, with the folder relative paths start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsEntry {
    pub value: String,
    pub base_dir: PathBuf,
}

/// What decides the list.
#[derive(Debug, Clone, Default)]
pub struct DiscoveryInput {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// `-e` values as typed (relative to `cwd`), a `-e npm:`/`git:` package's entry files in
    /// its place.
    pub cli_paths: Vec<String>,
    /// Entry files or folders of installed settings packages, in their order.
    pub package_paths: Vec<PathBuf>,
    /// Project entries first, then user entries, as pi merges them.
    pub settings_entries: Vec<SettingsEntry>,
    /// Whether the project may contribute `.pi/extensions/`.
    pub project_trusted: bool,
    /// `--no-extensions`: only `-e` paths load.
    pub no_extensions: bool,
}

/// The files to load and the paths that could not be used.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    pub sources: Vec<ExtensionSource>,
    pub errors: Vec<LoadError>,
}

fn expand_home(value: &str) -> PathBuf {
    if value == "~" || value.starts_with("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(value.trim_start_matches('~').trim_start_matches('/'));
        }
    }
    PathBuf::from(value)
}

/// `value` against `base`, with `.` and `..` resolved as text (as Node's `path.resolve`);
/// a leading `~` is the home folder.
pub fn absolute(base: &Path, value: &str) -> PathBuf {
    use std::path::Component;
    let path = expand_home(value);
    let joined = if path.is_absolute() { path } else { base.join(path) };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn is_extension_file(name: &str) -> bool {
    name.ends_with(".ts") || name.ends_with(".js")
}

/// Entry points of an extension folder: its `package.json` `pi.extensions`, else `index.ts`,
/// else `index.js`.
fn folder_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Ok(text) = std::fs::read_to_string(dir.join("package.json")) {
        if let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Some(list) = manifest
                .get("pi")
                .and_then(|pi| pi.get("extensions"))
                .and_then(|e| e.as_array())
            {
                // An entry that is a folder stands for the extensions in it, as pi 1.6 reads
                // a manifest (`"extensions": ["./extensions"]`).
                let entries: Vec<PathBuf> = list
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(|p| absolute(dir, p))
                    .flat_map(|p| if p.is_dir() { discover_in_dir(&p) } else { vec![p] })
                    .filter(|p| p.exists())
                    .collect();
                if !entries.is_empty() {
                    return Some(entries);
                }
            }
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
        .map(|p| vec![p])
}

/// One level of an extensions folder: `*.ts`/`*.js` files and subfolders with entry points,
/// in name order.
fn discover_in_dir(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<(String, PathBuf)> = read
        .flatten()
        .map(|entry| (entry.file_name().to_string_lossy().into_owned(), entry.path()))
        .collect();
    names.sort();
    let mut found = Vec::new();
    for (name, path) in names {
        if path.is_file() && is_extension_file(&name) {
            found.push(path);
        } else if path.is_dir() {
            if let Some(entries) = folder_entries(&path) {
                found.extend(entries);
            }
        }
    }
    found
}

/// A configured path (file or folder) to its entry files; a missing one is an error.
fn configured(path: PathBuf) -> Result<Vec<PathBuf>, String> {
    if path.is_dir() {
        return Ok(folder_entries(&path).unwrap_or_else(|| discover_in_dir(&path)));
    }
    if path.exists() {
        return Ok(vec![path]);
    }
    Err(format!("Extension path does not exist: {}", path.display()))
}

/// A `-e` folder is read as a package, as pi 1.6 reads it: its manifest's extensions, else
/// the files of its `extensions/` folder, else the folder as one extension.
fn cli_configured(path: PathBuf) -> Result<Vec<PathBuf>, String> {
    let conventional = path.join("extensions");
    if path.is_dir() && conventional.is_dir() && !has_manifest_extensions(&path) {
        return Ok(discover_in_dir(&conventional));
    }
    configured(path)
}

/// Whether the folder's `package.json` lists `pi.extensions`.
fn has_manifest_extensions(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|m| m.get("pi").and_then(|pi| pi.get("extensions")).is_some())
}

struct Collector {
    seen: HashSet<PathBuf>,
    excluded: HashSet<PathBuf>,
    out: Discovered,
}

impl Collector {
    fn add(&mut self, path: PathBuf) {
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if self.excluded.contains(&real) || !self.seen.insert(real.clone()) {
            return;
        }
        self.out.sources.push(ExtensionSource {
            path: path.display().to_string(),
            resolved_path: (real != path).then_some(real),
        });
    }

    /// Settings `extensions` entries, in their order.
    fn add_entries(&mut self, entries: &[&SettingsEntry]) {
        for entry in entries {
            let value = entry.value.as_str();
            // Built-in extensions (`+builtin:<name>` too: a switch, see the coding agent's
            // `extensions::builtin`) and glob filters are not handled here. A `+path` entry
            // only keeps a file that something else finds (pi 1.6 force-includes among the
            // files it collected); it loads nothing by itself.
            if value.starts_with(['-', '!', '+']) || value.starts_with("builtin:") {
                continue;
            }
            self.add_configured(absolute(&entry.base_dir, value));
        }
    }

    fn add_configured(&mut self, path: PathBuf) {
        self.add_found(path, configured);
    }

    fn add_found(&mut self, path: PathBuf, find: fn(PathBuf) -> Result<Vec<PathBuf>, String>) {
        let shown = path.display().to_string();
        match find(path) {
            Ok(paths) => paths.into_iter().for_each(|p| self.add(p)),
            Err(error) => self.out.errors.push(LoadError { path: shown, error }),
        }
    }
}

/// The ordered list of extension files to load.
pub fn discover(input: &DiscoveryInput) -> Discovered {
    let mut collector = Collector {
        seen: HashSet::new(),
        excluded: HashSet::new(),
        out: Discovered::default(),
    };
    // `-path` entries exclude a file wherever it would come from.
    if !input.no_extensions {
        for entry in &input.settings_entries {
            if let Some(rest) = entry.value.strip_prefix('-') {
                let path = absolute(&entry.base_dir, rest);
                collector.excluded.insert(std::fs::canonicalize(&path).unwrap_or(path));
            }
        }
    }
    for value in &input.cli_paths {
        collector.add_found(absolute(&input.cwd, value), cli_configured);
    }
    if input.no_extensions {
        return collector.out;
    }
    // pi 1.6's ranks: the project's settings entries, the project's `extensions/`, the user's
    // settings entries, then the agent folder's `extensions/`.
    let project_dir = input.cwd.join(".pi");
    let (project_entries, user_entries): (Vec<&SettingsEntry>, Vec<&SettingsEntry>) =
        input.settings_entries.iter().partition(|e| e.base_dir == project_dir);
    collector.add_entries(&project_entries);
    if input.project_trusted {
        for path in discover_in_dir(&project_dir.join("extensions")) {
            collector.add(path);
        }
    }
    collector.add_entries(&user_entries);
    for path in discover_in_dir(&input.agent_dir.join("extensions")) {
        collector.add(path);
    }
    // Packages load after the files of the settings and the `extensions/` folders, as pi 1.6
    // ranks them.
    for path in &input.package_paths {
        collector.add_configured(path.clone());
    }
    collector.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn touch(path: &Path) -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, "export default function () {}\n")
    }

    fn names(found: &Discovered, root: &Path) -> Vec<String> {
        found
            .sources
            .iter()
            .map(|s| {
                Path::new(&s.path)
                    .strip_prefix(root)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| s.path.clone())
            })
            .collect()
    }

    #[test]
    fn a_cli_folder_without_a_manifest_loads_its_extensions_folder() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let root = fs::canonicalize(root.path())?;
        touch(&root.join("pkg/extensions/b.ts"))?;
        touch(&root.join("pkg/extensions/a.ts"))?;
        touch(&root.join("pkg/extensions/multi/index.ts"))?;
        touch(&root.join("pkg/skills/x/SKILL.md"))?;
        let input = DiscoveryInput {
            cwd: root.clone(),
            agent_dir: root.join("agent"),
            cli_paths: vec!["pkg".into()],
            ..DiscoveryInput::default()
        };
        let found = discover(&input);
        assert_eq!(
            names(&found, &root),
            [
                "pkg/extensions/a.ts",
                "pkg/extensions/b.ts",
                "pkg/extensions/multi/index.ts"
            ]
        );
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        Ok(())
    }

    #[test]
    fn a_manifest_entry_naming_a_folder_loads_the_extensions_in_it() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let root = fs::canonicalize(root.path())?;
        let package = root.join("pkg");
        fs::create_dir_all(&package)?;
        fs::write(
            package.join("package.json"),
            r#"{"pi":{"extensions":["./extensions"]}}"#,
        )?;
        touch(&package.join("extensions/b.ts"))?;
        touch(&package.join("extensions/a.ts"))?;
        touch(&package.join("extensions/notes.md"))?;
        let input = DiscoveryInput {
            cwd: root.clone(),
            agent_dir: root.join("agent"),
            cli_paths: vec!["pkg".into()],
            ..DiscoveryInput::default()
        };
        let found = discover(&input);
        assert_eq!(names(&found, &root), ["pkg/extensions/a.ts", "pkg/extensions/b.ts"]);
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        Ok(())
    }

    #[test]
    fn order_forms_trust_and_duplicates() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let root = fs::canonicalize(root.path())?;
        let cwd = root.join("project");
        let agent = root.join("agent");
        touch(&agent.join("extensions/b.ts"))?;
        touch(&agent.join("extensions/a.js"))?;
        touch(&agent.join("extensions/notes.md"))?;
        touch(&agent.join("extensions/pkg/index.ts"))?;
        touch(&agent.join("extensions/manifest/src/main.ts"))?;
        fs::write(
            agent.join("extensions/manifest/package.json"),
            r#"{"pi":{"extensions":["./src/main.ts"]}}"#,
        )?;
        touch(&agent.join("extensions/empty/readme.ts.txt"))?;
        touch(&cwd.join(".pi/extensions/local.ts"))?;
        touch(&cwd.join("cli.ts"))?;
        touch(&root.join("shared/s.ts"))?;
        touch(&root.join("pkg/p.ts"))?;

        let mut input = DiscoveryInput {
            cwd: cwd.clone(),
            agent_dir: agent.clone(),
            cli_paths: vec!["cli.ts".into(), "missing.ts".into()],
            package_paths: vec![root.join("pkg/p.ts")],
            settings_entries: vec![
                SettingsEntry {
                    value: "../shared/s.ts".into(),
                    base_dir: agent.clone(),
                },
                // Named twice: loaded once, where it first appears.
                SettingsEntry {
                    value: agent.join("extensions/b.ts").display().to_string(),
                    base_dir: agent.clone(),
                },
                SettingsEntry {
                    value: "builtin:mcp".into(),
                    base_dir: agent.clone(),
                },
                // A switch that turns a built-in on again, no file.
                SettingsEntry {
                    value: "+builtin:codemode".into(),
                    base_dir: agent.clone(),
                },
            ],
            ..DiscoveryInput::default()
        };
        let found = discover(&input);
        assert_eq!(
            names(&found, &root),
            vec![
                "project/cli.ts",
                "shared/s.ts",
                "agent/extensions/b.ts",
                "agent/extensions/a.js",
                "agent/extensions/manifest/src/main.ts",
                "agent/extensions/pkg/index.ts",
                "pkg/p.ts",
            ]
        );
        assert_eq!(found.errors.len(), 1);
        assert_eq!(
            found.errors[0].error,
            format!("Extension path does not exist: {}", cwd.join("missing.ts").display())
        );

        input.project_trusted = true;
        let trusted = discover(&input);
        assert!(names(&trusted, &root).contains(&"project/.pi/extensions/local.ts".to_string()));
        let local = names(&trusted, &root)
            .iter()
            .position(|n| n == "project/.pi/extensions/local.ts");
        let global = names(&trusted, &root).iter().position(|n| n == "agent/extensions/a.js");
        assert!(local < global, "project extensions load before global ones");
        // pi 1.6's ranks: the project's `extensions/` before the user's settings entries.
        let listed = names(&trusted, &root).iter().position(|n| n == "shared/s.ts");
        assert!(local < listed, "{:?}", names(&trusted, &root));

        input.no_extensions = true;
        assert_eq!(names(&discover(&input), &root), vec!["project/cli.ts"]);
        Ok(())
    }

    #[test]
    fn a_minus_entry_excludes_a_discovered_file() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let agent = root.path().join("agent");
        touch(&agent.join("extensions/keep.ts"))?;
        touch(&agent.join("extensions/drop.ts"))?;
        let found = discover(&DiscoveryInput {
            cwd: root.path().to_path_buf(),
            agent_dir: agent.clone(),
            settings_entries: vec![SettingsEntry {
                value: "-extensions/drop.ts".into(),
                base_dir: agent.clone(),
            }],
            ..DiscoveryInput::default()
        });
        assert_eq!(found.sources.len(), 1);
        assert!(found.sources[0].path.ends_with("keep.ts"));
        Ok(())
    }
}
