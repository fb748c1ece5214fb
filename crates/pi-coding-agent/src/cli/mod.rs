//! The command line: argument parsing, help text and mode selection.

pub mod args;
pub mod file_args;
pub mod help;
pub mod initial_message;
pub mod list_models;

pub use args::{parse_args, Args, Diagnostic, Mode, Severity};

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
    /// pi 0.73's rule: rpc and json win; then `-p` or a non-terminal stdin means print.
    pub fn resolve(args: &Args, stdin_is_terminal: bool) -> AppMode {
        match args.mode {
            Some(Mode::Rpc) => AppMode::Rpc,
            Some(Mode::Json) => AppMode::Json,
            _ if args.print || !stdin_is_terminal => AppMode::Print,
            _ => AppMode::Interactive,
        }
    }

    pub fn is_interactive(self) -> bool {
        self == AppMode::Interactive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_resolution_follows_pi() {
        let parse = |v: &[&str]| parse_args(v);
        assert_eq!(AppMode::resolve(&parse(&[]), true), AppMode::Interactive);
        assert_eq!(AppMode::resolve(&parse(&[]), false), AppMode::Print);
        assert_eq!(
            AppMode::resolve(&parse(&["--mode", "text"]), true),
            AppMode::Interactive
        );
        assert_eq!(AppMode::resolve(&parse(&["-p", "x"]), true), AppMode::Print);
        assert_eq!(AppMode::resolve(&parse(&["--mode", "json"]), false), AppMode::Json);
        assert_eq!(AppMode::resolve(&parse(&["--mode", "rpc", "-p"]), false), AppMode::Rpc);
    }
}
