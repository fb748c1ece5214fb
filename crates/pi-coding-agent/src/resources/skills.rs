//! Skills: markdown files with a `name` and `description` in their frontmatter that the model
//! may load on demand (listed in the system prompt) or the user may invoke with `/skill:name`.
//!
//! Discovery order (the first skill with a name wins): `--skill` paths; the project's settings
//! `skills` entries, `.pi/skills` and `.agents/skills` in the cwd and its ancestors up to the
//! git root; the global settings entries, `<agent>/skills` and `~/.agents/skills`; then
//! package paths. `--no-skills` keeps only the CLI paths.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::discovery::{ancestor_agents_skill_dirs, collect_skill_files, SkillDirMode};
use super::frontmatter::parse_frontmatter;
use super::sources::{collect_from_sources, ResourceCollector, ResourceSources};
use super::{Diagnostic, DiagnosticKind, ResourceScope};
use crate::config::paths::{Paths, CONFIG_DIR_NAME};

/// Longest valid skill name.
pub const MAX_NAME_LENGTH: usize = 64;
/// Longest valid description.
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The skill's markdown file.
    pub file_path: PathBuf,
    /// The folder relative references resolve against.
    pub base_dir: PathBuf,
    pub scope: ResourceScope,
    /// Hidden from the system prompt; still usable with `/skill:name`.
    pub disable_model_invocation: bool,
}

fn validate_name(name: &str, parent: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name != parent {
        errors.push(format!("name \"{name}\" does not match parent directory \"{parent}\""));
    }
    let len = name.chars().count();
    if len > MAX_NAME_LENGTH {
        errors.push(format!("name exceeds {MAX_NAME_LENGTH} characters ({len})"));
    }
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        errors.push("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)".to_string());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("name must not start or end with a hyphen".to_string());
    }
    if name.contains("--") {
        errors.push("name must not contain consecutive hyphens".to_string());
    }
    errors
}

/// Load one skill file. Warnings do not stop it loading; a missing description or a file
/// that cannot be read or parsed does.
pub fn load_skill_file(path: &Path, scope: ResourceScope) -> (Option<Skill>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let parsed = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| parse_frontmatter(&text));
    let front = match parsed {
        Ok(f) => f,
        Err(message) => {
            diagnostics.push(Diagnostic::warning(message, path));
            return (None, diagnostics);
        }
    };
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent_name = base_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = front.str("description").unwrap_or("").to_string();
    let desc_len = description.chars().count();
    if description.trim().is_empty() {
        diagnostics.push(Diagnostic::warning("description is required", path));
    } else if desc_len > MAX_DESCRIPTION_LENGTH {
        diagnostics.push(Diagnostic::warning(
            format!("description exceeds {MAX_DESCRIPTION_LENGTH} characters ({desc_len})"),
            path,
        ));
    }
    let name = front
        .str("name")
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| parent_name.clone());
    for error in validate_name(&name, &parent_name) {
        diagnostics.push(Diagnostic::warning(error, path));
    }
    if description.trim().is_empty() {
        return (None, diagnostics);
    }
    let skill = Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        scope,
        disable_model_invocation: front.is_true("disable-model-invocation"),
    };
    (Some(skill), diagnostics)
}

/// What to load skills from: `--skill` values, settings `skills` entries, package paths.
pub type SkillSources = ResourceSources;

/// Skills found plus the problems met (warnings first, then name collisions).
#[derive(Debug, Clone, Default)]
pub struct LoadedSkills {
    pub skills: Vec<Skill>,
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadedSkills {
    pub fn find(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

struct Collector {
    skills: Vec<Skill>,
    seen_real: HashSet<PathBuf>,
    seen_files: HashSet<PathBuf>,
    diagnostics: Vec<Diagnostic>,
    collisions: Vec<Diagnostic>,
}

impl ResourceCollector for Collector {
    const EXTENSION: &'static str = "md";

    fn folder_files(&self, dir: &Path) -> Vec<PathBuf> {
        collect_skill_files(dir, SkillDirMode::Pi)
    }

    /// The project's `.pi/skills` and `.agents/skills` up to the git root (except
    /// `~/.agents/skills`, which is the user's); the user's `<agent>/skills` and `~/.agents/skills`.
    fn auto_files(&self, paths: &Paths, scope: &ResourceScope) -> Vec<PathBuf> {
        let user_agents = paths.home.join(".agents").join("skills");
        if *scope == ResourceScope::Project {
            let mut files = collect_skill_files(&paths.cwd.join(CONFIG_DIR_NAME).join("skills"), SkillDirMode::Pi);
            for dir in ancestor_agents_skill_dirs(&paths.cwd) {
                if dir != user_agents {
                    files.extend(collect_skill_files(&dir, SkillDirMode::Agents));
                }
            }
            files
        } else {
            let mut files = collect_skill_files(&paths.skills_dir(), SkillDirMode::Pi);
            files.extend(collect_skill_files(&user_agents, SkillDirMode::Agents));
            files
        }
    }

    fn add_file(&mut self, file: PathBuf, scope: ResourceScope) {
        if !self.seen_files.insert(file.clone()) {
            return;
        }
        let (skill, diags) = load_skill_file(&file, scope);
        self.diagnostics.extend(diags);
        let Some(skill) = skill else { return };
        // The same file reached twice (e.g. through a symlink) is skipped silently.
        let real = std::fs::canonicalize(&skill.file_path).unwrap_or_else(|_| skill.file_path.clone());
        if self.seen_real.contains(&real) {
            return;
        }
        if let Some(existing) = self.skills.iter().find(|s| s.name == skill.name) {
            self.collisions.push(Diagnostic::collision(
                format!("name \"{}\" collision", skill.name),
                &skill.file_path,
                &existing.file_path,
            ));
            return;
        }
        self.seen_real.insert(real);
        self.skills.push(skill);
    }

    fn unusable_path(&mut self, path: PathBuf) {
        if path.exists() {
            self.diagnostics
                .push(Diagnostic::warning("skill path is not a markdown file", path));
        } else {
            self.diagnostics.push(Diagnostic {
                kind: DiagnosticKind::Error,
                message: "Skill path does not exist".into(),
                path,
                winner: None,
            });
        }
    }

    /// A missing settings entry is only a warning, and a file the filters leave out is not
    /// checked further.
    fn add_entry(&mut self, path: PathBuf, scope: ResourceScope, enabled: &dyn Fn(&Path) -> bool) {
        let files = if path.is_dir() {
            collect_skill_files(&path, SkillDirMode::Pi)
        } else {
            vec![path]
        };
        for f in files {
            if !f.exists() {
                self.diagnostics
                    .push(Diagnostic::warning("skill path does not exist", &f));
            } else if enabled(&f) {
                self.add_path(f, scope.clone());
            }
        }
    }
}

/// Load every skill in pi's precedence order.
pub fn load_skills(paths: &Paths, sources: &SkillSources) -> LoadedSkills {
    let mut c = Collector {
        skills: Vec::new(),
        seen_real: HashSet::new(),
        seen_files: HashSet::new(),
        diagnostics: Vec::new(),
        collisions: Vec::new(),
    };
    collect_from_sources(paths, sources, &mut c);
    let mut diagnostics = c.diagnostics;
    diagnostics.extend(c.collisions);
    LoadedSkills {
        skills: c.skills,
        diagnostics,
    }
}

fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// Which declared tool the model loads a skill's file with; the skills block names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillReader {
    Read,
    Bash,
    /// A reading tool exists but is not declared (reachable through another tool): no name.
    Indirect,
}

/// The system-prompt block listing the skills the model may load (those without
/// `disable-model-invocation`); empty when there are none.
pub fn format_skills_for_prompt(skills: &[Skill], reader: SkillReader) -> String {
    let visible: Vec<&Skill> = skills.iter().filter(|s| !s.disable_model_invocation).collect();
    if visible.is_empty() {
        return String::new();
    }
    let how = match reader {
        SkillReader::Read => {
            "When a task fits a skill's description, load that skill's file with the read tool before you start."
        }
        SkillReader::Bash => {
            "When a task fits a skill's description, load that skill's file with bash before you start."
        }
        SkillReader::Indirect => "When a task fits a skill's description, load that skill's file before you start.",
    };
    let mut lines = vec![
        "Skills give you extra instructions for particular kinds of task.".to_string(),
        how.to_string(),
        "Paths inside a skill are relative to its folder (the parent of SKILL.md); use absolute paths in tool calls."
            .to_string(),
        String::new(),
        "<available_skills>".to_string(),
    ];
    for s in visible {
        lines.push("  <skill>".into());
        lines.push(format!("    <name>{}</name>", escape_xml(&s.name)));
        lines.push(format!("    <description>{}</description>", escape_xml(&s.description)));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&s.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".into());
    }
    lines.push("</available_skills>".into());
    lines.join("\n")
}

/// Expand `/skill:<name> [args]` into the skill block. `Ok(None)` when the text is not a
/// skill command or names no known skill (the text is then sent unchanged).
pub fn expand_skill_command(text: &str, skills: &[Skill]) -> Result<Option<String>, String> {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return Ok(None);
    };
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(None);
    };
    let content = std::fs::read_to_string(&skill.file_path).map_err(|e| e.to_string())?;
    let body = super::frontmatter::strip_frontmatter(&content);
    let mut block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    if !args.is_empty() {
        block.push_str("\n\n");
        block.push_str(args);
    }
    Ok(Some(block))
}
