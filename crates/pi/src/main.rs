//! The `pi` binary: hand the arguments and the terminal UI to the app and exit with its code.

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(pi_coding_agent::app::run(&argv, &pi_interactive::TerminalApp));
}
