//! The HTML export over RPC (`export_html`) draws extension tools with their renderers in
//! the colours of the theme settings name (the `system` theme without one), as pi 1.6's
//! export does outside the terminal UI.

use pi_test_support::{Script, Turn};
use serde_json::json;

use crate::extensions::{environment, fixture, pi_with};
use crate::harness::{Fixture, Mock};

/// The `<span …>` around `text` in `html`.
fn span_of<'a>(html: &'a str, text: &str) -> &'a str {
    let end = html
        .find(&format!("{text}</span>"))
        .unwrap_or_else(|| panic!("{text} not in {html}"));
    let start = html[..end].rfind("<span").expect("a span");
    &html[start..end]
}

#[test]
fn rpc_export_colours_renderer_lines_with_the_settings_theme() {
    let test = "rpc_export_colours_renderer_lines_with_the_settings_theme";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("paint", json!({})),
        Turn::text("painted it"),
    ]));
    let fx = Fixture::new(&mock);
    // No theme in settings: the `system` theme, whose colours are the terminal palette's in
    // pi's too, so the page's colours can be compared with pi's.
    pi_with(&fx, &env, ["-e", &fixture("painted.ts"), "-p", "paint"])
        .run()
        .assert_ok();
    let page = fx.root.path().join("page.html");
    let export = json!({"type": "export_html", "outputPath": &page}).to_string() + "\n";
    let run = pi_with(&fx, &env, ["--mode", "rpc", "-c", "-e", &fixture("painted.ts")])
        .stdin(export)
        .run();
    run.assert_ok();
    let html = std::fs::read_to_string(&page).expect("page written");
    let ours = (
        span_of(&html, "PAINT CALL").to_string(),
        span_of(&html, "PAINT RESULT").to_string(),
    );
    assert!(ours.0.contains("color:"), "{}", ours.0);
    assert!(ours.1.contains("color:"), "{}", ours.1);
    assert_ne!(ours.0, ours.1, "accent and success differ");

    if let Some(reference) = pi_test_support::reference_pi(test) {
        let theirs = fx.root.path().join("reference.html");
        let export = json!({"type": "export_html", "outputPath": &theirs}).to_string() + "\n";
        let mut cmd = reference.command();
        cmd.args(["--mode", "rpc", "-c", "-e", &fixture("painted.ts")])
            .current_dir(&fx.proj)
            .envs(fx.agent.env());
        crate::harness::Pi::from_command(cmd).stdin(export).run().assert_ok();
        let page = std::fs::read_to_string(&theirs).expect("reference page written");
        // pi's page carries the rendered HTML in its base64 session data.
        let data = page
            .split("<script id=\"session-data\" type=\"application/json\">")
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .expect("session data");
        use base64::Engine as _;
        let data = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .expect("base64");
        let data: serde_json::Value = serde_json::from_slice(&data).expect("session data JSON");
        let html: String = data["renderedTools"]
            .as_object()
            .into_iter()
            .flat_map(|tools| tools.values())
            .flat_map(|tool| {
                ["callHtml", "resultHtmlExpanded"].map(|k| tool[k].as_str().unwrap_or_default().to_string())
            })
            .collect();
        assert_eq!(
            (
                span_of(&html, "PAINT CALL").to_string(),
                span_of(&html, "PAINT RESULT").to_string()
            ),
            ours
        );
    }
}
