//! The system prompt as pi 1.6 structures it: named sections in a fixed order (`preamble`,
//! `tools`, `rules`, `docs`, `addendum`, `project_context`, `skills`, `cwd`), each but the
//! preamble wrapped in `<name>` tags, joined by a blank line. The sections are what the
//! transcript's system messages record and patch; the rendered text is what a request carries.
//!
//! Tools are plain data ([`ToolPrompt`]) so this module does not depend on the tool crate.
//! A custom prompt (`--system-prompt` or SYSTEM.md) becomes the preamble and drops the tools,
//! rules and docs sections.

use std::path::Path;

use crate::config::paths::DocsPaths;
use crate::resources::context_files::ContextFile;
use crate::resources::skills::{format_skills_for_prompt, Skill, SkillReader};

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
    /// Replaces the default preamble (and drops tools, rules and docs) when set.
    pub custom_prompt: Option<&'a str>,
    /// The declared tools, in order.
    pub tools: &'a [ToolPrompt],
    /// Appended texts, joined by a blank line.
    pub append: &'a [String],
    pub context_files: &'a [ContextFile],
    pub skills: &'a [Skill],
    pub cwd: &'a Path,
    pub docs: &'a DocsPaths,
    /// The `mcp_servers` section's text, placed after the working directory.
    pub mcp_servers: Option<&'a str>,
    /// What extensions changed for the run being prepared (`before_agent_start`).
    pub edits: &'a PromptEdits,
}

/// The parts of pi 1.6's `systemPromptOptions` that `before_agent_start` handlers edited in
/// place, for the run they start. (The selected tools change the registry instead; a forced
/// prompt replaces the whole text.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptEdits {
    /// Sections by tag name, in the order the handlers added them. A built-in section's name
    /// replaces that section's text in place; other names follow the working directory.
    pub sections: Vec<(String, String)>,
    /// Rule bullets after the tools' own guidelines.
    pub prompt_guidelines: Vec<String>,
    /// The `addendum` text in place of the configured one.
    pub append: Option<String>,
    /// The prompt's other inputs, where the handlers replaced them.
    pub inputs: PromptInputs,
}

/// The inputs of pi 1.6's `systemPromptOptions` a run's handlers replaced (`None`: the
/// configured ones). The prompt source builds from these in place of its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptInputs {
    /// `customPrompt`; `Some(None)` removes the configured one.
    pub custom_prompt: Option<Option<String>>,
    /// Every tool's snippet (`toolSnippets`): a tool not named has none.
    pub tool_snippets: Option<Vec<(String, String)>>,
    /// Every tool's guidelines (`toolGuidelines`): a tool not named has none.
    pub tool_guidelines: Option<Vec<(String, Vec<String>)>>,
    /// `contextFiles` as `(path, content)`.
    pub context_files: Option<Vec<(String, String)>>,
    /// `skills`.
    pub skills: Option<Vec<PromptSkill>>,
    /// `cwd`.
    pub cwd: Option<String>,
}

/// A skill as `systemPromptOptions.skills` lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptSkill {
    pub name: String,
    pub description: String,
    pub file_path: String,
    pub base_dir: String,
    pub disable_model_invocation: bool,
}

impl PromptInputs {
    /// `tools` as the prompt describes them: snippets and guidelines from the replaced maps.
    /// (`hiddenTools` is pi's own list of hidden declarations; pi 1.6 does not take it from the
    /// handlers.)
    pub fn tools(&self, tools: &[ToolPrompt]) -> Vec<ToolPrompt> {
        tools
            .iter()
            .map(|t| ToolPrompt {
                name: t.name.clone(),
                snippet: match &self.tool_snippets {
                    Some(map) => map.iter().find(|(n, _)| *n == t.name).map(|(_, s)| s.clone()),
                    None => t.snippet.clone(),
                },
                guidelines: match &self.tool_guidelines {
                    Some(map) => map
                        .iter()
                        .find(|(n, _)| *n == t.name)
                        .map(|(_, g)| g.clone())
                        .unwrap_or_default(),
                    None => t.guidelines.clone(),
                },
            })
            .collect()
    }
}

impl PromptEdits {
    /// Whether nothing was edited.
    pub fn is_empty(&self) -> bool {
        self == &PromptEdits::default()
    }
}

/// Whether pi accepts `name` as a section an extension adds (a lower-case tag name).
pub fn is_section_name(name: &str) -> bool {
    let mut chars = name.chars();
    name != "preamble"
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A system prompt as named sections, in prompt order. Each text is the section as sent
/// (tags included), so rendering is a join.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptSections(pub Vec<(String, String)>);

impl PromptSections {
    /// The prompt text a request carries.
    pub fn render(&self) -> String {
        let texts: Vec<&str> = self.0.iter().map(|(_, text)| text.as_str()).collect();
        texts.join("\n\n")
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    fn push(&mut self, name: &str, body: &str) {
        let text = if name == "preamble" {
            body.to_string()
        } else {
            format!("<{name}>\n{body}\n</{name}>")
        };
        self.0.push((name.to_string(), text));
    }
}

// The wording below is this project's own; the section names and their order follow pi 1.6
// so that transcripts, caches and tests line up section by section.
const PREAMBLE: &str = "You are a coding assistant working inside pi, a coding agent harness. You help the user read files, run commands and change code.";
const OTHER_TOOLS: &str = "Further tools may be available.";
const BASH_ONLY: &str = "Use bash for file exploration such as ls, rg and find";
const POWERSHELL_ONLY: &str = "Use PowerShell for file exploration: listing, searching and finding files";
const BASH_OR_POWERSHELL: &str = "Use bash or PowerShell for file exploration: listing, searching and finding files";
const CONCISE: &str = "Keep your answers concise";
const SHOW_PATHS: &str = "Name file paths clearly when you work with files";
const CONTEXT_INTRO: &str = "Instructions and guidelines for this project:";

fn docs_body(docs: &DocsPaths) -> String {
    format!(
        "Pi documentation (consult it only when the user asks about pi itself: its SDK, extensions, themes, skills or TUI):
- Main documentation: {readme}
- Further docs: {docs}
- Examples: {examples} (extensions, custom tools, SDK)
- Paths such as docs/... and examples/... in these files are relative to the folders above, not to the working directory
- Topics: extensions (docs/extensions.md, examples/extensions/), themes (docs/themes.md), skills (docs/skills.md), prompt templates (docs/prompt-templates.md), TUI components (docs/tui.md), keybindings (docs/keybindings.md), SDK integrations (docs/sdk.md), custom providers (docs/custom-provider.md), adding models (docs/models.md), pi packages (docs/packages.md), MCP servers (docs/mcp.md)
- Before changing pi itself, read the relevant docs and examples in full and follow their cross-references",
        readme = docs.readme.display(),
        docs = docs.docs.display(),
        examples = docs.examples.display(),
    )
}

fn tools_body(tools: &[ToolPrompt]) -> String {
    let listed: Vec<String> = tools
        .iter()
        .filter_map(|t| {
            t.snippet
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(|s| format!("- {}: {s}", t.name))
        })
        .collect();
    let list = if listed.is_empty() {
        "(none)".to_string()
    } else {
        listed.join("\n")
    };
    format!("{list}\n\n{OTHER_TOOLS}")
}

fn rules_body(tools: &[ToolPrompt], extra: &[String]) -> String {
    let has_tool = |name: &str| tools.iter().any(|t| t.name == name);
    let mut rules: Vec<String> = Vec::new();
    let mut add = |rule: &str| {
        let rule = rule.trim();
        if !rule.is_empty() && !rules.iter().any(|r| r == rule) {
            rules.push(rule.to_string());
        }
    };
    let search_tools = has_tool("grep") || has_tool("find") || has_tool("ls");
    if !search_tools {
        match (has_tool("bash"), has_tool("powershell")) {
            (true, true) => add(BASH_OR_POWERSHELL),
            (true, false) => add(BASH_ONLY),
            (false, true) => add(POWERSHELL_ONLY),
            (false, false) => {}
        }
    }
    for t in tools {
        for g in &t.guidelines {
            add(g);
        }
    }
    for g in extra {
        add(g);
    }
    add(CONCISE);
    add(SHOW_PATHS);
    rules.iter().map(|r| format!("- {r}")).collect::<Vec<_>>().join("\n")
}

fn project_context_body(files: &[ContextFile]) -> String {
    let mut parts = vec![CONTEXT_INTRO.to_string()];
    parts.extend(files.iter().map(|f| {
        format!(
            "<project_instructions path=\"{}\">\n{}\n</project_instructions>",
            f.path.display(),
            f.content
        )
    }));
    parts.join("\n\n")
}

/// Build the prompt's sections.
pub fn build_sections(input: &SystemPromptInput<'_>) -> PromptSections {
    let has_tool = |name: &str| input.tools.iter().any(|t| t.name == name);
    let mut sections = PromptSections::default();
    match input.custom_prompt {
        Some(custom) => sections.push("preamble", custom),
        None => {
            sections.push("preamble", PREAMBLE);
            sections.push("tools", &tools_body(input.tools));
            sections.push("rules", &rules_body(input.tools, &input.edits.prompt_guidelines));
            sections.push("docs", &docs_body(input.docs));
        }
    }
    let append = match &input.edits.append {
        Some(text) => text.clone(),
        None => input.append.join("\n\n"),
    };
    if !append.is_empty() {
        sections.push("addendum", &append);
    }
    if !input.context_files.is_empty() {
        sections.push("project_context", &project_context_body(input.context_files));
    }
    let reader = if has_tool("read") {
        Some(SkillReader::Read)
    } else if has_tool("bash") {
        Some(SkillReader::Bash)
    } else {
        None
    };
    if let Some(reader) = reader {
        let skills = format_skills_for_prompt(input.skills, reader);
        let skills = skills.trim();
        if !skills.is_empty() {
            sections.push("skills", skills);
        }
    }
    sections.push("cwd", &input.cwd.to_string_lossy().replace('\\', "/"));
    // As in pi 1.6, where MCP's section is one its built-in extension adds after the others.
    for (name, body) in &input.edits.sections {
        if body.is_empty() || !is_section_name(name) {
            continue;
        }
        match sections.0.iter().position(|(n, _)| n == name) {
            Some(at) => sections.0[at].1 = format!("<{name}>\n{body}\n</{name}>"),
            None => sections.push(name, body),
        }
    }
    if let Some(text) = input.mcp_servers.filter(|t| !t.is_empty()) {
        sections.push("mcp_servers", text);
    }
    sections
}

/// Build the system prompt text.
pub fn build_system_prompt(input: &SystemPromptInput<'_>) -> String {
    build_sections(input).render()
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
            mcp_servers: None,
            edits: &NO_EDITS,
        }
    }

    static NO_EDITS: PromptEdits = PromptEdits {
        sections: Vec::new(),
        prompt_guidelines: Vec::new(),
        append: None,
        inputs: PromptInputs {
            custom_prompt: None,
            tool_snippets: None,
            tool_guidelines: None,
            context_files: None,
            skills: None,
            cwd: None,
        },
    };

    #[test]
    fn a_runs_edits_add_sections_after_the_cwd_and_replace_built_in_ones_in_place() {
        let docs = DocsPaths::under(Path::new("/opt/pi"));
        let t = tools(&["read", "bash"]);
        let edits = PromptEdits {
            sections: vec![
                ("tool_guidance".into(), "use read".into()),
                ("rules".into(), "- only this".into()),
                ("Bad Name".into(), "ignored".into()),
                ("empty".into(), String::new()),
            ],
            prompt_guidelines: vec![],
            append: Some("APPENDED".into()),
            inputs: PromptInputs::default(),
        };
        let mut base = input(&t, &[], &[], &[], &docs);
        base.edits = &edits;
        let sections = build_sections(&base);
        let names: Vec<&str> = sections.names().collect();
        assert_eq!(
            names,
            ["preamble", "tools", "rules", "docs", "addendum", "cwd", "tool_guidance"]
        );
        assert_eq!(sections.get("rules"), Some("<rules>\n- only this\n</rules>"));
        assert_eq!(sections.get("addendum"), Some("<addendum>\nAPPENDED\n</addendum>"));
        let guidelines = PromptEdits {
            prompt_guidelines: vec!["Say please".into()],
            ..PromptEdits::default()
        };
        base.edits = &guidelines;
        let rules = build_sections(&base).get("rules").unwrap_or_default().to_string();
        let please = rules.find("- Say please").expect("the run's guideline is a rule");
        assert!(please < rules.find(CONCISE).unwrap_or(0), "{rules}");
    }

    #[test]
    fn sections_come_in_pi_order_wrapped_in_their_tags() {
        let docs = DocsPaths::under(Path::new("/opt/pi"));
        let t = tools(&["read", "bash", "edit", "write"]);
        let append = vec!["APPENDED".to_string()];
        let ctx = vec![ContextFile {
            path: PathBuf::from("/home/user/proj/AGENTS.md"),
            content: "rules\n".into(),
        }];
        let sections = build_sections(&input(&t, &append, &ctx, &[], &docs));
        let names: Vec<&str> = sections.names().collect();
        assert_eq!(
            names,
            [
                "preamble",
                "tools",
                "rules",
                "docs",
                "addendum",
                "project_context",
                "cwd"
            ]
        );
        assert_eq!(sections.get("preamble"), Some(PREAMBLE));
        assert_eq!(
            sections.get("tools"),
            Some(
                "<tools>\n- read: read snippet\n- bash: bash snippet\n- edit: edit snippet\n- write: write snippet\n\nFurther tools may be available.\n</tools>"
            )
        );
        let rules = sections.get("rules").unwrap_or_default();
        assert!(rules.starts_with("<rules>\n- Use bash for file exploration such as ls, rg and find\n- read guideline\n- shared guideline\n- bash guideline\n"));
        assert!(rules
            .ends_with("- Keep your answers concise\n- Name file paths clearly when you work with files\n</rules>"));
        assert_eq!(rules.matches("shared guideline").count(), 1);
        assert!(sections
            .get("docs")
            .is_some_and(|d| d.contains("- Main documentation: /opt/pi/README.md")));
        assert_eq!(sections.get("addendum"), Some("<addendum>\nAPPENDED\n</addendum>"));
        assert_eq!(
            sections.get("project_context"),
            Some("<project_context>\nInstructions and guidelines for this project:\n\n<project_instructions path=\"/home/user/proj/AGENTS.md\">\nrules\n\n</project_instructions>\n</project_context>")
        );
        assert_eq!(sections.get("cwd"), Some("<cwd>\n/home/user/proj\n</cwd>"));
        let prompt = sections.render();
        assert!(prompt.starts_with(&format!("{PREAMBLE}\n\n<tools>\n")));
        assert!(prompt.ends_with("</project_context>\n\n<cwd>\n/home/user/proj\n</cwd>"));
        assert!(!prompt.contains("Current date"), "no date: the prompt stays cacheable");
    }

    #[test]
    fn search_tools_drop_the_bash_rule_and_no_tools_says_none() {
        let docs = DocsPaths::under(Path::new("/d"));
        let t = tools(&["read", "bash", "grep"]);
        let rules = build_sections(&input(&t, &[], &[], &[], &docs));
        assert!(!rules.render().contains(BASH_ONLY));
        let t = tools(&["powershell"]);
        assert!(build_sections(&input(&t, &[], &[], &[], &docs))
            .render()
            .contains(POWERSHELL_ONLY));
        let none = build_sections(&input(&[], &[], &[], &[], &docs));
        assert_eq!(
            none.get("tools"),
            Some("<tools>\n(none)\n\nFurther tools may be available.\n</tools>")
        );
        assert_eq!(
            none.get("rules"),
            Some("<rules>\n- Keep your answers concise\n- Name file paths clearly when you work with files\n</rules>")
        );
    }

    #[test]
    fn a_custom_prompt_is_the_preamble_before_the_cwd() {
        let docs = DocsPaths::under(Path::new("/d"));
        let mut i = input(&[], &[], &[], &[], &docs);
        i.custom_prompt = Some("You are a test system prompt.");
        assert_eq!(
            build_system_prompt(&i),
            "You are a test system prompt.\n\n<cwd>\n/home/user/proj\n</cwd>"
        );
        // The MCP servers' section comes after the working directory.
        i.mcp_servers = Some("- fs: files");
        assert!(build_system_prompt(&i).ends_with("</cwd>\n\n<mcp_servers>\n- fs: files\n</mcp_servers>"));
    }

    #[test]
    fn skills_need_read_or_bash_and_hide_disabled_ones() {
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
        let s = build_sections(&input(&with_read, &[], &[], &skills, &docs));
        let block = s.get("skills").unwrap_or_default();
        assert!(block.starts_with("<skills>\nSkills give you"));
        assert!(block.contains("with the read tool"));
        assert!(block.ends_with("<available_skills>\n  <skill>\n    <name>visible</name>\n    <description>Does &lt;things&gt; &amp; more</description>\n    <location>/s/visible/SKILL.md</location>\n  </skill>\n</available_skills>\n</skills>"));
        assert!(!block.contains("hidden"));
        let names: Vec<&str> = s.names().collect();
        assert_eq!(names[names.len() - 2..], ["skills", "cwd"]);
        let bash_only = tools(&["bash"]);
        let s = build_sections(&input(&bash_only, &[], &[], &skills, &docs));
        assert!(s.get("skills").is_some_and(|b| b.contains("with bash")));
        let neither = tools(&["edit"]);
        assert!(build_sections(&input(&neither, &[], &[], &skills, &docs))
            .get("skills")
            .is_none());
    }
}
