//! `pi mcp …` on its own, for trying the commands before the product dispatches to them:
//! `cargo run -p pi-mcp --example pi_mcp -- list` (agent dir from `PI_CODING_AGENT_DIR`).

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let agent_dir = std::env::var_os("PI_CODING_AGENT_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pi/agent")))
        .unwrap_or_else(|| PathBuf::from(".pi/agent"));
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let (stdout, stderr, code) = pi_mcp::cli::run_cli(&args, &agent_dir, &cwd);
    let _ = std::io::stdout().write_all(stdout.as_bytes());
    let _ = std::io::stderr().write_all(stderr.as_bytes());
    std::process::exit(code);
}
