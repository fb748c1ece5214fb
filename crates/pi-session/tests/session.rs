//! Black-box tests of the session store against pi's golden files and the file rules.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_session::*;

#[path = "session/crash.rs"]
mod crash;
#[path = "session/faults.rs"]
mod faults;

/// The session files of the TypeScript pi 0.73.1 and 1.6.0 (`testdata/`).
fn golden(version: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../testdata/golden-{version}"))
}

fn golden_files() -> Vec<PathBuf> {
    session_files_in(&golden("0.73"))
}

fn session_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    files.retain(|p| {
        let n = p.file_name().unwrap().to_string_lossy().into_owned();
        n.ends_with(".session.jsonl") || (n.starts_with("rpc.session-") && n.ends_with(".jsonl"))
    });
    files.sort();
    files
}

#[test]
fn golden_lines_round_trip_with_pis_field_order() {
    let files = golden_files();
    assert!(files.len() > 10, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate().skip(1) {
            let entry = Entry::from_json_line(line).unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), n + 1));
            assert!(
                !matches!(entry.kind, EntryKind::Unknown { .. }),
                "{}:{} parsed as unknown",
                f.display(),
                n + 1
            );
            let written = entry.to_json_line().unwrap();
            if written != line {
                // pi-ai writes some small floats in exponent form (4e-6 for 0.000004): the same
                // number; everything else must match, keys in the same order.
                assert_same_shape(&written, line, &format!("{}:{}", f.display(), n + 1));
            }
        }
    }
}

fn key_order(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                key_order(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| key_order(v, out)),
        _ => {}
    }
}

fn assert_same_shape(a: &str, b: &str, what: &str) {
    let va: serde_json::Value = serde_json::from_str(a).unwrap();
    let vb: serde_json::Value = serde_json::from_str(b).unwrap();
    assert_eq!(va, vb, "{what}");
    let (mut ka, mut kb) = (Vec::new(), Vec::new());
    key_order(&va, &mut ka);
    key_order(&vb, &mut kb);
    assert_eq!(ka, kb, "{what}: key order");
}

// ---------------------------------------------------------------------------------------------
// helpers

fn user(text: &str) -> pi_ai::Message {
    pi_ai::Message::user_text(text)
}

fn assistant(text: &str) -> pi_ai::Message {
    pi_ai::Message::Assistant(Arc::new(pi_ai::AssistantMessage {
        content: vec![pi_ai::Content::text(text)],
        api: "openai-completions".into(),
        provider: "mock".into(),
        model: "m1".into(),
        timestamp: pi_ai::now_ms(),
        ..Default::default()
    }))
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap()
}

fn texts(ctx: &SessionContext) -> Vec<String> {
    ctx.messages
        .iter()
        .map(|m| match m {
            AgentMessage::Llm(pi_ai::Message::User(u)) => u.content.text(),
            AgentMessage::Llm(pi_ai::Message::Assistant(a)) => a.text(),
            AgentMessage::Llm(pi_ai::Message::ToolResult(t)) => pi_ai::join_text(&t.content),
            AgentMessage::Custom(c) => format!(
                "{}:{}",
                c.role,
                c.field("summary")
                    .or(c.field("content"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
            ),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// golden files

#[test]
fn golden_files_load_and_rebuild_their_context() {
    load_and_rebuild_context(golden_files());
}

#[test]
fn sessions_of_1_6_load_and_rebuild_their_context() {
    let files = session_files_in(&golden("1.6"));
    assert!(files.len() > 10, "{files:?}");
    load_and_rebuild_context(files);
}

fn load_and_rebuild_context(files: Vec<PathBuf>) {
    for f in files {
        let sm = SessionManager::open_read_only(&f).unwrap();
        assert!(sm.load_report().skipped.is_empty(), "{}", f.display());
        assert!(!sm.get_entries().is_empty());
        let on_path = sm.get_branch(None);
        assert_eq!(on_path.len(), sm.get_entries().len(), "{}: linear", f.display());
        let ctx = sm.build_context();
        let stored = on_path.iter().filter(|e| e.message().is_some()).count();
        // The golden compaction keeps everything from the first entry: its summary comes on top.
        let compacted = on_path.iter().any(|e| e.type_name() == "compaction");
        assert_eq!(ctx.messages.len(), stored + usize::from(compacted), "{}", f.display());
        if compacted {
            assert_eq!(ctx.messages[0].role(), "compactionSummary");
        }
        assert!(ctx.messages.iter().all(|m| !m.role().is_empty()));
        let last_model = on_path.iter().rev().find_map(|e| match &e.kind {
            EntryKind::ModelChange { provider, model_id, .. } => Some((provider.as_str(), model_id.as_str())),
            _ => e.message()?.assistant_model(),
        });
        if let Some((provider, model)) = last_model {
            let m = ctx.model.clone().unwrap();
            assert_eq!((m.provider.as_str(), m.model_id.as_str()), (provider, model));
        }
        let level = on_path.iter().rev().find_map(|e| match &e.kind {
            EntryKind::ThinkingLevelChange { thinking_level, .. } => Some(thinking_level.as_str()),
            _ => None,
        });
        assert_eq!(ctx.thinking_level.as_str(), level.unwrap_or("off"), "{}", f.display());
    }
}

#[test]
fn golden_rpc_sessions_keep_bash_runs_names_and_parents() {
    let one = golden("0.73").join("rpc.session-1.jsonl");
    let sm = SessionManager::open_read_only(&one).unwrap();
    let ctx = sm.build_context();
    let bash: Vec<&AgentMessage> = ctx.messages.iter().filter(|m| m.role() == "bashExecution").collect();
    assert!(!bash.is_empty());
    let llm = convert_to_llm(&ctx.messages);
    assert!(llm.iter().any(|m| match m {
        pi_ai::Message::User(u) => u.content.text().starts_with("Ran `"),
        _ => false,
    }));
    let named = golden_files()
        .into_iter()
        .filter_map(|f| SessionManager::open_read_only(f).ok())
        .filter(|sm| sm.session_name().is_some())
        .count();
    assert!(named > 0, "some golden session is named");
    let forked = golden_files()
        .into_iter()
        .filter_map(|f| SessionManager::open_read_only(f).ok())
        .filter(|sm| sm.header().parent_session.is_some())
        .count();
    assert!(forked > 0, "some golden session has a parentSession");
}

// ---------------------------------------------------------------------------------------------
// writing

#[test]
fn nothing_is_written_before_the_first_user_message() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let mut sm = SessionManager::create(&sessions, "/proj");
    let file = sm.session_file().unwrap().to_path_buf();
    assert_eq!(file.parent().unwrap(), sessions);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(&format!("_{}.jsonl", sm.session_id())), "{name}");
    assert_eq!(&name[13..14], "-", "{name}: ':' replaced");

    sm.append_model_change("mock", "m1").unwrap();
    sm.append_thinking_level_change("off").unwrap();
    assert!(!file.exists());
    assert!(!sessions.exists(), "the directory is created on the first write");
    // pi 1.6: the first user message is written at once, so a prompt whose reply fails is kept.
    sm.append_message(user("hi")).unwrap();
    assert_eq!(lines_of(&file).len(), 4);
    sm.append_message(assistant("hello")).unwrap();
    let lines = lines_of(&file);
    assert_eq!(lines.len(), 5);
    let header = json(&lines[0]);
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);
    assert_eq!(header["cwd"], "/proj");
    assert_eq!(
        lines[0],
        format!(
            r#"{{"type":"session","version":3,"id":"{}","timestamp":"{}","cwd":"/proj"}}"#,
            sm.session_id(),
            sm.header().timestamp
        )
    );
    let mut parent = serde_json::Value::Null;
    for l in &lines[1..] {
        let v = json(l);
        let id = v["id"].as_str().unwrap();
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(v["parentId"], parent);
        assert_eq!(v["timestamp"].as_str().unwrap().len(), 24);
        parent = v["id"].clone();
    }
    assert!(lines[1].starts_with(r#"{"type":"model_change","id":""#));
    assert!(lines[1].ends_with(r#","provider":"mock","modelId":"m1"}"#));

    sm.append_message(user("again")).unwrap();
    assert_eq!(lines_of(&file).len(), 6);
    assert_eq!(lines_of(&file)[..5], lines[..]);
}

#[test]
fn a_written_session_reopens_identically() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create(dir.path(), "/proj");
    sm.append_thinking_level_change("high").unwrap();
    sm.append_message(user("q")).unwrap();
    sm.append_message(assistant("a")).unwrap();
    sm.append_custom("ext", Some(serde_json::json!({"k": 1}))).unwrap();
    sm.append_custom_message("ext", pi_ai::UserContent::Text("shown".into()), true, None)
        .unwrap();
    let file = sm.session_file().unwrap().to_path_buf();
    let before = sm.build_context();
    let entries = sm.get_entries().to_vec();
    drop(sm);

    let sm = SessionManager::open(&file).unwrap();
    assert_eq!(sm.get_entries(), &entries[..]);
    assert_eq!(sm.get_leaf_id(), Some(entries[4].id.as_str()));
    assert_eq!(sm.cwd(), "/proj");
    let ctx = sm.build_context();
    assert_eq!(ctx, before);
    assert_eq!(ctx.thinking_level, pi_ai::ThinkingLevel::High);
    assert_eq!(ctx.model.as_ref().unwrap().model_id, "m1");
    assert_eq!(texts(&ctx), vec!["q", "a", "custom:shown"]);

    // pi's field order for the extension entries: their own fields before the common ones.
    let lines = lines_of(&file);
    assert!(lines[4].starts_with(r#"{"type":"custom","customType":"ext","data":{"k":1},"id":""#));
    assert!(
        lines[5].starts_with(r#"{"type":"custom_message","customType":"ext","content":"shown","display":true,"id":""#)
    );
}

#[test]
fn a_line_cut_short_is_kept_and_the_next_entry_starts_a_fresh_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create(dir.path(), "/proj");
    sm.append_message(user("q")).unwrap();
    sm.append_message(assistant("a")).unwrap();
    let file = sm.session_file().unwrap().to_path_buf();
    drop(sm);
    // A crash mid-write, a blank line and garbage in the middle.
    let mut text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = r#"{"type":"message","id":"deadbeef","parentId":null,"timestamp":"2026"#;
    text = format!("{}\n\nnot json at all\n{}\n{}", lines[0], lines[1..].join("\n"), cut);
    std::fs::write(&file, &text).unwrap();

    let mut sm = SessionManager::open(&file).unwrap();
    let report = sm.load_report().clone();
    assert!(report.unterminated_last_line);
    assert_eq!(report.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), vec![2, 3, 6]);
    assert_eq!(sm.get_entries().len(), 2);
    sm.append_message(user("after the crash")).unwrap();
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(&text), "nothing before the append changed");
    assert_eq!(after[text.len()..].chars().next(), Some('\n'));
    drop(sm);

    let sm = SessionManager::open(&file).unwrap();
    assert_eq!(sm.get_entries().len(), 3);
    assert_eq!(sm.load_report().skipped.len(), 3);
    assert!(!sm.load_report().unterminated_last_line);
    assert_eq!(texts(&sm.build_context()), vec!["q", "a", "after the crash"]);
}

#[test]
fn a_second_writer_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = SessionManager::create(dir.path(), "/proj");
    a.append_message(user("q")).unwrap();
    a.append_message(assistant("a")).unwrap();
    let file = a.session_file().unwrap().to_path_buf();

    let err = SessionManager::open(&file).unwrap_err();
    assert!(matches!(err, SessionError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("in use by another pi process"));
    // Readers are never blocked.
    let viewer = SessionManager::open_read_only(&file).unwrap();
    assert_eq!(viewer.get_entries().len(), 2);
    assert!(matches!(
        SessionManager::open_read_only(&file).unwrap().append_message(user("x")),
        Err(SessionError::ReadOnly { .. })
    ));
    assert!(SessionManager::continue_recent(dir.path(), "/proj").is_err());

    drop(a);
    let mut b = SessionManager::open(&file).unwrap();
    b.append_message(user("second")).unwrap();
    assert_eq!(lines_of(&file).len(), 4);
}

#[test]
fn in_memory_sessions_never_touch_the_disk() {
    let mut sm = SessionManager::in_memory("/proj");
    sm.append_message(user("q")).unwrap();
    sm.append_message(assistant("a")).unwrap();
    assert!(sm.session_file().is_none());
    assert!(!sm.is_persisted());
    assert_eq!(sm.build_context().messages.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// the tree

#[test]
fn branching_moves_the_leaf_and_the_context_follows_it() {
    let mut sm = SessionManager::in_memory("/proj");
    let u1 = sm.append_message(user("u1")).unwrap();
    let a1 = sm.append_message(assistant("a1")).unwrap();
    sm.append_message(user("u2")).unwrap();
    sm.append_message(assistant("a2")).unwrap();

    sm.branch(&a1).unwrap();
    let u2b = sm.append_message(user("u2b")).unwrap();
    assert_eq!(sm.get_entry(&u2b).unwrap().parent_id.as_deref(), Some(a1.as_str()));
    assert_eq!(texts(&sm.build_context()), vec!["u1", "a1", "u2b"]);
    assert_eq!(sm.get_children(Some(&a1)).len(), 2);

    let err = sm.branch("nope").unwrap_err();
    assert_eq!(err.to_string(), "Entry nope not found");

    sm.reset_leaf();
    assert!(sm.build_context().messages.is_empty());
    assert_eq!(sm.build_context().thinking_level, pi_ai::ThinkingLevel::Off);
    let root2 = sm.append_message(user("fresh")).unwrap();
    assert_eq!(sm.get_entry(&root2).unwrap().parent_id, None);

    let tree = sm.get_tree();
    assert_eq!(tree.roots.len(), 2);
    assert_eq!(tree.nodes[tree.roots[0]].entry.id, u1);
    let a1_node = &tree.nodes[1];
    assert_eq!(a1_node.entry.id, a1);
    let kids: Vec<&str> = a1_node
        .children
        .iter()
        .map(|&c| tree.nodes[c].entry.text_hint())
        .collect();
    assert_eq!(kids, vec!["u2", "u2b"]);
}

trait TextHint {
    fn text_hint(&self) -> &str;
}

impl TextHint for Entry {
    fn text_hint(&self) -> &str {
        match self.message() {
            Some(AgentMessage::Llm(pi_ai::Message::User(u))) => match &u.content {
                pi_ai::UserContent::Blocks(b) => b[0].as_text().unwrap_or(""),
                pi_ai::UserContent::Text(t) => t,
            },
            _ => "",
        }
    }
}

#[test]
fn branch_summaries_enter_the_context() {
    let mut sm = SessionManager::in_memory("/proj");
    let u1 = sm.append_message(user("u1")).unwrap();
    let a1 = sm.append_message(assistant("a1")).unwrap();
    let bs = sm
        .append_branch_summary(
            Some(&u1),
            "we tried X",
            Some(serde_json::json!({"readFiles":[]})),
            None,
            None,
        )
        .unwrap();
    let e = sm.get_entry(&bs).unwrap();
    assert_eq!(e.parent_id.as_deref(), Some(u1.as_str()));
    assert_eq!(texts(&sm.build_context()), vec!["u1", "branchSummary:we tried X"]);
    let line = e.to_json_line().unwrap();
    // `fromId` names the leaf the branch was left from.
    assert!(line.contains(&format!(
        r#""fromId":"{a1}","summary":"we tried X","details":{{"readFiles":[]}}}}"#
    )));

    let usage = serde_json::json!({"input": 5, "output": 2});
    let root = sm
        .append_branch_summary(None, "from the top", None, Some(true), Some(usage))
        .unwrap();
    let e = sm.get_entry(&root).unwrap();
    assert_eq!(e.parent_id, None);
    assert!(e.to_json_line().unwrap().ends_with(&format!(
        r#""fromId":"{bs}","summary":"from the top","usage":{{"input":5,"output":2}},"fromHook":true}}"#
    )));
    sm.reset_leaf();
    let from_nothing = sm.append_branch_summary(None, "again", None, None, None).unwrap();
    assert!(sm
        .get_entry(&from_nothing)
        .unwrap()
        .to_json_line()
        .unwrap()
        .contains(r#""fromId":"root""#));
    // An empty summary is not shown to the model.
    sm.append_branch_summary(Some(&u1), "", None, None, None).unwrap();
    assert_eq!(texts(&sm.build_context()), vec!["u1"]);
}

#[test]
fn the_context_is_rebuilt_around_the_last_compaction() {
    let mut sm = SessionManager::in_memory("/proj");
    sm.append_thinking_level_change("low").unwrap();
    sm.append_message(user("u1")).unwrap();
    sm.append_message(assistant("a1")).unwrap();
    let u2 = sm.append_message(user("u2")).unwrap();
    sm.append_message(assistant("a2")).unwrap();
    sm.append_compaction("first summary", &u2, 1000, None, None, None, None)
        .unwrap();
    sm.append_message(user("u3")).unwrap();
    let a3 = sm.append_message(assistant("a3")).unwrap();
    sm.append_model_change("other", "m2").unwrap();
    let ctx = sm.build_context();
    assert_eq!(
        texts(&ctx),
        vec!["compactionSummary:first summary", "u2", "a2", "u3", "a3"]
    );
    assert_eq!(ctx.messages[0].field("tokensBefore"), Some(&serde_json::json!(1000)));
    assert!(ctx.messages[0].field("timestamp").unwrap().is_i64());
    assert_eq!(ctx.model.as_ref().unwrap().model_id, "m2");
    assert_eq!(ctx.thinking_level, pi_ai::ThinkingLevel::Low);

    // A second compaction supersedes the first; kept entries start at its firstKeptEntryId.
    sm.append_compaction("second summary", &a3, 2000, None, None, None, None)
        .unwrap();
    sm.append_message(user("u4")).unwrap();
    assert_eq!(
        texts(&sm.build_context()),
        vec!["compactionSummary:second summary", "a3", "u4"]
    );
    let llm = convert_to_llm(&sm.build_context().messages);
    match &llm[0] {
        pi_ai::Message::User(u) => assert_eq!(
            u.content.text(),
            format!("{COMPACTION_SUMMARY_PREFIX}second summary{COMPACTION_SUMMARY_SUFFIX}")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_compaction_checkpoint_is_stamped_with_its_time_and_leads_the_context() {
    let mut sm = SessionManager::in_memory("/proj");
    let system = |text: &str, at: i64| -> AgentMessage {
        serde_json::from_value(serde_json::json!({
            "role": "system", "content": text, "sections": {"preamble": "p"}, "timestamp": at
        }))
        .unwrap()
    };
    sm.append_message(system("declared", 5)).unwrap();
    sm.append_message(user("u1")).unwrap();
    sm.append_message(assistant("a1")).unwrap();
    let u2 = sm.append_message(user("u2")).unwrap();
    // A system message in the kept range gives way to the checkpoint.
    sm.append_message(system("kept", 6)).unwrap();
    let checkpoint =
        serde_json::json!({"role": "system", "content": "head", "sections": {"preamble": "p"}, "timestamp": 1});
    let id = sm
        .append_compaction("summary", &u2, 10, None, Some(false), None, Some(checkpoint))
        .unwrap();
    let entry = sm.get_entry(&id).unwrap();
    let line = serde_json::to_value(entry).unwrap();
    let at = chrono::DateTime::parse_from_rfc3339(line["timestamp"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert_eq!(line["systemMessage"]["timestamp"], at);
    assert_eq!(line["systemMessage"]["content"], "head");
    assert_eq!(
        texts(&sm.build_context()),
        vec!["system:head", "compactionSummary:summary", "u2"]
    );
}

#[test]
fn labels_resolve_to_the_latest_and_clear() {
    let mut sm = SessionManager::in_memory("/proj");
    let u1 = sm.append_message(user("u1")).unwrap();
    sm.append_label(&u1, Some("start")).unwrap();
    assert_eq!(sm.get_label(&u1), Some("start"));
    sm.append_label(&u1, Some("begin")).unwrap();
    assert_eq!(sm.get_label(&u1), Some("begin"));
    let tree = sm.get_tree();
    assert_eq!(tree.nodes[0].label, Some("begin"));
    assert!(tree.nodes[0].label_timestamp.is_some());
    sm.append_label(&u1, None).unwrap();
    assert_eq!(sm.get_label(&u1), None);
    sm.append_label(&u1, Some("x")).unwrap();
    sm.append_label(&u1, Some("")).unwrap();
    assert_eq!(sm.get_label(&u1), None);
    assert_eq!(
        sm.append_label("zzzzzzzz", Some("x")).unwrap_err().to_string(),
        "Entry zzzzzzzz not found"
    );
    // A cleared label is written without the field, as pi does.
    let cleared = sm
        .get_entries()
        .iter()
        .find(|e| matches!(&e.kind, EntryKind::Label { label: None, .. }));
    assert!(cleared
        .unwrap()
        .to_json_line()
        .unwrap()
        .ends_with(&format!(r#""targetId":"{u1}"}}"#)));
}

#[test]
fn the_session_name_is_the_latest_session_info_in_file_order() {
    let mut sm = SessionManager::in_memory("/proj");
    assert_eq!(sm.session_name(), None);
    let u1 = sm.append_message(user("u1")).unwrap();
    sm.append_session_info("  First name ").unwrap();
    assert_eq!(sm.session_name(), Some("First name"));
    sm.branch(&u1).unwrap();
    sm.append_session_info("Second").unwrap();
    assert_eq!(sm.session_name(), Some("Second"));
    sm.append_session_info("").unwrap();
    assert_eq!(sm.session_name(), None);
}

#[test]
fn orphans_and_cycles_become_roots() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let text = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"custom","customType":"a","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}"#,
        r#"{"type":"custom","customType":"b","id":"bbbbbbbb","parentId":"missing0","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        r#"{"type":"custom","customType":"c","id":"cccccccc","parentId":"cccccccc","timestamp":"2026-01-01T00:00:03.000Z"}"#,
        r#"{"type":"custom","customType":"d","id":"dddddddd","parentId":"eeeeeeee","timestamp":"2026-01-01T00:00:04.000Z"}"#,
        r#"{"type":"custom","customType":"e","id":"eeeeeeee","parentId":"dddddddd","timestamp":"2026-01-01T00:00:05.000Z"}"#,
    ]
    .join("\n");
    std::fs::write(&file, text + "\n").unwrap();
    let sm = SessionManager::open_read_only(&file).unwrap();
    let tree = sm.get_tree();
    let roots: Vec<&str> = tree.roots.iter().map(|&r| tree.nodes[r].entry.id.as_str()).collect();
    assert_eq!(roots, vec!["aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd"]);
    let mut seen = 0;
    let mut stack = tree.roots.clone();
    while let Some(n) = stack.pop() {
        seen += 1;
        stack.extend(&tree.nodes[n].children);
    }
    assert_eq!(seen, 5, "every entry exactly once");
    // The walk up a cycle ends.
    assert_eq!(sm.get_branch(None).len(), 2);
}

// ---------------------------------------------------------------------------------------------
// unknown data survives

#[test]
fn unknown_entry_types_and_fields_survive_reads_and_copies() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let future = r#"{"type":"future_thing","id":"ffffffff","parentId":"aaaaaaaa","timestamp":"2026-01-01T00:00:02.000Z","payload":{"x":[1,2]}}"#;
    let extra_field = r#"{"type":"model_change","id":"bbbbbbbb","parentId":"ffffffff","timestamp":"2026-01-01T00:00:03.000Z","provider":"p","modelId":"m","newField":true}"#;
    let text = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","futureHeader":1}"#,
        r#"{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi","newBlockField":1}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"newMsgField":"x"}}"#,
        future,
        extra_field,
    ]
    .join("\n")
        + "\n";
    std::fs::write(&file, &text).unwrap();

    let mut sm = SessionManager::open(&file).unwrap();
    assert!(sm.load_report().skipped.is_empty());
    assert_eq!(sm.get_entries().len(), 3);
    assert_eq!(sm.get_entries()[1].type_name(), "future_thing");
    for (i, l) in text.lines().skip(1).enumerate() {
        assert_eq!(sm.get_entries()[i].to_json_line().unwrap(), l);
    }
    assert_eq!(sm.get_branch(None).len(), 3, "unknown entries are tree nodes");
    assert_eq!(sm.build_context().messages.len(), 1);

    // A fork into a new file writes them back.
    sm.append_message(user("more")).unwrap();
    let last = sm.get_leaf_id().unwrap().to_string();
    let forked = sm.fork_to(&last).unwrap().unwrap();
    let lines = lines_of(&forked);
    assert_eq!(lines[2], future);
    assert_eq!(lines[3], extra_field);
    assert_eq!(json(&lines[0])["parentSession"], file.to_string_lossy().as_ref());
}

// ---------------------------------------------------------------------------------------------
// forks

#[test]
fn fork_to_copies_the_path_and_its_labels_into_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create(dir.path(), "/proj");
    let u1 = sm.append_message(user("u1")).unwrap();
    let a1 = sm.append_message(assistant("a1")).unwrap();
    sm.append_label(&u1, Some("start")).unwrap();
    let u2 = sm.append_message(user("u2")).unwrap();
    sm.append_message(assistant("a2")).unwrap();
    sm.append_label(&u2, Some("not on the path")).unwrap();
    let old_file = sm.session_file().unwrap().to_path_buf();
    let old_text = std::fs::read_to_string(&old_file).unwrap();
    let old_id = sm.session_id().to_string();

    let new_file = sm.fork_to(&a1).unwrap().unwrap();
    assert_ne!(new_file, old_file);
    assert_ne!(sm.session_id(), old_id);
    assert_eq!(
        std::fs::read_to_string(&old_file).unwrap(),
        old_text,
        "the source is untouched"
    );
    let lines = lines_of(&new_file);
    assert_eq!(lines.len(), 4, "header, u1, a1, one label");
    assert_eq!(json(&lines[0])["parentSession"], old_file.to_string_lossy().as_ref());
    let label = json(&lines[3]);
    assert_eq!(label["type"], "label");
    assert_eq!(label["targetId"], u1.as_str());
    assert_eq!(label["parentId"], a1.as_str());
    assert_eq!(sm.get_label(&u1), Some("start"));
    assert_eq!(texts(&sm.build_context()), vec!["u1", "a1"]);
    // The new file is ours now: appends go there.
    sm.append_message(user("u2'")).unwrap();
    assert_eq!(lines_of(&new_file).len(), 5);
    assert!(matches!(sm.fork_to("nope"), Err(SessionError::EntryNotFound(_))));
}

#[test]
fn fork_to_a_path_without_messages_is_written_lazily() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create(dir.path(), "/proj");
    let m = sm.append_model_change("mock", "m1").unwrap();
    sm.append_message(user("u1")).unwrap();
    sm.append_message(assistant("a1")).unwrap();
    let new_file = sm.fork_to(&m).unwrap().unwrap();
    assert!(!new_file.exists());
    sm.append_message(user("u1'")).unwrap();
    assert_eq!(lines_of(&new_file).len(), 3);
    // A fork holding a user message is written at once.
    let u = sm.find_message_entry(|m| m.role() == "user").unwrap().to_string();
    let forked = sm.fork_to(&u).unwrap().unwrap();
    assert_eq!(lines_of(&forked).len(), 3);
}

/// A session of pi 1.6 (system messages, new assistant fields) loads and round-trips, and a
/// `context_edit` leaves its target out of the rebuilt context while the history keeps it.
#[test]
fn pi_16_sessions_load_and_context_edits_apply() {
    let dir = tempfile::tempdir().unwrap();
    let path = golden("1.6").join("hello-json.session.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipped: no {}", path.display());
        return;
    };
    let copy = dir.path().join("s.jsonl");
    std::fs::write(&copy, &text).unwrap();
    let mut sm = SessionManager::open(&copy).unwrap();
    let roles = |sm: &SessionManager| -> Vec<String> {
        sm.build_context()
            .messages
            .iter()
            .map(|m| m.role().to_string())
            .collect()
    };
    assert_eq!(roles(&sm), ["system", "user", "assistant"]);
    for line in text.lines() {
        let entry = Entry::from_json_line(line);
        if let Ok(entry) = entry {
            assert_same_shape(&entry.to_json_line().unwrap(), line, "1.6 line");
        }
    }
    let failed = sm.find_message_entry(|m| m.role() == "assistant").unwrap().to_string();
    let edit = sm.append_context_edit(&failed, None).unwrap();
    let line = edit.to_json_line().unwrap();
    let v = json(&line);
    assert_eq!(v["type"], "context_edit");
    assert_eq!(v["targetId"], failed);
    assert_eq!(v["replacement"], serde_json::Value::Null);
    assert_eq!(roles(&sm), ["system", "user"]);
    // Reopened, the edit still applies, and the raw history still has the reply.
    drop(sm);
    let mut sm = SessionManager::open(&copy).unwrap();
    assert_eq!(roles(&sm), ["system", "user"]);
    assert!(sm.get_entries().iter().any(|e| e.id == failed));
    // A replacement changes only the content the model sees; the latest edit wins.
    let user_id = sm.find_message_entry(|m| m.role() == "user").unwrap().to_string();
    sm.append_context_edit(&user_id, Some(serde_json::json!([{"type": "text", "text": "edited"}])))
        .unwrap();
    sm.append_context_edit(&failed, Some(serde_json::json!([{"type": "text", "text": "kept"}])))
        .unwrap();
    let ctx = sm.build_context();
    assert_eq!(texts(&ctx)[1..], ["edited".to_string(), "kept".to_string()]);
}

#[test]
fn fork_from_copies_another_projects_session_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let mut src = SessionManager::create(session_dir_for_cwd(&root, "/a"), "/a");
    src.append_message(user("from a")).unwrap();
    src.append_message(assistant("ok")).unwrap();
    let src_file = src.session_file().unwrap().to_path_buf();
    drop(src);

    let target_dir = session_dir_for_cwd(&root, "/b");
    let mut forked = SessionManager::fork_from(&src_file, "/b", &target_dir).unwrap();
    let file = forked.session_file().unwrap().to_path_buf();
    assert_eq!(file.parent().unwrap(), target_dir);
    let src_lines = lines_of(&src_file);
    let lines = lines_of(&file);
    assert_eq!(lines[1..], src_lines[1..]);
    let header = json(&lines[0]);
    assert_eq!(header["cwd"], "/b");
    assert_eq!(header["parentSession"], src_file.to_string_lossy().as_ref());
    assert_ne!(header["id"], json(&src_lines[0])["id"]);
    assert!(matches!(SessionManager::open(&file), Err(SessionError::Locked { .. })));
    forked.append_message(user("in b")).unwrap();
    assert_eq!(lines_of(&file).len(), 4);

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let err = SessionManager::fork_from(&empty, "/b", &target_dir).unwrap_err();
    assert!(err
        .to_string()
        .starts_with("Cannot fork: source session file is empty or invalid"));
}

#[test]
fn export_branch_writes_the_active_branch_as_a_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::in_memory("/proj");
    let u1 = sm.append_message(user("u1")).unwrap();
    sm.append_message(assistant("a1")).unwrap();
    sm.branch(&u1).unwrap();
    sm.append_message(assistant("a1b")).unwrap();
    let out = dir.path().join("export.jsonl");
    sm.export_branch(&out).unwrap();
    let lines = lines_of(&out);
    assert_eq!(lines.len(), 3);
    assert_eq!(json(&lines[0])["id"], sm.session_id());
    assert_eq!(json(&lines[2])["parentId"], json(&lines[1])["id"]);
}

// ---------------------------------------------------------------------------------------------
// old and broken files

#[test]
fn v1_and_v2_files_are_migrated_and_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.jsonl");
    let text = [
        r#"{"type":"session","id":"old-session","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"u1","timestamp":1}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a1"}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"hookMessage","customType":"h","content":"hook","display":true,"timestamp":3}}"#,
        "garbage line",
        r#"{"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"S","firstKeptEntryIndex":2,"tokensBefore":9}"#,
    ]
    .join("\n")
        + "\n";
    std::fs::write(&file, text).unwrap();
    let mut sm = SessionManager::open(&file).unwrap();
    assert_eq!(sm.load_report().migrated_from, Some(1));
    assert_eq!(sm.get_entries().len(), 4);
    let ids: Vec<String> = sm.get_entries().iter().map(|e| e.id.clone()).collect();
    let ctx = sm.build_context();
    assert_eq!(texts(&ctx), vec!["compactionSummary:S", "a1", "custom:hook"]);

    let lines = lines_of(&file);
    assert_eq!(json(&lines[0])["version"], 3);
    assert_eq!(lines[4], "garbage line", "an unreadable line stays where it was");
    assert_eq!(json(&lines[5])["firstKeptEntryId"], ids[1].as_str());
    assert_eq!(json(&lines[3])["message"]["role"], "custom");
    sm.append_message(user("new")).unwrap();
    drop(sm);
    let sm = SessionManager::open(&file).unwrap();
    assert_eq!(sm.load_report().migrated_from, None);
    assert_eq!(sm.get_entries().len(), 5);
}

#[test]
fn a_file_that_is_no_session_is_moved_aside_not_destroyed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.jsonl");
    std::fs::write(&file, "this is not a session\n").unwrap();
    let sm = SessionManager::open(&file).unwrap();
    let aside = sm.load_report().moved_aside.clone().unwrap();
    assert_eq!(std::fs::read_to_string(aside).unwrap(), "this is not a session\n");
    let lines = lines_of(&file);
    assert_eq!(lines.len(), 1);
    assert_eq!(json(&lines[0])["id"], sm.session_id());

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let sm = SessionManager::open(&empty).unwrap();
    assert!(sm.load_report().moved_aside.is_none());
    assert_eq!(lines_of(&empty).len(), 1);

    let missing = dir.path().join("new.jsonl");
    let mut sm = SessionManager::open_in(&missing, None, Some("/cwd")).unwrap();
    assert_eq!(sm.session_file().unwrap(), missing);
    assert_eq!(sm.cwd(), "/cwd");
    sm.append_message(assistant("a")).unwrap();
    assert_eq!(lines_of(&missing).len(), 2);
}

// ---------------------------------------------------------------------------------------------
// listing

#[test]
fn listing_finding_and_continuing_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let here = session_dir_for_cwd(&root, "/home/u/proj");
    assert!(here.ends_with("--home-u-proj--"));
    let elsewhere = session_dir_for_cwd(&root, "/other");

    let mut s1 = SessionManager::create(&here, "/home/u/proj");
    s1.append_message(user("first question")).unwrap();
    s1.append_message(assistant("answer")).unwrap();
    s1.append_session_info("Named").unwrap();
    let s1_id = s1.session_id().to_string();
    let s1_file = s1.session_file().unwrap().to_path_buf();
    drop(s1);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut s2 = SessionManager::create(&elsewhere, "/other");
    s2.append_message(assistant("only the model spoke")).unwrap();
    let s2_id = s2.session_id().to_string();
    drop(s2);
    // Not a session, and a session-less directory.
    std::fs::write(here.join("junk.jsonl"), "nope\n").unwrap();

    let local = list_sessions(&here);
    assert_eq!(local.len(), 1);
    let info = &local[0];
    assert_eq!(info.id, s1_id);
    assert_eq!(info.path, s1_file);
    assert_eq!(info.cwd, "/home/u/proj");
    assert_eq!(info.name.as_deref(), Some("Named"));
    assert_eq!(info.message_count, 2);
    assert_eq!(info.first_message, "first question");
    assert_eq!(info.all_messages_text, "first question answer");
    assert!(info.modified_ms > 0);

    let all = list_all(&root);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].id, s2_id, "newest first");
    assert_eq!(all[0].first_message, "(no messages)");

    let found = find_session(&here, &root, &s1_id[..8]).unwrap();
    assert!(found.local);
    let found = find_session(&here, &root, &s2_id).unwrap();
    assert!(!found.local);
    assert_eq!(found.info.cwd, "/other");
    assert!(find_session(&here, &root, "zzzz").is_none());
    assert!(list_sessions(&dir.path().join("none")).is_empty());

    assert_eq!(find_most_recent(&here), Some(s1_file.clone()));
    let cont = SessionManager::continue_recent(&here, "/home/u/proj").unwrap();
    assert_eq!(cont.session_id(), s1_id);
    drop(cont);
    let fresh = SessionManager::continue_recent(dir.path().join("empty-dir"), "/x").unwrap();
    assert!(fresh.get_entries().is_empty());
}

// ---------------------------------------------------------------------------------------------
// interop with the reference TypeScript pi 1.6 (its compiled session manager)

/// The reference's compiled session manager, and the Node to run it with.
fn ts_session_manager(why: &str) -> Option<(PathBuf, PathBuf)> {
    let reference = pi_test_support::reference_pi(why)?;
    let sm = reference.coding_agent().join("dist/core/session-manager.js");
    assert!(sm.is_file(), "{} is missing from the reference install", sm.display());
    Some((reference.node(), sm))
}

const TS_PROBE: &str = r#"
import { SessionManager } from "SM_PATH";
const sm = SessionManager.open(process.argv[2]);
const before = sm.buildSessionContext();
const labels = {};
for (const e of sm.getEntries()) { const l = sm.getLabel(e.id); if (l) labels[e.id] = l; }
const tree = sm.getTree().map((n) => n.entry.id);
sm.appendMessage({ role: "user", content: [{ type: "text", text: "from ts" }], timestamp: 5 });
sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ts reply" }], api: "x", provider: "tsprov",
  model: "tsmodel", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 6 });
const after = sm.buildSessionContext();
console.log(JSON.stringify({ before, after, labels, tree, name: sm.getSessionName() ?? null, leaf: sm.getLeafId() }));
"#;

#[test]
fn the_typescript_pi_reads_and_continues_our_files() {
    let Some((node, ts_session_manager)) = ts_session_manager("1.6's SessionManager reads and continues our file")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create(dir.path(), "/proj");
    sm.append_model_change("mock", "m0").unwrap();
    sm.append_thinking_level_change("medium").unwrap();
    let u1 = sm.append_message(user("u1")).unwrap();
    sm.append_message(assistant("a1")).unwrap();
    sm.append_custom("ext-state", Some(serde_json::json!({"n": 1})))
        .unwrap();
    sm.append_custom_message(
        "ext",
        pi_ai::UserContent::Blocks(vec![pi_ai::Content::text("block")]),
        false,
        Some(serde_json::json!({"d": true})),
    )
    .unwrap();
    let u2 = sm.append_message(user("u2")).unwrap();
    sm.append_message(assistant("a2")).unwrap();
    sm.append_compaction(
        "summary text",
        &u2,
        1234,
        Some(serde_json::json!({"readFiles": [], "modifiedFiles": []})),
        None,
        Some(serde_json::json!({"input": 10, "output": 3})),
        None,
    )
    .unwrap();
    sm.append_label(&u1, Some("first")).unwrap();
    sm.append_session_info("Rust made").unwrap();
    sm.append_branch_summary(Some(&u2), "left a branch", None, None, None)
        .unwrap();
    sm.append_message(user("u3")).unwrap();
    let file = sm.session_file().unwrap().to_path_buf();
    let ours_before = serde_json::to_value(&sm.build_context().messages).unwrap();
    drop(sm);

    let script = dir.path().join("probe.mjs");
    std::fs::write(
        &script,
        TS_PROBE.replace("SM_PATH", &ts_session_manager.display().to_string()),
    )
    .unwrap();
    let out = std::process::Command::new(&node)
        .arg(&script)
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ts: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    assert_eq!(ts["before"]["messages"], ours_before, "the same context in both");
    assert_eq!(ts["before"]["thinkingLevel"], "medium");
    assert_eq!(ts["before"]["model"]["modelId"], "m1");
    assert_eq!(ts["labels"][&u1], "first");
    assert_eq!(ts["name"], "Rust made");

    // Ours reads what the TypeScript pi appended.
    let sm = SessionManager::open(&file).unwrap();
    assert!(sm.load_report().skipped.is_empty());
    assert_eq!(sm.get_leaf_id(), ts["leaf"].as_str());
    let ours_after = serde_json::to_value(&sm.build_context().messages).unwrap();
    assert_eq!(ts["after"]["messages"], ours_after);
    assert_eq!(sm.build_context().model.unwrap().model_id, "tsmodel");
    let tree = sm.get_tree();
    let roots: Vec<&str> = tree.roots.iter().map(|&r| tree.nodes[r].entry.id.as_str()).collect();
    assert_eq!(serde_json::json!(roots), ts["tree"]);
}

// ---------------------------------------------------------------------------------------------
// two processes

const CHILD_ENV: &str = "PI_SESSION_TEST_LOCK_CHILD";

/// Run in a child process by `another_process_cannot_write_a_locked_file`.
#[test]
fn lock_probe_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    match SessionManager::open(&path) {
        Err(SessionError::Locked { .. }) => println!("LOCKED"),
        Err(e) => println!("ERROR {e}"),
        Ok(mut sm) => {
            sm.append_message(user("child")).unwrap();
            println!("WROTE");
        }
    }
}

#[test]
fn another_process_cannot_write_a_locked_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create(dir.path(), "/proj");
    sm.append_message(user("q")).unwrap();
    sm.append_message(assistant("a")).unwrap();
    let file = sm.session_file().unwrap().to_path_buf();
    let run_child = || {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "lock_probe_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &file)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(run_child().contains("LOCKED"));
    assert_eq!(lines_of(&file).len(), 3);
    drop(sm);
    assert!(run_child().contains("WROTE"));
    assert_eq!(lines_of(&file).len(), 4);
}

#[test]
fn a_file_cut_at_any_byte_loads_and_keeps_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create(dir.path(), "/proj");
    sm.append_model_change("mock", "m1").unwrap();
    sm.append_message(user("question é")).unwrap();
    sm.append_message(assistant("answer ✓")).unwrap();
    sm.append_message(user("more")).unwrap();
    let full = std::fs::read(sm.session_file().unwrap()).unwrap();
    drop(sm);
    let file = dir.path().join("cut.jsonl");
    for cut in 0..full.len() {
        let _ = std::fs::remove_file(&file);
        for aside in [".corrupt", ".corrupt-2"] {
            let _ = std::fs::remove_file(dir.path().join(format!("cut.jsonl{aside}")));
        }
        let prefix = &full[..cut];
        std::fs::write(&file, prefix).unwrap();
        let mut sm = SessionManager::open(&file).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        let pieces: Vec<&[u8]> = prefix.split(|&b| b == b'\n').collect();
        let header_whole = serde_json::from_slice::<serde_json::Value>(pieces[0]).is_ok();
        let readable = pieces[1..]
            .iter()
            .filter(|l| {
                std::str::from_utf8(l)
                    .ok()
                    .and_then(|s| Entry::from_json_line(s).ok())
                    .is_some()
            })
            .count();
        if !header_whole {
            // No whole header: the bytes move aside (if any) and a fresh session starts.
            if let Some(aside) = &sm.load_report().moved_aside {
                assert_eq!(std::fs::read(aside).unwrap(), prefix, "cut {cut}");
            } else {
                assert!(prefix.iter().all(u8::is_ascii_whitespace), "cut {cut}");
            }
            continue;
        }
        assert_eq!(sm.get_entries().len(), readable, "cut {cut}");
        sm.append_message(assistant("after")).unwrap();
        drop(sm);
        let now = std::fs::read(&file).unwrap();
        assert!(now.starts_with(prefix), "cut {cut}: the old bytes are untouched");
        let sm = SessionManager::open(&file).unwrap();
        assert_eq!(sm.get_entries().len(), readable + 1, "cut {cut}");
        assert_eq!(
            sm.get_leaf_entry().unwrap().message().unwrap().assistant_model(),
            Some(("mock", "m1")),
            "cut {cut}"
        );
    }
}
