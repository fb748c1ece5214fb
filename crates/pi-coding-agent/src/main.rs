//! The `pi` binary: parse the arguments, pick the mode, nothing else.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-v") {
        eprintln!("{}", env!("CARGO_PKG_VERSION"));
        return;
    }
    eprintln!("pi {}: not yet usable", env!("CARGO_PKG_VERSION"));
    std::process::exit(1);
}
