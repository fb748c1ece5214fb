//! Faults during session writes: SIGKILL at random points of 1,000 paced writes to one file,
//! the disk filling up (a file size limit, `RLIMIT_FSIZE`, in a child process), a session
//! directory that cannot be written, and a second process on the same file. Each gives a clear
//! error or loses at most the line being written, keeps everything written before, and the
//! session goes on once the fault is gone.
//!
//! The children are this test binary started again with `PI_FAULT_CHILD` naming what to do.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use pi_session::{SessionError, SessionManager};
use serde_json::json;

use super::crash::first_exchange;

/// Entries the kill test writes in all, across its killed writers.
const TOTAL_WRITES: u64 = 1_000;

fn child(test: &str, env: &[(&str, &Path)]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn indices(store: &SessionManager, custom_type: &str) -> Vec<u64> {
    store
        .get_entries()
        .iter()
        .filter_map(|e| serde_json::to_value(e).ok())
        .filter(|v| v["customType"] == custom_type)
        .filter_map(|v| v["data"]["i"].as_u64())
        .collect()
}

fn header(path: &Path, id: &str) {
    std::fs::write(
        path,
        format!(
            "{}\n",
            json!({"type": "session", "version": 3, "id": id, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"})
        ),
    )
    .expect("header");
}

/// The child of the kill test: continue the numbered entries of `PI_FAULT_KILL` up to
/// [`TOTAL_WRITES`], pausing a little between writes so kills land among them.
#[test]
fn fault_child_paced_writer() {
    let Some(path) = std::env::var_os("PI_FAULT_KILL") else {
        return;
    };
    let mut store = SessionManager::open(&path).expect("open");
    if store.get_entries().len() < 2 {
        first_exchange(&mut store);
    }
    let start = indices(&store, "kill").len() as u64;
    for i in start..TOTAL_WRITES {
        // Sizes vary so a kill may find a line of any length in flight.
        store
            .append_custom(
                "kill",
                Some(json!({"i": i, "pad": "k".repeat((i as usize * 37) % 2000)})),
            )
            .expect("append");
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn sigkill_at_random_points_of_1000_writes_loses_nothing_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kill.jsonl");
    header(&path, "kill-1000");
    let mut rng = pi_test_support::fuzz::Rng::new(0xc4a5_0000_0000_1000);
    let mut kills = 0;
    for run in 0.. {
        assert!(run < 2_000, "the writers made no progress");
        let before = {
            let store = SessionManager::open_read_only(&path).expect("open");
            indices(&store, "kill").len() as u64
        };
        if before >= TOTAL_WRITES {
            break;
        }
        let mut writer = child("faults::fault_child_paced_writer", &[("PI_FAULT_KILL", &path)])
            .spawn()
            .expect("spawn");
        // The kill lands among the writes, not during the child's start (slow on a loaded
        // machine): wait for its first write.
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let started = std::time::Instant::now();
        while std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) == size
            && writer.try_wait().expect("wait").is_none()
            && started.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(2 + rng.below(40) as u64));
        if writer.try_wait().expect("wait").is_none() {
            kills += 1;
        }
        let _ = writer.kill();
        let _ = writer.wait();
        let store = SessionManager::open_read_only(&path).expect("a killed writer's file opens");
        let written = indices(&store, "kill");
        assert!(
            written.iter().enumerate().all(|(k, i)| *i == k as u64),
            "run {run}: entries out of order or missing after a kill"
        );
        assert!(written.len() as u64 >= before, "run {run}: entries lost");
        // At most the line each kill cut short is skipped.
        assert!(
            store.load_report().skipped.len() <= kills,
            "run {run}: {} skipped lines after {kills} kills",
            store.load_report().skipped.len()
        );
    }
    let store = SessionManager::open(&path).expect("open");
    assert_eq!(indices(&store, "kill").len() as u64, TOTAL_WRITES);
    assert!(kills >= 3, "only {kills} writers were killed mid-run");
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn set_file_size_limit(bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain system calls on this process with a valid struct; SIGXFSZ ignored so an
    // over-limit write fails with EFBIG instead of ending the process.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0, "setrlimit");
    }
}

/// The child of the disk-full test: fill the session file up to a size limit, check the
/// error, then lift the limit and go on. Writes what it saw to `PI_FAULT_FULL.report`.
#[cfg(unix)]
#[test]
fn fault_child_disk_full() {
    let Some(path) = std::env::var_os("PI_FAULT_FULL") else {
        return;
    };
    let path = PathBuf::from(path);
    let mut store = SessionManager::open(&path).expect("open");
    first_exchange(&mut store);
    for i in 0..20 {
        store
            .append_custom("full", Some(json!({"i": i})))
            .expect("room for these");
    }
    let size = std::fs::metadata(&path).expect("size").len();
    set_file_size_limit(size + 3_000);
    let mut failed = None;
    let mut i = 20;
    while failed.is_none() && i < 1_000 {
        if let Err(e) = store.append_custom("full", Some(json!({"i": i, "pad": "f".repeat(500)}))) {
            failed = Some(e);
        }
        i += 1;
    }
    let error = failed.expect("the limit is reached");
    let on_disk_when_full = std::fs::read(&path).expect("read");
    // Space returns: the entries kept in memory are written with the next one.
    set_file_size_limit(u64::MAX);
    store
        .append_custom("full", Some(json!({"i": i})))
        .expect("append after space returns");
    let report = json!({
        "error": error.to_string(),
        "is_io": matches!(error, SessionError::Io { .. }),
        "ends_with_newline": on_disk_when_full.last() == Some(&b'\n'),
        "last": i,
    });
    std::fs::write(path.with_extension("report"), report.to_string()).expect("report");
}

#[cfg(unix)]
#[test]
fn a_full_disk_is_a_clear_error_keeps_what_was_written_and_the_session_resumes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("full.jsonl");
    let out = child("faults::fault_child_disk_full", &[("PI_FAULT_FULL", &path)])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path.with_extension("report")).expect("report")).expect("JSON");
    let error = report["error"].as_str().unwrap_or_default();
    assert_eq!(report["is_io"], true, "{error}");
    assert!(
        error.contains("full.jsonl") && error.contains("too large"),
        "clear error: {error}"
    );
    // The failed write was cut back off: the file held whole lines only.
    assert_eq!(report["ends_with_newline"], true);
    let store = SessionManager::open(&path).expect("open");
    assert!(store.load_report().skipped.is_empty(), "{:?}", store.load_report());
    let last = report["last"].as_u64().expect("last");
    assert_eq!(
        indices(&store, "full"),
        (0..=last).collect::<Vec<u64>>(),
        "every entry, once, in order"
    );
}

/// The child of the read-only test (run as an unprivileged user when the test runs as root,
/// whom permissions do not stop): a new session in a directory it cannot write.
#[cfg(unix)]
#[test]
#[allow(unsafe_code)]
fn fault_child_read_only_dir() {
    use std::os::unix::fs::PermissionsExt;
    let Some(base) = std::env::var_os("PI_FAULT_RO") else {
        return;
    };
    // SAFETY: getuid/setgid/setuid have no memory effects; failure is checked.
    unsafe {
        if libc::getuid() == 0 {
            assert_eq!(libc::setgid(65534), 0, "setgid");
            assert_eq!(libc::setuid(65534), 0, "setuid");
        }
    }
    let sessions = PathBuf::from(base).join("sessions");
    std::fs::create_dir(&sessions).expect("mkdir");
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let path = sessions.join("ro.jsonl");
    let mut store = SessionManager::open(&path).expect("open a new session");
    let error = store
        .append_message(super::crash::user_message("first"))
        .expect_err("cannot write in a read-only directory");
    store
        .append_message(super::crash::assistant_message("reply"))
        .expect_err("still read-only");
    let text = error.to_string();
    assert!(matches!(error, SessionError::Io { .. }), "{text}");
    assert!(
        text.contains("ro.jsonl") && text.to_lowercase().contains("permission denied"),
        "clear error: {text}"
    );
    assert!(!path.exists());
    // Writable again: the held entries are written with the next one.
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    store
        .append_custom("ro", Some(json!({"i": 0})))
        .expect("append once writable");
    drop(store);
    let store = SessionManager::open(&path).expect("reopen");
    let roles: Vec<String> = store
        .get_entries()
        .iter()
        .filter_map(|e| e.message().map(|m| m.role().to_string()))
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(indices(&store, "ro"), vec![0]);
    std::fs::write(sessions.join("..").join("ok"), "").expect("marker");
}

#[cfg(unix)]
#[test]
fn a_read_only_session_directory_is_a_clear_error_and_the_session_resumes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    // The unprivileged child must be able to create its folder here.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let out = child("faults::fault_child_read_only_dir", &[("PI_FAULT_RO", dir.path())])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("ok").exists(), "the child ran its checks");
}

#[test]
fn a_second_writer_on_one_session_is_refused_and_nothing_is_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("two.jsonl");
    header(&path, "two-writers");
    let mut first = SessionManager::open(&path).expect("first");
    first_exchange(&mut first);
    first.append_custom("two", Some(json!({"i": 0}))).expect("append");
    // Another process (this binary again) tries to open it for writing while we hold it.
    let out = child("faults::fault_child_second_writer", &[("PI_FAULT_SECOND", &path)])
        .output()
        .expect("run");
    assert!(out.status.success(), "child: {}", String::from_utf8_lossy(&out.stderr));
    first
        .append_custom("two", Some(json!({"i": 1})))
        .expect("the first writer goes on");
    drop(first);
    let store = SessionManager::open(&path).expect("open after");
    assert_eq!(indices(&store, "two"), vec![0, 1]);
    assert!(store.load_report().skipped.is_empty());
}

#[test]
fn fault_child_second_writer() {
    let Some(path) = std::env::var_os("PI_FAULT_SECOND") else {
        return;
    };
    match SessionManager::open(&path) {
        Err(SessionError::Locked { path: locked }) => {
            assert_eq!(locked.file_name(), Path::new(&path).file_name());
            let text = SessionError::Locked { path: locked }.to_string();
            assert!(text.contains("in use by another pi process"), "{text}");
        }
        Err(e) => panic!("expected Locked, got {e}"),
        Ok(_) => panic!("a second writer opened a locked session"),
    }
    // Reading it is fine while it is locked.
    SessionManager::open_read_only(&path).expect("read-only open");
}
