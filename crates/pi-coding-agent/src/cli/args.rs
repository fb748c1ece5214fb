//! Command-line parsing: one strict pass over argv with pi's flag set and quirks.
//!
//! Rules kept for compatibility: `@path` is a file argument; any other bare token is a message;
//! `--` ends the options (everything after it is a message or an `@file`); a value flag with no
//! value left is treated as an unknown flag; `-p` takes the next token as the first message
//! unless it looks like a flag or a file (`---` frontmatter counts as text); unknown
//! `--name[=value]` flags are collected (a following bare token is their value) and reported
//! later, unknown single-dash options are errors at once. `--mode`, `--tui-mode`, `--use-theme`
//! and `--name` report a missing value themselves.

use pi_ai::ThinkingLevel;

use super::tool_selection::tool_list_error;

/// What the parser found, before any file or network is touched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    pub mode: Option<Mode>,
    pub print: bool,
    pub continue_session: bool,
    pub resume: bool,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,
    pub no_session: bool,
    pub session: Option<String>,
    /// `--session-id`: open or create the current directory's session with exactly this id.
    pub session_id: Option<String>,
    pub fork: Option<String>,
    /// `--name/-n`, as given (trimmed and checked when the session opens).
    pub name: Option<String>,
    pub session_dir: Option<String>,
    pub models: Option<Vec<String>>,
    pub tools: Option<Vec<String>>,
    /// `--exclude-tools/-xt`: names or `*` patterns removed after every other selection.
    pub exclude_tools: Option<Vec<String>>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
    pub thinking: Option<ThinkingLevel>,
    pub extensions: Vec<String>,
    pub no_extensions: bool,
    /// `--no-mcp`: the built-in MCP support stays off for this run (read by the MCP layer).
    pub no_mcp: bool,
    pub skills: Vec<String>,
    pub no_skills: bool,
    pub prompt_templates: Vec<String>,
    pub no_prompt_templates: bool,
    pub themes: Vec<String>,
    pub no_themes: bool,
    /// `--use-theme`: the interactive theme for this run only.
    pub use_theme: Option<String>,
    /// `--tui-mode`: how the terminal UI lays itself out (read by the terminal UI).
    pub tui_mode: Option<TuiMode>,
    /// `--approve` (`Some(true)`) / `--no-approve` (`Some(false)`): trust or ignore the project's
    /// own files for this run instead of the saved decision.
    pub project_trust_override: Option<bool>,
    /// Set by startup, not by a flag: the run cannot ask the user anything (print, JSON and
    /// RPC mode), so an undecided project is not trusted.
    pub cannot_prompt: bool,
    /// Set by startup, not by a flag: the `--session` file's recorded folder is gone and the
    /// user chose to run it in the current one.
    pub session_here: bool,
    pub no_context_files: bool,
    pub export: Option<String>,
    /// `Some(None)`: list all; `Some(Some(s))`: filter by `s`.
    pub list_models: Option<Option<String>>,
    pub verbose: bool,
    pub offline: bool,
    pub messages: Vec<String>,
    pub file_args: Vec<String>,
    /// `--name[=value]` flags nobody claimed yet, in order (extensions may register some).
    pub unknown_flags: Vec<(String, Option<String>)>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Text,
    Json,
    Rpc,
}

/// `--tui-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiMode {
    Regular,
    Fullscreen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Warning,
    Error,
}

/// A message for the user, printed as `Warning: …` or `Error: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
        }
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
        }
    }
}

impl Args {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    /// Errors for collected unknown long flags (no extension claimed them).
    pub fn unknown_flag_error(&self) -> Option<Diagnostic> {
        match self.unknown_flags.as_slice() {
            [] => None,
            [(name, _)] => Some(Diagnostic::error(format!("Unknown option: --{name}"))),
            many => {
                let names: Vec<String> = many.iter().map(|(n, _)| format!("--{n}")).collect();
                Some(Diagnostic::error(format!("Unknown options: {}", names.join(", "))))
            }
        }
    }
}

/// Flags that take no value.
fn apply_switch(args: &mut Args, flag: &str) -> bool {
    let field: &mut bool = match flag {
        "--help" | "-h" => &mut args.help,
        "--version" | "-v" => &mut args.version,
        "--continue" | "-c" => &mut args.continue_session,
        "--resume" | "-r" => &mut args.resume,
        "--no-session" => &mut args.no_session,
        "--no-tools" | "-nt" => &mut args.no_tools,
        "--no-builtin-tools" | "-nbt" => &mut args.no_builtin_tools,
        "--no-extensions" | "-ne" => &mut args.no_extensions,
        "--no-mcp" => &mut args.no_mcp,
        "--no-skills" | "-ns" => &mut args.no_skills,
        "--no-prompt-templates" | "-np" => &mut args.no_prompt_templates,
        "--no-themes" => &mut args.no_themes,
        "--no-context-files" | "-nc" => &mut args.no_context_files,
        "--verbose" => &mut args.verbose,
        "--offline" => &mut args.offline,
        "--approve" | "-a" => {
            args.project_trust_override = Some(true);
            return true;
        }
        "--no-approve" | "-na" => {
            args.project_trust_override = Some(false);
            return true;
        }
        _ => return false,
    };
    *field = true;
    true
}

/// Whether `flag` takes exactly one value.
fn is_value_flag(flag: &str) -> bool {
    matches!(
        flag,
        "--provider"
            | "--model"
            | "--api-key"
            | "--system-prompt"
            | "--append-system-prompt"
            | "--session"
            | "--session-id"
            | "--fork"
            | "--session-dir"
            | "--models"
            | "--tools"
            | "-t"
            | "--exclude-tools"
            | "-xt"
            | "--thinking"
            | "--export"
            | "--extension"
            | "-e"
            | "--skill"
            | "--prompt-template"
            | "--theme"
    )
}

/// A comma-separated list, trimmed, empty entries dropped.
fn comma_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The thinking levels `--thinking` accepts, for its warning.
fn thinking_levels() -> String {
    let names: Vec<&str> = ThinkingLevel::ALL.iter().map(|l| l.as_str()).collect();
    names.join(", ")
}

fn apply_value(args: &mut Args, flag: &str, value: String) {
    match flag {
        "--provider" => args.provider = Some(value),
        "--model" => args.model = Some(value),
        "--api-key" => args.api_key = Some(value),
        "--system-prompt" => args.system_prompt = Some(value),
        "--append-system-prompt" => args.append_system_prompt.push(value),
        "--session" => args.session = Some(value),
        "--session-id" => args.session_id = Some(value),
        "--fork" => args.fork = Some(value),
        "--session-dir" => args.session_dir = Some(value),
        "--models" => args.models = Some(comma_list(&value)),
        "--tools" | "-t" => {
            let tools = comma_list(&value);
            match tool_list_error(&tools) {
                Some(e) => args.diagnostics.push(Diagnostic::error(format!("{flag}: {e}"))),
                None => args.tools = Some(tools),
            }
        }
        "--exclude-tools" | "-xt" => args.exclude_tools = Some(comma_list(&value)),
        "--thinking" => match ThinkingLevel::parse(&value) {
            Some(level) => args.thinking = Some(level),
            None => args.diagnostics.push(Diagnostic::warning(format!(
                "Invalid thinking level \"{value}\". Valid values: {}",
                thinking_levels()
            ))),
        },
        "--export" => args.export = Some(value),
        "--extension" | "-e" => args.extensions.push(value),
        "--skill" => args.skills.push(value),
        "--prompt-template" => args.prompt_templates.push(value),
        "--theme" => args.themes.push(value),
        _ => {}
    }
}

/// Parse argv (without the program name).
pub fn parse_args<S: AsRef<str>>(argv: &[S]) -> Args {
    let argv: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    let mut args = Args::default();
    let mut i = 0;
    while i < argv.len() {
        let arg = argv[i];
        let next = argv.get(i + 1).copied();
        i += 1;
        if arg == "--" {
            for rest in &argv[i..] {
                match rest.strip_prefix('@') {
                    Some(file) => args.file_args.push(file.to_string()),
                    None => args.messages.push(rest.to_string()),
                }
            }
            break;
        }
        if apply_switch(&mut args, arg) {
            continue;
        }
        // Flags that check their own value: a missing one is an error, not an unknown flag.
        let dash_or_none = next.is_none_or(|n| n.starts_with('-'));
        match arg {
            "--mode" => {
                if dash_or_none {
                    args.diagnostics
                        .push(Diagnostic::error("--mode requires text, json, or rpc"));
                    continue;
                }
                i += 1;
                match next {
                    Some("text") => args.mode = Some(Mode::Text),
                    Some("json") => args.mode = Some(Mode::Json),
                    Some("rpc") => args.mode = Some(Mode::Rpc),
                    Some(other) => args.diagnostics.push(Diagnostic::error(format!(
                        "Invalid mode \"{other}\". Valid values: text, json, rpc"
                    ))),
                    None => {}
                }
                continue;
            }
            "--tui-mode" => {
                match next {
                    Some("regular") => args.tui_mode = Some(TuiMode::Regular),
                    Some("fullscreen") => args.tui_mode = Some(TuiMode::Fullscreen),
                    _ if dash_or_none => {
                        args.diagnostics
                            .push(Diagnostic::error("--tui-mode requires regular or fullscreen"));
                        continue;
                    }
                    Some(other) => args.diagnostics.push(Diagnostic::error(format!(
                        "Invalid TUI mode \"{other}\". Valid values: regular, fullscreen"
                    ))),
                    None => {}
                }
                i += 1;
                continue;
            }
            "--use-theme" => {
                match next {
                    Some(theme) if !dash_or_none => {
                        args.use_theme = Some(theme.to_string());
                        i += 1;
                    }
                    _ => args
                        .diagnostics
                        .push(Diagnostic::error("--use-theme requires a theme name")),
                }
                continue;
            }
            "--name" | "-n" => {
                match next {
                    Some(name) => {
                        args.name = Some(name.to_string());
                        i += 1;
                    }
                    None => args.diagnostics.push(Diagnostic::error("--name requires a value")),
                }
                continue;
            }
            _ => {}
        }
        if is_value_flag(arg) {
            if let Some(value) = next {
                apply_value(&mut args, arg, value.to_string());
                i += 1;
                continue;
            }
            // No value left: falls through and is reported like an unknown flag, as pi does.
        }
        match arg {
            "--print" | "-p" => {
                args.print = true;
                if let Some(n) = next {
                    if !n.starts_with('@') && (!n.starts_with('-') || n.starts_with("---")) {
                        args.messages.push(n.to_string());
                        i += 1;
                    }
                }
            }
            "--list-models" => match next {
                Some(n) if !n.starts_with('-') && !n.starts_with('@') => {
                    args.list_models = Some(Some(n.to_string()));
                    i += 1;
                }
                _ => args.list_models = Some(None),
            },
            _ if arg.starts_with('@') => args.file_args.push(arg[1..].to_string()),
            _ if arg.starts_with("--") => {
                let body = &arg[2..];
                if let Some((name, value)) = body.split_once('=') {
                    args.unknown_flags.push((name.to_string(), Some(value.to_string())));
                } else if let Some(n) = next.filter(|n| !n.starts_with('-') && !n.starts_with('@')) {
                    args.unknown_flags.push((body.to_string(), Some(n.to_string())));
                    i += 1;
                } else {
                    args.unknown_flags.push((body.to_string(), None));
                }
            }
            _ if arg.starts_with('-') => args
                .diagnostics
                .push(Diagnostic::error(format!("Unknown option: {arg}"))),
            _ => args.messages.push(arg.to_string()),
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_files_and_print() {
        let a = parse_args(&["-p", "hello", "@a.txt", "world"]);
        assert!(a.print);
        assert_eq!(a.messages, vec!["hello", "world"]);
        assert_eq!(a.file_args, vec!["a.txt"]);
    }

    #[test]
    fn print_does_not_swallow_flags_or_files_but_takes_frontmatter() {
        let a = parse_args(&["-p", "--model", "x"]);
        assert!(a.messages.is_empty());
        assert_eq!(a.model.as_deref(), Some("x"));
        let b = parse_args(&["-p", "@f"]);
        assert!(b.messages.is_empty());
        let c = parse_args(&["-p", "---\nname: x\n---\nbody"]);
        assert_eq!(c.messages.len(), 1);
    }

    #[test]
    fn unknown_short_option_is_an_error_and_long_ones_are_collected() {
        let a = parse_args(&["-x", "--plan", "do it", "--level=3", "--flag"]);
        assert_eq!(a.diagnostics, vec![Diagnostic::error("Unknown option: -x")]);
        assert_eq!(
            a.unknown_flags,
            vec![
                ("plan".to_string(), Some("do it".to_string())),
                ("level".to_string(), Some("3".to_string())),
                ("flag".to_string(), None)
            ]
        );
        assert!(a.messages.is_empty(), "a bare token after an unknown flag is its value");
        assert_eq!(
            a.unknown_flag_error().map(|d| d.message),
            Some("Unknown options: --plan, --level, --flag".to_string())
        );
    }

    #[test]
    fn value_flag_without_value_becomes_unknown() {
        let a = parse_args(&["--model"]);
        assert_eq!(a.model, None);
        assert_eq!(
            a.unknown_flag_error().map(|d| d.message),
            Some("Unknown option: --model".to_string())
        );
    }

    #[test]
    fn lists_modes_and_thinking() {
        let a = parse_args(&[
            "--models",
            "a, ,b",
            "--tools",
            "read,,bash",
            "--mode",
            "json",
            "--thinking",
            "high",
        ]);
        assert_eq!(a.models, Some(vec!["a".into(), "b".into()]));
        assert_eq!(a.tools, Some(vec!["read".into(), "bash".into()]));
        assert_eq!(a.mode, Some(Mode::Json));
        assert_eq!(a.thinking, Some(ThinkingLevel::High));
        assert!(a.diagnostics.is_empty());
        assert_eq!(parse_args(&["--thinking", "max"]).thinking, Some(ThinkingLevel::Max));
        let b = parse_args(&["--thinking", "huge"]);
        assert_eq!(b.thinking, None);
        assert_eq!(
            b.diagnostics,
            vec![Diagnostic::warning(
                "Invalid thinking level \"huge\". Valid values: off, minimal, low, medium, high, xhigh, max"
            )]
        );
    }

    #[test]
    fn mode_is_validated() {
        let missing = parse_args(&["--mode"]);
        assert_eq!(
            missing.diagnostics,
            vec![Diagnostic::error("--mode requires text, json, or rpc")]
        );
        assert!(missing.unknown_flags.is_empty());
        let dash = parse_args(&["--mode", "-p", "hi"]);
        assert_eq!(
            dash.diagnostics,
            vec![Diagnostic::error("--mode requires text, json, or rpc")]
        );
        assert!(dash.print, "the dash token is not taken as the mode");
        let bad = parse_args(&["--mode", "bogus", "hi"]);
        assert_eq!(
            bad.diagnostics,
            vec![Diagnostic::error(
                "Invalid mode \"bogus\". Valid values: text, json, rpc"
            )]
        );
        assert_eq!(bad.messages, vec!["hi"], "the bad value is consumed");
    }

    #[test]
    fn double_dash_ends_options() {
        let a = parse_args(&["-p", "--", "-dash prompt", "@f.txt", "--model", "x"]);
        assert!(a.print);
        assert_eq!(a.messages, vec!["-dash prompt", "--model", "x"]);
        assert_eq!(a.file_args, vec!["f.txt"]);
        assert_eq!(a.model, None);
        assert!(a.diagnostics.is_empty() && a.unknown_flags.is_empty());
    }

    #[test]
    fn new_session_and_tool_flags() {
        let a = parse_args(&[
            "--session-id",
            "abc",
            "-n",
            " My run ",
            "-xt",
            "read, ls",
            "--no-mcp",
            "-a",
            "--use-theme",
            "dark",
            "--tui-mode",
            "regular",
        ]);
        assert_eq!(a.session_id.as_deref(), Some("abc"));
        assert_eq!(a.name.as_deref(), Some(" My run "));
        assert_eq!(a.exclude_tools, Some(vec!["read".into(), "ls".into()]));
        assert!(a.no_mcp);
        assert_eq!(a.project_trust_override, Some(true));
        assert_eq!(a.use_theme.as_deref(), Some("dark"));
        assert_eq!(a.tui_mode, Some(TuiMode::Regular));
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        assert_eq!(parse_args(&["-a", "-na"]).project_trust_override, Some(false));
        // A value flag takes the next token even when it starts with a dash.
        assert_eq!(parse_args(&["--session-id", "-x"]).session_id.as_deref(), Some("-x"));
        assert_eq!(
            parse_args(&["--session-id"])
                .unknown_flag_error()
                .map(|d| d.message)
                .as_deref(),
            Some("Unknown option: --session-id")
        );
        assert_eq!(
            parse_args(&["-xt"]).diagnostics,
            vec![Diagnostic::error("Unknown option: -xt")]
        );
    }

    #[test]
    fn flags_that_check_their_values() {
        let err = |v: &[&str]| parse_args(v).diagnostics;
        assert_eq!(err(&["--name"]), vec![Diagnostic::error("--name requires a value")]);
        assert_eq!(
            err(&["--use-theme"]),
            vec![Diagnostic::error("--use-theme requires a theme name")]
        );
        assert_eq!(
            err(&["--use-theme", "-p"]),
            vec![Diagnostic::error("--use-theme requires a theme name")]
        );
        assert_eq!(
            err(&["--tui-mode", "-p"]),
            vec![Diagnostic::error("--tui-mode requires regular or fullscreen")]
        );
        let bad = parse_args(&["--tui-mode", "huge", "hi"]);
        assert_eq!(
            bad.diagnostics,
            vec![Diagnostic::error(
                "Invalid TUI mode \"huge\". Valid values: regular, fullscreen"
            )]
        );
        assert_eq!(bad.messages, vec!["hi"]);
        // `--use-theme` swallows the next token, prompt or not.
        assert_eq!(parse_args(&["--use-theme", "hi"]).messages, Vec::<String>::new());
        assert_eq!(
            err(&["-t", "+grep,read"]),
            vec![Diagnostic::error(
                "-t: tool names cannot be mixed with +name or -name entries"
            )]
        );
        assert_eq!(
            err(&["--tools", "+gr*"]),
            vec![Diagnostic::error(
                "--tools: +name and -name entries take exact tool names, not patterns: +gr*"
            )]
        );
        assert_eq!(
            parse_args(&["--tools", "+grep,-write"]).tools,
            Some(vec!["+grep".into(), "-write".into()])
        );
    }

    #[test]
    fn list_models_takes_an_optional_search() {
        assert_eq!(parse_args(&["--list-models"]).list_models, Some(None));
        assert_eq!(
            parse_args(&["--list-models", "son"]).list_models,
            Some(Some("son".into()))
        );
        let a = parse_args(&["--list-models", "-p"]);
        assert_eq!(a.list_models, Some(None));
        assert!(a.print);
    }

    #[test]
    fn repeatable_flags_accumulate() {
        let a = parse_args(&[
            "--append-system-prompt",
            "a",
            "--append-system-prompt",
            "b",
            "-e",
            "x",
            "-e",
            "y",
        ]);
        assert_eq!(a.append_system_prompt, vec!["a", "b"]);
        assert_eq!(a.extensions, vec!["x", "y"]);
    }
}
