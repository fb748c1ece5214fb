//! The `pi` binary: parse the arguments, pick the mode, nothing else.

use std::io::IsTerminal;

use pi_coding_agent::cli::{self, AppMode};

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = cli::parse_args(&argv);
    let mode = AppMode::resolve(&args, std::io::stdin().is_terminal());
    // Outside the terminal UI, stdout carries only the real output; everything else is stderr.
    let say = |text: &str| {
        if mode.is_interactive() {
            println!("{text}");
        } else {
            eprintln!("{text}");
        }
    };
    if args.version {
        say(env!("CARGO_PKG_VERSION"));
        return;
    }
    if args.help {
        say(cli::help::help_text().trim_end());
        return;
    }
    eprintln!("pi {}: this build cannot run prompts yet", env!("CARGO_PKG_VERSION"));
    std::process::exit(1);
}
