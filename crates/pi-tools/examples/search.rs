//! Command-line front to the in-process search, for benchmarks against rg and fd.
//!
//! `search grep PATTERN DIR [LIMIT]` prints `path:line:text` for every match (like `rg -n`);
//! `search find GLOB DIR [LIMIT]` prints matching paths (like `fd --glob`).
//! Without LIMIT everything is printed.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use pi_tools::search::{find_files, grep_search, GrepParams};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: search grep|find PATTERN DIR [LIMIT]");
        std::process::exit(2);
    }
    let limit = args.get(3).and_then(|l| l.parse::<usize>().ok()).unwrap_or(usize::MAX);
    let root = PathBuf::from(&args[2]);
    let cancel = AtomicBool::new(false);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let code = match args[0].as_str() {
        "grep" => {
            let params = GrepParams {
                pattern: args[1].clone(),
                root,
                glob: None,
                ignore_case: false,
                literal: false,
                limit,
            };
            match grep_search(&params, &cancel) {
                Ok(r) => {
                    for f in &r.files {
                        let path = f.path.display().to_string();
                        for (n, line) in f.lines() {
                            let _ = write!(out, "{path}:{n}:{line}");
                        }
                    }
                    i32::from(r.files.is_empty())
                }
                Err(e) => {
                    eprintln!("{e}");
                    2
                }
            }
        }
        "find" => match find_files(&args[1], &root, limit, &cancel) {
            Ok(r) => {
                for p in &r.paths {
                    let _ = writeln!(out, "{p}");
                }
                i32::from(r.paths.is_empty())
            }
            Err(e) => {
                eprintln!("{e}");
                2
            }
        },
        other => {
            eprintln!("unknown command {other}");
            2
        }
    };
    let _ = out.flush();
    std::process::exit(code);
}
