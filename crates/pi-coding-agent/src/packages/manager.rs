//! The package operations behind the subcommands: install, remove and update a source and
//! keep the `packages` list of the user or project settings in step; list what is configured.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::install::{
    install_git, install_npm, install_npm_specs, installed_npm_version, latest_npm_version, remove_git, uninstall_npm,
    update_git,
};
use super::locations::{Locations, Scope};
use super::process::Output;
use super::source::PackageSpec;
use super::{is_offline, PackageError};
use crate::config::paths::Paths;
use crate::config::settings::{SettingsManager, SettingsScope};

/// A `packages` entry as `pi list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredPackage {
    pub source: String,
    pub scope: Scope,
    /// The object form (with resource filters).
    pub filtered: bool,
    pub installed_path: Option<PathBuf>,
}

/// Package operations on one agent dir and project.
pub struct PackageManager {
    pub loc: Locations,
    pub settings: SettingsManager,
    output: Output,
    progress: Box<dyn Fn(&str)>,
}

fn settings_scope(scope: Scope) -> SettingsScope {
    match scope {
        Scope::User => SettingsScope::Global,
        Scope::Project => SettingsScope::Project,
    }
}

/// `target` relative to `base` (both absolute and normalised); `.` when they are equal.
pub fn relative_path(base: &Path, target: &Path) -> String {
    let b: Vec<Component> = base.components().collect();
    let t: Vec<Component> = target.components().collect();
    let common = b.iter().zip(&t).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_string(), b.len() - common).collect();
    parts.extend(t[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

impl PackageManager {
    /// Load the settings of `paths`; `progress` gets each `Installing <source>...` line.
    pub fn new(paths: Paths, output: Output, progress: Box<dyn Fn(&str)>) -> Self {
        let settings = SettingsManager::load(&paths);
        let npm = settings.npm_command();
        PackageManager {
            loc: Locations::new(paths, npm),
            settings,
            output,
            progress,
        }
    }

    fn scope(local: bool) -> Scope {
        if local {
            Scope::Project
        } else {
            Scope::User
        }
    }

    fn raw_packages(&self, scope: Scope) -> Vec<Value> {
        let map = match scope {
            Scope::User => self.settings.global_settings(),
            Scope::Project => self.settings.project_settings(),
        };
        map.get("packages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    fn entry_source(v: &Value) -> Option<&str> {
        match v {
            Value::String(s) => Some(s),
            Value::Object(o) => o.get("source")?.as_str(),
            _ => None,
        }
    }

    fn write_packages(&mut self, scope: Scope, packages: Vec<Value>) -> Result<(), PackageError> {
        self.settings
            .set(settings_scope(scope), "packages", Some(Value::Array(packages)));
        match self.settings.drain_errors().into_iter().next() {
            Some(e) => Err(PackageError::new(e.message)),
            None => Ok(()),
        }
    }

    /// Whether a configured entry of `scope` is the same package as command-line `input`.
    fn matches(&self, existing: &Value, input: &str, scope: Scope) -> bool {
        Self::entry_source(existing).is_some_and(|s| self.loc.identity(s, scope) == self.loc.input_identity(input))
    }

    /// A local path is stored relative to the settings file's folder; others as given.
    fn source_for_settings(&self, source: &str, scope: Scope) -> String {
        match PackageSpec::parse(source) {
            PackageSpec::Local(p) => relative_path(&self.loc.base_dir(scope), &self.loc.resolve_input(&p)),
            _ => source.to_string(),
        }
    }

    /// Add `source` to the settings of the scope unless the package is already there.
    pub fn add_source_to_settings(&mut self, source: &str, local: bool) -> Result<bool, PackageError> {
        let scope = Self::scope(local);
        let mut packages = self.raw_packages(scope);
        if packages.iter().any(|p| self.matches(p, source, scope)) {
            return Ok(false);
        }
        packages.push(Value::String(self.source_for_settings(source, scope)));
        self.write_packages(scope, packages)?;
        Ok(true)
    }

    /// Drop every entry of the package from the scope's settings; `false` if none was there.
    pub fn remove_source_from_settings(&mut self, source: &str, local: bool) -> Result<bool, PackageError> {
        let scope = Self::scope(local);
        let packages = self.raw_packages(scope);
        let before = packages.len();
        let kept: Vec<Value> = packages
            .into_iter()
            .filter(|p| !self.matches(p, source, scope))
            .collect();
        if kept.len() == before {
            return Ok(false);
        }
        self.write_packages(scope, kept)?;
        Ok(true)
    }

    /// Put the package on disk (a local path must exist).
    pub fn install(&mut self, source: &str, local: bool) -> Result<(), PackageError> {
        let scope = Self::scope(local);
        (self.progress)(&format!("Installing {source}..."));
        match PackageSpec::parse(source) {
            PackageSpec::Npm(n) => install_npm(&self.loc, &n, scope, self.output),
            PackageSpec::Git(g) => install_git(&self.loc, &g, scope, self.output),
            PackageSpec::Local(p) => {
                let resolved = self.loc.resolve_input(&p);
                if resolved.exists() {
                    Ok(())
                } else {
                    Err(PackageError::new(format!(
                        "Path does not exist: {}",
                        resolved.display()
                    )))
                }
            }
        }
    }

    pub fn install_and_persist(&mut self, source: &str, local: bool) -> Result<(), PackageError> {
        self.install(source, local)?;
        self.add_source_to_settings(source, local)?;
        Ok(())
    }

    /// Take the package off disk (local paths are left alone).
    pub fn remove(&mut self, source: &str, local: bool) -> Result<(), PackageError> {
        let scope = Self::scope(local);
        (self.progress)(&format!("Removing {source}..."));
        match PackageSpec::parse(source) {
            PackageSpec::Npm(n) => uninstall_npm(&self.loc, &n, scope, self.output),
            PackageSpec::Git(g) => remove_git(&self.loc, &g, scope),
            PackageSpec::Local(_) => Ok(()),
        }
    }

    /// Remove the package and its settings entry; `false` when it was not configured.
    pub fn remove_and_persist(&mut self, source: &str, local: bool) -> Result<bool, PackageError> {
        self.remove(source, local)?;
        self.remove_source_from_settings(source, local)
    }

    /// Every configured entry, user entries first.
    pub fn list_configured(&self) -> Vec<ConfiguredPackage> {
        let mut out = Vec::new();
        for scope in [Scope::User, Scope::Project] {
            for v in self.raw_packages(scope) {
                let Some(source) = Self::entry_source(&v) else { continue };
                out.push(ConfiguredPackage {
                    source: source.to_string(),
                    scope,
                    filtered: v.is_object(),
                    installed_path: self.loc.installed_path(source, scope),
                });
            }
        }
        out
    }

    /// A configured source that `input` probably meant (a bare npm name, a git shorthand).
    fn suggestion(&self, input: &str) -> Option<String> {
        let input = input.trim();
        let all = [self.raw_packages(Scope::User), self.raw_packages(Scope::Project)].concat();
        all.iter()
            .filter_map(Self::entry_source)
            .find_map(|s| match PackageSpec::parse(s) {
                PackageSpec::Npm(n) if input == n.name || input == n.spec => Some(s.to_string()),
                PackageSpec::Git(g) => {
                    let short = format!("{}/{}", g.host, g.path);
                    let with_ref = g.git_ref.as_ref().map(|r| format!("{short}@{r}"));
                    (input == short || with_ref.as_deref() == Some(input)).then(|| s.to_string())
                }
                _ => None,
            })
    }

    /// Update every unpinned package, or only the one `source` names.
    pub fn update(&mut self, source: Option<&str>) -> Result<(), PackageError> {
        let wanted = source.map(|s| self.loc.input_identity(s));
        let mut targets: Vec<(String, Scope)> = Vec::new();
        for scope in [Scope::User, Scope::Project] {
            for v in self.raw_packages(scope) {
                let Some(s) = Self::entry_source(&v) else { continue };
                if wanted.as_ref().is_none_or(|w| *w == self.loc.identity(s, scope)) {
                    targets.push((s.to_string(), scope));
                }
            }
        }
        if let (Some(s), true) = (source, targets.is_empty()) {
            return Err(PackageError::new(match self.suggestion(s) {
                Some(m) => format!("No matching package found for {s}. Did you mean {m}?"),
                None => format!("No matching package found for {s}"),
            }));
        }
        if is_offline() {
            return Ok(());
        }
        let mut npm_updates: Vec<(String, String, Scope)> = Vec::new();
        let mut first_error = None;
        for (s, scope) in &targets {
            let spec = PackageSpec::parse(s);
            if spec.pinned() {
                continue;
            }
            match spec {
                PackageSpec::Npm(n) => {
                    let current = self
                        .loc
                        .npm_install_path(&n, *scope)
                        .ok()
                        .filter(|p| p.exists())
                        .and_then(|p| installed_npm_version(&p));
                    let outdated = match current {
                        None => true,
                        Some(v) => latest_npm_version(&self.loc, &n.name).map_or(true, |latest| latest != v),
                    };
                    if outdated {
                        npm_updates.push((s.clone(), format!("{}@latest", n.name), *scope));
                    }
                }
                PackageSpec::Git(g) => {
                    (self.progress)(&format!("Updating {s}..."));
                    if let Err(e) = update_git(&self.loc, &g, *scope, self.output) {
                        first_error.get_or_insert(e);
                    }
                }
                PackageSpec::Local(_) => {}
            }
        }
        for scope in [Scope::User, Scope::Project] {
            let batch: Vec<&(String, String, Scope)> = npm_updates.iter().filter(|u| u.2 == scope).collect();
            if batch.is_empty() {
                continue;
            }
            let message = match batch.as_slice() {
                [one] => format!("Updating {}...", one.0),
                _ => format!("Updating {} npm packages...", scope.as_str()),
            };
            (self.progress)(&message);
            let specs: Vec<String> = batch.iter().map(|u| u.1.clone()).collect();
            if let Err(e) = install_npm_specs(&self.loc, &specs, scope, self.output) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::fs;
    use std::rc::Rc;

    fn manager(root: &Path) -> (PackageManager, Rc<RefCell<Vec<String>>>) {
        let lines = Rc::new(RefCell::new(Vec::new()));
        let sink = lines.clone();
        let paths = Paths::new(root.join("agent"), root.join("proj"), root.join("home"));
        fs::create_dir_all(&paths.cwd).expect("mk");
        let pm = PackageManager::new(
            paths,
            Output::Stderr,
            Box::new(move |l: &str| sink.borrow_mut().push(l.to_string())),
        );
        (pm, lines)
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative_path(Path::new("/a/agent"), Path::new("/a/pkg")), "../pkg");
        assert_eq!(relative_path(Path::new("/a"), Path::new("/a")), ".");
        assert_eq!(relative_path(Path::new("/a"), Path::new("/a/b/c")), "b/c");
    }

    #[test]
    fn local_install_list_remove() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().canonicalize().expect("canon");
        fs::create_dir_all(root.join("pkg")).expect("mk");
        let (mut pm, lines) = manager(&root);
        pm.install_and_persist("../pkg", false).expect("installed");
        pm.install_and_persist("../pkg", true).expect("installed");
        // The same package twice is one entry.
        pm.install_and_persist(&root.join("pkg").display().to_string(), false)
            .expect("installed");
        let global: Value =
            serde_json::from_str(&fs::read_to_string(root.join("agent/settings.json")).expect("read")).expect("json");
        assert_eq!(global["packages"], serde_json::json!(["../pkg"]));
        let project: Value =
            serde_json::from_str(&fs::read_to_string(root.join("proj/.pi/settings.json")).expect("r")).expect("json");
        assert_eq!(project["packages"], serde_json::json!(["../../pkg"]));
        let listed = pm.list_configured();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].installed_path.as_deref(), Some(root.join("pkg").as_path()));
        assert_eq!(listed[1].scope, Scope::Project);
        assert!(pm.remove_and_persist("../pkg", false).expect("ok"));
        assert!(!pm.remove_and_persist("../pkg", false).expect("ok"));
        let err = pm.install("./missing", false).expect_err("missing");
        assert_eq!(
            err.to_string(),
            format!("Path does not exist: {}", root.join("proj/missing").display())
        );
        assert_eq!(lines.borrow()[0], "Installing ../pkg...");
        let err = pm.update(Some("npm:nothing")).expect_err("no match");
        assert_eq!(err.to_string(), "No matching package found for npm:nothing");
    }
}
