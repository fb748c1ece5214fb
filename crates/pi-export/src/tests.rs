//! Unit tests of the export: escaping, Markdown, branch selection and the golden sessions.

use super::render::{escape, markdown, sanitize_url};
use super::*;
use serde_json::json;

fn line(v: Value) -> String {
    format!("{v}\n")
}

fn header() -> String {
    line(
        json!({"type":"session","version":3,"id":"sess-1","timestamp":"2026-01-02T03:04:05.678Z","cwd":"/home/u/proj"}),
    )
}

fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    line(
        json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-02T03:04:06.000Z",
        "message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":1}}),
    )
}

fn assistant(id: &str, parent: Option<&str>, content: Value) -> String {
    line(
        json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-02T03:04:07.000Z",
        "message":{"role":"assistant","content":content,"api":"openai-completions","provider":"p","model":"m",
        "usage":{"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,
                 "cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}},
        "stopReason":"stop","timestamp":2}}),
    )
}

/// The part of the page after the sidebar, where the active branch is drawn.
fn main_part(html: &str) -> &str {
    let start = html.find("<main>").expect("main");
    &html[start..]
}

#[test]
fn escape_covers_markup_and_quotes() {
    assert_eq!(
        escape(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}

#[test]
fn injected_markup_is_shown_as_text() {
    let s = header()
        + &user("u1", None, "<script>alert(1)</script> <img src=x onerror=alert(2)>")
        + &assistant(
            "a1",
            Some("u1"),
            json!([{"type":"text","text":"Raw <script>evil()</script>\n\n<div onclick=x>block</div>"},
                   {"type":"thinking","thinking":"</details><script>t()</script>"}]),
        );
    let html = export_session_html(&s, &ExportOptions::default()).expect("renders");
    let main = main_part(&html);
    assert!(!main.contains("<script>alert"), "user text escaped");
    assert!(main.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!main.contains("<img src=x"));
    assert!(!main.contains("<script>evil"), "raw HTML in Markdown is escaped");
    assert!(main.contains("&lt;script&gt;evil()&lt;/script&gt;"));
    assert!(!main.contains("<div onclick"));
    assert!(!main.contains("<script>t()"));
    // Our own script is the only one in the page.
    assert_eq!(html.matches("<script>").count(), 1);
}

#[test]
fn markdown_renders_and_sanitises_links_and_images() {
    let html =
        markdown("# Title\n\n**bold** `code`\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
    assert!(html.contains("<h1>Title</h1>"));
    assert!(html.contains("<strong>bold</strong>"));
    assert!(html.contains("<code>code</code>"));
    assert!(html.contains("<code class=\"language-rust\">fn main() {}"));
    assert!(html.contains("<table>"));

    let html = markdown(
        "[a](javascript:alert(1)) [b](https://ok.example/x) [c]( JaVa\tScript:x) [d](#anchor) [e](data:text/html,hi)",
    );
    assert!(!html.to_lowercase().contains("javascript"), "{html}");
    assert!(html.contains("href=\"https://ok.example/x\""));
    assert!(html.contains("href=\"#anchor\""));
    assert!(!html.contains("data:text"));

    // Remote images never load: they become links.
    let html = markdown("![pic](http://127.0.0.1:9/x.png) ![inline](data:image/png;base64,AAAA)");
    assert!(!html.contains("<img src=\"http"), "{html}");
    assert!(html.contains("<a href=\"http://127.0.0.1:9/x.png\">pic</a>"));
    assert!(html.contains("<img src=\"data:image/png;base64,AAAA\""));
}

#[test]
fn url_sanitiser() {
    assert_eq!(sanitize_url("https://a.b/c?d#e"), "https://a.b/c?d#e");
    assert_eq!(sanitize_url("mailto:x@y.z"), "mailto:x@y.z");
    assert_eq!(sanitize_url("relative/path.md"), "relative/path.md");
    assert_eq!(sanitize_url("javascript:alert(1)"), "#");
    assert_eq!(sanitize_url("\u{1}javascript:alert(1)"), "#");
    assert_eq!(sanitize_url("vbscript:x"), "#");
    assert_eq!(sanitize_url("file:///etc/passwd"), "#");
}

#[test]
fn fork_renders_only_the_active_path() {
    // u1 -> a1 -> u2 (abandoned) -> a2 ; a1 -> u3 -> a3 (leaf, last line)
    let s = header()
        + &user("u1", None, "first question")
        + &assistant("a1", Some("u1"), json!([{"type":"text","text":"first answer"}]))
        + &user("u2", Some("a1"), "abandoned branch prompt")
        + &assistant("a2", Some("u2"), json!([{"type":"text","text":"abandoned answer"}]))
        + &user("u3", Some("a1"), "active branch prompt")
        + &assistant("a3", Some("u3"), json!([{"type":"text","text":"active answer"}]));
    let doc = SessionDoc::parse(&s).expect("parse");
    let ids: Vec<&str> = doc
        .active_path(None)
        .into_iter()
        .map(|i| str_field(&doc.entries[i], "id").unwrap_or(""))
        .collect();
    assert_eq!(ids, ["u1", "a1", "u3", "a3"]);

    let html = export_doc_html(&doc, &ExportOptions::default()).expect("renders");
    let main = main_part(&html);
    for t in [
        "first question",
        "first answer",
        "active branch prompt",
        "active answer",
    ] {
        assert!(main.contains(t), "main view shows {t}");
    }
    assert!(!main.contains("abandoned"), "other branch stays out of the main view");
    // The sidebar lists the other branch, not linked.
    let side = &html[..html.find("<main>").expect("main")];
    assert!(side.contains("abandoned branch prompt"));
    assert!(side.contains("(6 entries, 2 on other branches)"));
    assert!(side.contains("<a href=\"#e-a3\">"));

    // An explicit leaf selects the other branch.
    let opts = ExportOptions {
        leaf_id: Some("a2".into()),
        ..Default::default()
    };
    let html = export_doc_html(&doc, &opts).expect("renders");
    let main = main_part(&html);
    assert!(main.contains("abandoned answer"));
    assert!(!main.contains("active answer"));
}

#[test]
fn malformed_lines_are_skipped_and_bad_files_rejected() {
    let s = header() + "{not json\n\n" + &user("u1", None, "still here");
    let html = export_session_html(&s, &ExportOptions::default()).expect("renders");
    assert!(html.contains("still here"));

    assert!(matches!(
        export_session_html("", &ExportOptions::default()),
        Err(ExportError::InvalidSession(_))
    ));
    assert!(matches!(
        export_session_html(&user("u1", None, "no header"), &ExportOptions::default()),
        Err(ExportError::InvalidSession(_))
    ));
    assert!(matches!(
        export_session_html(&header(), &ExportOptions::default()),
        Err(ExportError::Empty)
    ));
}

#[test]
fn cycles_do_not_hang() {
    let s = header() + &user("x", Some("y"), "in a loop") + &user("y", Some("x"), "loop two");
    let html = export_session_html(&s, &ExportOptions::default()).expect("renders");
    assert!(main_part(&html).contains("loop two"));
}

#[test]
fn tool_calls_results_images_and_summaries() {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let long: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let s = header()
        + &line(
            json!({"type":"model_change","id":"m1","parentId":null,"timestamp":"t","provider":"prov","modelId":"mod-x"}),
        )
        + &line(
            json!({"type":"thinking_level_change","id":"t1","parentId":"m1","timestamp":"t","thinkingLevel":"high"}),
        )
        + &line(
            json!({"type":"message","id":"u1","parentId":"t1","timestamp":"t","message":{"role":"user",
            "content":[{"type":"text","text":"look at this"},{"type":"image","mimeType":"image/png","data":png}],"timestamp":1}}),
        )
        + &assistant(
            "a1",
            Some("u1"),
            json!([
            {"type":"thinking","thinking":"pondering deeply"},
            {"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls -la"}},
            {"type":"toolCall","id":"c2","name":"edit","arguments":{"path":"f.txt","edits":[{"oldText":"a","newText":"b"}]}},
            {"type":"toolCall","id":"c3","name":"read","arguments":{"path":"missing.txt","offset":5,"limit":10}},
            {"type":"toolCall","id":"c4","name":"my_tool","arguments":{"q":"<x>"}}]),
        )
        + &line(
            json!({"type":"message","id":"r1","parentId":"a1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash",
            "content":[{"type":"text","text":long}],"isError":false,"timestamp":3}}),
        )
        + &line(
            json!({"type":"message","id":"r2","parentId":"r1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c2","toolName":"edit",
            "content":[{"type":"text","text":"Successfully replaced"}],"details":{"diff":"-1 old line\n+1 new line\n 2 same"},"isError":false,"timestamp":3}}),
        )
        + &line(
            json!({"type":"message","id":"r3","parentId":"r2","timestamp":"t","message":{"role":"toolResult","toolCallId":"c3","toolName":"read",
            "content":[{"type":"text","text":"ENOENT: no such file"}],"isError":true,"timestamp":3}}),
        )
        + &line(
            json!({"type":"compaction","id":"k1","parentId":"r3","timestamp":"t","summary":"## Goal\nsummary text","firstKeptEntryId":"u1","tokensBefore":12345}),
        )
        + &line(
            json!({"type":"branch_summary","id":"b1","parentId":"k1","timestamp":"t","fromId":"root","summary":"explored elsewhere"}),
        )
        + &line(
            json!({"type":"message","id":"x1","parentId":"b1","timestamp":"t","message":{"role":"bashExecution","command":"make","output":"built\n","exitCode":2,"cancelled":false,"truncated":false,"timestamp":4}}),
        )
        + &line(json!({"type":"label","id":"l1","parentId":"x1","timestamp":"t","targetId":"u1","label":"start-here"}))
        + &line(json!({"type":"session_info","id":"s1","parentId":"l1","timestamp":"t","name":"My <named> session"}));
    let html = export_session_html(&s, &ExportOptions::default()).expect("renders");
    let main = main_part(&html);
    assert!(main.contains("My &lt;named&gt; session"));
    assert!(html.contains("<title>pi session: My &lt;named&gt; session</title>"));
    assert!(main.contains("prov/mod-x"));
    assert!(main.contains(&format!("<img src=\"data:image/png;base64,{png}\"")));
    assert!(
        main.contains("<details class=\"thinking\"><summary>Thinking</summary><div class=\"body\">pondering deeply")
    );
    assert!(main.contains("$ <span class=\"arg\">ls -la</span>"));
    assert!(main.contains("… 30 more lines"), "long output is folded");
    assert!(main.contains("line 40"), "folded output is still in the page");
    assert!(main.contains("<span class=\"del\">-1 old line</span><span class=\"add\">+1 new line</span>"));
    assert!(main.contains("<span class=\"extra\">:5-14</span>"));
    assert!(main.contains("<div class=\"tool err\">"), "error result styled");
    assert!(main.contains("ENOENT: no such file"));
    assert!(
        main.contains("&quot;q&quot;: &quot;&lt;x&gt;&quot;"),
        "unknown tool args as JSON"
    );
    assert!(main.contains("(no result)"));
    assert!(main.contains("Compaction: 12k tokens summarised"));
    assert!(main.contains("<h2>Goal</h2>"));
    assert!(main.contains("explored elsewhere"));
    assert!(main.contains("exit code 2"));
    assert!(main.contains("Thinking level: <b>high</b>"));
    assert!(main.contains("start-here"), "labels shown");
    assert!(main.contains("4 tool calls") || main.contains("<dt>Tool calls</dt><dd>4</dd>"));
    assert!(main.contains("$0.0030"));
}

#[test]
fn skill_block_is_folded() {
    let text = "<skill name=\"deploy\" location=\"/s/SKILL.md\">\nReferences are relative to /s.\n\nDo the deploy.\n</skill>\n\nship it now";
    let s = header() + &user("u1", None, text);
    let html = export_session_html(&s, &ExportOptions::default()).expect("renders");
    let main = main_part(&html);
    assert!(main.contains("<summary>skill: deploy</summary>"));
    assert!(main.contains("<div class=\"text\">ship it now</div>"));
    assert!(!main.contains("&lt;skill"));
}

#[test]
fn every_golden_session_renders_its_messages() {
    for version in ["0.73", "1.6"] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../testdata/golden-{version}"));
        golden_sessions_render_their_messages(&dir);
    }
}

fn golden_sessions_render_their_messages(dir: &std::path::Path) {
    let read = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut count = 0;
    for f in read.flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".session.jsonl") || name.starts_with("rpc.session-")) {
            continue;
        }
        let text = std::fs::read_to_string(f.path()).expect("read");
        let doc = SessionDoc::parse(&text).expect("golden parses");
        let html = export_doc_html(&doc, &ExportOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let main = main_part(&html);
        for i in doc.active_path(None) {
            let Some(m) = doc.entries[i].get("message") else {
                continue;
            };
            let texts: Vec<&str> = match m.get("content") {
                Some(Value::String(s)) => vec![s.as_str()],
                Some(Value::Array(b)) => b.iter().filter_map(|b| str_field(b, "text")).collect(),
                _ => vec![],
            };
            for t in texts {
                let needle = escape(t.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim());
                // Markdown text keeps quotes literal; plain-text blocks escape them.
                let loose = needle.replace("&quot;", "\"").replace("&#39;", "'");
                assert!(
                    main.contains(&needle) || main.contains(&loose),
                    "{name}: missing {needle:?}"
                );
            }
        }
        count += 1;
    }
    assert!(count >= 10, "found {count} golden sessions");
}

#[test]
fn export_file_names_and_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    assert_eq!(
        default_output_name(std::path::Path::new("/a/2026-01-01_abc.jsonl")),
        "pi-session-2026-01-01_abc.html"
    );
    assert_eq!(
        default_output_name(std::path::Path::new("notes.txt")),
        "pi-session-notes.txt.html"
    );

    let err = export_file(std::path::Path::new("missing.jsonl"), None, cwd).unwrap_err();
    assert_eq!(err.to_string(), "File not found: missing.jsonl");

    std::fs::write(cwd.join("empty.jsonl"), "").expect("write");
    let err = export_file(std::path::Path::new("empty.jsonl"), None, cwd).unwrap_err();
    assert!(
        err.to_string().starts_with("Invalid session file: empty.jsonl"),
        "{err}"
    );

    std::fs::write(cwd.join("s.jsonl"), header() + &user("u1", None, "hello file")).expect("write");
    let out = export_file(std::path::Path::new("s.jsonl"), None, cwd).expect("export");
    assert_eq!(out, cwd.join("pi-session-s.html"));
    assert!(std::fs::read_to_string(&out).expect("read").contains("hello file"));

    let out = export_file(
        std::path::Path::new("s.jsonl"),
        Some(std::path::Path::new("custom.html")),
        cwd,
    )
    .expect("export");
    assert_eq!(out, cwd.join("custom.html"));
    assert!(out.is_file());
}

#[test]
fn version_one_files_render_as_a_chain() {
    let s = line(json!({"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}))
        + &line(
            json!({"type":"message","timestamp":"t","message":{"role":"user","content":"old question","timestamp":1}}),
        )
        + &line(
            json!({"type":"message","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"old answer"}],"timestamp":2}}),
        )
        + &line(
            json!({"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"note","content":"hook says hi","display":true,"timestamp":3}}),
        );
    let html = export_session_html(&s, &ExportOptions::default()).expect("renders");
    let main = main_part(&html);
    assert!(main.contains("old question") && main.contains("old answer"));
    assert!(main.contains("hook says hi"));
}

#[test]
fn renderer_lines_replace_the_generic_block_of_extension_tools_only() {
    let tool_result = |id: &str, parent: &str, call: &str, name: &str, text: &str| {
        line(
            json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-02T03:04:08.000Z",
            "message":{"role":"toolResult","toolCallId":call,"toolName":name,
            "content":[{"type":"text","text":text}],"isError":false,"timestamp":3}}),
        )
    };
    let jsonl = header()
        + &user("u1", None, "go")
        + &assistant(
            "a1",
            Some("u1"),
            json!([
                {"type":"toolCall","id":"c1","name":"shout","arguments":{"text":"hey"}},
                {"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"ls"}}
            ]),
        )
        + &tool_result("r1", "a1", "c1", "shout", "HEY")
        + &tool_result("r2", "r1", "c2", "bash", "file.txt");
    let doc = SessionDoc::parse(&jsonl).expect("doc");
    // Only tools the page does not lay out itself are offered to renderers.
    let calls = renderable_tool_calls(&doc, None);
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].0.as_str(), calls[0].1.as_str()), ("c1", "shout"));
    assert_eq!(
        calls[0].3.as_ref().and_then(|r| r["content"][0]["text"].as_str()),
        Some("HEY")
    );

    let mut options = ExportOptions::default();
    let rendered = RenderedTool {
        call: Some(vec!["\x1b[1mSHOUT CALL hey\x1b[22m".into()]),
        result_collapsed: Some(vec!["short".into()]),
        result_expanded: Some(vec!["\x1b[38;2;0;255;0mlong HEY\x1b[39m".into()]),
    };
    options.rendered_tools.insert("c1".into(), rendered.clone());
    // A rendering for a tool the page lays out itself is not used.
    options.rendered_tools.insert("c2".into(), rendered);
    let html = export_session_html(&jsonl, &options).expect("html");
    let main = main_part(&html);
    assert!(
        main.contains("<span style=\"font-weight:bold\">SHOUT CALL hey</span>"),
        "{main}"
    );
    assert!(
        main.contains("<summary><div class=\"ansi-line\">short</div></summary>"),
        "{main}"
    );
    assert!(
        main.contains("<span style=\"color:rgb(0,255,0)\">long HEY</span>"),
        "{main}"
    );
    assert_eq!(main.matches("SHOUT CALL").count(), 1);
    assert!(
        main.contains("$ <span class=\"arg\">ls</span>"),
        "bash keeps the page's layout: {main}"
    );
}
