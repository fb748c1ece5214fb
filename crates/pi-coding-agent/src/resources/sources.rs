//! Where skills, prompt templates and themes are looked for, and the walk over those places
//! in pi's precedence order; each loader says only what its own files look like.

use std::path::{Path, PathBuf};

use super::discovery::{is_enabled, is_pattern, resolve_resource_path};
use super::ResourceScope;
use crate::config::paths::{Paths, CONFIG_DIR_NAME};

/// What to load one kind of resource from.
#[derive(Debug, Clone, Default)]
pub struct ResourceSources {
    /// Command-line values (files or folders), relative to the cwd.
    pub cli_paths: Vec<String>,
    /// Entries of the global settings file (relative to the agent dir).
    pub global_entries: Vec<String>,
    /// Entries of the project settings file (relative to `.pi/`).
    pub project_entries: Vec<String>,
    /// Files or folders contributed by packages, with the package each came from.
    pub package_paths: Vec<(PathBuf, ResourceScope)>,
    /// Files contributed by `-e` packages: they come first, even with `no_defaults`.
    pub temporary_package_paths: Vec<(PathBuf, ResourceScope)>,
    /// `--no-skills`, `--no-prompt-templates`, `--no-themes`: only the CLI paths.
    pub no_defaults: bool,
    /// The project is not trusted: its own folders are not searched.
    pub skip_project: bool,
}

/// The part of discovery that differs between resource kinds.
pub(crate) trait ResourceCollector {
    /// The extension (without the dot) a file given directly must have.
    const EXTENSION: &'static str;

    /// The resource files inside a folder given as a path.
    fn folder_files(&self, dir: &Path) -> Vec<PathBuf>;

    /// The files found without being named: the project's or the user's own folders.
    fn auto_files(&self, paths: &Paths, scope: &ResourceScope) -> Vec<PathBuf>;

    /// Take one candidate file, in precedence order.
    fn add_file(&mut self, file: PathBuf, scope: ResourceScope);

    /// A path that is neither a folder nor a file with [`Self::EXTENSION`] (it may not exist).
    fn unusable_path(&mut self, path: PathBuf);

    /// A CLI or package path: a folder to search or a single file.
    fn add_path(&mut self, path: PathBuf, scope: ResourceScope) {
        self.add_path_where(path, scope, &|_| true);
    }

    /// A settings entry that is not a filter; `enabled` applies the settings filters.
    fn add_entry(&mut self, path: PathBuf, scope: ResourceScope, enabled: &dyn Fn(&Path) -> bool) {
        self.add_path_where(path, scope, enabled);
    }

    /// [`Self::add_path`], keeping only the files `keep` accepts.
    fn add_path_where(&mut self, path: PathBuf, scope: ResourceScope, keep: &dyn Fn(&Path) -> bool) {
        if path.is_dir() {
            for f in self.folder_files(&path) {
                if keep(&f) {
                    self.add_file(f, scope.clone());
                }
            }
        } else if path.is_file() && path.extension().is_some_and(|e| e == Self::EXTENSION) {
            if keep(&path) {
                self.add_file(path, scope);
            }
        } else {
            self.unusable_path(path);
        }
    }
}

/// Feed `collector` every candidate in pi's precedence order: `-e` package files; CLI paths;
/// project settings entries, project folders; global settings entries, user folders; then
/// package paths.
pub(crate) fn collect_from_sources(paths: &Paths, sources: &ResourceSources, collector: &mut impl ResourceCollector) {
    for (p, scope) in &sources.temporary_package_paths {
        collector.add_path(p.clone(), scope.clone());
    }
    for p in &sources.cli_paths {
        collector.add_path(resolve_resource_path(p, &paths.cwd, &paths.home), ResourceScope::Path);
    }
    if sources.no_defaults {
        return;
    }
    for (entries, base, scope) in [
        (
            &sources.project_entries,
            paths.cwd.join(CONFIG_DIR_NAME),
            ResourceScope::Project,
        ),
        (&sources.global_entries, paths.agent_dir.clone(), ResourceScope::User),
    ] {
        if sources.skip_project && scope == ResourceScope::Project {
            continue;
        }
        for entry in entries.iter().filter(|e| !is_pattern(e)) {
            collector.add_entry(resolve_resource_path(entry, &base, &paths.home), scope.clone(), &|f| {
                is_enabled(f, entries, &base, true)
            });
        }
        for f in collector.auto_files(paths, &scope) {
            if is_enabled(&f, entries, &base, false) {
                collector.add_file(f, scope.clone());
            }
        }
    }
    for (p, scope) in &sources.package_paths {
        collector.add_path(p.clone(), scope.clone());
    }
}
