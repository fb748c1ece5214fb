//! The command line: argument parsing, help text and mode selection.

pub mod args;
pub mod console;
pub mod file_args;
pub mod help;
pub mod initial_message;
pub mod list_models;
pub mod session_flags;
pub mod tool_selection;

pub use args::{parse_args, Args, Diagnostic, Mode, Severity, TuiMode};

/// The face pi shows for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppMode {
    Interactive,
    /// `-p` or piped stdin: print the final answer.
    Print,
    /// `--mode json`: every event as a JSON line.
    Json,
    /// `--mode rpc`: JSON commands on stdin, responses and events on stdout.
    Rpc,
}

impl AppMode {
    /// pi's rule: rpc and json win; then `-p`, a non-terminal stdin or a redirected stdout
    /// means print.
    pub fn resolve(args: &Args, stdin_is_terminal: bool, stdout_is_terminal: bool) -> AppMode {
        match args.mode {
            Some(Mode::Rpc) => AppMode::Rpc,
            Some(Mode::Json) => AppMode::Json,
            _ if args.print || !stdin_is_terminal || !stdout_is_terminal => AppMode::Print,
            _ => AppMode::Interactive,
        }
    }

    pub fn is_interactive(self) -> bool {
        self == AppMode::Interactive
    }
}

/// `--help` or `--list-models` without `-p` or `--mode`: their output stays on stdout even when
/// stdout is not a terminal (in the other non-interactive runs stdout carries only the answer).
pub fn is_plain_metadata_command(args: &Args) -> bool {
    !args.print && args.mode.is_none() && (args.help || args.list_models.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_resolution_follows_pi() {
        let parse = |v: &[&str]| parse_args(v);
        assert_eq!(AppMode::resolve(&parse(&[]), true, true), AppMode::Interactive);
        assert_eq!(AppMode::resolve(&parse(&[]), false, true), AppMode::Print);
        assert_eq!(
            AppMode::resolve(&parse(&[]), true, false),
            AppMode::Print,
            "stdout redirected"
        );
        assert_eq!(
            AppMode::resolve(&parse(&["--mode", "text"]), true, true),
            AppMode::Interactive
        );
        assert_eq!(AppMode::resolve(&parse(&["-p", "x"]), true, true), AppMode::Print);
        assert_eq!(
            AppMode::resolve(&parse(&["--mode", "json"]), false, false),
            AppMode::Json
        );
        assert_eq!(
            AppMode::resolve(&parse(&["--mode", "rpc", "-p"]), false, true),
            AppMode::Rpc
        );
    }

    #[test]
    fn plain_metadata_commands() {
        assert!(is_plain_metadata_command(&parse_args(&["--help"])));
        assert!(is_plain_metadata_command(&parse_args(&["--list-models", "x"])));
        assert!(!is_plain_metadata_command(&parse_args(&["--help", "-p"])));
        assert!(!is_plain_metadata_command(&parse_args(&[
            "--list-models",
            "--mode",
            "text"
        ])));
        assert!(!is_plain_metadata_command(&parse_args(&["--version"])));
    }
}
