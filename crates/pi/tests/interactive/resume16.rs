//! `/resume` as pi 1.6 draws it: the title with scope, name filter and sort, the two hint
//! rows, the search line and the sessions with message counts and ages (compared with 1.6's
//! screen at 100x30); Tab widens the scope, typing searches, Enter resumes.

use pi_test_support::Script;

use super::{quit, setup, ENTER};

#[test]
fn resume_picker_matches_pi_16() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("hello there, what is 2+2?");
    pty.send(ENTER);
    pty.wait_text("echo: hello there, what is 2+2?");
    pty.type_text("/new");
    pty.send(ENTER);
    pty.wait_text("New session started");
    pty.type_text("a fresh session about parsing");
    pty.send(ENTER);
    pty.wait_text("echo: a fresh session about parsing");
    pty.type_text("/resume");
    pty.send(ENTER);
    pty.wait_text("Resume Session (Current Folder)");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let at = rows
        .iter()
        .position(|r| r.starts_with("Resume Session"))
        .expect("title");
    assert_eq!(
        rows[at],
        "Resume Session (Current Folder)                  ◉ Current Folder | ○ All  Name: All  Sort: Threaded"
    );
    assert_eq!(rows[at + 1], "tab scope · re:<pattern> regex · \"phrase\" exact");
    assert_eq!(
        rows[at + 2],
        "ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off) · ctrl+r rename"
    );
    assert_eq!(rows[at + 3], "");
    assert_eq!(rows[at + 4], ">");
    assert_eq!(rows[at + 5], "");
    // The current session first (the newest), then the older one; counts include the
    // system message.
    assert!(
        rows[at + 6].starts_with("› a fresh session about parsing"),
        "{}",
        pty.contents()
    );
    assert!(rows[at + 6].ends_with(" 3 now"), "{}", pty.contents());
    assert!(
        rows[at + 7].starts_with("  hello there, what is 2+2?"),
        "{}",
        pty.contents()
    );
    assert!(rows[at + 7].ends_with(" 3 now"), "{}", pty.contents());
    assert!(
        rows[at - 2].starts_with('─') && rows[at + 9].starts_with('─'),
        "{}",
        pty.contents()
    );
    // The current session cannot be deleted.
    pty.send("\x04");
    pty.wait_text("Cannot delete the currently active session");
    // Tab: every project, with the folder; typing finds the first session; Enter resumes it.
    pty.send("\t");
    pty.wait_text("Resume Session (All)");
    pty.type_text("2+2");
    pty.wait_for("one match", std::time::Duration::from_secs(5), |_| {
        let rows = pty.rows();
        let Some(at) = rows.iter().position(|r| r.trim_end() == "> 2+2") else {
            return false;
        };
        rows[at + 2].starts_with("› hello there, what is 2+2?") && rows[at + 3].trim().is_empty()
    });
    pty.send(ENTER);
    pty.wait_text("Resumed session");
    assert!(!pty.contents().contains("echo: a fresh session"), "{}", pty.contents());
    quit(&mut pty);
}
