//! The `--help` text: pi's commands, flags and environment variables, in our words.

/// Environment variables that hold provider credentials, with what each is for.
const PROVIDER_ENV: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "Anthropic API key"),
    (
        "ANTHROPIC_OAUTH_TOKEN",
        "Anthropic OAuth token (used instead of the API key)",
    ),
    ("OPENAI_API_KEY", "OpenAI API key"),
    ("AZURE_OPENAI_API_KEY", "Azure OpenAI API key"),
    (
        "AZURE_OPENAI_BASE_URL",
        "Azure OpenAI base URL, e.g. https://{resource}.openai.azure.com",
    ),
    (
        "AZURE_OPENAI_RESOURCE_NAME",
        "Azure OpenAI resource name (instead of the base URL)",
    ),
    ("AZURE_OPENAI_API_VERSION", "Azure OpenAI API version (default: v1)"),
    (
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
        "Azure deployments as model=deployment, comma-separated",
    ),
    ("DEEPSEEK_API_KEY", "DeepSeek API key"),
    ("GEMINI_API_KEY", "Google Gemini API key"),
    ("GROQ_API_KEY", "Groq API key"),
    ("CEREBRAS_API_KEY", "Cerebras API key"),
    ("XAI_API_KEY", "xAI API key"),
    ("FIREWORKS_API_KEY", "Fireworks API key"),
    ("OPENROUTER_API_KEY", "OpenRouter API key"),
    ("AI_GATEWAY_API_KEY", "Vercel AI Gateway API key"),
    ("ZAI_API_KEY", "Z.ai API key"),
    ("MISTRAL_API_KEY", "Mistral API key"),
    ("MINIMAX_API_KEY", "MiniMax API key"),
    ("MOONSHOT_API_KEY", "Moonshot AI API key"),
    ("OPENCODE_API_KEY", "OpenCode Zen / OpenCode Go API key"),
    ("KIMI_API_KEY", "Kimi For Coding API key"),
    ("CLOUDFLARE_API_KEY", "Cloudflare API token (Workers AI and AI Gateway)"),
    (
        "CLOUDFLARE_ACCOUNT_ID",
        "Cloudflare account id (needed by both Cloudflare providers)",
    ),
    ("CLOUDFLARE_GATEWAY_ID", "Cloudflare AI Gateway id"),
    ("XIAOMI_API_KEY", "Xiaomi MiMo API key"),
    ("XIAOMI_TOKEN_PLAN_CN_API_KEY", "Xiaomi MiMo Token Plan key, China"),
    ("XIAOMI_TOKEN_PLAN_AMS_API_KEY", "Xiaomi MiMo Token Plan key, Amsterdam"),
    ("XIAOMI_TOKEN_PLAN_SGP_API_KEY", "Xiaomi MiMo Token Plan key, Singapore"),
    ("AWS_PROFILE", "AWS profile for Amazon Bedrock"),
    ("AWS_ACCESS_KEY_ID", "AWS access key for Amazon Bedrock"),
    ("AWS_SECRET_ACCESS_KEY", "AWS secret key for Amazon Bedrock"),
    ("AWS_BEARER_TOKEN_BEDROCK", "Amazon Bedrock API key (bearer token)"),
    ("AWS_REGION", "AWS region for Amazon Bedrock, e.g. us-east-1"),
    ("PI_CODING_AGENT_DIR", "Configuration folder (default: ~/.pi/agent)"),
    (
        "PI_CODING_AGENT_SESSION_DIR",
        "Where sessions are stored (--session-dir wins)",
    ),
    ("PI_PACKAGE_DIR", "Folder of pi's bundled assets"),
    ("PI_OFFLINE", "1/true/yes: no network access at startup"),
    ("PI_TELEMETRY", "1/true/yes or 0/false/no: override install telemetry"),
    ("PI_SHARE_VIEWER_URL", "Base URL used by /share"),
];

const OPTIONS: &[(&str, &str)] = &[
    (
        "--provider <name>",
        "Look for --model at this provider only (needs --model)",
    ),
    (
        "--model <pattern>",
        "Model id or pattern; \"provider/id\" and a \":<thinking>\" suffix work",
    ),
    (
        "--api-key <key>",
        "API key for this run (default: environment and auth.json)",
    ),
    (
        "--system-prompt <text>",
        "Replace the system prompt (text, or a file to read it from)",
    ),
    (
        "--append-system-prompt <text>",
        "Add text or a file's contents to the system prompt (repeatable)",
    ),
    ("--mode <mode>", "Output: text (default), json or rpc"),
    ("--print, -p", "Answer the prompt without the terminal UI, then exit"),
    ("--continue, -c", "Continue the most recent session"),
    ("--resume, -r", "Pick a session to resume"),
    (
        "--session <path|id>",
        "Open a session file, or a session by (partial) id",
    ),
    (
        "--session-id <id>",
        "Open this folder's session with exactly this id, or start one with it",
    ),
    ("--fork <path|id>", "Copy a session file or id into a new session here"),
    ("--session-dir <dir>", "Folder for storing and finding sessions"),
    ("--no-session", "Keep the session in memory only"),
    ("--name, -n <name>", "Give the session a display name"),
    (
        "--models <patterns>",
        "Comma-separated model patterns to cycle with Ctrl+P (globs work)",
    ),
    ("--no-tools, -nt", "Start with no tools at all (built-in and extension)"),
    (
        "--no-builtin-tools, -nbt",
        "Start without the built-in tools; keep extension tools",
    ),
    (
        "--tools, -t <tools>",
        "Comma-separated tools to enable: names or * patterns, of any origin;",
    ),
    ("", "a list of only +name/-name entries changes the default set instead"),
    (
        "--exclude-tools, -xt <tools>",
        "Comma-separated tools (names or * patterns) to turn off, applied last",
    ),
    (
        "--thinking <level>",
        "Thinking level: off, minimal, low, medium, high, xhigh, max",
    ),
    ("--extension, -e <path>", "Load an extension (repeatable)"),
    ("--no-extensions, -ne", "Do not discover extensions (-e still loads)"),
    ("--no-mcp", "Leave MCP servers and their tools off for this run"),
    ("--skill <path>", "Load a skill file or folder (repeatable)"),
    ("--no-skills, -ns", "Do not discover or load skills"),
    (
        "--prompt-template <path>",
        "Load a prompt template file or folder (repeatable)",
    ),
    ("--no-prompt-templates, -np", "Do not discover or load prompt templates"),
    ("--theme <path>", "Load a theme file or folder (repeatable)"),
    (
        "--use-theme <name[/name]>",
        "Start the terminal UI with this theme, this run only",
    ),
    ("--no-themes", "Do not discover or load themes"),
    ("--no-context-files, -nc", "Do not load AGENTS.md or CLAUDE.md files"),
    ("--export <file> [output]", "Write a session file as HTML, then exit"),
    (
        "--list-models [search]",
        "List the models you have keys for, optionally filtered",
    ),
    ("--verbose", "Always show the startup header"),
    (
        "--tui-mode <mode>",
        "Terminal UI layout: fullscreen (default) or regular",
    ),
    ("--approve, -a", "Trust this project's own pi files for this run"),
    ("--no-approve, -na", "Ignore this project's own pi files for this run"),
    ("--offline", "No network access at startup (as PI_OFFLINE=1)"),
    ("--", "Stop reading options: the rest are messages and @files"),
    ("--help, -h", "Show this help"),
    ("--version, -v", "Show the version"),
];

const TOOLS: &[(&str, &str)] = &[
    ("read", "Read a file (text or image)"),
    ("bash", "Run a shell command"),
    ("edit", "Replace exact text in a file"),
    ("write", "Create or overwrite a file"),
    ("grep", "Search file contents (off by default)"),
    ("find", "Find files by glob (off by default)"),
    ("ls", "List a folder (off by default)"),
];

fn table(out: &mut String, rows: &[(&str, &str)], width: usize) {
    for (left, right) in rows {
        out.push_str(&format!("  {left:<width$} {right}\n"));
    }
}

/// The complete help text.
pub fn help_text() -> String {
    let mut out = String::new();
    out.push_str("pi - a coding agent for your terminal, with read, bash, edit and write tools\n\n");
    out.push_str("Usage:\n  pi [options] [--] [@files...] [messages...]\n\n");
    out.push_str("Commands:\n");
    table(
        &mut out,
        &[
            ("pi install <source> [-l]", "Install a package and add it to settings"),
            ("pi remove <source> [-l]", "Remove a package from settings"),
            ("pi uninstall <source> [-l]", "Same as remove"),
            (
                "pi update [source|self|pi]",
                "Update pi, packages or the model catalogs",
            ),
            ("pi list", "List installed packages"),
            ("pi config [-l]", "Enable or disable package resources"),
            (
                "pi auth <command>",
                "Log in or out, print a credential, check a provider",
            ),
            ("pi mcp <command>", "Manage MCP servers"),
            ("pi <command> --help", "Help for one command"),
        ],
        28,
    );
    out.push_str("\nOptions:\n");
    table(&mut out, OPTIONS, 30);
    out.push_str("\nExtensions may add flags of their own.\n\n");
    out.push_str("Examples:\n");
    for (what, cmd) in [
        ("Start the terminal UI", "pi"),
        ("Start it with a first prompt", "pi \"Summarise src/main.rs\""),
        (
            "Attach files to the first message",
            "pi @notes.md @screenshot.png \"What is wrong here?\"",
        ),
        ("Answer once and exit", "pi -p \"Which tests are slow?\""),
        ("Continue the last session", "pi --continue \"And now?\""),
        ("Choose a model", "pi --model openai/gpt-5.4 \"Refactor this\""),
        (
            "Choose a model and thinking level",
            "pi --model sonnet:high \"Prove it\"",
        ),
        ("Read-only tools", "pi --tools read,grep,find,ls -p \"Review src/\""),
        ("Add grep and drop write from the defaults", "pi --tools +grep,-write"),
        ("Everything but bash", "pi --exclude-tools bash"),
        ("A prompt that starts with a dash", "pi -p -- \"- list the risks\""),
        ("A named session", "pi --name \"Auth refactor\""),
        ("Print a provider's API key", "pi auth print-api-key --provider openai"),
        ("Export a session as HTML", "pi --export session.jsonl out.html"),
    ] {
        out.push_str(&format!("  # {what}\n  {cmd}\n\n"));
    }
    out.push_str("Environment variables:\n");
    table(&mut out, PROVIDER_ENV, 32);
    out.push_str("\nBuilt-in tools:\n");
    table(&mut out, TOOLS, 6);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_flag_of_pi() {
        let text = help_text();
        for flag in [
            "--provider",
            "--model",
            "--api-key",
            "--system-prompt",
            "--append-system-prompt",
            "--mode",
            "--print",
            "--continue",
            "--resume",
            "--session ",
            "--fork",
            "--session-dir",
            "--no-session",
            "--session-id",
            "--name, -n",
            "--exclude-tools, -xt",
            "--no-mcp",
            "--use-theme",
            "--tui-mode",
            "--approve, -a",
            "--no-approve, -na",
            "--models",
            "--no-tools",
            "--no-builtin-tools",
            "--tools",
            "--thinking",
            "--extension",
            "--no-extensions",
            "--skill",
            "--no-skills",
            "--prompt-template",
            "--no-prompt-templates",
            "--theme",
            "--no-themes",
            "--no-context-files",
            "--export",
            "--list-models",
            "--verbose",
            "--offline",
            "--help",
            "--version",
        ] {
            assert!(text.contains(flag), "help lacks {flag}");
        }
    }
}
