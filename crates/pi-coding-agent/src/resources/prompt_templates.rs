//! Prompt templates: markdown files invoked as `/name args…`, with `$1`, `$@`, `$ARGUMENTS`,
//! `${@:N}` and `${@:N:L}` replaced by the arguments.
//!
//! Discovery order (the first template with a name wins): `--prompt-template` paths; project
//! settings `prompts` entries and `.pi/prompts/*.md`; global settings entries and
//! `<agent>/prompts/*.md`; then package paths. Folders are not searched recursively.

use std::path::{Path, PathBuf};

use super::discovery::collect_top_level_files;
use super::frontmatter::parse_frontmatter;
use super::sources::{collect_from_sources, ResourceCollector, ResourceSources};
use super::{Diagnostic, DiagnosticKind, ResourceScope};
use crate::config::paths::{Paths, CONFIG_DIR_NAME};

/// A loaded template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The file name without `.md`.
    pub name: String,
    /// Frontmatter `description`, else the first non-empty body line (60 chars, then `...`).
    pub description: String,
    /// Frontmatter `argument-hint`, shown before the description.
    pub argument_hint: Option<String>,
    /// The body (frontmatter removed).
    pub content: String,
    pub file_path: PathBuf,
    pub scope: ResourceScope,
}

impl PromptTemplate {
    /// The label shown after the description: `(user)`, `(project)` or `(path:<dir name>)`.
    pub fn source_label(&self) -> String {
        match self.scope {
            ResourceScope::User => "(user)".into(),
            ResourceScope::Project => "(project)".into(),
            ResourceScope::Path | ResourceScope::Package(_) => {
                let dir = self
                    .file_path
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                format!("(path:{dir})")
            }
        }
    }
}

/// Load one template; unreadable or unparsable files are skipped (`None`).
pub fn load_template_file(path: &Path, scope: ResourceScope) -> Option<PromptTemplate> {
    let text = std::fs::read_to_string(path).ok()?;
    let front = parse_frontmatter(&text).ok()?;
    let name = path.file_name()?.to_string_lossy();
    let name = name.strip_suffix(".md").unwrap_or(&name).to_string();
    let mut description = front.str("description").unwrap_or("").to_string();
    if description.is_empty() {
        if let Some(first) = front.body.lines().find(|l| !l.trim().is_empty()) {
            let cut: String = first.chars().take(60).collect();
            description = if first.chars().count() > 60 {
                format!("{cut}...")
            } else {
                cut
            };
        }
    }
    Some(PromptTemplate {
        name,
        description,
        argument_hint: front.str("argument-hint").filter(|s| !s.is_empty()).map(str::to_string),
        content: front.body,
        file_path: path.to_path_buf(),
        scope,
    })
}

/// What to load templates from.
pub type TemplateSources = ResourceSources;

/// Templates found and the collisions and missing paths met.
#[derive(Debug, Clone, Default)]
pub struct LoadedTemplates {
    pub templates: Vec<PromptTemplate>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Template files in precedence order, and the missing paths met.
#[derive(Default)]
struct TemplateFiles {
    candidates: Vec<(PathBuf, ResourceScope)>,
    diagnostics: Vec<Diagnostic>,
}

impl ResourceCollector for TemplateFiles {
    const EXTENSION: &'static str = "md";

    fn folder_files(&self, dir: &Path) -> Vec<PathBuf> {
        collect_top_level_files(dir, ".md")
    }

    fn auto_files(&self, paths: &Paths, scope: &ResourceScope) -> Vec<PathBuf> {
        let dir = match scope {
            ResourceScope::Project => paths.cwd.join(CONFIG_DIR_NAME).join("prompts"),
            _ => paths.prompts_dir(),
        };
        collect_top_level_files(&dir, ".md")
    }

    fn add_file(&mut self, file: PathBuf, scope: ResourceScope) {
        self.candidates.push((file, scope));
    }

    fn unusable_path(&mut self, path: PathBuf) {
        if !path.exists() {
            self.diagnostics.push(Diagnostic {
                kind: DiagnosticKind::Error,
                message: "Prompt template path does not exist".into(),
                path,
                winner: None,
            });
        }
    }
}

/// Load every template in precedence order.
pub fn load_prompt_templates(paths: &Paths, sources: &TemplateSources) -> LoadedTemplates {
    let mut found = TemplateFiles::default();
    collect_from_sources(paths, sources, &mut found);
    let TemplateFiles {
        candidates,
        mut diagnostics,
    } = found;
    let mut templates: Vec<PromptTemplate> = Vec::new();
    let mut seen_files = std::collections::HashSet::new();
    for (file, scope) in candidates {
        if !seen_files.insert(file.clone()) {
            continue;
        }
        let Some(t) = load_template_file(&file, scope) else {
            continue;
        };
        if let Some(existing) = templates.iter().find(|e| e.name == t.name) {
            diagnostics.push(Diagnostic::collision(
                format!("name \"/{}\" collision", t.name),
                &t.file_path,
                &existing.file_path,
            ));
            continue;
        }
        templates.push(t);
    }
    LoadedTemplates { templates, diagnostics }
}

/// Split an argument string on spaces and tabs; `'…'` and `"…"` group words (quotes removed,
/// no escapes).
pub fn parse_command_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// Replace the placeholders of `content`, in pi's order: `$N`, then `${@:N}` / `${@:N:L}`,
/// then `$ARGUMENTS`, then `$@`. Each pass scans the text produced by the previous one, as
/// pi does; an argument is never expanded by the pass that inserted it.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    // $1, $2, …
    let result = replace_scan(content, |rest| {
        let digits: usize = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
        if !rest.starts_with('$') || digits == 0 {
            return None;
        }
        let n: usize = rest[1..1 + digits].parse().unwrap_or(0);
        let value = n.checked_sub(1).and_then(|i| args.get(i)).cloned().unwrap_or_default();
        Some((1 + digits, value))
    });
    // ${@:N} and ${@:N:L}
    let result = replace_scan(&result, |rest| {
        let inner = rest.strip_prefix("${@:")?;
        let close = inner.find('}')?;
        let spec = &inner[..close];
        let (start, len) = match spec.split_once(':') {
            Some((s, l)) => (s, Some(l)),
            None => (spec, None),
        };
        if start.is_empty() || !start.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if len.is_some_and(|l| l.is_empty() || !l.bytes().all(|b| b.is_ascii_digit())) {
            return None;
        }
        let start = start.parse::<usize>().unwrap_or(0).saturating_sub(1).min(args.len());
        let slice = match len {
            Some(l) => {
                let l = l.parse::<usize>().unwrap_or(0);
                &args[start..(start.saturating_add(l)).min(args.len())]
            }
            None => &args[start..],
        };
        Some((4 + close + 1, slice.join(" ")))
    });
    let result = replace_scan(&result, |rest| {
        rest.starts_with("$ARGUMENTS").then(|| (10, all.clone()))
    });
    replace_scan(&result, |rest| rest.starts_with("$@").then(|| (2, all.clone())))
}

/// Walk `text`; where `at` recognises a placeholder at the current position it returns how
/// many bytes it covers and the replacement.
fn replace_scan(text: &str, at: impl Fn(&str) -> Option<(usize, String)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with('$') {
            if let Some((len, value)) = at(rest) {
                out.push_str(&value);
                i += len;
                continue;
            }
        }
        let ch = rest.chars().next().map(char::len_utf8).unwrap_or(1);
        out.push_str(&rest[..ch]);
        i += ch;
    }
    out
}

/// Expand `/name args…` when `name` is a template; otherwise return the text unchanged.
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> String {
    let Some(rest) = text.strip_prefix('/') else {
        return text.to_string();
    };
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    match templates.iter().find(|t| t.name == name) {
        Some(t) => substitute_args(&t.content, &parse_command_args(args)),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arg_parsing() {
        assert_eq!(
            parse_command_args("a  'b c' \"d 'e'\"\tf"),
            args(&["a", "b c", "d 'e'", "f"])
        );
        assert_eq!(parse_command_args("x\"y z\"w"), args(&["xy zw"]));
        assert_eq!(parse_command_args(""), Vec::<String>::new());
    }

    #[test]
    fn substitution() {
        let a = args(&["one", "two", "three"]);
        assert_eq!(substitute_args("$1-$2-$3-$4.", &a), "one-two-three-.");
        assert_eq!(substitute_args("$@|$ARGUMENTS", &a), "one two three|one two three");
        assert_eq!(substitute_args("${@:2}", &a), "two three");
        assert_eq!(substitute_args("${@:2:1}", &a), "two");
        assert_eq!(substitute_args("${@:0}", &a), "one two three");
        assert_eq!(substitute_args("${@:9}", &a), "");
        assert_eq!(substitute_args("$10 $0", &a), " ");
        assert_eq!(substitute_args("cost: $ 5", &a), "cost: $ 5");
    }

    #[test]
    fn values_are_rescanned_only_by_later_passes() {
        // Like pi: `$N` values are not re-expanded as `$N`, but a later pass (`$@`) still
        // sees what an earlier pass inserted.
        let a = args(&["$2", "$@", "x"]);
        assert_eq!(substitute_args("$1 $2", &a), "$2 $2 $@ x");
        let a = args(&["$1"]);
        assert_eq!(substitute_args("$ARGUMENTS", &a), "$1");
    }

    #[test]
    fn expansion_requires_exact_name() {
        let t = PromptTemplate {
            name: "review".into(),
            description: String::new(),
            argument_hint: None,
            content: "Review $1 with focus on ${@:2}".into(),
            file_path: PathBuf::from("/x/review.md"),
            scope: ResourceScope::User,
        };
        let ts = vec![t];
        assert_eq!(
            expand_prompt_template("/review a.rs speed 'and size'", &ts),
            "Review a.rs with focus on speed and size"
        );
        assert_eq!(expand_prompt_template("/reviewer a", &ts), "/reviewer a");
        assert_eq!(expand_prompt_template("review a", &ts), "review a");
        assert_eq!(expand_prompt_template("/review", &ts), "Review  with focus on ");
    }
}
