//! `/bug` and `/llama` in a pseudo-terminal: the report's questions, the offline upload
//! refusal, the zip archive in the current folder with what was chosen, the upload to a local
//! report service (and its failures), and the session entry recording it.

use std::io::Read;

use pi_test_support::{Script, Turn};

use super::{quit, session_entries, setup, DOWN, ENTER, ESC};

fn archive_file(zip: &mut zip::ZipArchive<std::fs::File>, name: &str) -> String {
    let mut text = String::new();
    zip.by_name(name)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .read_to_string(&mut text)
        .expect("utf-8");
    text
}

#[test]
fn bug_exports_a_zip_report_and_records_it() {
    let s = setup(Script::echo());
    let mut pty = s.pi(40, 100);
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("echo: hello");

    // Offline, uploading is refused with 1.6's words.
    pty.type_text("/bug");
    pty.send(ENTER);
    pty.wait_text("Report a bug");
    pty.wait_text("What went wrong? (optional)");
    pty.type_text("it broke");
    pty.send(ENTER);
    pty.wait_text("Include the session transcript?");
    pty.send(ENTER);
    pty.wait_text("Transcript: included");
    pty.wait_text("→ Upload Report");
    pty.send(ENTER);
    pty.wait_text("Uploading bug reports requires online mode. Use Export as Zip instead.");

    // Esc anywhere cancels.
    pty.type_text("/bug");
    pty.send(ENTER);
    pty.wait_text("What went wrong? (optional)");
    pty.send(ESC);
    pty.wait_text("Bug report cancelled");

    // Without the transcript, exported as a zip.
    // The description takes several lines: Shift+Enter starts the next one.
    pty.type_text("/bug the footer is wrong");
    pty.send(ENTER);
    pty.wait_text("Report a bug");
    pty.wait_text("enter submit  shift+enter/ctrl+j newline");
    pty.send("\x1b[13;2u");
    pty.type_text("after a resize");
    pty.wait_text("after a resize");
    pty.send(ENTER);
    pty.wait_text("Include the session transcript?");
    pty.send(DOWN);
    pty.wait_text("→ No");
    pty.send(ENTER);
    // No summary either.
    pty.wait_text("Attach a summary written by Mock Model instead?");
    pty.send(DOWN);
    pty.wait_text("→ No");
    pty.send(ENTER);
    pty.wait_text("Description: the footer is wrong");
    pty.wait_text("Summary: none");
    pty.wait_text("Transcript: not included");
    pty.send(DOWN);
    pty.wait_text("→ Export as Zip");
    pty.send(ENTER);
    pty.wait_text("Bug report exported to: ");
    pty.wait_text("Report ID: ");

    let archive = std::fs::read_dir(s.cwd.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pi-bug-report-"))
        })
        .expect("archive in the current folder");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&archive).unwrap()).expect("a zip");
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).expect("entry").name().expect("name").to_string())
        .collect();
    assert!(names.contains(&"report.json".to_string()), "{names:?}");
    assert!(names.contains(&"diagnostics.json".to_string()), "{names:?}");
    assert!(!names.contains(&"session.jsonl".to_string()), "{names:?}");
    assert!(!names.contains(&"summary.md".to_string()), "{names:?}");
    let report: serde_json::Value = serde_json::from_str(&archive_file(&mut zip, "report.json")).unwrap();
    assert_eq!(report["schemaVersion"], 1);
    assert_eq!(report["hint"], "the footer is wrong\nafter a resize");
    assert_eq!(report["extensions"], serde_json::json!([]), "no extension is loaded");
    assert_eq!(report["session"]["included"], false);
    assert_eq!(report["model"]["id"], "mock-model");
    // No key leaves the machine.
    let text = report.to_string();
    assert!(!text.contains("sk-mock-openai"), "{text}");
    let id = report["id"].as_str().unwrap().to_string();
    assert!(archive.to_string_lossy().ends_with(&format!("pi-bug-report-{id}.zip")));
    assert!(pty.contents().contains(&id), "{}", pty.contents());
    let diagnostics: serde_json::Value = serde_json::from_str(&archive_file(&mut zip, "diagnostics.json")).unwrap();
    assert_eq!(diagnostics["assistantMessageCount"], 1);

    // The session records the report.
    let entries = session_entries(s.agent.path());
    let entry = entries
        .iter()
        .find(|e| e["customType"] == "pi.bug-report")
        .expect("pi.bug-report entry");
    assert_eq!(entry["data"]["id"], id.as_str());
    assert_eq!(entry["data"]["delivery"], "zip");
    assert_eq!(entry["data"]["sessionIncluded"], false);

    // /llama without a llama.cpp provider says how to configure one.
    pty.type_text("/llama");
    pty.send(ENTER);
    pty.wait_text("Configure llama.cpp with /login llama.cpp");
    quit(&mut pty);
}

/// A report service on a local port: answers each upload with the next of `answers`
/// (status, JSON body) and hands over each request (head, body).
fn report_service(answers: Vec<(u16, &'static str)>) -> (String, std::sync::mpsc::Receiver<(String, Vec<u8>)>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (status, body) in answers {
            let Ok((mut conn, _)) = listener.accept() else { return };
            let mut got = Vec::new();
            let mut buf = [0u8; 8192];
            // The head, then as many body bytes as it announces.
            let (head, length) = loop {
                let Ok(n) = conn.read(&mut buf) else { return };
                if n == 0 {
                    return;
                }
                got.extend_from_slice(&buf[..n]);
                if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&got[..end]).to_string();
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0usize);
                    got.drain(..end + 4);
                    break (head, length);
                }
            };
            while got.len() < length {
                let Ok(n) = conn.read(&mut buf) else { return };
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            let _ = tx.send((head, got));
            let reason = if status == 200 { "OK" } else { "Internal Server Error" };
            let _ = write!(
                conn,
                "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, rx)
}

/// `/bug`, a description, the transcript included, then Upload Report.
fn upload_report(pty: &mut super::pty::Pty, host: &str) {
    pty.type_text("/bug upload me");
    pty.send(ENTER);
    pty.wait_text("What went wrong? (optional)");
    pty.send(ENTER);
    pty.wait_text("Include the session transcript?");
    pty.send(ENTER);
    pty.wait_text(&format!("Upload sends the report to {host}."));
    pty.wait_text("→ Upload Report");
    pty.send(ENTER);
}

#[test]
fn bug_uploads_to_the_report_service_and_offers_the_zip_when_that_fails() {
    let s = setup(Script::echo());
    let (url, requests) = report_service(vec![
        (200, r#"{"ok":true,"bug_report":{"id":"br_123"}}"#),
        (500, r#"{"ok":false,"error":"storage unavailable"}"#),
    ]);
    let host = url.trim_start_matches("http://").to_string();
    let env = [("PI_OFFLINE", ""), ("PI_RADIUS_GATEWAY", url.as_str())];
    let mut pty = super::pty::Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 40, 100, &env);
    pty.wait_text("mock-model");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("echo: hello");

    upload_report(&mut pty, &host);
    pty.wait_text("Bug report uploaded. Report ID: br_123");
    let (head, body) = requests
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("an upload");
    assert!(head.starts_with("POST /v1/bug-reports "), "{head}");
    let head_lower = head.to_ascii_lowercase();
    assert!(
        head_lower.contains("content-type: multipart/form-data; boundary="),
        "{head}"
    );
    let body = String::from_utf8_lossy(&body);
    for part in ["report.json", "diagnostics.json", "session.jsonl"] {
        assert!(
            body.contains(&format!("name=\"{part}\"; filename=\"{part}\"")),
            "{part} in\n{body}"
        );
    }
    assert!(body.contains("\"hint\": \"upload me\""), "{body}");
    assert!(!body.contains("sk-mock-openai"), "no key leaves the machine");
    let entries = session_entries(s.agent.path());
    let entry = entries
        .iter()
        .find(|e| e["customType"] == "pi.bug-report")
        .expect("pi.bug-report entry");
    assert_eq!(entry["data"]["delivery"], "upload");
    assert_eq!(entry["data"]["sessionIncluded"], true);

    // The service refuses: its reason, and the archive offered instead.
    upload_report(&mut pty, &host);
    pty.wait_text("Upload failed");
    pty.wait_text("Bug report upload failed: storage unavailable");
    pty.wait_text("Export the report as a zip archive instead?");
    pty.send(ENTER);
    pty.wait_text("Bug report exported to: ");

    // Nothing listens any more: the connection failure is named.
    upload_report(&mut pty, &host);
    pty.wait_text("Bug report upload failed: ");
    pty.send(ESC);
    pty.wait_text("Bug report cancelled");
    quit(&mut pty);
}

/// Without the transcript, the session's model may write a summary instead: the request holds
/// the conversation and the description, and the archive holds the answer as summary.md (and
/// no transcript).
#[test]
fn bug_attaches_a_summary_written_by_the_model() {
    let s = setup(Script::queue(vec![
        Turn::text("The answer to the first question."),
        Turn::text("## What the user was doing\nAsking a question.\n\n## What went wrong\nThe footer."),
    ]));
    let mut pty = s.pi(40, 100);
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("The answer to the first question.");
    pty.type_text("/bug the footer is wrong");
    pty.send(ENTER);
    pty.wait_text("What went wrong? (optional)");
    pty.send(ENTER);
    pty.wait_text("Include the session transcript?");
    pty.send(DOWN);
    pty.wait_text("→ No");
    pty.send(ENTER);
    pty.wait_text("Attach a summary written by Mock Model instead?");
    pty.wait_text("→ Yes, generate a summary");
    pty.wait_text("mock-openai");
    pty.send(ENTER);
    pty.wait_text("Summary: written by Mock Model");
    pty.send(DOWN);
    pty.wait_text("→ Export as Zip");
    pty.send(ENTER);
    pty.wait_text("Bug report exported to: ");

    let requests = s.server.requests();
    assert_eq!(requests.len(), 2, "the prompt and the summary");
    let body = requests[1].body.to_string();
    assert!(body.contains("<conversation>"), "{body}");
    assert!(body.contains("first question"), "{body}");
    assert!(body.contains("The answer to the first question."), "{body}");
    assert!(
        body.contains("<user-report>\\nthe footer is wrong\\n</user-report>"),
        "{body}"
    );
    assert!(body.contains("## Steps to reproduce"), "{body}");
    // The output is capped at 4096 tokens (the model allows 16384).
    assert!(body.contains(":4096"), "{body}");
    assert!(
        requests[1].body["tools"].as_array().is_none_or(|t| t.is_empty()),
        "{body}"
    );

    let archive = std::fs::read_dir(s.cwd.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pi-bug-report-"))
        })
        .expect("archive in the current folder");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&archive).unwrap()).expect("a zip");
    assert!(zip.by_name("session.jsonl").is_err(), "no transcript");
    assert_eq!(
        archive_file(&mut zip, "summary.md"),
        "## What the user was doing\nAsking a question.\n\n## What went wrong\nThe footer.\n"
    );
    let report: serde_json::Value = serde_json::from_str(&archive_file(&mut zip, "report.json")).unwrap();
    assert_eq!(report["session"]["summaryIncluded"], true);
    let entries = session_entries(s.agent.path());
    let entry = entries
        .iter()
        .find(|e| e["customType"] == "pi.bug-report")
        .expect("pi.bug-report entry");
    assert_eq!(entry["data"]["summaryIncluded"], true);
    quit(&mut pty);
}

/// The rows of the bordered loader around the row holding `message`, when it is drawn:
/// rule, blank, spinner and message, blank, cancel keys, blank, rule.
pub(super) fn bordered_loader(rows: &[String], message: &str) -> bool {
    let Some(i) = rows.iter().position(|r| r.contains(message)) else {
        return false;
    };
    let rule = |r: &String| r.chars().count() >= 40 && r.chars().all(|c| c == '─');
    let blank = |r: &String| r.trim().is_empty();
    let spinner = rows[i]
        .trim_start()
        .chars()
        .next()
        .is_some_and(|c| ('⠀'..='⣿').contains(&c));
    i >= 2
        && rule(&rows[i - 2])
        && blank(&rows[i - 1])
        && spinner
        && rows[i].trim_end().ends_with(message)
        && rows.get(i + 1).is_some_and(blank)
        && rows.get(i + 2).is_some_and(|r| r.trim() == "escape/ctrl+c cancel")
        && rows.get(i + 3).is_some_and(blank)
        && rows.get(i + 4).is_some_and(rule)
}

/// While the model writes the summary, a bordered loader stands in the editor's place, as in
/// 1.6: other keys do nothing, Esc cancels and the editor comes back.
#[test]
fn bug_summary_is_written_under_a_bordered_loader() {
    let s = setup(Script::queue(vec![
        Turn::text("The answer to the first question."),
        Turn::big(100).with_delay_ms(200),
    ]));
    let mut pty = s.pi(40, 100);
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("The answer to the first question.");
    pty.type_text("/bug");
    pty.send(ENTER);
    pty.wait_text("What went wrong? (optional)");
    pty.send(ENTER);
    pty.wait_text("Include the session transcript?");
    pty.send(DOWN);
    pty.wait_text("→ No");
    pty.send(ENTER);
    pty.wait_text("→ Yes, generate a summary");
    pty.send(ENTER);
    pty.wait_text("Summary: written by Mock Model");
    pty.send(DOWN);
    pty.wait_text("→ Export as Zip");
    pty.send(ENTER);
    let message = "Writing summary with Mock Model...";
    pty.wait_for("the bordered loader", std::time::Duration::from_secs(20), |_| {
        bordered_loader(&pty.rows(), message)
    });
    // Keys other than cancel reach nothing.
    pty.type_text("typed meanwhile");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!pty.contents().contains("typed meanwhile"), "{}", pty.contents());
    assert!(bordered_loader(&pty.rows(), message), "{}", pty.contents());
    pty.send(ESC);
    pty.wait_text("Bug report cancelled");
    pty.wait_for("the editor back", std::time::Duration::from_secs(10), |c| {
        !c.contains(message)
    });
    assert!(!pty.contents().contains("typed meanwhile"), "{}", pty.contents());
    assert!(
        std::fs::read_dir(s.cwd.path())
            .unwrap()
            .filter_map(Result::ok)
            .all(|e| !e.file_name().to_string_lossy().starts_with("pi-bug-report-")),
        "no archive after a cancel"
    );
    quit(&mut pty);
}

/// The zip archive `/bug` wrote into `cwd`.
fn the_archive(cwd: &std::path::Path) -> zip::ZipArchive<std::fs::File> {
    let archive = std::fs::read_dir(cwd)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pi-bug-report-"))
        })
        .expect("archive in the current folder");
    zip::ZipArchive::new(std::fs::File::open(&archive).unwrap()).expect("a zip")
}

/// As 1.6: a panic in the terminal UI restores the terminal, is recorded in the agent
/// folder's crashes.json and stderr says how to report it with /bug; the next start warns
/// about it once, and the next report carries it (and then forgets it).
#[test]
fn a_crash_is_recorded_announced_once_and_attached_to_the_next_report() {
    let s = setup(Script::echo());
    let env = [("PI_TEST_PANIC_ON", "crash now")];
    let mut pty = super::pty::Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 40, 100, &env);
    pty.wait_text("mock-model");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("echo: hello");
    pty.type_text("crash now");
    pty.send(ENTER);
    assert_eq!(pty.wait_exit(std::time::Duration::from_secs(20)), Some(1));
    pty.wait_text("To report this crash, resume the session with `pi -r` and run /bug");
    // The alternate screen was left and the keyboard protocols turned off.
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    let panicked = raw.find("panicked at").expect("the panic message");
    assert!(raw[..panicked].contains("\x1b[?1049l"), "alternate screen left first");
    let crashes_path = s.agent.path().join("crashes.json");
    let crashes: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&crashes_path).unwrap()).unwrap();
    let crashes = crashes.as_array().expect("a list");
    assert_eq!(crashes.len(), 1, "{crashes:?}");
    let crash = &crashes[0];
    assert_eq!(crash["kind"], "uncaught_exception");
    assert!(
        crash["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("test panic on \"crash now\"")),
        "{crash}"
    );
    assert!(
        crash["sessionFile"]
            .as_str()
            .is_some_and(|f| std::path::Path::new(f).exists()),
        "{crash}"
    );
    assert!(crash["stack"].is_string(), "{crash}");

    // The next start warns, once.
    let mut pty = s.pi(40, 100);
    // The warning wraps: read it with its lines joined.
    let joined = |c: &str| c.split_whitespace().collect::<Vec<_>>().join(" ");
    pty.wait_for("the crash warning", std::time::Duration::from_secs(10), |c| {
        let c = joined(c);
        c.contains("pi crashed on ")
            && c.contains("(test panic on \"crash now\"")
            && c.contains("/bug sends a report with the crash details included.")
    });
    quit(&mut pty);
    let mut pty = s.pi(40, 100);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!pty.contents().contains("pi crashed on"), "{}", pty.contents());

    // The report carries it; then the log is empty.
    pty.type_text("/bug");
    pty.send(ENTER);
    pty.wait_text("What went wrong? (optional)");
    pty.send(ENTER);
    pty.wait_text("Include the session transcript?");
    pty.send(DOWN);
    pty.wait_text("→ No");
    pty.send(ENTER);
    pty.wait_text("Attach a summary written by Mock Model instead?");
    pty.send(DOWN);
    pty.wait_text("→ No");
    pty.send(ENTER);
    pty.wait_text("Transcript: not included");
    pty.send(DOWN);
    pty.wait_text("→ Export as Zip");
    pty.send(ENTER);
    pty.wait_text("Bug report exported to: ");
    let mut zip = the_archive(s.cwd.path());
    let diagnostics: serde_json::Value = serde_json::from_str(&archive_file(&mut zip, "diagnostics.json")).unwrap();
    let reported = diagnostics["crashes"].as_array().expect("crashes");
    assert_eq!(reported.len(), 1, "{diagnostics}");
    assert_eq!(reported[0]["message"], crash["message"]);
    assert!(reported[0].get("notified").is_none(), "{diagnostics}");
    assert!(!crashes_path.exists(), "the reported crash is forgotten");
    quit(&mut pty);
}

/// The upload also runs under the bordered loader, and Esc cancels it: nothing is recorded.
#[test]
fn a_bug_upload_waits_under_the_bordered_loader_and_can_be_cancelled() {
    let s = setup(Script::echo());
    // A report service that takes the request and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let host = url.trim_start_matches("http://").to_string();
    let env = [("PI_OFFLINE", ""), ("PI_RADIUS_GATEWAY", url.as_str())];
    let mut pty = super::pty::Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 40, 100, &env);
    pty.wait_text("mock-model");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("echo: hello");
    upload_report(&mut pty, &host);
    let message = "Uploading bug report...";
    pty.wait_for("the bordered loader", std::time::Duration::from_secs(20), |_| {
        bordered_loader(&pty.rows(), message)
    });
    pty.send(ESC);
    pty.wait_text("Bug report cancelled");
    pty.wait_for("the editor back", std::time::Duration::from_secs(10), |c| {
        !c.contains(message)
    });
    assert!(
        session_entries(s.agent.path())
            .iter()
            .all(|e| e["customType"] != "pi.bug-report"),
        "a cancelled upload is not recorded"
    );
    quit(&mut pty);
}

/// `/llama` belongs to the built-in `llama.cpp` extension: with `-builtin:llama.cpp` in the
/// settings the slash menu does not offer it and the text goes to the model as any other.
#[test]
fn llama_follows_the_settings_builtin_entries() {
    let s = setup(Script::echo());
    s.agent
        .write("settings.json", r#"{"extensions": ["-builtin:llama.cpp"]}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.type_text("/mc");
    pty.wait_text("Manage MCP servers");
    pty.send("\x15");
    pty.type_text("/lla");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!pty.contents().contains("llama.cpp router"), "{}", pty.contents());
    pty.type_text("ma");
    pty.send(ENTER);
    pty.wait_text("echo: /llama");
    quit(&mut pty);
}
