//! `pi-mock-llm`: run the mock LLM server from a scenario file, for benchmarks and manual runs.
//!
//! Usage: `pi-mock-llm [--port N] [--script FILE] [--log FILE]`. Prints the base URL
//! (`http://127.0.0.1:PORT`; OpenAI clients add `/v1`, Google clients `/v1beta`) on stdout and
//! serves until killed. Without `--script` it echoes.

use std::path::PathBuf;
use std::process::ExitCode;

use pi_test_support::{MockServer, Script};

const USAGE: &str = "usage: pi-mock-llm [--port N] [--script scenario.json] [--log requests.jsonl]";

struct Args {
    port: u16,
    script: Option<PathBuf>,
    log: Option<PathBuf>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut out = Args {
        port: 0,
        script: None,
        log: None,
    };
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--port" => out.port = value()?.parse().map_err(|_| "--port needs a number".to_owned())?,
            "--script" => out.script = Some(PathBuf::from(value()?)),
            "--log" => out.log = Some(PathBuf::from(value()?)),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("pi-mock-llm: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let script = match &args.script {
            Some(path) => match Script::from_file(path) {
                Ok(script) => script,
                Err(e) => {
                    eprintln!("pi-mock-llm: {e}");
                    return ExitCode::FAILURE;
                }
            },
            None => Script::echo(),
        };
        let mut builder = MockServer::builder(script).port(args.port);
        if let Some(log) = &args.log {
            builder = builder.log_file(log);
        }
        let server = match builder.start().await {
            Ok(server) => server,
            Err(e) => {
                eprintln!("pi-mock-llm: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!("{}", server.url());
        // Keep serving until the process is killed; Ctrl-C needs tokio's signal feature, and a
        // killed process releases the socket just the same.
        std::future::pending::<()>().await;
        drop(server);
        ExitCode::SUCCESS
    })
}
