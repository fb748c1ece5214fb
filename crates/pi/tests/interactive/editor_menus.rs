//! The editor's menus beside the extensions' own: `@` file references listed from the
//! project's files (ignore files honoured, ranked as pi ranks them), quoted paths, and a
//! directory that keeps completing; the slash menu's argument hints, prompt templates, skill
//! commands and `/model` completions; and the `[Extensions]` listing under the startup header.

use std::time::Duration;

use pi_test_support::Script;

use super::extensions::{extension_env, spawn_with};
use super::pty::Pty;
use super::{quit, setup};

const TAB: &str = "\t";
const CTRL_U: &str = "\x15";

/// The screen row that starts with `prefix` (the editor's text row), trimmed.
fn row_starting(pty: &Pty, prefix: &str) -> Option<String> {
    pty.rows()
        .into_iter()
        .find(|r| r.starts_with(prefix))
        .map(|r| r.trim_end().to_string())
}

#[test]
fn at_lists_project_files_and_completes_them() {
    let s = setup(Script::echo());
    let root = s.cwd.path();
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    std::fs::create_dir_all(root.join("src/modes")).expect("mkdir");
    std::fs::create_dir_all(root.join("docs")).expect("mkdir");
    std::fs::create_dir_all(root.join("target")).expect("mkdir");
    std::fs::write(root.join(".gitignore"), "target/\n").expect("write");
    for f in [
        "src/main.rs",
        "src/lib.rs",
        "src/modes/main_mode.rs",
        "docs/my notes.md",
        "target/main_out.rs",
    ] {
        std::fs::write(root.join(f), "x").expect("write");
    }
    let mut pty = s.pi(30, 100);

    // `@` and a query: names holding it, the exact start first; ignored files left out.
    pty.type_text("see @ma");
    pty.wait_text("src/modes/main_mode.rs");
    let first = row_starting(&pty, "→ ").expect("selected row");
    assert!(
        first.starts_with("→ main.rs") && first.ends_with("src/main.rs"),
        "{first:?}"
    );
    assert!(!pty.contents().contains("main_out"), "{}", pty.contents());

    // Tab puts the path in with a space after it.
    pty.send(TAB);
    pty.wait_for("completed", Duration::from_secs(10), |_| {
        row_starting(&pty, "see ").as_deref() == Some("see @src/main.rs")
    });

    // A directory keeps the menu open on its entries.
    pty.send(CTRL_U);
    pty.type_text("@modes");
    pty.wait_text("src/modes");
    pty.send(TAB);
    pty.wait_for("directory completed", Duration::from_secs(10), |_| {
        row_starting(&pty, "@").as_deref() == Some("@src/modes/")
    });
    pty.wait_text("src/modes/main_mode.rs");

    // A path with a space is quoted.
    pty.send(CTRL_U);
    pty.type_text("x @\"my");
    pty.wait_text("docs/my notes.md");
    pty.send(TAB);
    pty.wait_for("quoted", Duration::from_secs(10), |_| {
        row_starting(&pty, "x ").as_deref() == Some("x @\"docs/my notes.md\"")
    });
    pty.send(CTRL_U);
    quit(&mut pty);
}

#[test]
fn loaded_extensions_are_listed_under_the_header() {
    let Some((node, modules)) = extension_env("loaded_extensions_are_listed_under_the_header") else {
        return;
    };
    let s = setup(Script::echo());
    let mut pty = spawn_with("ui.ts", &s, &node, &modules);
    pty.wait_text("[Extensions]");
    let rows = pty.rows();
    let at = rows
        .iter()
        .position(|r| r.trim_end() == "[Extensions]")
        .expect("section row");
    assert_eq!(rows[at + 1].trim_end(), "  ui.ts", "{rows:#?}");
    // ctrl+o: grouped by scope (`-e` is a path of this run) with the full path.
    pty.send("\x0f");
    pty.wait_text("to suspend");
    pty.wait_for("grouped", Duration::from_secs(10), |_| {
        let rows = pty.rows();
        rows.iter()
            .position(|r| r.trim_end() == "[Extensions]")
            .is_some_and(|at| rows[at + 1].trim_end() == "  path" && rows[at + 2].trim_end().ends_with("ui.ts"))
    });
    quit(&mut pty);
}

#[test]
fn the_slash_menu_shows_argument_hints_templates_and_skills() {
    let s = setup(Script::echo());
    let agent = s.agent.path();
    std::fs::create_dir_all(agent.join("prompts")).expect("mkdir");
    std::fs::write(
        agent.join("prompts/review.md"),
        "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1\n",
    )
    .expect("write");
    std::fs::create_dir_all(agent.join("skills/demo")).expect("mkdir");
    std::fs::write(
        agent.join("skills/demo/SKILL.md"),
        "---\nname: demo\ndescription: A demo skill\n---\nDo it.\n",
    )
    .expect("write");
    let mut pty = s.pi(30, 100);

    // A template: its hint leads its description, which carries its source tag.
    pty.type_text("/revi");
    pty.wait_text("<file> — [u] Review a file");
    // Built-ins that take an argument show pi's hint.
    pty.send(CTRL_U);
    pty.type_text("/thin");
    pty.wait_text("<level> — ");
    pty.send(CTRL_U);
    pty.type_text("/ski");
    pty.wait_text("skill:demo");
    pty.wait_text("[u] A demo skill");
    // `/model` completes its argument from the available models, provider beside each.
    pty.send(CTRL_U);
    pty.type_text("/model thinker");
    pty.wait_text("mock-thinker");
    let row = row_starting(&pty, "→ ").expect("selected row");
    assert!(
        row.starts_with("→ mock-thinker") && row.ends_with("mock-openai"),
        "{row:?}"
    );
    pty.send(TAB);
    pty.wait_for("completed", Duration::from_secs(10), |_| {
        row_starting(&pty, "/model ").as_deref() == Some("/model mock-openai/mock-thinker")
    });
    pty.send(CTRL_U);
    quit(&mut pty);
}

#[test]
fn a_replacement_editor_lists_project_files_for_at() {
    let Some((node, modules)) = extension_env("a_replacement_editor_lists_project_files_for_at") else {
        return;
    };
    let s = setup(Script::echo());
    std::fs::create_dir_all(s.cwd.path().join("docs")).expect("mkdir");
    std::fs::write(s.cwd.path().join("docs/notes_file.md"), "x").expect("write");
    let mut pty = spawn_with("editor2.ts", &s, &node, &modules);
    pty.wait_text("mock-model");
    // The CustomEditor in the host asks pi's file index for `@` references.
    pty.type_text("see @notes");
    pty.wait_text("docs/notes_file.md");
    pty.send(TAB);
    pty.wait_for("completed", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.contains("see @docs/notes_file.md"))
    });
    pty.send(CTRL_U);
    quit(&mut pty);
}
