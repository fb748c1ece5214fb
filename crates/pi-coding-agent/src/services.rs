//! What outlives one session: the model registry (built-in catalogue, models.json, auth), and
//! the services bound to a working directory (settings, resources). `/new`, `/resume`, `/fork`
//! and `/clone` keep them and rebuild only what depends on the cwd, and only when the cwd
//! changes; `/reload` reads them again from disk. The extension runner and MCP connections
//! join this layer, so a session switch does not drop them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::cli::Args;
use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;
use crate::config::ModelRegistry;
use crate::extensions::ExtensionSlot;
use crate::mcp::McpRuntime;
use crate::resources::loader::{load_resources, ResourceOptions, Resources};
use crate::session::agent_session::lock;

/// The settings and resources of one working directory.
#[derive(Clone)]
pub struct CwdServices {
    pub cwd: PathBuf,
    pub paths: Paths,
    pub settings: Arc<Mutex<SettingsManager>>,
    pub resources: Arc<Resources>,
    /// Whether the project's own files count (project trust, decided when loaded).
    pub project_trusted: bool,
}

/// Shared by every session of one pi process.
pub struct Services {
    registry: Arc<Mutex<ModelRegistry>>,
    /// The models.json error at load, reported with each session's startup warnings.
    registry_error: Option<String>,
    resource_options: ResourceOptions,
    current: Mutex<Option<CwdServices>>,
    /// The extension runner, started once and kept across session replacement.
    extensions: Arc<ExtensionSlot>,
    /// The MCP servers, connected once and kept across session replacement.
    mcp: Arc<McpRuntime>,
    /// Trust decided in this process, by folder (a `project_trust` handler, the terminal UI's
    /// question, or the decision order when the folder needed one): a folder is decided once.
    trust_decisions: Mutex<HashMap<PathBuf, bool>>,
}

fn load_registry(paths: &Paths) -> (ModelRegistry, Option<String>) {
    crate::config::agent_files::ensure_runtime_files(paths);
    let auth = crate::config::oauth::open_auth(paths);
    let registry = ModelRegistry::from_catalogue(auth, Some(paths.models_path()));
    let error = registry.error().map(|e| e.to_string());
    (registry, error)
}

/// Folders are compared by their real path.
fn trust_key(cwd: &Path) -> PathBuf {
    cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf())
}

impl Services {
    /// Load the registry for `paths` (agent dir); cwd services are loaded on first use.
    pub fn load(paths: &Paths, resource_options: ResourceOptions) -> Arc<Services> {
        let (registry, registry_error) = load_registry(paths);
        Arc::new(Services {
            registry: Arc::new(Mutex::new(registry)),
            registry_error,
            resource_options,
            current: Mutex::new(None),
            extensions: Arc::default(),
            mcp: Arc::default(),
            trust_decisions: Mutex::default(),
        })
    }

    /// Services around a registry the caller built (tests, embedders); no cwd loaded yet.
    pub fn with_registry(registry: Arc<Mutex<ModelRegistry>>) -> Arc<Services> {
        Arc::new(Services {
            registry,
            registry_error: None,
            resource_options: ResourceOptions::default(),
            current: Mutex::new(None),
            extensions: Arc::default(),
            mcp: Arc::default(),
            trust_decisions: Mutex::default(),
        })
    }

    /// The resource flags of the command line (`--skill`, `--no-context-files`, ...).
    pub fn resource_options_from(args: &Args) -> ResourceOptions {
        ResourceOptions {
            system_prompt: args.system_prompt.clone(),
            append_system_prompt: args.append_system_prompt.clone(),
            no_context_files: args.no_context_files,
            skill_paths: args.skills.clone(),
            no_skills: args.no_skills,
            prompt_template_paths: args.prompt_templates.clone(),
            no_prompt_templates: args.no_prompt_templates,
            theme_paths: args.themes.clone(),
            no_themes: args.no_themes,
            // Built-in extensions (`builtin:mcp`) are no files or packages to resolve.
            extension_sources: args
                .extensions
                .iter()
                .filter(|e| !crate::extensions::builtin::is_builtin(e))
                .cloned()
                .collect(),
            skip_project: false,
            trust_override: args.project_trust_override,
            cannot_ask_trust: args.cannot_prompt,
        }
    }

    pub fn registry(&self) -> &Arc<Mutex<ModelRegistry>> {
        &self.registry
    }

    /// The extension runner every session of this process shares.
    pub fn extensions(&self) -> &Arc<ExtensionSlot> {
        &self.extensions
    }

    /// The MCP servers every session of this process shares.
    pub fn mcp(&self) -> &Arc<McpRuntime> {
        &self.mcp
    }

    pub fn registry_error(&self) -> Option<&str> {
        self.registry_error.as_deref()
    }

    /// The services of `paths.cwd`: kept when the cwd is the one already loaded, loaded anew
    /// (settings, then resources with them) for another one; true when they were just loaded.
    pub fn for_cwd(&self, paths: &Paths) -> (CwdServices, bool) {
        let mut current = lock(&self.current);
        if let Some(c) = current.as_ref().filter(|c| c.cwd == paths.cwd) {
            return (c.clone(), false);
        }
        let loaded = self.load_cwd(paths);
        *current = Some(loaded.clone());
        (loaded, true)
    }

    /// Remember the trust decided for `cwd` for the rest of this process.
    pub fn remember_trust(&self, cwd: &Path, trusted: bool) {
        lock(&self.trust_decisions).insert(trust_key(cwd), trusted);
    }

    /// The trust decided for `cwd` in this process, if any.
    pub fn trust_decided(&self, cwd: &Path) -> Option<bool> {
        lock(&self.trust_decisions).get(&trust_key(cwd)).copied()
    }

    fn load_cwd(&self, paths: &Paths) -> CwdServices {
        let mut settings = SettingsManager::load(paths);
        // Project trust decides whether the project's own settings and resources count.
        let trust_file = paths.agent_dir.join("trust.json");
        let decided = self
            .resource_options
            .trust_override
            .or_else(|| self.trust_decided(&paths.cwd));
        let (trusted, trust_warning) = crate::config::trust::resolve_project_trust(&crate::config::trust::TrustQuery {
            cwd: &paths.cwd,
            home: &paths.home,
            trust_file: &trust_file,
            cli_override: decided,
            default: crate::config::trust::DefaultTrust::from_setting(
                settings.global_settings().get("defaultProjectTrust"),
            ),
            can_ask: !self.resource_options.cannot_ask_trust,
        });
        // pi 1.6 keeps what the decision order gave a folder that needed one (`/reload`
        // and a return to the folder do not ask again).
        if decided.is_none() && crate::config::trust::has_trust_requiring_resources(&paths.cwd, &paths.home) {
            self.remember_trust(&paths.cwd, trusted);
        }
        if !trusted {
            settings.ignore_project();
        }
        let options = ResourceOptions {
            skip_project: !trusted,
            ..self.resource_options.clone()
        };
        let mut resources = load_resources(paths, &settings, &options);
        if let Some(w) = trust_warning {
            resources
                .diagnostics
                .push(crate::resources::Diagnostic::warning(w, trust_file.clone()));
        }
        CwdServices {
            cwd: paths.cwd.clone(),
            paths: paths.clone(),
            settings: Arc::new(Mutex::new(settings)),
            resources: Arc::new(resources),
            project_trusted: trusted,
        }
    }

    /// Read settings, resources and models.json again (`/reload`); the next session built
    /// for a cwd sees the new files.
    pub fn reload(&self) {
        let mut current = lock(&self.current);
        if let Some(c) = current.take() {
            *current = Some(self.load_cwd(&c.paths));
        }
        let paths = current.as_ref().map(|c| c.paths.clone());
        drop(current);
        if let Some(paths) = paths {
            let (fresh, _) = load_registry(&paths);
            *lock(&self.registry) = fresh;
        }
    }

    /// Whether the project of the current services is trusted (false before any is loaded).
    /// `--approve` / `--no-approve` (or the answer to the startup trust prompt).
    pub fn trust_override(&self) -> Option<bool> {
        self.resource_options.trust_override
    }

    pub fn project_trusted(&self) -> bool {
        lock(&self.current).as_ref().is_some_and(|c| c.project_trusted)
    }

    /// The cwd the current services belong to.
    pub fn cwd(&self) -> Option<PathBuf> {
        lock(&self.current).as_ref().map(|c| c.cwd.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> (tempfile::TempDir, Paths, Paths) {
        let root = tempfile::tempdir().expect("tempdir");
        let agent = root.path().join("agent");
        let a = root.path().join("a");
        let b = root.path().join("b");
        for d in [&agent, &a, &b] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(a.join("AGENTS.md"), "rules of a\n").expect("write");
        let pa = Paths::new(&agent, &a, root.path());
        let pb = Paths::new(&agent, &b, root.path());
        (root, pa, pb)
    }

    fn context_text(c: &CwdServices) -> String {
        c.resources.context_files.iter().map(|f| f.content.clone()).collect()
    }

    #[test]
    fn the_same_cwd_keeps_its_services_and_another_cwd_loads_its_own() {
        let (_root, pa, pb) = dirs();
        let services = Services::load(&pa, ResourceOptions::default());
        let (first, loaded) = services.for_cwd(&pa);
        assert!(loaded);
        let (again, loaded_again) = services.for_cwd(&pa);
        assert!(!loaded_again);
        assert!(Arc::ptr_eq(&first.settings, &again.settings));
        assert!(Arc::ptr_eq(&first.resources, &again.resources));
        assert!(context_text(&first).contains("rules of a"));
        let (other, _) = services.for_cwd(&pb);
        assert!(!Arc::ptr_eq(&first.settings, &other.settings));
        assert!(!context_text(&other).contains("rules of a"));
        assert_eq!(services.cwd().as_deref(), Some(pb.cwd.as_path()));
    }

    #[test]
    fn reload_reads_the_files_again() {
        let (_root, pa, _pb) = dirs();
        let services = Services::load(&pa, ResourceOptions::default());
        let (before, _) = services.for_cwd(&pa);
        std::fs::write(pa.cwd.join("AGENTS.md"), "new rules\n").expect("write");
        assert!(
            context_text(&services.for_cwd(&pa).0).contains("rules of a"),
            "kept until reload"
        );
        services.reload();
        let (after, _) = services.for_cwd(&pa);
        assert!(!Arc::ptr_eq(&before.resources, &after.resources));
        assert!(context_text(&after).contains("new rules"));
    }
}
