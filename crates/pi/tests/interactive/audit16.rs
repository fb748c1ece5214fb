//! Details of pi 1.6's screens found by running it side by side with ours at 100x30: status
//! lines that replace each other, command texts and the dock.

use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::{quit, setup, DOWN, ENTER, ESC};

const CTRL_U: &str = "\x15";

#[test]
fn an_export_status_replaces_the_model_status_before_it() {
    let s = setup(Script::sequential(vec![Turn::text("first answer")]));
    let mut pty = s.pi(30, 100);
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    pty.type_text("/model");
    pty.send(ENTER);
    pty.wait_text("Enter to select");
    pty.send(ENTER);
    pty.wait_text("Model: mock-model");
    pty.type_text("/export out.html");
    pty.send(ENTER);
    pty.wait_text("Session exported to: out.html");
    pty.wait_stable(Duration::from_millis(300));
    let screen = pty.contents();
    // pi keeps one status line for back-to-back statuses: the export took the model's place.
    assert!(!screen.contains("Model: mock-model"), "{screen}");
    assert_eq!(screen.matches("Session exported to:").count(), 1, "{screen}");
    assert!(s.cwd.path().join("out.html").exists());
    quit(&mut pty);
}

#[test]
fn login_offers_radius_in_its_first_menu() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.wait_text("Sign in with Radius • not configured");
    let rows = pty.rows();
    let at = |text: &str| {
        rows.iter()
            .position(|r| r.contains(text))
            .unwrap_or_else(|| panic!("{text}: {rows:#?}"))
    };
    // The last of the three rows.
    assert_eq!(
        at("Sign in with an API key") + 1,
        at("Sign in with Radius"),
        "{rows:#?}"
    );
    // Choosing it starts Radius's own sign-in, which introduces the service.
    pty.send(DOWN);
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Sign in to Radius:");
    pty.wait_text("Earendil Works");
    pty.wait_text("Sign in with browser (recommended)");
    // Cancelling goes back to the first menu.
    pty.send(ESC);
    pty.wait_text("Select authentication method:");
    pty.send(ESC);
    pty.wait_for("the menu closed", Duration::from_secs(10), |c| {
        !c.contains("Select authentication method:")
    });
    quit(&mut pty);
}

#[test]
fn resume_indents_forks_by_their_depth() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("first question");
    pty.send(ENTER);
    pty.wait_text("echo: first question");
    // A fork of the first session, then a clone of the fork: two levels under it.
    pty.type_text("/fork");
    pty.send(ENTER);
    pty.wait_text("Fork from Message");
    pty.send(ENTER);
    pty.wait_text("Forked to new session");
    pty.send(CTRL_U);
    pty.type_text("second question");
    pty.send(ENTER);
    pty.wait_text("echo: second question");
    pty.type_text("/clone");
    pty.send(ENTER);
    pty.wait_text("Cloned to new session");
    pty.type_text("/resume");
    pty.send(ENTER);
    pty.wait_text("Resume Session (Current Folder)");
    pty.wait_for("the threaded list", Duration::from_secs(10), |c| {
        c.matches('└').count() >= 2
    });
    let rows = pty.rows();
    let column = |r: &String| r.chars().position(|c| c == '└');
    let branches: Vec<(usize, String)> = rows.iter().filter_map(|r| column(r).map(|c| (c, r.clone()))).collect();
    // pi 1.6 gives the roots' level a column of its own: a fork sits three cells in, its
    // clone six, after the two-cell cursor column.
    assert_eq!(branches.len(), 2, "{rows:#?}");
    assert_eq!(branches[0].0, 5, "{rows:#?}");
    assert!(branches[0].1.contains("second question"), "{rows:#?}");
    assert_eq!(branches[1].0, 8, "{rows:#?}");
    pty.send(ESC);
    pty.wait_for("the picker closed", Duration::from_secs(10), |c| {
        !c.contains("Resume Session")
    });
    quit(&mut pty);
}

#[test]
fn reload_names_the_context_files_it_read_again() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/reload");
    pty.send(ENTER);
    pty.wait_text("Reloaded keybindings, extensions, skills, prompts, themes, and context files");
    // While it ran, its notice stood in the editor's place.
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(
        raw.contains("Reloading keybindings, extensions, skills, prompts, themes, and context files..."),
        "the reload notice was drawn"
    );
    // And the editor is back.
    pty.type_text("typed after");
    pty.wait_text("typed after");
    pty.send(CTRL_U);
    pty.wait_for("the editor emptied", Duration::from_secs(10), |c| {
        !c.contains("typed after")
    });
    quit(&mut pty);
}

#[test]
fn the_mcp_panel_is_framed_in_the_accent_colour() {
    let s = setup(Script::sequential(vec![]));
    s.agent
        .write("settings.json", r#"{"theme": "dark"}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    pty.type_text("/mcp");
    pty.send(ENTER);
    pty.wait_text("No MCP servers configured.");
    let rows = pty.rows();
    let title = rows
        .iter()
        .position(|r| r.starts_with(" MCP servers"))
        .unwrap_or_else(|| panic!("{rows:#?}")) as u16;
    let accent = pty.fg_at(title, 1).expect("title cell");
    assert_ne!(accent, vt100::Color::Default);
    // The rules above the title and below the key help take the title's colour.
    assert!(rows[title as usize - 1].starts_with('─'), "{rows:#?}");
    assert_eq!(pty.fg_at(title - 1, 0), Some(accent), "{rows:#?}");
    let bottom = rows
        .iter()
        .position(|r| r.contains("close"))
        .unwrap_or_else(|| panic!("{rows:#?}"))
        + 1;
    assert!(rows[bottom].starts_with('─'), "{rows:#?}");
    assert_eq!(pty.fg_at(bottom as u16, 0), Some(accent), "{rows:#?}");
    pty.send(ESC);
    pty.wait_for("the panel closed", Duration::from_secs(10), |c| {
        !c.contains("No MCP servers configured.")
    });
    quit(&mut pty);
}

#[test]
fn the_startup_trust_question_is_framed_as_pi_1_6_draws_it() {
    let s = setup(Script::sequential(vec![]));
    std::fs::create_dir_all(s.cwd.path().join(".pi")).unwrap();
    std::fs::write(s.cwd.path().join(".pi/settings.json"), "{}").unwrap();
    let mut pty = super::pty::Pty::spawn(&[], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("escape/ctrl+c cancel");
    let rows = pty.rows();
    let at = |text: &str| {
        rows.iter()
            .position(|r| r.contains(text))
            .unwrap_or_else(|| panic!("{text}: {rows:#?}"))
    };
    // A rule, a blank row, then the question and the folder.
    let title = at("Trust project folder?");
    assert!(rows[title - 2].starts_with("────"), "{rows:#?}");
    assert_eq!(rows[title - 1].trim(), "", "{rows:#?}");
    assert!(rows[title + 1].trim_start().starts_with('/'), "{rows:#?}");
    // The choices are indented one column, under the text.
    assert!(rows[at("→ Trust")].starts_with(" → Trust"), "{rows:#?}");
    assert!(
        rows[at("Do not trust (this session only)")].starts_with("   Do not trust"),
        "{rows:#?}"
    );
    // The keys, then a blank row and the closing rule.
    let keys = at("↑↓ navigate  enter select  escape/ctrl+c cancel");
    assert_eq!(rows[keys + 1].trim(), "", "{rows:#?}");
    assert!(rows[keys + 2].starts_with("────"), "{rows:#?}");
    pty.send(ENTER);
    pty.wait_text("mock-model");
    quit(&mut pty);
}

#[test]
fn the_tree_label_and_session_delete_hints_name_every_cancel_key() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("first session");
    pty.send(ENTER);
    pty.wait_text("echo: first session");
    pty.type_text("/tree");
    pty.send(ENTER);
    pty.wait_text("Type to search:");
    pty.send("L");
    pty.wait_text("Label (empty to remove):");
    pty.wait_text("enter save  escape/ctrl+c cancel");
    // Ctrl+C leaves the label alone and goes back to the tree.
    pty.send(super::CTRL_C);
    pty.wait_for("the label field closed", Duration::from_secs(10), |c| {
        !c.contains("Label (empty to remove):") && c.contains("Type to search:")
    });
    pty.send(ESC);
    pty.wait_for("the tree closed", Duration::from_secs(10), |c| {
        !c.contains("Session Tree")
    });
    pty.type_text("/new");
    pty.send(ENTER);
    pty.wait_text("New session started");
    pty.type_text("second session");
    pty.send(ENTER);
    pty.wait_text("echo: second session");
    pty.type_text("/resume");
    pty.send(ENTER);
    pty.wait_text("Resume Session (Current Folder)");
    pty.wait_text("first session");
    pty.send(DOWN);
    pty.send("\x04");
    pty.wait_text("Delete session? enter confirm · escape/ctrl+c cancel");
    pty.send(super::CTRL_C);
    pty.wait_for("the question closed", Duration::from_secs(10), |c| {
        !c.contains("Delete session?") && c.contains("Resume Session")
    });
    pty.send(ESC);
    pty.wait_for("the picker closed", Duration::from_secs(10), |c| {
        !c.contains("Resume Session")
    });
    quit(&mut pty);
}

#[test]
fn github_copilot_takes_a_token_from_the_api_key_list() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("copilot");
    pty.wait_text("→ GitHub Copilot • not configured");
    pty.send(ENTER);
    pty.wait_text("Login to GitHub Copilot");
    pty.wait_text("Enter GitHub Copilot token");
    pty.send(ESC);
    pty.wait_text("Select provider to configure:");
    pty.send(ESC);
    pty.wait_text("Select authentication method:");
    pty.send(ESC);
    pty.wait_for("the menu closed", Duration::from_secs(10), |c| {
        !c.contains("Select authentication method:")
    });
    quit(&mut pty);
}

#[test]
fn in_regular_mode_a_picker_takes_the_editor_s_place_above_the_footer() {
    let s = setup(Script::sequential(vec![Turn::text("first answer")]));
    let mut pty = super::pty::Pty::spawn(&["--tui-mode", "regular"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("mock-model");
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("first answer");
    pty.type_text("/model");
    pty.send(ENTER);
    pty.wait_text("Enter to select");
    pty.wait_stable(Duration::from_millis(300));
    let rows = pty.rows();
    let at = |text: &str| {
        rows.iter()
            .rposition(|r| r.contains(text))
            .unwrap_or_else(|| panic!("{text}: {rows:#?}"))
    };
    // The chat stays above the picker, and the footer (cwd, then the model line) below it.
    let keys = at("Enter to select");
    assert!(at("first answer") < at("Only showing models"), "{rows:#?}");
    assert!(rows[keys + 1].starts_with("────"), "{rows:#?}");
    assert!(rows[keys + 3].contains("(mock-openai) mock-model"), "{rows:#?}");
    pty.send(ESC);
    pty.wait_for("the picker closed", Duration::from_secs(10), |c| {
        !c.contains("Enter to select")
    });
    quit(&mut pty);
}

#[test]
fn after_compact_the_transcript_shows_the_kept_messages_then_the_summary() {
    let s = setup(Script::echo());
    s.agent
        .write("settings.json", r#"{"compaction": {"keepRecentTokens": 20}}"#)
        .expect("settings");
    let mut pty = s.pi(30, 100);
    for q in ["first question here", "second question here", "third question here"] {
        pty.type_text(q);
        pty.send(ENTER);
        pty.wait_text(&format!("echo: {q}"));
    }
    pty.type_text("/compact");
    pty.send(ENTER);
    pty.wait_text("Compacted from");
    pty.wait_stable(Duration::from_millis(300));
    let rows = pty.rows();
    let at = |text: &str| rows.iter().position(|r| r.contains(text));
    // The messages before the cut are gone from the transcript (so the header fits again),
    // the kept ones stay, and the summary comes after them.
    assert!(at("first question here").is_none(), "{rows:#?}");
    assert!(at("Press ctrl+o to show full startup help").is_some(), "{rows:#?}");
    let kept = at("echo: third question here").unwrap_or_else(|| panic!("{rows:#?}"));
    let summary = at("Compacted from").expect("summary");
    assert!(kept < summary, "{rows:#?}");
    assert_eq!(
        rows.iter().filter(|r| r.contains("[compaction]")).count(),
        1,
        "{rows:#?}"
    );
    quit(&mut pty);
}

#[test]
fn import_asks_in_pi_s_selector_layout() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/import other.jsonl");
    pty.send(ENTER);
    pty.wait_text("Replace current session with other.jsonl?");
    let rows = pty.rows();
    let at = |text: &str| {
        rows.iter()
            .position(|r| r.contains(text))
            .unwrap_or_else(|| panic!("{text}: {rows:#?}"))
    };
    let title = at("Import session");
    assert!(rows[title - 2].starts_with("────"), "{rows:#?}");
    assert_eq!(rows[title - 1].trim(), "", "{rows:#?}");
    assert!(rows[at("→ Yes")].starts_with(" → Yes"), "{rows:#?}");
    let keys = at("↑↓ navigate  enter select  escape/ctrl+c cancel");
    assert_eq!(rows[keys + 1].trim(), "", "{rows:#?}");
    assert!(rows[keys + 2].starts_with("────"), "{rows:#?}");
    pty.send(ESC);
    pty.wait_text("Import cancelled");
    quit(&mut pty);
}

#[test]
fn the_bug_description_can_be_written_in_the_external_editor() {
    let s = setup(Script::sequential(vec![]));
    // Writes a description into an empty file; refuses (exit 3) when there is one already.
    let editor = s.cwd.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nif [ -s \"$1\" ]; then exit 3; fi\nprintf 'typed in the editor' > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let editor = editor.display().to_string();
    let mut pty = super::pty::Pty::spawn_env(
        &[],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("VISUAL", editor.as_str()), ("EDITOR", editor.as_str())],
    );
    pty.wait_text("mock-model");
    pty.type_text("/bug");
    pty.send(ENTER);
    pty.wait_text("What went wrong? (optional)");
    pty.wait_text("escape/ctrl+c cancel  ctrl+g external editor");
    pty.send("\x07");
    pty.wait_text("typed in the editor");
    // The second time the editor fails: the dialog says so and keeps the text.
    pty.send("\x07");
    pty.wait_text("External editor exited with code 3");
    assert!(pty.contents().contains("typed in the editor"), "{}", pty.contents());
    pty.send(ESC);
    pty.wait_text("Bug report cancelled");
    quit(&mut pty);
}

#[test]
fn resume_renames_the_session_in_use() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("first one");
    pty.send(ENTER);
    pty.wait_text("echo: first one");
    pty.type_text("/resume");
    pty.send(ENTER);
    pty.wait_text("Resume Session (Current Folder)");
    pty.wait_text("› first one");
    pty.send("\x12");
    pty.wait_text("Rename Session");
    pty.type_text("named one");
    pty.send(ENTER);
    pty.wait_text("› named one");
    assert!(!pty.contents().contains("Failed to rename"), "{}", pty.contents());
    pty.send(ESC);
    pty.wait_for("the picker closed", Duration::from_secs(10), |c| {
        !c.contains("Resume Session")
    });
    // The footer names the session, and the file says so.
    pty.wait_text("• named one");
    quit(&mut pty);
    let sessions = s.agent.path().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains("\"named one\""), "{text}");
}

/// A saved session whose folder is deleted afterwards.
fn session_in_a_gone_folder(s: &super::Setup) -> std::path::PathBuf {
    let gone = s.cwd.path().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "in the gone dir"])
        .current_dir(&gone)
        .env("PI_CODING_AGENT_DIR", s.agent.path())
        .env("HOME", s.agent.path())
        .env("PI_OFFLINE", "1")
        .output()
        .expect("pi -p");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&gone).unwrap();
    gone
}

#[test]
fn resuming_a_session_whose_folder_is_gone_asks_to_continue_here_or_fork() {
    let s = setup(Script::echo());
    let gone = session_in_a_gone_folder(&s);
    let mut pty = s.pi(30, 100);
    let open = |pty: &mut super::pty::Pty| {
        pty.type_text("/resume");
        pty.send(ENTER);
        pty.wait_text("Resume Session (Current Folder)");
        pty.send("\t");
        pty.wait_text("in the gone dir");
        pty.send(ENTER);
        pty.wait_text(&format!("Session cwd does not exist: {}", gone.display()));
    };
    open(&mut pty);
    let here = s.cwd.path().display().to_string();
    pty.wait_text(&format!("Continue in {here} (asks again next time)"));
    pty.wait_text(&format!("Fork into {here} (new session ID, original kept)"));
    pty.send(ESC);
    pty.wait_text("Resume cancelled");
    open(&mut pty);
    pty.send(ENTER);
    pty.wait_text(&format!("Resumed session in {here}"));
    pty.wait_text("echo: in the gone dir");
    open(&mut pty);
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Forked into new session");
    pty.wait_text("echo: in the gone dir");
    quit(&mut pty);
}

#[test]
fn the_logout_status_replaces_the_saved_key_status() {
    let s = setup(Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    pty.type_text("/login");
    pty.send(ENTER);
    pty.wait_text("Select authentication method:");
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("Select provider to configure:");
    pty.type_text("anthropic");
    pty.wait_text("→ Anthropic • not configured");
    pty.send(ENTER);
    pty.wait_text("Enter Anthropic API key");
    pty.type_text("sk-ant-test");
    pty.send(ENTER);
    pty.wait_text("Saved API key for Anthropic. Credentials saved to");
    pty.type_text("/logout");
    pty.send(ENTER);
    pty.wait_text("→ Anthropic ✓ configured");
    pty.send(ENTER);
    pty.wait_text("Removed stored API key for Anthropic.");
    pty.wait_stable(Duration::from_millis(300));
    // One status line: the logout's took the place of the login's.
    assert!(
        !pty.contents().contains("Saved API key for Anthropic"),
        "{}",
        pty.contents()
    );
    quit(&mut pty);
}

#[test]
fn importing_a_session_whose_folder_is_gone_asks_too() {
    let s = setup(Script::echo());
    session_in_a_gone_folder(&s);
    // A copy of that session file, to import.
    let sessions = s.agent.path().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    std::fs::copy(&file, s.cwd.path().join("old.jsonl")).unwrap();
    let mut pty = s.pi(30, 100);
    pty.type_text("/import old.jsonl");
    pty.send(ENTER);
    pty.wait_text("Replace current session with old.jsonl?");
    pty.send(ENTER);
    pty.wait_text("Session cwd does not exist:");
    pty.send(ENTER);
    pty.wait_text("Session imported from: old.jsonl");
    pty.wait_text("echo: in the gone dir");
    quit(&mut pty);
}

/// `--session` with a session whose folder is gone asks before the UI starts, as pi 1.6
/// does: Escape starts nothing, Continue runs it here (its header still names the old
/// folder, so the question comes again), Fork copies it here and keeps the original.
#[test]
fn a_session_flag_whose_folder_is_gone_asks_before_the_ui_starts() {
    let s = setup(Script::echo());
    let gone = session_in_a_gone_folder(&s);
    let sessions = s.agent.path().join("sessions");
    let session_files = || -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(&sessions)
            .unwrap()
            .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        v.sort();
        v
    };
    let file = session_files().pop().expect("the session file");
    let original = std::fs::read_to_string(&file).unwrap();
    let here = s.cwd.path().display().to_string();
    let arg = file.display().to_string();
    let ask = || {
        let pty = super::pty::Pty::spawn(&["--session", &arg], s.cwd.path(), s.agent.path(), 30, 100);
        pty.wait_text(&format!("Session cwd does not exist: {}", gone.display()));
        pty.wait_text(&format!("→ Continue in {here} (asks again next time)"));
        pty.wait_text(&format!("Fork into {here} (new session ID, original kept)"));
        pty
    };

    let mut pty = ask();
    pty.send(ESC);
    assert_eq!(pty.wait_exit(Duration::from_secs(10)), Some(0));

    let mut pty = ask();
    pty.send(ENTER);
    pty.wait_text("echo: in the gone dir");
    pty.type_text("again");
    pty.send(ENTER);
    pty.wait_text("echo: again");
    quit(&mut pty);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(original.lines().next().unwrap()),
        "the header is kept: {text}"
    );
    assert!(text.contains("again"), "{text}");

    let mut pty = ask();
    pty.send(DOWN);
    pty.send(ENTER);
    pty.wait_text("echo: in the gone dir");
    quit(&mut pty);
    let files = session_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let fork = files.iter().find(|f| **f != file).expect("the fork");
    let header: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(fork).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["cwd"], here.as_str());
    assert!(file.exists(), "the original is kept");
}
