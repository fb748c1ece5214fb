//! Which resource files the configured packages provide (their `package.json` `pi` manifest
//! or the conventional folders, narrowed by a settings entry's filters), and, for
//! `pi config`, every resolved resource with its enabled state and origin.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::files::{
    apply_patterns, collect_resource_files, extension_entries, files_from_manifest_entries, files_from_paths,
    is_override, read_manifest, string_list,
};
use super::install::{install_spec, install_temporary, installed_npm_version, refresh_temporary_git};
use super::locations::{Locations, Scope};
use super::process::Output;
use super::source::PackageSpec;
use super::{is_offline, PackageError};
use crate::config::settings::SettingsManager;
use crate::resources::discovery::{
    ancestor_agents_skill_dirs, collect_skill_files, collect_top_level_files, is_enabled, is_pattern,
    resolve_resource_path, SkillDirMode,
};

/// The four kinds of resource a package may bring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    Extensions,
    Skills,
    Prompts,
    Themes,
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 4] = [
        ResourceKind::Extensions,
        ResourceKind::Skills,
        ResourceKind::Prompts,
        ResourceKind::Themes,
    ];

    /// The settings / manifest key and the conventional folder name.
    pub fn key(self) -> &'static str {
        match self {
            ResourceKind::Extensions => "extensions",
            ResourceKind::Skills => "skills",
            ResourceKind::Prompts => "prompts",
            ResourceKind::Themes => "themes",
        }
    }
}

/// Where a resolved resource came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A package; the source string as configured.
    Package(String),
    /// A path entry of the settings file.
    Settings,
    /// Found in the agent dir's or the project's own folders.
    Auto,
}

/// One resource file and whether the settings leave it enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedResource {
    pub path: PathBuf,
    pub enabled: bool,
    pub origin: Origin,
    pub scope: Scope,
    /// The folder filter patterns for this resource are relative to.
    pub base_dir: PathBuf,
    /// From a `-e` source (installed for this run only).
    pub temporary: bool,
}

impl ResolvedResource {
    /// Lower comes first: project settings, project auto, user settings, user auto, packages.
    fn rank(&self) -> u8 {
        let scope = if self.scope == Scope::Project { 0 } else { 2 };
        match self.origin {
            Origin::Package(_) => 4,
            Origin::Settings => scope,
            Origin::Auto => scope + 1,
        }
    }
}

/// Every resolved resource, by kind, in precedence order.
#[derive(Debug, Clone, Default)]
pub struct ResolvedPaths {
    pub extensions: Vec<ResolvedResource>,
    pub skills: Vec<ResolvedResource>,
    pub prompts: Vec<ResolvedResource>,
    pub themes: Vec<ResolvedResource>,
}

impl ResolvedPaths {
    pub fn of(&self, kind: ResourceKind) -> &[ResolvedResource] {
        match kind {
            ResourceKind::Extensions => &self.extensions,
            ResourceKind::Skills => &self.skills,
            ResourceKind::Prompts => &self.prompts,
            ResourceKind::Themes => &self.themes,
        }
    }

    fn of_mut(&mut self, kind: ResourceKind) -> &mut Vec<ResolvedResource> {
        match kind {
            ResourceKind::Extensions => &mut self.extensions,
            ResourceKind::Skills => &mut self.skills,
            ResourceKind::Prompts => &mut self.prompts,
            ResourceKind::Themes => &mut self.themes,
        }
    }

    /// The enabled files of `kind`.
    pub fn enabled(&self, kind: ResourceKind) -> Vec<PathBuf> {
        self.of(kind)
            .iter()
            .filter(|r| r.enabled)
            .map(|r| r.path.clone())
            .collect()
    }

    /// Add a file unless it is already there (the first entry of a path wins).
    fn add(&mut self, kind: ResourceKind, path: PathBuf, meta: &Meta, enabled: bool) {
        let list = self.of_mut(kind);
        if list.iter().any(|r| r.path == path) {
            return;
        }
        list.push(ResolvedResource {
            path,
            enabled,
            origin: meta.origin.clone(),
            scope: meta.scope,
            base_dir: meta.base_dir.clone(),
            temporary: meta.temporary,
        });
    }

    /// Sort by precedence and drop later entries of the same real file.
    fn finish(mut self) -> Self {
        for kind in ResourceKind::ALL {
            let list = self.of_mut(kind);
            list.sort_by_key(ResolvedResource::rank);
            let mut seen = HashSet::new();
            list.retain(|r| seen.insert(r.path.canonicalize().unwrap_or_else(|_| r.path.clone())));
        }
        self
    }
}

struct Meta {
    origin: Origin,
    scope: Scope,
    base_dir: PathBuf,
    temporary: bool,
}

/// One `packages` entry: the source and, for the object form, its filters.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageEntry {
    pub source: String,
    pub filter: Option<Map<String, Value>>,
    pub scope: Scope,
    /// A `-e` source: installed under the temp folder, local paths relative to the cwd.
    pub temporary: bool,
}

/// The `packages` entries of one settings scope (entries without a source are skipped).
pub fn package_entries(settings: &Map<String, Value>, scope: Scope) -> Vec<PackageEntry> {
    let Some(Value::Array(items)) = settings.get("packages") else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(PackageEntry {
                source: s.clone(),
                filter: None,
                scope,
                temporary: false,
            }),
            Value::Object(o) => Some(PackageEntry {
                source: o.get("source")?.as_str()?.to_string(),
                filter: Some(o.clone()),
                scope,
                temporary: false,
            }),
            _ => None,
        })
        .collect()
}

/// Project entries, then user ones, one per package identity; a project entry beats a user
/// entry of the same package.
pub fn configured_packages(loc: &Locations, settings: &SettingsManager) -> Vec<PackageEntry> {
    let mut all = package_entries(settings.project_settings(), Scope::Project);
    all.extend(package_entries(settings.global_settings(), Scope::User));
    let mut out: Vec<(String, PackageEntry)> = Vec::new();
    for entry in all {
        let id = loc.identity(&entry.source, entry.scope);
        match out.iter_mut().find(|(i, _)| *i == id) {
            None => out.push((id, entry)),
            Some((_, existing)) => {
                if entry.scope == Scope::Project && existing.scope == Scope::User {
                    *existing = entry;
                }
            }
        }
    }
    out.into_iter().map(|(_, e)| e).collect()
}

/// What resolving the packages could not do (nothing is printed here).
pub type ResolveProblems = Vec<PackageError>;

/// Add the resources of `packages`. With `install`, missing packages (and pinned npm
/// packages at another version) are installed first, unless pi is offline.
pub fn resolve_package_sources(
    loc: &Locations,
    packages: &[PackageEntry],
    install: Option<Output>,
    out: &mut ResolvedPaths,
    problems: &mut ResolveProblems,
) {
    for entry in packages {
        let filter = entry.filter.as_ref();
        let mut meta = Meta {
            origin: Origin::Package(entry.source.clone()),
            scope: entry.scope,
            base_dir: loc.base_dir(entry.scope),
            temporary: entry.temporary,
        };
        let spec = PackageSpec::parse(&entry.source);
        let installing = install.filter(|_| !is_offline());
        let installed = match &spec {
            PackageSpec::Local(p) => {
                let path = if entry.temporary {
                    loc.resolve_input(p)
                } else {
                    loc.resolve_local(p, entry.scope)
                };
                add_local_source(&path, filter, &mut meta, out);
                continue;
            }
            PackageSpec::Npm(n) => match if entry.temporary {
                Ok(loc.temp_npm_install_path(n))
            } else {
                loc.npm_installed_path_fast(n, entry.scope)
            } {
                Ok(path) => {
                    let wrong_version = n
                        .version
                        .as_ref()
                        .is_some_and(|v| installed_npm_version(&path).as_ref() != Some(v));
                    let missing = !path.exists() || wrong_version;
                    (path, missing)
                }
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            },
            PackageSpec::Git(g) if entry.temporary => {
                let path = loc.temp_git_install_path(g);
                let missing = !path.exists();
                if let (false, None, Some(output)) = (missing, &g.git_ref, installing) {
                    refresh_temporary_git(loc, g, output);
                }
                (path, missing)
            }
            PackageSpec::Git(g) => {
                let path = loc.git_install_path(g, entry.scope);
                let missing = !path.exists();
                (path, missing)
            }
        };
        let (path, missing) = installed;
        if missing {
            let Some(output) = installing else {
                // An outdated pinned package is still better than none.
                if !path.exists() {
                    continue;
                }
                meta.base_dir = path.clone();
                collect_package_resources(&path, filter, &meta, out);
                continue;
            };
            let result = if entry.temporary {
                install_temporary(loc, &spec, output)
            } else {
                install_spec(loc, &spec, entry.scope, output)
            };
            if let Err(e) = result {
                problems.push(e);
                if !path.exists() {
                    continue;
                }
            }
        }
        meta.base_dir = path.clone();
        collect_package_resources(&path, filter, &meta, out);
    }
}

/// A local package: a file is one extension; a folder follows the package rules, or is an
/// extension itself when it has no resources.
fn add_local_source(path: &Path, filter: Option<&Map<String, Value>>, meta: &mut Meta, out: &mut ResolvedPaths) {
    if path.is_file() {
        meta.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        out.add(ResourceKind::Extensions, path.to_path_buf(), meta, true);
    } else if path.is_dir() {
        meta.base_dir = path.to_path_buf();
        if !collect_package_resources(path, filter, meta, out) {
            out.add(ResourceKind::Extensions, path.to_path_buf(), meta, true);
        }
    }
}

/// Add a package's resources; `false` when it declares and contains none.
fn collect_package_resources(
    root: &Path,
    filter: Option<&Map<String, Value>>,
    meta: &Meta,
    out: &mut ResolvedPaths,
) -> bool {
    let manifest = read_manifest(root);
    if let Some(filter) = filter {
        for kind in ResourceKind::ALL {
            match string_list(filter.get(kind.key())) {
                Some(patterns) => apply_package_filter(root, manifest.as_ref(), &patterns, kind, meta, out),
                None => collect_default_resources(root, manifest.as_ref(), kind, meta, out),
            }
        }
        return true;
    }
    if let Some(manifest) = &manifest {
        for kind in ResourceKind::ALL {
            if let Some(entries) = string_list(manifest.get(kind.key())) {
                add_manifest_entries(&entries, root, kind, meta, out);
            }
        }
        return true;
    }
    let mut any = false;
    for kind in ResourceKind::ALL {
        let dir = root.join(kind.key());
        if dir.exists() {
            for f in collect_resource_files(&dir, kind) {
                out.add(kind, f, meta, true);
            }
            any = true;
        }
    }
    any
}

fn collect_default_resources(
    root: &Path,
    manifest: Option<&Map<String, Value>>,
    kind: ResourceKind,
    meta: &Meta,
    out: &mut ResolvedPaths,
) {
    if let Some(entries) = string_list(manifest.and_then(|m| m.get(kind.key()))) {
        add_manifest_entries(&entries, root, kind, meta, out);
        return;
    }
    let dir = root.join(kind.key());
    if dir.exists() {
        for f in collect_resource_files(&dir, kind) {
            out.add(kind, f, meta, true);
        }
    }
}

/// A settings filter on a package: `[]` disables every file of the kind; otherwise the
/// patterns pick among what the manifest provides.
fn apply_package_filter(
    root: &Path,
    manifest: Option<&Map<String, Value>>,
    patterns: &[String],
    kind: ResourceKind,
    meta: &Meta,
    out: &mut ResolvedPaths,
) {
    let all = manifest_files(root, manifest, kind);
    let enabled = if patterns.is_empty() {
        HashSet::new()
    } else {
        apply_patterns(&all, patterns, root)
    };
    for f in all {
        let on = enabled.contains(&f);
        out.add(kind, f, meta, on);
    }
}

/// The files the manifest (or the conventional folder) provides, its own filters applied.
fn manifest_files(root: &Path, manifest: Option<&Map<String, Value>>, kind: ResourceKind) -> Vec<PathBuf> {
    if let Some(entries) = string_list(manifest.and_then(|m| m.get(kind.key()))).filter(|e| !e.is_empty()) {
        let all = files_from_manifest_entries(&entries, root, kind);
        let overrides: Vec<String> = entries.into_iter().filter(|e| is_override(e)).collect();
        if overrides.is_empty() {
            return all;
        }
        let enabled = apply_patterns(&all, &overrides, root);
        return all.into_iter().filter(|f| enabled.contains(f)).collect();
    }
    let dir = root.join(kind.key());
    if dir.exists() {
        collect_resource_files(&dir, kind)
    } else {
        Vec::new()
    }
}

fn add_manifest_entries(entries: &[String], root: &Path, kind: ResourceKind, meta: &Meta, out: &mut ResolvedPaths) {
    let all = files_from_manifest_entries(entries, root, kind);
    let overrides: Vec<String> = entries.iter().filter(|e| is_override(e)).cloned().collect();
    let enabled = apply_patterns(&all, &overrides, root);
    for f in all {
        if enabled.contains(&f) {
            out.add(kind, f, meta, true);
        }
    }
}

/// Settings path entries of one scope: their files, enabled as the entry patterns say.
fn resolve_settings_entries(entries: &[String], kind: ResourceKind, meta: &Meta, home: &Path, out: &mut ResolvedPaths) {
    if entries.is_empty() {
        return;
    }
    let plain: Vec<PathBuf> = entries
        .iter()
        .filter(|e| !is_pattern(e))
        .map(|e| resolve_resource_path(e, &meta.base_dir, home))
        .collect();
    let patterns: Vec<String> = entries.iter().filter(|e| is_pattern(e)).cloned().collect();
    let all = files_from_paths(&plain, kind);
    let enabled = apply_patterns(&all, &patterns, &meta.base_dir);
    for f in all {
        let on = enabled.contains(&f);
        out.add(kind, f, meta, on);
    }
}

fn auto_files(loc: &Locations, kind: ResourceKind, scope: Scope) -> Vec<PathBuf> {
    let base = loc.base_dir(scope);
    let dir = base.join(kind.key());
    match kind {
        ResourceKind::Extensions => extension_entries(&dir),
        ResourceKind::Prompts => collect_top_level_files(&dir, ".md"),
        ResourceKind::Themes => collect_top_level_files(&dir, ".json"),
        ResourceKind::Skills => {
            let user_agents = loc.paths.home.join(".agents").join("skills");
            let mut files = collect_skill_files(&dir, SkillDirMode::Pi);
            match scope {
                Scope::Project => {
                    for d in ancestor_agents_skill_dirs(&loc.paths.cwd) {
                        if d != user_agents {
                            files.extend(collect_skill_files(&d, SkillDirMode::Agents));
                        }
                    }
                }
                Scope::User => files.extend(collect_skill_files(&user_agents, SkillDirMode::Agents)),
            }
            files
        }
    }
}

fn settings_list(map: &Map<String, Value>, key: &str) -> Vec<String> {
    string_list(map.get(key)).unwrap_or_default()
}

/// Every resource pi would consider: packages, settings entries and the auto-discovered
/// folders, each with its enabled state (what `pi config` shows).
pub fn resolve_all(
    loc: &Locations,
    settings: &SettingsManager,
    install: Option<Output>,
) -> (ResolvedPaths, ResolveProblems) {
    let mut out = ResolvedPaths::default();
    let mut problems = Vec::new();
    let packages = configured_packages(loc, settings);
    resolve_package_sources(loc, &packages, install, &mut out, &mut problems);
    let scopes = [
        (Scope::Project, settings.project_settings()),
        (Scope::User, settings.global_settings()),
    ];
    for kind in ResourceKind::ALL {
        for (scope, map) in scopes {
            let meta = Meta {
                origin: Origin::Settings,
                scope,
                base_dir: loc.base_dir(scope),
                temporary: false,
            };
            resolve_settings_entries(&settings_list(map, kind.key()), kind, &meta, &loc.paths.home, &mut out);
        }
    }
    for (scope, map) in scopes {
        let meta = Meta {
            origin: Origin::Auto,
            scope,
            base_dir: loc.base_dir(scope),
            temporary: false,
        };
        for kind in ResourceKind::ALL {
            let overrides = settings_list(map, kind.key());
            for f in auto_files(loc, kind, scope) {
                let on = is_enabled(&f, &overrides, &meta.base_dir, false);
                out.add(kind, f, &meta, on);
            }
        }
    }
    (out.finish(), problems)
}

/// The enabled package resources only (what startup adds to discovery).
pub fn resolve_packages(
    loc: &Locations,
    settings: &SettingsManager,
    install: Option<Output>,
) -> (ResolvedPaths, ResolveProblems) {
    let mut out = ResolvedPaths::default();
    let mut problems = Vec::new();
    let packages = configured_packages(loc, settings);
    resolve_package_sources(loc, &packages, install, &mut out, &mut problems);
    (out.finish(), problems)
}

/// The enabled resources of `-e` sources (installed into the temp folder when missing,
/// unless pi is offline).
pub fn resolve_temporary(
    loc: &Locations,
    sources: &[String],
    install: Option<Output>,
) -> (ResolvedPaths, ResolveProblems) {
    let entries: Vec<PackageEntry> = sources
        .iter()
        .map(|s| PackageEntry {
            source: s.clone(),
            filter: None,
            scope: Scope::User,
            temporary: true,
        })
        .collect();
    let mut out = ResolvedPaths::default();
    let mut problems = Vec::new();
    resolve_package_sources(loc, &entries, install, &mut out, &mut problems);
    (out.finish(), problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::paths::Paths;
    use std::fs;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mk");
        fs::write(path, text).expect("write");
    }

    fn names(list: &[ResolvedResource]) -> Vec<(String, bool)> {
        list.iter()
            .map(|r| {
                (
                    r.path.file_name().expect("name").to_string_lossy().into_owned(),
                    r.enabled,
                )
            })
            .collect()
    }

    fn setup(settings: &str) -> (tempfile::TempDir, Locations, SettingsManager) {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().canonicalize().expect("canon");
        let paths = Paths::new(root.join("agent"), root.join("proj"), root.join("home"));
        fs::create_dir_all(&paths.cwd).expect("mk");
        write(&paths.settings_path(), settings);
        let settings = SettingsManager::load(&paths);
        (tmp, Locations::new(paths, None), settings)
    }

    #[test]
    fn conventional_folders() {
        let (tmp, loc, settings) = setup(r#"{"packages": ["../pkg"]}"#);
        let pkg = tmp.path().canonicalize().expect("c").join("pkg");
        write(&pkg.join("skills/a/SKILL.md"), "x");
        write(&pkg.join("prompts/p.md"), "x");
        write(&pkg.join("prompts/sub/q.md"), "x");
        write(&pkg.join("themes/t.json"), "{}");
        write(&pkg.join("extensions/e.ts"), "");
        let (r, problems) = resolve_packages(&loc, &settings, None);
        assert!(problems.is_empty());
        assert_eq!(names(&r.skills), [("SKILL.md".into(), true)]);
        assert_eq!(names(&r.prompts), [("p.md".into(), true), ("q.md".into(), true)]);
        assert_eq!(names(&r.themes), [("t.json".into(), true)]);
        assert_eq!(names(&r.extensions), [("e.ts".into(), true)]);
        assert_eq!(r.skills[0].origin, Origin::Package("../pkg".into()));
    }

    #[test]
    fn manifest_globs_exclusions_and_object_filters() {
        let (tmp, loc, settings) = setup(r#"{"packages": [{"source": "../pkg", "prompts": ["!b.md"], "skills": []}]}"#);
        let pkg = tmp.path().canonicalize().expect("c").join("pkg");
        write(
            &pkg.join("package.json"),
            r#"{"name": "p", "pi": {"prompts": ["./docs/*.md", "!docs/c.md"], "skills": ["skills"]}}"#,
        );
        for n in ["a", "b", "c"] {
            write(&pkg.join(format!("docs/{n}.md")), "x");
        }
        write(&pkg.join("skills/s/SKILL.md"), "x");
        write(&pkg.join("themes/t.json"), "{}");
        let (r, _) = resolve_packages(&loc, &settings, None);
        assert_eq!(names(&r.prompts), [("a.md".into(), true), ("b.md".into(), false)]);
        assert_eq!(names(&r.skills), [("SKILL.md".into(), false)]);
        // With a filter object, a kind the manifest leaves out comes from its folder.
        assert_eq!(names(&r.themes), [("t.json".into(), true)]);
        assert_eq!(r.enabled(ResourceKind::Prompts), vec![pkg.join("docs/a.md")]);
    }

    #[test]
    fn project_entry_wins_and_precedence() {
        let (tmp, loc, settings) = setup(r#"{"packages": ["../pkg", "npm:foo@1"], "prompts": ["extra"]}"#);
        let root = tmp.path().canonicalize().expect("c");
        write(&root.join("proj/.pi/settings.json"), r#"{"packages": ["npm:foo"]}"#);
        write(&root.join("agent/extra/x.md"), "x");
        write(&root.join("agent/prompts/auto.md"), "x");
        write(&root.join("pkg/prompts/fromp.md"), "x");
        let settings = {
            drop(settings);
            SettingsManager::load(&loc.paths)
        };
        let pkgs = configured_packages(&loc, &settings);
        let list: Vec<(&str, Scope)> = pkgs.iter().map(|p| (p.source.as_str(), p.scope)).collect();
        assert_eq!(list, [("npm:foo", Scope::Project), ("../pkg", Scope::User)]);
        // The project npm package is not installed (no install offline) and is skipped.
        let (all, problems) = resolve_all(&loc, &settings, None);
        assert!(problems.is_empty());
        assert_eq!(
            names(&all.prompts),
            [
                ("x.md".into(), true),
                ("auto.md".into(), true),
                ("fromp.md".into(), true)
            ]
        );
    }
}
