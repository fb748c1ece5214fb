//! `/hotkeys` as pi 1.6 shows it: a rule, the title, pi's three tables (Navigation, Editing,
//! Other) with every key of an action spelled as pi does, each body row ruled off, a rule;
//! then the keys extensions registered.

use pi_test_support::Script;

use super::extensions::{extension_env, spawn_extension, spawn_with};
use super::{quit, setup, ENTER};

#[test]
fn hotkeys_show_pi_16s_tables() {
    let s = setup(Script::echo());
    let mut pty = s.pi(120, 100);
    pty.type_text("/hotkeys");
    pty.send(ENTER);
    pty.wait_text("Keyboard Shortcuts");
    // The tables are long: read the screen once the whole frame has been drawn.
    pty.wait_text("Restore queued messages");
    pty.wait_stable(std::time::Duration::from_millis(300));
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim_end().to_string()).collect();
    let at = rows.iter().position(|r| r == " Keyboard Shortcuts").expect("title");
    assert!(rows[at - 1].starts_with('─'), "{}", pty.contents());
    assert_eq!(rows[at + 1], "");
    assert_eq!(rows[at + 2], "");
    assert_eq!(rows[at + 3], " Navigation");
    let text = pty.contents();
    for want in [
        "│ Up / Down / Left/Ctrl+B / Right/Ctrl+F                │ Move cursor / browse history │",
        "│ Enter                │ Send message                                 │",
        "│ Ctrl+P / Shift+Ctrl+P │ Cycle models                                         │",
        "│ Alt+Up                │ Restore queued messages                              │",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    // Rows are ruled off from each other, and no selector-only key is listed.
    assert!(
        text.contains("├───────────────────────┼──────────────────────────────────────────────────────┤\n │ Escape"),
        "{text}"
    );
    assert!(!text.contains("Toggle session sort mode"), "{text}");
    quit(&mut pty);
}

#[test]
fn hotkeys_list_extension_shortcuts_the_app_does_not_keep() {
    let Some((node, modules)) = extension_env("hotkeys_list_extension_shortcuts_the_app_does_not_keep") else {
        return;
    };
    let s = setup(Script::echo());
    // The fixture registers alt+z and ctrl+c (which stays the app's).
    let mut pty = spawn_with("screen.ts", &s, &node, &modules);
    pty.type_text("/hotkeys");
    pty.send(ENTER);
    pty.wait_text(" Extensions");
    let text = pty.contents();
    assert!(text.contains("│ Alt+Z │ Shortcut alt+z │"), "{text}");
    assert!(!text.contains("Shortcut ctrl+c"), "{text}");
    quit(&mut pty);
}

#[test]
fn shortcut_conflicts_are_listed_as_extension_issues_at_startup() {
    let Some((node, modules)) = extension_env("shortcut_conflicts_are_listed_as_extension_issues_at_startup") else {
        return;
    };
    let s = setup(Script::echo());
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("keys.ts");
    std::fs::write(
        &ext,
        r#"export default function (pi: any) {
  for (const key of ["ctrl+c", "ctrl+a", "alt+z"]) {
    pi.registerShortcut(key, { description: key, handler: async () => {} });
  }
}
"#,
    )
    .unwrap();
    let mut pty = spawn_extension(&ext, &s, &node, &modules);
    pty.wait_text("[Extension issues]");
    let path = ext.display().to_string();
    // Long lines wrap at spaces: compare without any.
    let squeeze = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let text = squeeze(&pty.contents());
    // As pi 1.6 words them, each under the extension's source and path.
    for want in [
        format!("path (temp) {path}"),
        format!("Extension shortcut 'ctrl+c' from {path} conflicts with built-in shortcut. Skipping."),
        format!("Extension shortcut conflict: 'ctrl+a' is built-in shortcut for app.tree.filter.all and {path}. Using {path}."),
    ] {
        assert!(text.contains(&squeeze(&want)), "{want}\n{}", pty.contents());
    }
    assert!(!text.contains("'alt+z'"), "{}", pty.contents());
    quit(&mut pty);
}
