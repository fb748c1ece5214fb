//! The system prompt, assembled from pi's ingredients in pi's order: an identity line, the
//! active tools with their one-line snippets, guidelines, where the pi docs are, the appended
//! text, the context files, the skills, then the date and the working directory.
//!
//! Tools are plain data ([`ToolPrompt`]) so this module does not depend on the tool crate.
//! A custom prompt (`--system-prompt` or SYSTEM.md) replaces everything up to the docs block.

use std::path::Path;

use crate::config::paths::DocsPaths;
use crate::resources::context_files::ContextFile;
use crate::resources::skills::{format_skills_for_prompt, Skill};

/// What the prompt says about one active tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPrompt {
    pub name: String,
    /// One line for the tool list; a tool without a snippet is not listed.
    pub snippet: Option<String>,
    /// Guideline bullets this tool contributes (deduplicated across tools).
    pub guidelines: Vec<String>,
}

impl ToolPrompt {
    pub fn new(name: impl Into<String>, snippet: impl Into<String>, guidelines: &[&str]) -> Self {
        ToolPrompt {
            name: name.into(),
            snippet: Some(snippet.into()),
            guidelines: guidelines.iter().map(|g| g.to_string()).collect(),
        }
    }
}

/// Everything the prompt is built from.
#[derive(Debug, Clone)]
pub struct SystemPromptInput<'a> {
    /// Replaces the default prompt when set.
    pub custom_prompt: Option<&'a str>,
    /// The active tools, in order.
    pub tools: &'a [ToolPrompt],
    /// Appended texts, joined by a blank line.
    pub append: &'a [String],
    pub context_files: &'a [ContextFile],
    pub skills: &'a [Skill],
    pub cwd: &'a Path,
    pub docs: &'a DocsPaths,
    /// `YYYY-MM-DD`; `None` means today (local time).
    pub date: Option<&'a str>,
    /// The `mcp_servers` section's text, placed after the working directory.
    pub mcp_servers: Option<&'a str>,
}

// The wording below is this project's own; the structure follows pi so that prompts, caches
// and tests line up section by section.
const IDENTITY: &str = "You are an expert coding assistant working inside pi, a coding agent harness. You help the user by reading files, running commands, editing code and writing new files.";
const OTHER_TOOLS: &str = "Depending on the project, further custom tools may be available beyond those listed above.";
const BASH_ONLY: &str = "Use bash for file exploration such as ls, rg and find";
const PREFER_SEARCH_TOOLS: &str =
    "Prefer the grep, find and ls tools to bash for exploring files (they are faster and respect .gitignore)";
const CONCISE: &str = "Keep your answers concise";
const SHOW_PATHS: &str = "Name file paths clearly when you work with files";
const CONTEXT_INTRO: &str = "Instructions and guidelines for this project:";

fn docs_block(docs: &DocsPaths) -> String {
    format!(
        "Pi documentation (consult it only when the user asks about pi itself: its SDK, extensions, themes, skills or TUI):
- Main documentation: {readme}
- Further docs: {docs}
- Examples: {examples} (extensions, custom tools, SDK)
- Topics: extensions (docs/extensions.md, examples/extensions/), themes (docs/themes.md), skills (docs/skills.md), prompt templates (docs/prompt-templates.md), TUI components (docs/tui.md), keybindings (docs/keybindings.md), SDK integrations (docs/sdk.md), custom providers (docs/custom-provider.md), adding models (docs/models.md), pi packages (docs/packages.md)
- For work on pi itself, read the relevant docs and examples first and follow their .md cross-references
- Read pi's .md files in full and follow links to related docs (for example tui.md for TUI API details)",
        readme = docs.readme.display(),
        docs = docs.docs.display(),
        examples = docs.examples.display(),
    )
}

/// Today's local date as `YYYY-MM-DD` (no time, so the prompt stays cacheable all day).
pub fn today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}

fn context_section(files: &[ContextFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut out = format!("\n\n# Project Context\n\n{CONTEXT_INTRO}\n\n");
    for f in files {
        out.push_str(&format!("## {}\n\n{}\n\n", f.path.display(), f.content));
    }
    out
}

fn tail(prompt: &mut String, date: &str, cwd: &Path) {
    prompt.push_str(&format!("\nCurrent date: {date}"));
    prompt.push_str(&format!(
        "\nCurrent working directory: {}",
        cwd.to_string_lossy().replace('\\', "/")
    ));
}

/// The `mcp_servers` section, tagged, after the working directory.
fn push_mcp_servers(prompt: &mut String, section: Option<&str>) {
    if let Some(text) = section.filter(|t| !t.is_empty()) {
        prompt.push_str(&format!("\n\n<mcp_servers>\n{text}\n</mcp_servers>"));
    }
}

/// Build the system prompt.
pub fn build_system_prompt(input: &SystemPromptInput<'_>) -> String {
    let date = input.date.map(str::to_string).unwrap_or_else(today);
    let append = input.append.join("\n\n");
    let append_section = if append.is_empty() {
        String::new()
    } else {
        format!("\n\n{append}")
    };
    let has_tool = |name: &str| input.tools.iter().any(|t| t.name == name);

    if let Some(custom) = input.custom_prompt {
        let mut prompt = custom.to_string();
        prompt.push_str(&append_section);
        prompt.push_str(&context_section(input.context_files));
        if has_tool("read") {
            prompt.push_str(&format_skills_for_prompt(input.skills));
        }
        tail(&mut prompt, &date, input.cwd);
        push_mcp_servers(&mut prompt, input.mcp_servers);
        return prompt;
    }

    let listed: Vec<String> = input
        .tools
        .iter()
        .filter_map(|t| {
            t.snippet
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(|s| format!("- {}: {s}", t.name))
        })
        .collect();
    let tools_list = if listed.is_empty() {
        "(none)".to_string()
    } else {
        listed.join("\n")
    };

    let mut guidelines: Vec<String> = Vec::new();
    let mut add = |g: &str| {
        let g = g.trim();
        if !g.is_empty() && !guidelines.iter().any(|x| x == g) {
            guidelines.push(g.to_string());
        }
    };
    let search_tools = has_tool("grep") || has_tool("find") || has_tool("ls");
    if has_tool("bash") {
        add(if search_tools { PREFER_SEARCH_TOOLS } else { BASH_ONLY });
    }
    for t in input.tools {
        for g in &t.guidelines {
            add(g);
        }
    }
    add(CONCISE);
    add(SHOW_PATHS);
    let guidelines: Vec<String> = guidelines.iter().map(|g| format!("- {g}")).collect();

    let mut prompt = format!(
        "{IDENTITY}\n\nAvailable tools:\n{tools_list}\n\n{OTHER_TOOLS}\n\nGuidelines:\n{}\n\n{}",
        guidelines.join("\n"),
        docs_block(input.docs)
    );
    prompt.push_str(&append_section);
    prompt.push_str(&context_section(input.context_files));
    if has_tool("read") {
        prompt.push_str(&format_skills_for_prompt(input.skills));
    }
    tail(&mut prompt, &date, input.cwd);
    push_mcp_servers(&mut prompt, input.mcp_servers);
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ResourceScope;
    use std::path::PathBuf;

    fn tools(names: &[&str]) -> Vec<ToolPrompt> {
        names
            .iter()
            .map(|n| {
                ToolPrompt::new(
                    *n,
                    format!("{n} snippet"),
                    &[&format!("{n} guideline"), "shared guideline"],
                )
            })
            .collect()
    }

    fn input<'a>(
        tools: &'a [ToolPrompt],
        append: &'a [String],
        ctx: &'a [ContextFile],
        skills: &'a [Skill],
        docs: &'a DocsPaths,
    ) -> SystemPromptInput<'a> {
        SystemPromptInput {
            custom_prompt: None,
            tools,
            append,
            context_files: ctx,
            skills,
            cwd: Path::new("/home/user/proj"),
            docs,
            date: Some("2026-11-30"),
            mcp_servers: None,
        }
    }

    #[test]
    fn default_prompt_sections_in_order() {
        let docs = DocsPaths::under(Path::new("/opt/pi"));
        let t = tools(&["read", "bash", "edit", "write"]);
        let append = vec!["APPENDED".to_string()];
        let ctx = vec![ContextFile {
            path: PathBuf::from("/home/user/proj/AGENTS.md"),
            content: "rules".into(),
        }];
        let p = build_system_prompt(&input(&t, &append, &ctx, &[], &docs));
        let order = [
            IDENTITY,
            "\n\nAvailable tools:\n- read: read snippet\n- bash: bash snippet",
            OTHER_TOOLS,
            "Guidelines:\n- Use bash for file exploration such as ls, rg and find\n- read guideline\n- shared guideline\n- bash guideline",
            "- Keep your answers concise\n- Name file paths clearly when you work with files\n\nPi documentation",
            "- Main documentation: /opt/pi/README.md",
            "\n\nAPPENDED",
            "\n\n# Project Context\n\n",
            "## /home/user/proj/AGENTS.md\n\nrules\n\n",
            "\nCurrent date: 2026-11-30\nCurrent working directory: /home/user/proj",
        ];
        let mut at = 0;
        for part in order {
            let found = p[at..]
                .find(part)
                .unwrap_or_else(|| panic!("missing or out of order: {part:?}\n{p}"));
            at += found + part.len();
        }
        assert_eq!(p.matches("shared guideline").count(), 1);
        assert!(p.ends_with("Current working directory: /home/user/proj"));
    }

    #[test]
    fn search_tools_change_the_bash_guideline_and_no_tools_says_none() {
        let docs = DocsPaths::under(Path::new("/d"));
        let t = tools(&["read", "bash", "grep"]);
        let p = build_system_prompt(&input(&t, &[], &[], &[], &docs));
        assert!(p.contains(PREFER_SEARCH_TOOLS));
        assert!(!p.contains(BASH_ONLY));
        let p = build_system_prompt(&input(&[], &[], &[], &[], &docs));
        assert!(p.contains("Available tools:\n(none)\n\n"));
        assert!(p.contains("Guidelines:\n- Keep your answers concise\n- Name file paths clearly"));
        // Without append or context the docs block runs straight into the date line.
        assert!(p.contains("(for example tui.md for TUI API details)\nCurrent date: 2026-11-30"));
    }

    #[test]
    fn custom_prompt_keeps_only_its_tail() {
        let docs = DocsPaths::under(Path::new("/d"));
        let mut i = input(&[], &[], &[], &[], &docs);
        i.custom_prompt = Some("You are a test system prompt.");
        assert_eq!(
            build_system_prompt(&i),
            "You are a test system prompt.\nCurrent date: 2026-11-30\nCurrent working directory: /home/user/proj"
        );
    }

    #[test]
    fn skills_need_read_and_hide_disabled_ones() {
        let docs = DocsPaths::under(Path::new("/d"));
        let skill = |name: &str, hidden: bool| Skill {
            name: name.into(),
            description: "Does <things> & more".into(),
            file_path: PathBuf::from(format!("/s/{name}/SKILL.md")),
            base_dir: PathBuf::from(format!("/s/{name}")),
            scope: ResourceScope::User,
            disable_model_invocation: hidden,
        };
        let skills = vec![skill("visible", false), skill("hidden", true)];
        let with_read = tools(&["read"]);
        let p = build_system_prompt(&input(&with_read, &[], &[], &skills, &docs));
        assert!(p.contains("<available_skills>\n  <skill>\n    <name>visible</name>\n    <description>Does &lt;things&gt; &amp; more</description>\n    <location>/s/visible/SKILL.md</location>\n  </skill>\n</available_skills>\nCurrent date:"));
        assert!(!p.contains("hidden"));
        let no_read = tools(&["bash"]);
        let p = build_system_prompt(&input(&no_read, &[], &[], &skills, &docs));
        assert!(!p.contains("<available_skills>"));
    }
}
