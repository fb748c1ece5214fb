//! Transcript blocks and commands as pi 1.6 shows them: a `!` command's spinner while it
//! runs and its hidden-line count under its output (live and resumed), an edit's diff
//! previewed before it runs, `/model` with text that names no single model, and the colours
//! of a Python code block.

use std::time::Duration;

use pi_test_support::{Script, Turn};
use serde_json::json;

use super::extensions::extension_env;
use super::pty::Pty;
use super::{quit, setup, ENTER, ESC};

/// The row of the first line containing `text`.
fn row_of(rows: &[String], text: &str) -> Option<usize> {
    rows.iter().position(|r| r.contains(text))
}

const CTRL_O: &str = "\x0f";

fn close_picker(pty: &mut Pty) {
    pty.send(ESC);
    pty.wait_for("the picker closed", Duration::from_secs(5), |c| {
        !c.contains("Enter to select")
    });
}

#[test]
fn a_long_bang_command_says_below_its_output_how_many_lines_are_hidden() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("!seq 30");
    pty.send(ENTER);
    pty.wait_text("... 11 more lines (ctrl+o to expand)");
    let rows = pty.rows();
    let title = row_of(&rows, "$ seq 30").expect("title");
    let last = rows.iter().rposition(|r| r.trim() == "30").expect("last line");
    let hint = row_of(&rows, "more lines").expect("hint");
    // The last 20 lines from 12 on, the output's closing blank line, a blank, then the hint.
    assert_eq!(rows[title + 1].trim(), "12", "{rows:#?}");
    assert_eq!(hint, last + 3, "{rows:#?}");
    assert!(rows[hint + 1].starts_with("────"), "{rows:#?}");
    pty.send(CTRL_O);
    pty.wait_text("(ctrl+o to collapse)");
    let rows = pty.rows();
    let hint = row_of(&rows, "(ctrl+o to collapse)").expect("hint");
    assert_eq!(rows[hint - 3].trim(), "30", "{rows:#?}");
    assert!(!pty.contents().contains("more lines"));
    quit(&mut pty);
}

/// As in pi 1.6, the footer's context use counts a `!` command's output as soon as it ends;
/// 1.6's estimate counts a `!!` command's too, although it is left out of the context.
#[test]
fn a_bang_command_counts_in_the_footer_context_use_at_once() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.wait_text("0.0%/128k");
    pty.type_text("!!seq 1 3000");
    pty.send(ENTER);
    pty.wait_text("2.0%/128k");
    pty.type_text("!seq 1 3000");
    pty.send(ENTER);
    pty.wait_text("3.9%/128k");
    quit(&mut pty);
}

#[test]
fn an_edit_previews_its_diff_or_its_error_before_it_runs() {
    let Some((node, modules)) = extension_env("an_edit_previews_its_diff_or_its_error_before_it_runs") else {
        return;
    };
    let script = Script::matching()
        .rule(
            "doedit",
            vec![
                Turn::tool_call(
                    "edit",
                    json!({"path": "hello.txt", "edits": [{"oldText": "line two", "newText": "line 2 changed"}]}),
                ),
                Turn::text("Edited."),
            ],
        )
        .rule(
            "badedit",
            vec![
                Turn::tool_call(
                    "edit",
                    json!({"path": "hello.txt", "edits": [{"oldText": "no such text", "newText": "x"}]}),
                ),
                Turn::text("Failed."),
            ],
        )
        .with_default(Turn::text("ok"));
    let s = setup(script);
    let file = s.cwd.path().join("hello.txt");
    std::fs::write(&file, "line one\nline two\nline three\n").expect("file");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/slow_edit.ts");
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let env = [("PI_NODE", node.as_str()), ("PI_EXTENSION_MODULES", modules.as_str())];
    let mut pty = Pty::spawn_env(&["-e", fixture], s.cwd.path(), s.agent.path(), 30, 100, &env);
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));

    pty.type_text("doedit");
    pty.send(ENTER);
    // The diff shows while the call is held, before the file changed.
    pty.wait_text("+2 line 2 changed");
    assert!(!pty.contents().contains("Edited."));
    assert_eq!(
        std::fs::read_to_string(&file).expect("file"),
        "line one\nline two\nline three\n"
    );
    let rows = pty.rows();
    let title = row_of(&rows, " edit hello.txt").expect("title");
    assert_eq!(
        rows[title + 2..title + 6],
        ["  1 line one", " -2 line two", " +2 line 2 changed", "  3 line three"],
        "{rows:#?}"
    );
    pty.wait_text("Edited.");
    assert_eq!(
        std::fs::read_to_string(&file).expect("file"),
        "line one\nline 2 changed\nline three\n"
    );

    // An edit that will fail says why before it runs, and only once after.
    pty.type_text("badedit");
    pty.send(ENTER);
    pty.wait_text("Could not find the exact text in hello.txt.");
    assert!(!pty.contents().contains("Failed."));
    pty.wait_text("Failed.");
    assert_eq!(pty.contents().matches("Could not find the exact text").count(), 1);
    quit(&mut pty);
}

#[test]
fn model_text_naming_no_single_model_refreshes_the_catalogues_then_opens_the_picker() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    // Every mock provider has a `mock-model`: the bare id is ambiguous.
    pty.type_text("/model mock-model");
    // Esc closes the argument completion, so Enter runs the command as typed.
    pty.send(ESC);
    pty.send(ENTER);
    pty.wait_text("Refreshing model catalogs…");
    pty.wait_text("> mock-model");
    pty.wait_text("mock-model [mock-anthropic]");
    let rows = pty.rows();
    let status = row_of(&rows, "Refreshing model catalogs…").expect("status");
    let search = row_of(&rows, "> mock-model").expect("search");
    assert!(status < search, "{rows:#?}");
    close_picker(&mut pty);
    // Text matching nothing: the picker searching for it, with nothing listed.
    pty.type_text("/model zzz");
    pty.send(ENTER);
    pty.wait_text("> zzz");
    pty.wait_text("No matching models");
    close_picker(&mut pty);
    // One model answering exactly is taken at once.
    pty.type_text("/model mock-anthropic/mock-thinker");
    pty.send(ESC);
    pty.send(ENTER);
    pty.wait_text("Model: mock-thinker");
    quit(&mut pty);
}

#[test]
fn python_code_takes_the_colours_pi_16_gives_its_classes() {
    let code =
        "```python\n@dataclass\nclass Foo(Base):\n    def bar(self, x=2) -> int:\n        return len(x) + 1\n```";
    let s = setup(Script::sequential(vec![Turn::text(code)]));
    let mut pty = s.pi(30, 100);
    pty.type_text("code please");
    pty.send(ENTER);
    pty.wait_text("return len(x) + 1");
    let rows = pty.rows();
    let at = |row: usize, text: &str| -> (u16, u16) {
        let col = rows[row].find(text).expect("text on the row");
        (row as u16, rows[row][..col].chars().count() as u16)
    };
    let fg = |(row, col): (u16, u16)| pty.fg_at(row, col);
    let deco = row_of(&rows, "@dataclass").expect("decorator");
    // The `system` theme: decorators muted (dim), keywords 4, definitions 3, built-ins and
    // a class's brackets 5, parameters 6, operators in the text colour.
    let (r, c) = at(deco, "@dataclass");
    assert!(pty.cell_at(r, c).expect("cell").dim(), "{rows:#?}");
    assert_eq!(fg(at(deco + 1, "class")), Some(vt100::Color::Idx(4)));
    assert_eq!(fg(at(deco + 1, "Foo")), Some(vt100::Color::Idx(3)));
    assert_eq!(fg(at(deco + 1, "(")), Some(vt100::Color::Idx(5)));
    assert_eq!(fg(at(deco + 1, "Base")), Some(vt100::Color::Idx(6)));
    assert_eq!(fg(at(deco + 2, "bar(")), Some(vt100::Color::Idx(3)));
    assert_eq!(fg(at(deco + 2, "self")), Some(vt100::Color::Idx(6)));
    assert_eq!(fg(at(deco + 2, "int")), Some(vt100::Color::Idx(5)));
    assert_eq!(fg(at(deco + 3, "len")), Some(vt100::Color::Idx(5)));
    assert_eq!(fg(at(deco + 3, "+")), Some(vt100::Color::Default));
    quit(&mut pty);
}

#[test]
fn typescript_go_and_diff_code_take_the_colours_pi_16_gives_their_classes() {
    let code = "```ts\nfunction f(p: T, q: number = 2): number {\n  return p.length + q;\n}\n```\n\n\
                ```go\nfunc (s *Srv) Run(n int) error {\n```\n\n```diff\n-old line\n+new line\n```\n\n\
                ```tsx\nconst a = <div id=\"x\">{t}</div>;\nlet after = 1;\n```";
    let s = setup(Script::sequential(vec![Turn::text(code)]));
    let mut pty = s.pi(30, 100);
    pty.type_text("code please");
    pty.send(ENTER);
    pty.wait_text("let after = 1;");
    let rows = pty.rows();
    let at = |row: usize, text: &str| -> (u16, u16) {
        let col = rows[row].find(text).expect("text on the row");
        (row as u16, rows[row][..col].chars().count() as u16)
    };
    let fg = |(row, col): (u16, u16)| pty.fg_at(row, col);
    // The `system` theme: keywords 4, definitions 3, parameters 6, built-in types 5, diff
    // lines in the diff colours (added 2, removed 1), the rest in the text colour.
    let head = row_of(&rows, "function f(").expect("ts head");
    assert_eq!(fg(at(head, "function")), Some(vt100::Color::Idx(4)), "{rows:#?}");
    assert_eq!(fg(at(head, "f(")), Some(vt100::Color::Idx(3)));
    assert_eq!(fg(at(head, "p:")), Some(vt100::Color::Idx(6)));
    assert_eq!(fg(at(head, "number =")), Some(vt100::Color::Idx(5)));
    assert_eq!(fg(at(head, "): number")), Some(vt100::Color::Idx(3)));
    let go = row_of(&rows, "func (s").expect("go head");
    assert_eq!(fg(at(go, "(s *Srv)")), Some(vt100::Color::Idx(6)));
    assert_eq!(fg(at(go, "Run")), Some(vt100::Color::Idx(3)));
    assert_eq!(fg(at(go, "n int")), Some(vt100::Color::Idx(6)));
    assert_eq!(fg(at(go, "error")), Some(vt100::Color::Idx(3)));
    let removed = row_of(&rows, "-old line").expect("removed line");
    assert_eq!(fg(at(removed, "-old")), Some(vt100::Color::Idx(1)));
    assert_eq!(fg(at(removed + 1, "+new")), Some(vt100::Color::Idx(2)));
    let jsx = row_of(&rows, "const a = <div").expect("jsx");
    assert_eq!(fg(at(jsx, "div")), Some(vt100::Color::Idx(4)));
    assert_eq!(fg(at(jsx, "id=")), Some(vt100::Color::Idx(6)));
    // A closing tag leaves the next line's code alone: `let` is a keyword, not a string.
    assert_eq!(fg(at(jsx + 1, "let")), Some(vt100::Color::Idx(4)));
    quit(&mut pty);
}

#[test]
fn a_resumed_bang_command_shows_its_hidden_lines_and_exit_code_again() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    // A reply first: a session is saved once it has one.
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("echo: hello");
    pty.type_text("!seq 30; exit 3");
    pty.send(ENTER);
    pty.wait_text("(exit 3)");
    quit(&mut pty);
    let mut pty = Pty::spawn(&["-c"], s.cwd.path(), s.agent.path(), 30, 100);
    pty.wait_text("(exit 3)");
    let rows = pty.rows();
    let hint = row_of(&rows, "... 11 more lines (ctrl+o to expand)").expect("hint");
    assert_eq!(rows[hint + 1].trim(), "(exit 3)", "{rows:#?}");
    quit(&mut pty);
}

#[test]
fn a_running_bang_command_shows_a_turning_spinner_with_the_cancel_keys() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.type_text("!echo first; sleep 2; echo second");
    pty.send(ENTER);
    pty.wait_text("Running... (escape/ctrl+c to cancel)");
    pty.wait_for("the first output", Duration::from_secs(2), |_| {
        pty.rows().iter().any(|r| r.trim() == "first")
    });
    let rows = pty.rows();
    let running = row_of(&rows, "Running...").expect("loader");
    // Under the output (its closing line break a blank row) and a blank row, above the
    // closing rule.
    assert_eq!(rows[running - 3].trim(), "first", "{rows:#?}");
    assert_eq!(rows[running - 2].trim(), "", "{rows:#?}");
    assert_eq!(rows[running - 1].trim(), "", "{rows:#?}");
    assert!(rows[running + 1].starts_with("────"), "{rows:#?}");
    let frame = |rows: &[String]| rows[running].trim().chars().next();
    let first = frame(&rows);
    pty.wait_for("the spinner turned", Duration::from_secs(2), |_| {
        frame(&pty.rows()) != first
    });
    pty.wait_text("second");
    pty.wait_for("the loader gone", Duration::from_secs(5), |c| !c.contains("Running..."));
    quit(&mut pty);
}
