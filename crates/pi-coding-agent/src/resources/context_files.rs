//! Context files and prompt files: `AGENTS.md` / `CLAUDE.md` from the agent dir and from the
//! cwd and its ancestors, `SYSTEM.md` (replaces the default prompt) and `APPEND_SYSTEM.md`.

use std::path::{Path, PathBuf};

use super::Diagnostic;
use crate::config::paths::{Paths, CONFIG_DIR_NAME};

/// Names tried in each folder; the first that exists is that folder's context file.
pub const CONTEXT_FILE_NAMES: [&str; 4] = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/// One context file for the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

fn context_file_in(dir: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<ContextFile> {
    for name in CONTEXT_FILE_NAMES {
        let path = dir.join(name);
        if !path.exists() {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(content) => return Some(ContextFile { path, content }),
            Err(e) => diagnostics.push(Diagnostic::warning(
                format!("Could not read {}: {e}", path.display()),
                &path,
            )),
        }
    }
    None
}

/// The agent dir's context file first, then those of the filesystem root down to `cwd`
/// (each path once). Unreadable files are skipped with a warning.
pub fn load_context_files(agent_dir: &Path, cwd: &Path) -> (Vec<ContextFile>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut files = Vec::new();
    if let Some(global) = context_file_in(agent_dir, &mut diagnostics) {
        files.push(global);
    }
    let mut ancestors = Vec::new();
    for dir in cwd.ancestors() {
        if let Some(file) = context_file_in(dir, &mut diagnostics) {
            if !files.iter().any(|f: &ContextFile| f.path == file.path)
                && !ancestors.iter().any(|f: &ContextFile| f.path == file.path)
            {
                ancestors.push(file);
            }
        }
    }
    ancestors.reverse();
    files.extend(ancestors);
    (files, diagnostics)
}

/// `<cwd>/.pi/SYSTEM.md` if it exists, else `<agent>/SYSTEM.md` if it exists.
pub fn discover_system_prompt_file(paths: &Paths) -> Option<PathBuf> {
    first_existing(&[
        paths.cwd.join(CONFIG_DIR_NAME).join("SYSTEM.md"),
        paths.agent_dir.join("SYSTEM.md"),
    ])
}

/// `<cwd>/.pi/APPEND_SYSTEM.md` if it exists, else `<agent>/APPEND_SYSTEM.md` if it exists.
pub fn discover_append_system_prompt_file(paths: &Paths) -> Option<PathBuf> {
    first_existing(&[
        paths.cwd.join(CONFIG_DIR_NAME).join("APPEND_SYSTEM.md"),
        paths.agent_dir.join("APPEND_SYSTEM.md"),
    ])
}

fn first_existing(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find(|p| p.exists()).cloned()
}

/// A `--system-prompt` / `--append-system-prompt` value: the file's text when the value names
/// an existing file, else the value itself. A file that cannot be read keeps the value and
/// adds a warning.
pub fn resolve_prompt_input(input: &str, what: &str, diagnostics: &mut Vec<Diagnostic>) -> String {
    let path = Path::new(input);
    if input.is_empty() || !path.exists() {
        return input.to_string();
    }
    match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            diagnostics.push(Diagnostic::warning(
                format!("Could not read {what} file {input}: {e}"),
                path,
            ));
            input.to_string()
        }
    }
}

/// The custom prompt and append texts for the system prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptSources {
    /// Replaces the default prompt (`--system-prompt` or SYSTEM.md).
    pub custom: Option<String>,
    /// Appended texts (each `--append-system-prompt`, or APPEND_SYSTEM.md), joined by a blank
    /// line in the prompt.
    pub append: Vec<String>,
}

/// Choose the prompt texts: CLI values win over discovered files; the CLI append values
/// (repeatable) replace APPEND_SYSTEM.md.
pub fn load_prompt_sources(
    paths: &Paths,
    cli_system_prompt: Option<&str>,
    cli_append: &[String],
    skip_project: bool,
) -> (PromptSources, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    // An untrusted project's SYSTEM.md and APPEND_SYSTEM.md are left out.
    let allowed = |p: &std::path::PathBuf| !skip_project || !p.starts_with(paths.project_dir());
    let custom_source = cli_system_prompt.map(str::to_string).or_else(|| {
        discover_system_prompt_file(paths)
            .filter(allowed)
            .map(|p| p.to_string_lossy().into_owned())
    });
    let custom = custom_source.map(|s| resolve_prompt_input(&s, "system prompt", &mut diagnostics));
    let append_sources: Vec<String> = if cli_append.is_empty() {
        discover_append_system_prompt_file(paths)
            .filter(allowed)
            .map(|p| vec![p.to_string_lossy().into_owned()])
            .unwrap_or_default()
    } else {
        cli_append.to_vec()
    };
    let append = append_sources
        .iter()
        .map(|s| resolve_prompt_input(s, "append system prompt", &mut diagnostics))
        .collect();
    (PromptSources { custom, append }, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn order_is_global_then_root_down_to_cwd() {
        let tmp = tempfile::tempdir().expect("tmp");
        let agent = tmp.path().join("agent");
        let proj = tmp.path().join("a/b/c");
        fs::create_dir_all(&agent).expect("mk");
        fs::create_dir_all(&proj).expect("mk");
        fs::write(agent.join("AGENTS.md"), "global").expect("w");
        fs::write(tmp.path().join("a/CLAUDE.md"), "a-claude").expect("w");
        fs::write(tmp.path().join("a/b/AGENTS.md"), "b-agents").expect("w");
        fs::write(tmp.path().join("a/b/CLAUDE.md"), "b-claude (shadowed)").expect("w");
        fs::write(proj.join("AGENTS.MD"), "c-upper").expect("w");
        let (files, diags) = load_context_files(&agent, &proj);
        assert!(diags.is_empty());
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, vec!["global", "a-claude", "b-agents", "c-upper"]);
    }

    #[test]
    fn agent_dir_inside_the_tree_is_listed_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        fs::write(tmp.path().join("AGENTS.md"), "x").expect("w");
        let (files, _) = load_context_files(tmp.path(), tmp.path());
        assert_eq!(files.len(), 1);
    }

    #[test]
    fn prompt_sources_priority() {
        let tmp = tempfile::tempdir().expect("tmp");
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(agent.clone()).expect("mk");
        fs::create_dir_all(cwd.join(".pi")).expect("mk");
        let paths = Paths::new(&agent, &cwd, tmp.path());
        fs::write(agent.join("SYSTEM.md"), "global system").expect("w");
        fs::write(agent.join("APPEND_SYSTEM.md"), "global append").expect("w");
        let (s, _) = load_prompt_sources(&paths, None, &[], false);
        assert_eq!(s.custom.as_deref(), Some("global system"));
        assert_eq!(s.append, vec!["global append".to_string()]);
        fs::write(cwd.join(".pi/SYSTEM.md"), "project system").expect("w");
        let (s, _) = load_prompt_sources(&paths, None, &[], false);
        assert_eq!(s.custom.as_deref(), Some("project system"));
        let file = tmp.path().join("extra.txt");
        fs::write(&file, "from file").expect("w");
        let (s, _) = load_prompt_sources(
            &paths,
            Some("inline"),
            &["one".to_string(), file.to_string_lossy().into_owned()],
            false,
        );
        assert_eq!(s.custom.as_deref(), Some("inline"));
        assert_eq!(s.append, vec!["one".to_string(), "from file".to_string()]);
    }
}
