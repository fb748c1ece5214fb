//! One call that loads every resource a session needs for its system prompt and input
//! expansion, honouring the CLI switches and the settings entries. Themes are left out
//! (only the interactive mode needs them; see [`super::themes::load_themes`]). Extensions
//! may add skills, prompt templates and themes later (`resources_discover`): those join the
//! loaded ones, which win a name both have.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::context_files::{load_context_files, load_prompt_sources, ContextFile, PromptSources};
use super::prompt_templates::{load_prompt_templates, LoadedTemplates, PromptTemplate, TemplateSources};
use super::skills::{load_skills, LoadedSkills, Skill, SkillSources};
use super::themes::ThemeSources;
use super::{Diagnostic, ResourceScope};
use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;

/// The resource-related command-line switches.
#[derive(Debug, Clone, Default)]
pub struct ResourceOptions {
    /// `--system-prompt`.
    pub system_prompt: Option<String>,
    /// Each `--append-system-prompt`.
    pub append_system_prompt: Vec<String>,
    /// `--no-context-files`.
    pub no_context_files: bool,
    /// Each `--skill`.
    pub skill_paths: Vec<String>,
    /// `--no-skills`.
    pub no_skills: bool,
    /// Each `--prompt-template`.
    pub prompt_template_paths: Vec<String>,
    /// `--no-prompt-templates`.
    pub no_prompt_templates: bool,
    /// Each `--theme`.
    pub theme_paths: Vec<String>,
    /// `--no-themes`.
    pub no_themes: bool,
    /// Each `-e`/`--extension`: package sources whose skills, prompts and themes are used
    /// for this run (the extensions themselves are not loaded).
    pub extension_sources: Vec<String>,
    /// The project is not trusted: its own skills, prompts, themes and SYSTEM.md files stay
    /// out (context files such as AGENTS.md load regardless).
    pub skip_project: bool,
    /// `--approve` (`Some(true)`) / `--no-approve` (`Some(false)`).
    pub trust_override: Option<bool>,
    /// Nobody can be asked to trust the project (print, JSON and RPC mode), so an undecided
    /// project with files of its own is not trusted.
    pub cannot_ask_trust: bool,
}

/// Everything loaded, plus every diagnostic (the caller decides how to show them).
#[derive(Debug, Clone, Default)]
pub struct Resources {
    pub context_files: Vec<ContextFile>,
    pub prompt_sources: PromptSources,
    pub skills: LoadedSkills,
    pub templates: LoadedTemplates,
    pub diagnostics: Vec<Diagnostic>,
    /// The extension entries of the settings' packages and of `-e` package sources, with
    /// their package (the loaded-resources listing names package extensions by package).
    pub package_extensions: Vec<(PathBuf, ResourceScope)>,
    /// What extensions added since (shared by every clone: the session and its loadout).
    pub discovered: Arc<RwLock<Discovered>>,
}

/// Resources extensions named in `resources_discover`, loaded from their paths.
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    pub skill_paths: Vec<String>,
    pub prompt_paths: Vec<String>,
    pub theme_paths: Vec<String>,
    pub skills: Vec<Skill>,
    pub templates: Vec<PromptTemplate>,
}

/// Paths extensions returned from `resources_discover`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscoveredPaths {
    pub skill_paths: Vec<String>,
    pub prompt_paths: Vec<String>,
    pub theme_paths: Vec<String>,
}

impl DiscoveredPaths {
    pub fn is_empty(&self) -> bool {
        self.skill_paths.is_empty() && self.prompt_paths.is_empty() && self.theme_paths.is_empty()
    }
}

/// `extra` appended to `paths`, without repeats.
fn merge_paths(paths: &mut Vec<String>, extra: Vec<String>) {
    for path in extra {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
}

impl Resources {
    /// The skills in force: those loaded at startup, then those extensions added.
    pub fn skills(&self) -> Vec<Skill> {
        let mut skills = self.skills.skills.clone();
        if let Ok(discovered) = self.discovered.read() {
            for skill in &discovered.skills {
                if !skills.iter().any(|s| s.name == skill.name) {
                    skills.push(skill.clone());
                }
            }
        }
        skills
    }

    /// The prompt templates in force, in the same order.
    pub fn templates(&self) -> Vec<PromptTemplate> {
        let mut templates = self.templates.templates.clone();
        if let Ok(discovered) = self.discovered.read() {
            for template in &discovered.templates {
                if !templates.iter().any(|t| t.name == template.name) {
                    templates.push(template.clone());
                }
            }
        }
        templates
    }

    /// Theme files or folders extensions added.
    pub fn discovered_theme_paths(&self) -> Vec<String> {
        self.discovered
            .read()
            .map(|d| d.theme_paths.clone())
            .unwrap_or_default()
    }

    /// Add what extensions discovered (paths relative to the cwd of `paths`), reloading the
    /// skills and templates of every path added so far. Returns the diagnostics of the load.
    pub fn add_discovered(&self, paths: &Paths, found: DiscoveredPaths) -> Vec<Diagnostic> {
        let Ok(mut discovered) = self.discovered.write() else {
            return Vec::new();
        };
        let mut diagnostics = Vec::new();
        if !found.skill_paths.is_empty() {
            merge_paths(&mut discovered.skill_paths, found.skill_paths);
            let loaded = load_skills(
                paths,
                &SkillSources {
                    cli_paths: discovered.skill_paths.clone(),
                    no_defaults: true,
                    ..Default::default()
                },
            );
            diagnostics.extend(loaded.diagnostics);
            discovered.skills = loaded.skills;
        }
        if !found.prompt_paths.is_empty() {
            merge_paths(&mut discovered.prompt_paths, found.prompt_paths);
            let loaded = load_prompt_templates(
                paths,
                &TemplateSources {
                    cli_paths: discovered.prompt_paths.clone(),
                    no_defaults: true,
                    ..Default::default()
                },
            );
            diagnostics.extend(loaded.diagnostics);
            discovered.templates = loaded.templates;
        }
        merge_paths(&mut discovered.theme_paths, found.theme_paths);
        diagnostics
    }
}

fn entries(map: &serde_json::Map<String, Value>, key: &str) -> Vec<String> {
    map.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Load context files, prompt texts, skills and prompt templates.
pub fn load_resources(paths: &Paths, settings: &SettingsManager, options: &ResourceOptions) -> Resources {
    let mut diagnostics = Vec::new();
    let context_files = if options.no_context_files {
        Vec::new()
    } else {
        let (files, diags) = load_context_files(&paths.agent_dir, &paths.cwd);
        diagnostics.extend(diags);
        files
    };
    let (prompt_sources, diags) = load_prompt_sources(
        paths,
        options.system_prompt.as_deref(),
        &options.append_system_prompt,
        options.skip_project,
    );
    diagnostics.extend(diags);

    // Package resources come after the settings entries and the pi folders (the first name
    // wins); missing packages are installed unless pi is offline.
    let packages = crate::packages::package_resources(paths, settings, true);
    let temporary = crate::packages::temporary_package_resources(paths, settings, &options.extension_sources);
    diagnostics.extend(
        packages
            .problems
            .iter()
            .chain(&temporary.problems)
            .map(|p| Diagnostic::warning(p.to_string(), PathBuf::new())),
    );
    let global = settings.global_settings();
    let project = settings.project_settings();
    let skills = load_skills(
        paths,
        &SkillSources {
            cli_paths: options.skill_paths.clone(),
            global_entries: entries(global, "skills"),
            project_entries: entries(project, "skills"),
            package_paths: packages.skills,
            temporary_package_paths: temporary.skills,
            no_defaults: options.no_skills,
            skip_project: options.skip_project,
        },
    );
    let templates = load_prompt_templates(
        paths,
        &TemplateSources {
            cli_paths: options.prompt_template_paths.clone(),
            global_entries: entries(global, "prompts"),
            project_entries: entries(project, "prompts"),
            package_paths: packages.prompts,
            temporary_package_paths: temporary.prompts,
            no_defaults: options.no_prompt_templates,
            skip_project: options.skip_project,
        },
    );
    Resources {
        context_files,
        prompt_sources,
        skills,
        templates,
        diagnostics,
        package_extensions: temporary.extensions.into_iter().chain(packages.extensions).collect(),
        discovered: Arc::default(),
    }
}

/// The theme sources for the interactive mode, from the same switches and settings. Package
/// themes come from packages already on disk (startup installed the missing ones).
pub fn theme_sources(paths: &Paths, settings: &SettingsManager, options: &ResourceOptions) -> ThemeSources {
    ThemeSources {
        cli_paths: options.theme_paths.clone(),
        global_entries: entries(settings.global_settings(), "themes"),
        project_entries: entries(settings.project_settings(), "themes"),
        package_paths: crate::packages::package_resources(paths, settings, false).themes,
        temporary_package_paths: crate::packages::temporary_package_resources(
            paths,
            settings,
            &options.extension_sources,
        )
        .themes,
        no_defaults: options.no_themes,
        skip_project: options.skip_project,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn switches_and_settings_are_honoured() {
        let tmp = tempfile::tempdir().expect("tmp");
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(agent.join("skills/s1")).expect("mk");
        fs::create_dir_all(cwd.join(".pi")).expect("mk");
        fs::write(agent.join("skills/s1/SKILL.md"), "---\ndescription: one\n---\n").expect("w");
        fs::write(cwd.join("AGENTS.md"), "ctx").expect("w");
        fs::write(cwd.join(".pi/settings.json"), r#"{"skills": ["!s1"]}"#).expect("w");
        let paths = Paths::new(&agent, &cwd, tmp.path());
        let settings = SettingsManager::load(&paths);
        let r = load_resources(&paths, &settings, &ResourceOptions::default());
        assert_eq!(r.context_files.len(), 1);
        // The project filter only applies to project resources; the user skill stays.
        assert_eq!(r.skills.skills.len(), 1);
        let r = load_resources(
            &paths,
            &settings,
            &ResourceOptions {
                no_context_files: true,
                no_skills: true,
                ..Default::default()
            },
        );
        assert!(r.context_files.is_empty());
        assert!(r.skills.skills.is_empty());
    }
}
