//! Running the real `pi` binary: a fixture project in a temp dir, a mock LLM server on its own
//! runtime, and a process runner with piped or closed stdin and a safety timeout.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pi_test_support::{AgentDir, MockServer, RecordedRequest, Script};

/// The `pi` binary under test. `CARGO_BIN_EXE_pi` names `debug/pi` in the target dir, which a
/// build of the same crate from another checkout sharing that target dir may overwrite. Cargo
/// links the binary before this test, so a `debug/pi` newer than the running test was most
/// likely built by someone else: then cargo re-links ours (the same build as this test's) and
/// the tests run a private copy taken at once. This cannot catch a foreign binary older than
/// the test (cargo's freshness check cannot either): `PI_TEST_BIN` names a binary to test.
pub fn pi_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(bin) = std::env::var("PI_TEST_BIN") {
            return PathBuf::from(bin);
        }
        let original = PathBuf::from(env!("CARGO_BIN_EXE_pi"));
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let test_exe = std::env::current_exe().ok();
        let replaced = match (modified(&original), test_exe.as_deref().and_then(modified)) {
            (Some(bin), Some(test)) => bin > test,
            _ => false,
        };
        if replaced {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let rebuilt = Command::new(cargo)
                .args(["test", "--no-run", "--quiet", "-p", "pi-coding-agent", "--test", "cli"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .is_ok_and(|s| s.success());
            if !rebuilt {
                println!(
                    "warning: {} is newer than this test and could not be rebuilt",
                    original.display()
                );
            }
        }
        // A static is never dropped, so the copy lives in the target dir, one folder per
        // test process; folders of processes that are gone are removed here.
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-bin");
        remove_stale_copies(&root);
        let dir = root.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("pi");
        std::fs::copy(&original, &copy).unwrap();
        copy
    })
}

/// Remove the binary copies of test processes that no longer run.
fn remove_stale_copies(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let alive = name
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A hung pi must fail the test, not the whole suite.
const RUN_TIMEOUT: Duration = Duration::from_secs(30);

/// The golden transcripts of the TypeScript pi 1.6: `testdata/golden-1.6/` of the repository, or
/// the recording `PI_GOLDEN_DIR` names (`None` when it holds none).
pub fn golden_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PI_GOLDEN_DIR").map_or_else(pi_test_support::golden_16, PathBuf::from);
    if dir.join("scenarios").is_dir() {
        Some(dir)
    } else {
        pi_test_support::require::missing(
            &format!("golden transcripts in {}", dir.display()),
            "compares with the recorded TypeScript pi",
        )
    }
}

/// The mock server with the runtime that drives it; the test itself stays synchronous.
pub struct Mock {
    pub server: MockServer,
    _rt: tokio::runtime::Runtime,
}

impl Mock {
    pub fn start(script: Script) -> Mock {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(MockServer::start(script)).unwrap();
        Mock { server, _rt: rt }
    }

    /// A golden scenario (`echo`, `tools`, `think`).
    pub fn scenario(golden: &Path, name: &str) -> Mock {
        Mock::start(Script::from_file(&golden.join("scenarios").join(format!("{name}.json"))).unwrap())
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }
}

/// The golden fixture project (`<TMP>/proj`) and an agent dir pointing at the mock.
pub struct Fixture {
    pub root: tempfile::TempDir,
    pub proj: PathBuf,
    pub agent: AgentDir,
}

pub const HELLO: &str = "Hello world\nThis is a test file.\nThird line.\n";

impl Fixture {
    pub fn new(mock: &Mock) -> Fixture {
        Fixture::with_agent(AgentDir::golden(&mock.server).unwrap())
    }

    pub fn with_agent(agent: AgentDir) -> Fixture {
        let root = tempfile::Builder::new().prefix("pi-cli-").tempdir().unwrap();
        let proj = root.path().canonicalize().unwrap().join("proj");
        std::fs::create_dir_all(proj.join("src")).unwrap();
        std::fs::write(proj.join("hello.txt"), HELLO).unwrap();
        std::fs::write(
            proj.join("src/app.py"),
            "def main():\n    print(\"hi\")\n\n\nif __name__ == \"__main__\":\n    main()\n",
        )
        .unwrap();
        Fixture { root, proj, agent }
    }

    /// The scratch dir the golden files call `<TMP>`.
    pub fn tmp(&self) -> String {
        self.root.path().canonicalize().unwrap().display().to_string()
    }

    pub fn agent_path(&self) -> String {
        self.agent.path().canonicalize().unwrap().display().to_string()
    }

    /// `pi` in the project with the agent dir's environment; stdin closed.
    pub fn pi<I, S>(&self, args: I) -> Pi
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = Command::new(pi_bin());
        cmd.args(args).current_dir(&self.proj).envs(self.agent.env());
        for var in [
            "PI_CODING_AGENT_SESSION_DIR",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
        ] {
            cmd.env_remove(var);
        }
        Pi { cmd, stdin: None }
    }

    /// `program` (our binary or the reference's) in the project with the agent dir's
    /// environment, for tests that build the rest of the command themselves.
    pub fn command(&self, mut program: Command) -> Command {
        program.current_dir(&self.proj).envs(self.agent.env());
        program
    }

    /// The message of the first tool result in the first session file.
    pub fn first_tool_result(&self) -> serde_json::Value {
        let session = std::fs::read_to_string(&self.sessions()[0]).unwrap();
        let entry = session
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|e| e["message"]["role"] == "toolResult")
            .expect("a tool result");
        entry["message"].clone()
    }

    /// Every session file under the agent dir, oldest name first.
    pub fn sessions(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        collect_jsonl(&self.agent.path().join("sessions"), &mut found);
        found.sort();
        found
    }

    /// The one session file of a run.
    pub fn only_session(&self) -> PathBuf {
        let sessions = self.sessions();
        assert_eq!(sessions.len(), 1, "session files: {sessions:?}");
        sessions.into_iter().next().unwrap()
    }
}

fn collect_jsonl(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_jsonl(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// One pi process to run.
pub struct Pi {
    pub cmd: Command,
    stdin: Option<Vec<u8>>,
}

/// What a run left behind.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Pi {
    /// Run `cmd` (another program, such as the reference pi) the way `pi` runs.
    pub fn from_command(cmd: Command) -> Pi {
        Pi { cmd, stdin: None }
    }

    /// Pipe `text` into stdin (then close it).
    pub fn stdin(mut self, text: impl Into<Vec<u8>>) -> Pi {
        self.stdin = Some(text.into());
        self
    }

    pub fn run(mut self) -> Run {
        self.cmd
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self.cmd.spawn().unwrap();
        if let Some(bytes) = self.stdin.take() {
            let mut pipe = child.stdin.take().unwrap();
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let mut out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let out_thread = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = out.read_to_end(&mut s);
            s
        });
        let err_thread = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = err.read_to_end(&mut s);
            s
        });
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > RUN_TIMEOUT {
                let _ = child.kill();
                panic!("pi did not finish within {RUN_TIMEOUT:?}: {:?}", self.cmd);
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Run {
            code: status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out_thread.join().unwrap()).into_owned(),
            stderr: String::from_utf8_lossy(&err_thread.join().unwrap()).into_owned(),
        }
    }
}

impl Run {
    /// stdout as JSON lines.
    pub fn events(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Run {
        assert_eq!(self.code, 0, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

/// Split a golden `.cmd` line (`pi a\ b c`: backslash escapes, no quotes) into arguments
/// after the program name.
pub fn parse_cmd(line: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = line.trim_end_matches('\n').chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    has = true;
                }
            }
            ' ' | '\t' => {
                if has {
                    args.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            '\'' => {
                // 'quoted' (shlex style)
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
                has = true;
            }
            _ => {
                cur.push(c);
                has = true;
            }
        }
    }
    if has {
        args.push(cur);
    }
    assert_eq!(args.first().map(String::as_str), Some("pi"), "{line}");
    args.remove(0);
    args
}

/// Read `dir/case.ext`.
pub fn golden_file(dir: &Path, case: &str, ext: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{case}.{ext}"))).unwrap_or_else(|e| panic!("{case}.{ext}: {e}"))
}

/// JSON lines of a file's text.
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
