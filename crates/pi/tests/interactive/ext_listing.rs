//! The startup header and the loaded-resources listing under it as pi 1.6 lays them out:
//! package extensions named by their package, grouped under their package when expanded,
//! the docs pointer in both forms of the header, and the blank line that ends the header
//! area (a status line under it has two blank lines before it, the first message one).

use pi_test_support::Script;

use super::extensions::{extension_env, row_of};
use super::pty::Pty;
use super::{quit, setup, ENTER};

const CTRL_O: &str = "\x0f";
const DOCS: &str = "Pi can explain its own features and look up its docs.";

/// A git package as `pi install git:github.com/acme/pi-tools` leaves it in the agent folder:
/// a file extension and a folder one under its `extensions/`.
fn install_git_package(agent: &pi_test_support::AgentDir) {
    let base = "git/github.com/acme/pi-tools";
    agent
        .write(
            format!("{base}/package.json"),
            r#"{"name":"pi-tools","keywords":["pi-package"],"pi":{"extensions":["./extensions"]}}"#,
        )
        .expect("package.json");
    let ext = |name: &str| {
        format!("export default function (pi: any) {{ pi.registerCommand(\"{name}\", {{ handler: async () => {{}} }}); }}\n")
    };
    agent
        .write(format!("{base}/extensions/hello.ts"), ext("hello-pkg"))
        .expect("hello.ts");
    agent
        .write(format!("{base}/extensions/multi/index.ts"), ext("multi-pkg"))
        .expect("index.ts");
    agent
        .write("settings.json", r#"{"packages":["git:github.com/acme/pi-tools"]}"#)
        .expect("settings");
}

#[test]
fn package_extensions_are_listed_by_package() {
    let Some((node, modules)) = extension_env("package_extensions_are_listed_by_package") else {
        return;
    };
    let s = setup(Script::echo());
    install_git_package(&s.agent);
    let fixture = format!(
        "{}/tests/interactive/fixtures/autocomplete.ts",
        env!("CARGO_MANIFEST_DIR")
    );
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut pty = Pty::spawn_env(
        &["-e", &fixture],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_text("[Extensions]");
    // Compact: the package's extensions as `<repository path>:<file>`, the others by path.
    let row = row_of(&pty, "[Extensions]").expect("section");
    assert_eq!(
        pty.rows()[row + 1].trim_end(),
        "  acme/pi-tools:hello.ts, acme/pi-tools:multi, autocomplete.ts",
        "{:#?}",
        pty.rows()
    );
    // Expanded: the package under its scope group, its files relative to it.
    pty.send(CTRL_O);
    pty.wait_text("git:github.com/acme/pi-tools");
    let rows = pty.rows();
    let user = rows.iter().position(|r| r.trim_end() == "  user").expect("user group");
    assert_eq!(
        rows[user + 1..user + 4]
            .iter()
            .map(|r| r.trim_end())
            .collect::<Vec<_>>(),
        [
            "    git:github.com/acme/pi-tools",
            "      extensions/hello.ts",
            "      extensions/multi"
        ],
        "{rows:#?}"
    );
    assert_eq!(rows[user + 4].trim_end(), "  path", "{rows:#?}");
    quit(&mut pty);
}

#[test]
fn the_header_area_ends_with_a_blank_line_as_pi_lays_it_out() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.wait_text(DOCS);
    // Expanded, the docs pointer still closes the header, a blank line after the keys.
    pty.send(CTRL_O);
    pty.wait_text("Tool output: expanded");
    let rows = pty.rows();
    let docs = row_of(&pty, DOCS).expect("docs line");
    assert!(rows[docs - 2].contains("drop files"), "{rows:#?}");
    assert_eq!(rows[docs - 1].trim(), "", "{rows:#?}");
    // A status line under the header: the header's blank line and its own.
    pty.send(CTRL_O);
    pty.wait_text("Tool output: collapsed");
    let rows = pty.rows();
    let docs = row_of(&pty, DOCS).expect("docs line");
    let status = row_of(&pty, "Tool output: collapsed").expect("status");
    assert_eq!(status, docs + 3, "{rows:#?}");
    // The first message: one blank line, then its padded background (as before).
    pty.send("\x15");
    pty.type_text("hello there");
    pty.send(ENTER);
    pty.wait_text("echo: hello there");
    let rows = pty.rows();
    let status = row_of(&pty, "Tool output: collapsed").expect("status");
    let user = rows
        .iter()
        .position(|r| r.trim() == "hello there")
        .expect("user message");
    assert_eq!(user, status + 3, "{rows:#?}");
    quit(&mut pty);
}

#[test]
fn the_first_message_under_the_header_keeps_its_place() {
    let s = setup(Script::echo());
    let mut pty = s.pi(30, 100);
    pty.wait_text(DOCS);
    pty.type_text("hello there");
    pty.send(ENTER);
    pty.wait_text("echo: hello there");
    let docs = row_of(&pty, DOCS).expect("docs line");
    let user = pty
        .rows()
        .iter()
        .position(|r| r.trim() == "hello there")
        .expect("user message");
    // pi 1.6: the header's blank line, the message's top padding, then its text.
    assert_eq!(user, docs + 3, "{:#?}", pty.rows());
    quit(&mut pty);
}
