//! A `pi --mode rpc` child process driven over its stdin/stdout, next to a mock LLM server and
//! a temporary agent dir and project.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use pi_test_support::{AgentDir, MockServer, Script};
use serde_json::Value;

/// How long any single wait may take before the test fails (the slow scripted reply takes ~6 s).
pub const WAIT: Duration = Duration::from_secs(20);

/// The mock server with its runtime, the agent dir and a fixture project like the golden run's.
pub struct World {
    /// Runs the mock server; kept alive as long as the world.
    _runtime: tokio::runtime::Runtime,
    pub server: MockServer,
    pub agent: AgentDir,
    pub root: tempfile::TempDir,
}

impl World {
    pub fn new(script: Script) -> World {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let server = runtime.block_on(MockServer::start(script)).expect("mock server");
        let agent = AgentDir::golden(&server).expect("agent dir");
        let root = tempfile::Builder::new().prefix("pi-rpc-").tempdir().expect("tempdir");
        let proj = root.path().join("proj");
        std::fs::create_dir_all(proj.join("src")).expect("proj");
        std::fs::write(proj.join("hello.txt"), "hello from the fixture\n").expect("hello.txt");
        std::fs::write(proj.join("src/app.py"), "print('app')\n").expect("app.py");
        World {
            _runtime: runtime,
            server,
            agent,
            root,
        }
    }

    /// The golden scenario of the RPC run.
    pub fn golden() -> World {
        let script = Script::from_json(include_str!("../fixtures/rpc/scenario.json")).expect("scenario");
        World::new(script)
    }

    pub fn proj(&self) -> PathBuf {
        self.root.path().join("proj")
    }

    /// Every session file under the agent dir, oldest name first.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let sessions = self.agent.path().join("sessions");
        let Ok(dirs) = std::fs::read_dir(&sessions) else {
            return out;
        };
        for dir in dirs.flatten() {
            if let Ok(files) = std::fs::read_dir(dir.path()) {
                out.extend(
                    files
                        .flatten()
                        .map(|f| f.path())
                        .filter(|p| p.extension().is_some_and(|e| e == "jsonl")),
                );
            }
        }
        out.sort();
        out
    }

    pub fn spawn(&self) -> Pi {
        self.spawn_with(&[])
    }

    pub fn spawn_with(&self, extra: &[&str]) -> Pi {
        // PI_RPC_ORACLE_CLI=<path to pi's cli.js> runs the same checks against the TypeScript pi.
        let mut cmd = match std::env::var_os("PI_RPC_ORACLE_CLI") {
            Some(cli) => {
                let mut c = Command::new("node");
                c.arg(cli);
                c
            }
            // PI_RPC_BIN=<path> runs another build of pi (a shared target dir's `debug/pi` is
            // whichever worktree linked it last).
            None => Command::new(std::env::var_os("PI_RPC_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_pi").into())),
        };
        cmd.args(["--mode", "rpc"])
            .args(extra)
            .current_dir(self.proj())
            .env("HOME", self.root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in self.agent.env() {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn pi");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Pi {
            child,
            stdin: Some(stdin),
            rx,
            seen: Vec::new(),
            cursor: 0,
        }
    }
}

/// A running `pi --mode rpc`.
pub struct Pi {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<String>,
    /// Every line received so far, parsed.
    pub seen: Vec<Value>,
    /// Lines before this index were already consumed by a wait.
    cursor: usize,
}

impl Pi {
    pub fn send(&mut self, command: &Value) {
        self.send_line(&command.to_string());
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// Close stdin (EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn pull(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(line) => {
                let value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                self.seen.push(value);
                true
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => false,
        }
    }

    /// Wait for the first unconsumed line matching `pred`; lines up to it are consumed.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(i) = self.seen[self.cursor..].iter().position(&pred) {
                let at = self.cursor + i;
                self.cursor = at + 1;
                return self.seen[at].clone();
            }
            if !self.pull(deadline) {
                let tail: Vec<String> = self.seen[self.cursor..].iter().map(short).collect();
                let exited = self.child.try_wait().ok().flatten();
                let stderr = if exited.is_some() { self.stderr() } else { String::new() };
                panic!("no {what} (exit: {exited:?}, stderr: {stderr}); unconsumed lines: {tail:#?}");
            }
        }
    }

    /// The response to command `id`.
    pub fn response(&mut self, id: &str) -> Value {
        self.wait_for(&format!("response {id}"), |v| v["type"] == "response" && v["id"] == id)
    }

    /// Send `command` (with an `id`) and wait for its response.
    pub fn call(&mut self, command: Value) -> Value {
        let id = command["id"].as_str().expect("command id").to_string();
        self.send(&command);
        self.response(&id)
    }

    pub fn event(&mut self, kind: &str) -> Value {
        self.wait_for(kind, |v| v["type"] == kind)
    }

    /// Read everything until stdout closes; returns the lines received after the cursor.
    pub fn drain(&mut self) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        while self.pull(deadline) {}
        let rest = self.seen[self.cursor..].to_vec();
        self.cursor = self.seen.len();
        rest
    }

    /// Wait for the process to exit (after stdin closed), within [`WAIT`].
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "pi did not exit after stdin EOF");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
        }
        s
    }
}

impl Drop for Pi {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A line shortened for failure messages.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        format!("{}…", &s[..s.char_indices().nth(200).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

/// Read a JSONL file.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}
