//! pi 1.6's built-in extensions by name (`builtin:mcp`, `builtin:codemode`,
//! `builtin:tool-search`, `builtin:llama.cpp`): which are on for a run (`-ne` turns them all off,
//! `-e builtin:<name>` turns one on again), and the error for a name that is none of them.

use crate::cli::Args;

pub const MCP: &str = "builtin:mcp";
pub const CODEMODE: &str = "builtin:codemode";
pub const TOOL_SEARCH: &str = "builtin:tool-search";
pub const LLAMA_CPP: &str = "builtin:llama.cpp";
pub const ALL: [&str; 4] = [CODEMODE, LLAMA_CPP, MCP, TOOL_SEARCH];

pub fn is_builtin(source: &str) -> bool {
    source.starts_with("builtin:")
}

/// Whether the built-in `name` is on for this run.
pub fn enabled(args: &Args, name: &str) -> bool {
    !args.no_extensions || args.extensions.iter().any(|e| e == name)
}

/// pi's load error for each `-e builtin:<name>` that names no built-in extension.
pub fn unknown_errors(args: &Args) -> Vec<String> {
    args.extensions
        .iter()
        .filter(|e| is_builtin(e) && !ALL.contains(&e.as_str()))
        .map(|e| format!("Failed to load extension \"{e}\": Unknown built-in extension: {e}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        let argv: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        crate::cli::args::parse_args(&argv)
    }

    #[test]
    fn no_extensions_turns_builtins_off_unless_named_again() {
        assert!(enabled(&args(&[]), MCP));
        assert!(!enabled(&args(&["-ne"]), MCP));
        let named = args(&["-ne", "-e", "builtin:mcp"]);
        assert!(enabled(&named, MCP));
        assert!(!enabled(&named, TOOL_SEARCH));
        assert!(unknown_errors(&named).is_empty());
        assert_eq!(
            unknown_errors(&args(&["-e", "builtin:nope"])),
            ["Failed to load extension \"builtin:nope\": Unknown built-in extension: builtin:nope"]
        );
    }
}
