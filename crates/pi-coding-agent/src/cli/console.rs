//! Where the command line's own messages go: errors and warnings on stderr (red and yellow on a
//! terminal), informational output on stdout until a non-interactive run claims stdout for its
//! answer, and on stderr from then on.

/// The startup's printer.
#[derive(Debug, Clone, Copy)]
pub struct Console {
    /// Stdout belongs to the run's output (print, JSON and RPC mode, except a plain `--help` or
    /// `--list-models`): informational lines go to stderr.
    pub stdout_taken: bool,
    /// Stderr is a terminal: colour the errors and warnings.
    pub color: bool,
}

impl Console {
    /// An informational line: stdout unless the run's output owns it.
    pub fn info(&self, text: &str) {
        if self.stdout_taken {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
    }

    /// Always on stdout (`--version`, `--export`'s result): these come before stdout is claimed.
    pub fn out(&self, text: &str) {
        println!("{text}");
    }

    pub fn error(&self, text: &str) {
        self.bare_error(&format!("Error: {text}"));
    }

    /// An error worded without the `Error: ` prefix.
    pub fn bare_error(&self, text: &str) {
        if self.color {
            eprintln!("\x1b[31m{text}\x1b[39m");
        } else {
            eprintln!("{text}");
        }
    }

    pub fn warning(&self, text: &str) {
        if self.color {
            eprintln!("\x1b[33mWarning: {text}\x1b[39m");
        } else {
            eprintln!("Warning: {text}");
        }
    }

    /// An extension's notice on stderr, coloured by its kind (`error` red, `warning` yellow,
    /// else cyan), as pi prints a `project_trust` handler's `ctx.ui.notify`.
    pub fn notice(&self, text: &str, kind: &str) {
        let colour = match kind {
            "error" => 31,
            "warning" => 33,
            _ => 36,
        };
        if self.color {
            eprintln!("\x1b[{colour}m{text}\x1b[39m");
        } else {
            eprintln!("{text}");
        }
    }

    /// A dim hint line on stderr.
    pub fn hint(&self, text: &str) {
        if self.color {
            eprintln!("\x1b[2m{text}\x1b[22m");
        } else {
            eprintln!("{text}");
        }
    }
}
