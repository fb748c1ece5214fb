//! A theme change and a resume keep what extensions drew: entry-rendered cards, message
//! renderers' notes and tool renderers' lines are drawn again in the new theme, notices stay
//! where they were, and a replacement editor's border takes the new theme's colour as pi's
//! own editor does. A resumed session shows its cards again.

use std::path::Path;
use std::time::Duration;

use pi_test_support::{Script, Turn};

use super::extensions::{extension_env, row_of};
use super::pty::Pty;
use super::{quit, setup, Setup, ENTER};

fn spawn(s: &Setup, node: &Path, modules: &Path, continued: bool) -> Pty {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interactive/fixtures/restyle.ts");
    let (node, modules) = (node.display().to_string(), modules.display().to_string());
    let mut args = vec!["-e", fixture];
    if continued {
        args.push("-c");
    }
    let env = [("PI_NODE", node.as_str()), ("PI_EXTENSION_MODULES", modules.as_str())];
    let pty = Pty::spawn_env(&args, s.cwd.path(), s.agent.path(), 30, 100, &env);
    pty.wait_for("first frame", Duration::from_secs(20), |c| c.contains("mock-model"));
    pty
}

fn command(pty: &mut Pty, text: &str) {
    pty.type_text(text);
    pty.send(ENTER);
}

/// The colour of the editor's top border: the first full-width rule above the footer.
fn editor_border(pty: &Pty) -> Option<vt100::Color> {
    let rows = pty.rows();
    let row = rows
        .iter()
        .position(|r| r.chars().count() >= 100 && r.chars().all(|c| c == '─'))?;
    pty.fg_at(u16::try_from(row).ok()?, 0)
}

#[test]
fn a_theme_change_redraws_renderers_keeps_notices_and_a_resume_keeps_entries() {
    let Some((node, modules)) =
        extension_env("a_theme_change_redraws_renderers_keeps_notices_and_a_resume_keeps_entries")
    else {
        return;
    };
    let s = setup(Script::sequential(vec![
        Turn::tool_call("stamp", serde_json::json!({})),
        Turn::text("stamp done"),
    ]));
    let mut pty = spawn(&s, &node, &modules, false);
    command(&mut pty, "/settheme dark");
    command(&mut pty, "go");
    pty.wait_text("stamp done");
    pty.wait_text("STAMP CALL theme=dark");
    pty.wait_text("STAMP RESULT theme=dark");
    command(&mut pty, "/card hello");
    pty.wait_text("[card] hello theme=dark");
    command(&mut pty, "/note hi");
    pty.wait_text("[note] hi theme=dark");
    command(&mut pty, "/tell kept notice");
    pty.wait_text("kept notice");

    // A new theme while idle: every renderer draws again in it, the notice stays after the
    // note it followed.
    command(&mut pty, "/settheme light");
    for text in [
        "STAMP CALL theme=light",
        "STAMP RESULT theme=light",
        "[card] hello theme=light",
        "[note] hi theme=light",
    ] {
        pty.wait_text(text);
    }
    let note = row_of(&pty, "[note] hi").expect("note");
    let notice = row_of(&pty, "kept notice").expect("the notice is still there");
    assert!(note < notice, "{:#?}", pty.rows());
    assert!(row_of(&pty, "[card] hello").expect("card") < note);

    // A replacement editor's border follows the theme, in the colour of pi's own.
    command(&mut pty, "/fancy");
    // Keys typed now reach the replacement editor: once a probe shows, it is in place.
    pty.type_text("probe");
    pty.wait_text("probe");
    pty.send(&"\x7f".repeat(5));
    pty.wait_for("probe erased", Duration::from_secs(10), |c| !c.contains("probe"));
    let fancy_light = editor_border(&pty).expect("border");
    command(&mut pty, "/settheme dark");
    pty.wait_text("[card] hello theme=dark");
    pty.wait_for("border recoloured", Duration::from_secs(10), |_| {
        editor_border(&pty).is_some_and(|c| c != fancy_light)
    });
    let fancy_dark = editor_border(&pty).expect("border");
    command(&mut pty, "/plain");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        editor_border(&pty),
        Some(fancy_dark),
        "pi's editor border in the same theme"
    );
    quit(&mut pty);

    // Resumed: the cards are drawn again among the messages; notices are not kept.
    let mut pty = spawn(&s, &node, &modules, true);
    pty.wait_text("[card] hello theme=dark");
    pty.wait_text("[note] hi theme=dark");
    pty.wait_text("STAMP RESULT theme=dark");
    let stamp = row_of(&pty, "STAMP RESULT").expect("tool");
    let card = row_of(&pty, "[card] hello").expect("card");
    assert!(stamp < card, "{:#?}", pty.rows());
    assert!(!pty.contents().contains("kept notice"), "{}", pty.contents());
    quit(&mut pty);
}
