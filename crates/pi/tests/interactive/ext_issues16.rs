//! The startup `[Extension issues]` block as pi 1.6 shows it: extension commands named like
//! a built-in command, each under its extension named with where it came from (`auto
//! (user)` for the agent folder's `extensions/`, `user` for one the settings name, `path
//! (temp)` for `-e`), extensions that failed to load after a `/reload`, and the block shown
//! even under `quietStartup`.

use std::path::Path;
use std::time::Duration;

use pi_test_support::Script;

use super::extensions::{extension_env, row_of};
use super::pty::Pty;
use super::{quit, setup, Setup, ENTER};

/// An extension registering `/name`.
fn command(name: &str) -> String {
    format!(
        "export default function (pi: any) {{ pi.registerCommand(\"{name}\", {{ description: \"x\", handler: async () => {{}} }}); }}\n"
    )
}

/// `pi -e <cli>` on a 100-column screen `rows` high with the extension host's Node and
/// packages, once the first frame is there.
fn spawn(s: &Setup, cli: &Path, node: &Path, modules: &Path, rows: u16) -> Pty {
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let cli = cli.display().to_string();
    let pty = Pty::spawn_env(
        &["-e", &cli],
        s.cwd.path(),
        s.agent.path(),
        rows,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty
}

/// Extensions from three places, each naming a built-in command: the agent folder's
/// `extensions/` (`/model`), a file the user settings name (`/tree`), and `-e` (`/login`).
fn three_scopes(s: &Setup, settings: serde_json::Value) -> std::path::PathBuf {
    s.agent.write("extensions/auto.ts", command("model")).expect("auto.ts");
    let listed = s.cwd.path().join("listed/s.ts");
    std::fs::create_dir_all(listed.parent().expect("parent")).expect("dir");
    std::fs::write(&listed, command("tree")).expect("s.ts");
    let mut settings = settings;
    settings["extensions"] = serde_json::json!([listed.display().to_string()]);
    s.agent.write("settings.json", settings.to_string()).expect("settings");
    let cli = s.cwd.path().join("cli.ts");
    std::fs::write(&cli, command("login")).expect("cli.ts");
    cli
}

const SKIPPING: &str = "conflicts with built-in interactive command. Skipping in";

/// The issue rows under `[Extension issues]`: each extension's row, then its message's
/// first row.
fn issue_rows(pty: &Pty) -> Vec<String> {
    pty.wait_text("[Extension issues]");
    let rows = pty.rows();
    let top = row_of(pty, "[Extension issues]").expect("block");
    rows[top + 1..]
        .iter()
        .take_while(|r| !r.is_empty())
        .filter(|r| r.starts_with("  "))
        .map(|r| r.trim_end().to_string())
        .collect()
}

#[test]
fn built_in_command_clashes_are_listed_under_their_extension_and_scope() {
    let Some((node, modules)) = extension_env("built_in_command_clashes_are_listed_under_their_extension_and_scope")
    else {
        return;
    };
    let s = setup(Script::echo());
    let cli = three_scopes(&s, serde_json::json!({}));
    // Tall enough for the expanded listing.
    let mut pty = spawn(&s, &cli, &node, &modules, 60);
    // The tests' home folder is the agent folder: its paths start with `~`.
    let cwd = s.cwd.path().display().to_string();
    assert_eq!(
        issue_rows(&pty),
        [
            format!("  path (temp) {cwd}/cli.ts"),
            format!("    Extension command '/login' {SKIPPING}"),
            format!("  user {cwd}/listed/s.ts"),
            "    Extension command '/tree' conflicts with built-in interactive command. Skipping in autocomplete."
                .to_string(),
            "  auto (user) ~/extensions/auto.ts".to_string(),
            format!("    Extension command '/model' {SKIPPING}"),
        ],
        "{:#?}",
        pty.rows()
    );
    // The listing above it groups the settings' file with the user's.
    pty.send("\x0f");
    pty.wait_for("expanded", Duration::from_secs(10), |_| {
        pty.rows().iter().any(|r| r.trim_end() == "  path")
    });
    let rows = pty.rows();
    let user = rows.iter().position(|r| r.trim_end() == "  user").expect("user group");
    let path = rows.iter().position(|r| r.trim_end() == "  path").expect("path group");
    let listed = row_of(&pty, "listed/s.ts").expect("listed");
    assert!(user < listed && listed < path, "{rows:#?}");
    quit(&mut pty);
}

#[test]
fn quiet_startup_still_shows_the_extension_issues() {
    let Some((node, modules)) = extension_env("quiet_startup_still_shows_the_extension_issues") else {
        return;
    };
    let s = setup(Script::echo());
    let cli = three_scopes(&s, serde_json::json!({"quietStartup": true}));
    let mut pty = spawn(&s, &cli, &node, &modules, 30);
    pty.wait_text("[Extension issues]");
    let rows = pty.rows();
    // No header and no listing: the block starts the screen.
    assert_eq!(rows[0], "[Extension issues]", "{rows:#?}");
    assert!(!pty.contents().contains("[Extensions]"), "{rows:#?}");
    assert_eq!(issue_rows(&pty).len(), 6, "{rows:#?}");
    // Typing still works below it.
    pty.type_text("hello");
    pty.send(ENTER);
    pty.wait_text("hello");
    assert_eq!(pty.rows()[0], "[Extension issues]", "{:#?}", pty.rows());
    quit(&mut pty);
}

#[test]
fn an_extension_that_fails_to_load_on_reload_is_listed_first_as_an_error() {
    let Some((node, modules)) = extension_env("an_extension_that_fails_to_load_on_reload_is_listed_first_as_an_error")
    else {
        return;
    };
    let s = setup(Script::echo());
    let cli = three_scopes(&s, serde_json::json!({}));
    let ok = s
        .agent
        .write("extensions/later.ts", command("later"))
        .expect("later.ts");
    let mut pty = spawn(&s, &cli, &node, &modules, 30);
    assert_eq!(issue_rows(&pty).len(), 6, "{:#?}", pty.rows());
    std::fs::write(
        &ok,
        "export default function () { throw new Error(\"boom on reload\"); }\n",
    )
    .expect("broken");
    pty.type_text("/reload");
    pty.send(ENTER);
    pty.wait_text("Failed to load extension: boom on reload");
    // Named by its path alone (it loaded nothing), before the other issues.
    let rows = issue_rows(&pty);
    assert_eq!(
        rows[..2],
        [
            "  ~/extensions/later.ts".to_string(),
            "    Failed to load extension: boom on reload".to_string()
        ],
        "{:#?}",
        pty.rows()
    );
    assert_eq!(rows.len(), 8, "{:#?}", pty.rows());
    quit(&mut pty);
}

/// An extension reporting `/name` runs with a notice naming `who`.
fn noisy_command(name: &str, who: &str) -> String {
    format!(
        "export default function (pi: any) {{ pi.registerCommand(\"{name}\", {{ description: \"{who}\", handler: async (_a: string, ctx: any) => ctx.ui.notify(\"ran {who}\", \"info\") }}); }}\n"
    )
}

#[test]
fn a_name_several_extensions_register_is_numbered_in_the_menu_and_the_issues() {
    let Some((node, modules)) =
        extension_env("a_name_several_extensions_register_is_numbered_in_the_menu_and_the_issues")
    else {
        return;
    };
    let s = setup(Script::echo());
    let write = |file: &str, text: String| {
        let path = s.cwd.path().join(file);
        std::fs::write(&path, text).expect("extension");
        path.display().to_string()
    };
    let a = write("a.ts", noisy_command("dup", "a"));
    let b = write("b.ts", noisy_command("dup", "b"));
    let c = write("c.ts", noisy_command("model", "c"));
    let d = write("d.ts", noisy_command("model", "d"));
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut pty = Pty::spawn_env(
        &["-e", &a, "-e", &b, "-e", &c, "-e", &d],
        s.cwd.path(),
        s.agent.path(),
        30,
        100,
        &[("PI_NODE", &node), ("PI_EXTENSION_MODULES", &modules)],
    );
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    // Two extensions sharing a name is no issue; a built-in's name shared says where it went.
    assert_eq!(
        issue_rows(&pty),
        [
            format!("  path (temp) {c}"),
            "    Extension command '/model' conflicts with built-in interactive command. Available as '/model:1'."
                .to_string(),
            format!("  path (temp) {d}"),
            "    Extension command '/model' conflicts with built-in interactive command. Available as '/model:2'."
                .to_string(),
        ],
        "{:#?}",
        pty.rows()
    );
    pty.type_text("/dup");
    pty.wait_text("dup:2");
    let rows = pty.rows();
    let first = row_of(&pty, "dup:1").expect("dup:1");
    assert!(rows[first].contains("[t] a"), "{rows:#?}");
    assert!(
        rows[first + 1].contains("dup:2") && rows[first + 1].contains("[t] b"),
        "{rows:#?}"
    );
    pty.type_text(":2");
    pty.send(ENTER);
    pty.wait_text("ran b");
    assert!(s.server.requests().is_empty(), "a command, not a prompt");
    quit(&mut pty);
}
