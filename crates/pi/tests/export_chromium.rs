//! Opens exported sessions in headless Chromium and checks what the browser shows: the messages
//! are there, our script runs under the page's policy, injected markup stays text and nothing
//! reaches the network. Needs `chromium` (see `pi_test_support::require`: a skip outside CI, a
//! failure under CI).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use pi_coding_agent::export::{export_file, export_session_html, ExportOptions};

/// Chromium as Debian installs it (`chromium`), or under the other usual name.
fn chromium_bin() -> Option<PathBuf> {
    pi_test_support::require::any_tool(&["chromium", "chromium-browser"], "renders the exported page")
}

/// One headless run with a fresh profile; the flags keep it off the (closed) network.
fn chromium(bin: &Path, extra: &[String], page: &Path) -> String {
    let profile = tempfile::Builder::new()
        .prefix("pi-chromium-")
        .tempdir()
        .expect("profile dir");
    let out = Command::new("timeout")
        .arg("120")
        .arg(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tool scenario's session as the TypeScript pi wrote it (`testdata/`), copied under the
/// name the export derives its page name from.
fn golden_session(dir: &Path) -> PathBuf {
    // PI_EXPORT_SESSION renders another file instead (to look at it by hand); the checks below
    // expect the tools golden session.
    let golden = std::env::var_os("PI_EXPORT_SESSION")
        .map(PathBuf::from)
        .unwrap_or_else(|| pi_test_support::golden_073().join("tools-print.session.jsonl"));
    let text = std::fs::read_to_string(&golden).unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
    let path = dir.join("tools-print.session.jsonl");
    std::fs::write(&path, text).expect("write session");
    path
}

#[test]
fn exported_golden_session_shows_its_conversation() {
    let Some(bin) = chromium_bin() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let input = golden_session(dir.path());
    let page = export_file(&input, None, dir.path()).expect("export");
    assert_eq!(
        page.file_name().and_then(|n| n.to_str()),
        Some("pi-session-tools-print.session.html")
    );
    // One screenshot, to look at (kept when PI_EXPORT_SCREENSHOT names a file).
    let shot = std::env::var_os("PI_EXPORT_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.path().join("shot.png"));
    chromium(
        &bin,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,1600".into(),
        ],
        &page,
    );
    if std::env::var_os("PI_EXPORT_SCREENSHOT").is_some() {
        std::fs::copy(&page, shot.with_extension("html")).expect("keep the page");
    }
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let dom = chromium(&bin, &["--dump-dom".into()], &page);
    assert!(
        dom.contains("Inspect hello.txt, create notes/todo.md"),
        "user prompt shown"
    );
    assert!(dom.contains("All done. I read hello.txt"), "answer shown");
    assert!(
        dom.contains("data-js=\"on\""),
        "the page's own script ran under its policy"
    );
}

#[test]
fn injected_markup_stays_inert_and_nothing_is_fetched() {
    let Some(bin) = chromium_bin() else { return };
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let url = format!("http://127.0.0.1:{port}");
    let user = format!(
        "<script>document.title='pwned'</script><img src=\"{url}/u.png\" onerror=\"document.title='pwned2'\"> marker-user"
    );
    let answer = format!(
        "marker-answer ![remote]({url}/md.png) <img src=\"{url}/raw.png\"> <style>body{{background:url({url}/bg.png)}}</style> [x](javascript:document.title='pwned3')"
    );
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"inj","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}),
        serde_json::json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",
            "message":{"role":"user","content":[{"type":"text","text":user}],"timestamp":1}}),
        serde_json::json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z",
            "message":{"role":"assistant","content":[{"type":"thinking","thinking":"<script>document.title='pwned4'</script>"},{"type":"text","text":answer}],
            "api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,
            "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}),
    ];
    let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let html = export_session_html(&jsonl, &ExportOptions::default()).expect("export");
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("inj.html");
    std::fs::write(&page, html).expect("write");

    let dom = chromium(&bin, &["--dump-dom".into()], &page);
    assert!(dom.contains("marker-user") && dom.contains("marker-answer"));
    assert!(!dom.contains("pwned</title>") && !dom.contains("<title>pwned"));
    assert!(dom.contains("<title>pi session inj</title>"), "title untouched");
    assert!(
        dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"),
        "the script tag is shown as text"
    );
    assert!(!dom.contains("javascript:"), "script links are neutralised");
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("the page made a request ({peer})"),
        Err(e) => panic!("accept: {e}"),
    }
}
