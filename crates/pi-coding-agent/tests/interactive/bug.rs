//! `/bug` and `/llama` in a pseudo-terminal: the report's questions, the offline upload
//! refusal, the zip archive in the current folder with what was chosen, and the session entry
//! recording it.

use std::io::Read;

use pi_test_support::Script;

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
    pty.wait_text("Description: the footer is wrong");
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
