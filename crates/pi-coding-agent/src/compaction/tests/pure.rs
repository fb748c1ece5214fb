//! Estimates, cut points, preparation, file lists, serialisation and the trigger decision.

use pi_ai::{Content, Message, StopReason};
use pi_session::AgentMessage;
use serde_json::{json, Map};
use std::sync::Arc;

use super::*;
use crate::compaction::*;

fn custom(v: serde_json::Value) -> AgentMessage {
    serde_json::from_value(v).unwrap()
}

#[test]
fn estimates_count_chars_over_four_rounded_up_per_kind() {
    assert_eq!(estimate_tokens(&AgentMessage::from(user_msg("abcde"))), 2);
    // Text + thinking + tool name + JSON arguments.
    let a = assistant_msg(vec![
        Content::text("abcd"),
        Content::Thinking(pi_ai::ThinkingContent {
            thinking: "ab".into(),
            ..Default::default()
        }),
        tool_call("read", json!({"path": "a"})),
    ]);
    // 4 + 2 + 4 + len({"path":"a"}) = 12 -> 22 chars.
    assert_eq!(estimate_tokens(&AgentMessage::from(Message::Assistant(Arc::new(a)))), 6);
    // Tool result: text plus 4800 per image.
    let mut r = tool_result_msg("abc");
    if let Message::ToolResult(t) = &mut r {
        Arc::make_mut(t).content.push(Content::image("AAAA", "image/png"));
    }
    assert_eq!(estimate_tokens(&AgentMessage::from(r)), (4803f64 / 4.0).ceil() as u64);
    // User images do not count.
    let u = Message::User(Arc::new(pi_ai::UserMessage {
        content: pi_ai::UserContent::Blocks(vec![Content::text("ab"), Content::image("A", "image/png")]),
        timestamp: 1,
        extra: Map::new(),
    }));
    assert_eq!(estimate_tokens(&AgentMessage::from(u)), 1);
    let bash = custom(
        json!({"role":"bashExecution","command":"ls","output":"abcdefg","exitCode":0,
        "cancelled":false,"truncated":false,"timestamp":1}),
    );
    assert_eq!(estimate_tokens(&bash), 3);
    let c = custom(json!({"role":"custom","customType":"x","display":true,"timestamp":1,
        "content":[{"type":"text","text":"abcd"},{"type":"image","data":"A","mimeType":"image/png"}]}));
    assert_eq!(estimate_tokens(&c), 1201);
    let s = pi_session::compaction_summary_message(&text(9), &json!(1), "2026-01-01T00:00:00.000Z");
    assert_eq!(estimate_tokens(&s), 3);
    let b = pi_session::branch_summary_message(&text(8), "root", "2026-01-01T00:00:00.000Z");
    assert_eq!(estimate_tokens(&b), 2);
    assert_eq!(
        estimate_tokens(&custom(json!({"role":"somethingNew","text":"abcdefgh"}))),
        0
    );
    // Characters are JavaScript's: an emoji is two.
    assert_eq!(estimate_tokens(&AgentMessage::from(user_msg("😀😀😀"))), 2);
    assert_eq!(js_len("é😀"), 3);
    // The agent's message type gives the same answers.
    let agent_bash: pi_agent::AgentMessage = serde_json::from_value(serde_json::to_value(&bash).unwrap()).unwrap();
    assert_eq!(estimate_tokens(&agent_bash), 3);
}

#[test]
fn context_tokens_use_the_last_valid_usage_plus_trailing_estimates() {
    let mut u = usage(0);
    u.input = 10;
    u.output = 5;
    u.cache_read = 2;
    u.cache_write = 1;
    assert_eq!(calculate_context_tokens(&u), 18);
    assert_eq!(calculate_context_tokens(&usage(7)), 7);

    let mut ok = assistant_msg(vec![Content::text("hi")]);
    ok.usage = usage(1000);
    let mut failed = assistant_msg(vec![]);
    failed.stop_reason = StopReason::Error;
    failed.usage = usage(50_000);
    let messages: Vec<pi_agent::AgentMessage> = vec![
        user_msg(&text(40)).into(),
        Message::Assistant(Arc::new(ok)).into(),
        user_msg(&text(8)).into(),
        Message::Assistant(Arc::new(failed)).into(),
    ];
    let e = estimate_context_tokens(&messages);
    assert_eq!(e.last_usage_index, Some(1));
    assert_eq!(e.usage_tokens, 1000);
    // The user message (2) and the error reply (0) after it.
    assert_eq!(e.trailing_tokens, 2);
    assert_eq!(e.tokens, 1002);

    let e = estimate_context_tokens(&messages[..1]);
    assert_eq!(e.last_usage_index, None);
    assert_eq!(e.tokens, 10);
}

#[test]
fn should_compact_past_the_window_less_the_reserve() {
    let s = settings(20000);
    assert!(!should_compact(100_000 - 16384, 100_000, &s));
    assert!(should_compact(100_000 - 16384 + 1, 100_000, &s));
    let off = CompactionSettings { enabled: false, ..s };
    assert!(!should_compact(1_000_000, 100_000, &off));
    // A window smaller than the reserve: any context is over.
    assert!(should_compact(1, 1000, &s));
}

#[test]
fn cut_points_skip_tool_results_and_split_the_turn() {
    let mut c = Chain::default();
    c.user("do it"); // e0
    c.assistant(vec![tool_call("read", json!({"path": "a.rs"}))]); // e1
    c.tool_result(&text(400)); // e2: 100 tokens
    c.assistant_text(&text(40)); // e3: 10 tokens
    let path = c.path();
    assert_eq!(find_valid_cut_points(&path, 0, path.len()), vec![0, 1, 3]);
    // 10 + 100 reaches 50 at the tool result: cut at the next valid point, the reply after it.
    let cut = find_cut_point(&path, 0, path.len(), 50);
    assert_eq!(cut.first_kept_entry_index, 3);
    assert_eq!(cut.turn_start_index, Some(0));
    assert!(cut.is_split_turn);
    // Budget never reached: keep from the first message.
    let cut = find_cut_point(&path, 0, path.len(), 1_000_000);
    assert_eq!(cut.first_kept_entry_index, 0);
    assert!(!cut.is_split_turn);
    assert_eq!(find_turn_start_index(&path, 3, 1), None);
}

#[test]
fn the_cut_moves_back_over_settings_entries_but_not_past_messages() {
    let mut c = Chain::default();
    c.user(&text(400)); // e0
    c.assistant_text(&text(400)); // e1
    c.model_change(); // e2
    c.model_change(); // e3
    c.user(&text(400)); // e4
    c.assistant_text(&text(400)); // e5
    let path = c.path();
    let cut = find_cut_point(&path, 0, path.len(), 150);
    // 100 + 100 reach 150 at e4; the two model changes before it are kept too.
    assert_eq!(cut.first_kept_entry_index, 2);
    // pi treats a kept part starting on a non-message as a split turn from the last user message.
    assert_eq!(cut.turn_start_index, Some(0));
    // Only tool results: nothing to cut at, keep everything from the start.
    let mut c = Chain::default();
    c.tool_result("a");
    c.tool_result("b");
    let cut = find_cut_point(&c.path(), 0, 2, 1);
    assert_eq!(cut.first_kept_entry_index, 0);
    assert!(!cut.is_split_turn);
}

#[test]
fn prepare_refuses_a_branch_ending_in_a_compaction_or_empty() {
    let mut c = Chain::default();
    let first = c.user("hi");
    c.compaction("S", &first, None, false);
    assert!(prepare_compaction(&c.path(), &settings(20000)).is_none());
    assert!(prepare_compaction(&[], &settings(20000)).is_none());
}

#[test]
fn prepare_summarises_before_the_cut_and_keeps_the_rest() {
    let mut c = Chain::without_usage();
    c.model_change(); // e0
    c.user(&text(400)); // e1
    c.assistant_text(&text(400)); // e2
    let kept = c.user(&text(400)); // e3
    c.assistant_text(&text(400)); // e4
    let p = prepare_compaction(&c.path(), &settings(200)).unwrap();
    assert_eq!(p.first_kept_entry_id, kept);
    assert!(!p.is_split_turn);
    assert_eq!(p.messages_to_summarize.len(), 2);
    assert!(p.turn_prefix_messages.is_empty());
    assert_eq!(p.previous_summary, None);
    assert_eq!(p.tokens_before, 400);
}

#[test]
fn prepare_splits_a_long_turn_into_history_and_prefix() {
    let mut c = Chain::default();
    c.user("first"); // e0
    c.assistant_text("answer"); // e1
    c.user("second"); // e2
    c.assistant(vec![tool_call("edit", json!({"path": "src/b.rs"}))]); // e3
    c.tool_result(&text(800)); // e4
    let kept = c.assistant(vec![tool_call("read", json!({"path": "src/c.rs"}))]); // e5
    c.tool_result(&text(40)); // e6
    let p = prepare_compaction(&c.path(), &settings(150)).unwrap();
    assert_eq!(p.first_kept_entry_id, kept);
    assert!(p.is_split_turn);
    let texts: Vec<String> = p.messages_to_summarize.iter().map(message_text).collect();
    assert_eq!(texts, ["first", "answer"]);
    assert_eq!(p.turn_prefix_messages.len(), 3);
    assert_eq!(message_text(&p.turn_prefix_messages[0]), "second");
    // Files come from the summarised messages and the prefix, not the kept part.
    let lists = p.file_ops.to_lists();
    assert_eq!(lists.modified_files, ["src/b.rs"]);
    assert!(lists.read_files.is_empty());
}

#[test]
fn repeated_compaction_starts_at_the_previous_first_kept_entry() {
    let mut c = Chain::without_usage();
    c.user(&text(400)); // e0
    c.assistant_text(&text(400)); // e1
    let prev_kept = c.user(&text(40)); // e2
    c.assistant_text(&text(40)); // e3
    let details = json!({"readFiles": ["old/read.rs", "both.rs"], "modifiedFiles": ["old/mod.rs"]});
    c.compaction("PREVIOUS", &prev_kept, Some(details), false); // e4
    c.user(&text(400)); // e5
    c.assistant(vec![tool_call("write", json!({"path": "both.rs"}))]); // e6
    let kept = c.user(&text(400)); // e7
    c.assistant_text(&text(400)); // e8
    let p = prepare_compaction(&c.path(), &settings(200)).unwrap();
    assert_eq!(p.first_kept_entry_id, kept);
    assert_eq!(p.previous_summary.as_deref(), Some("PREVIOUS"));
    // The messages the previous compaction kept are summarised now; the compaction is not.
    let texts: Vec<String> = p.messages_to_summarize.iter().map(message_text).collect();
    assert_eq!(texts.len(), 4);
    assert_eq!(texts[0], text(40));
    // tokensBefore: the rebuilt context (summary + kept + after), not the whole file.
    let expected = 2 + 10 + 10 + 100 + 6 + 100 + 100;
    assert_eq!(p.tokens_before, expected);
    let lists = p.file_ops.to_lists();
    assert_eq!(lists.read_files, ["old/read.rs"]);
    assert_eq!(lists.modified_files, ["both.rs", "old/mod.rs"]);

    // An extension's compaction details are not read; an unknown first kept id falls back
    // to right after the compaction.
    let mut c = Chain::default();
    c.user(&text(400));
    c.compaction("EXT", "missing", Some(json!({"readFiles": ["x"]})), true);
    c.user(&text(400));
    c.assistant_text(&text(400));
    let p = prepare_compaction(&c.path(), &settings(50)).unwrap();
    assert!(p.file_ops.to_lists().read_files.is_empty());
    assert!(p.is_split_turn);
    assert!(p.messages_to_summarize.is_empty());
    assert_eq!(p.turn_prefix_messages.len(), 1);
    assert_eq!(message_text(&p.turn_prefix_messages[0]), text(400));
}

#[test]
fn calls_made_by_codemode_scripts_count_as_file_operations() {
    let record = json!({"role": "toolResult", "toolCallId": "c", "toolName": "codemode", "content": [],
        "isError": false, "timestamp": 1, "nestedCalls": {"calls": [
            {"id": "c/1", "name": "read", "status": "ok", "arguments": {"path": "r.rs"}},
            {"id": "c/2", "name": "edit", "status": "ok", "arguments": {"path": "e.rs"}},
            {"id": "c/3", "name": "write", "status": "ok", "argumentsBytes": 90000}
        ], "complete": false}});
    let mut ops = FileOps::default();
    ops.add_from_message(&custom(record));
    let lists = ops.to_lists();
    assert_eq!(lists.read_files, ["r.rs"]);
    assert_eq!(lists.modified_files, ["e.rs"]);
}

#[test]
fn file_lists_split_read_from_modified_and_format_tags() {
    let mut ops = FileOps::default();
    let a = assistant_msg(vec![
        tool_call("read", json!({"path": "z.rs"})),
        tool_call("read", json!({"path": "a.rs"})),
        tool_call("read", json!({"path": "m.rs"})),
        tool_call("edit", json!({"path": "m.rs"})),
        tool_call("write", json!({"path": "new.rs"})),
        tool_call("bash", json!({"path": "ignored.rs"})),
        tool_call("read", json!({"file": "nopath.rs"})),
    ]);
    ops.add_from_message(&AgentMessage::from(Message::Assistant(Arc::new(a))));
    let lists = ops.to_lists();
    assert_eq!(lists.read_files, ["a.rs", "z.rs"]);
    assert_eq!(lists.modified_files, ["m.rs", "new.rs"]);
    assert_eq!(
        lists.to_tags(),
        "\n\n<read-files>\na.rs\nz.rs\n</read-files>\n\n<modified-files>\nm.rs\nnew.rs\n</modified-files>"
    );
    assert_eq!(FileLists::default().to_tags(), "");
    let only_mod = FileLists {
        read_files: vec![],
        modified_files: vec!["x".into()],
    };
    assert_eq!(only_mod.to_tags(), "\n\n<modified-files>\nx\n</modified-files>");
    assert_eq!(
        serde_json::to_string(&lists).unwrap(),
        r#"{"readFiles":["a.rs","z.rs"],"modifiedFiles":["m.rs","new.rs"]}"#
    );
}

#[test]
fn serialisation_labels_parts_and_truncates_tool_results() {
    let thinking = Content::Thinking(pi_ai::ThinkingContent {
        thinking: "hmm".into(),
        ..Default::default()
    });
    let messages = vec![
        user_msg("hello"),
        user_msg(""),
        Message::Assistant(Arc::new(assistant_msg(vec![
            Content::text("one"),
            thinking,
            Content::text("two"),
            tool_call("read", json!({"path": "a.rs", "offset": 3})),
            tool_call("bash", json!({"command": "ls"})),
        ]))),
        tool_result_msg("short"),
    ];
    assert_eq!(
        serialize_conversation(&messages),
        "[User]: hello\n\n[Assistant thinking]: hmm\n\n[Assistant]: one\ntwo\n\n\
         [Assistant tool calls]: read(path=\"a.rs\", offset=3); bash(command=\"ls\")\n\n[Tool result]: short"
    );
    let long = serialize_conversation(&[tool_result_msg(&text(2500))]);
    assert_eq!(
        long,
        format!("[Tool result]: {}\n\n[... 500 more characters truncated]", text(2000))
    );
    assert_eq!(
        serialize_conversation(&[tool_result_msg(&text(2000))]),
        format!("[Tool result]: {}", text(2000))
    );
    // The cut never splits a character.
    let t = format!("{}😀😀", text(1999));
    assert_eq!(
        truncate_for_summary(&t, 2000),
        format!("{}\n\n[... 3 more characters truncated]", text(1999))
    );
}

#[test]
fn summaries_and_custom_roles_are_serialised_as_user_text() {
    let msgs = vec![
        pi_session::branch_summary_message("B", "root", "2026-01-01T00:00:00.000Z"),
        custom(json!({"role":"bashExecution","command":"ls","output":"a","exitCode":0,
            "cancelled":false,"truncated":false,"timestamp":1})),
    ];
    let prompt = history_summary_prompt(&msgs, None, None);
    assert!(prompt.starts_with("<conversation>\n[User]: The following is a summary of a branch"));
    assert!(prompt.contains("[User]: Ran `ls`\n```\na\n```"));
}

fn check_with(
    assistant: &pi_ai::AssistantMessage,
    skip_aborted: bool,
    branch: &[&pi_session::Entry],
    messages: &[pi_agent::AgentMessage],
    attempted: bool,
) -> Option<CompactionTrigger> {
    let faux = pi_ai::faux::FauxProvider::new(Default::default());
    let mut model = faux.model().clone();
    model.context_window = 100_000;
    let s = settings(20000);
    let check = CompactionCheck {
        settings: &s,
        model: Some(&model),
        latest_compaction: crate::compaction::prepare::latest_compaction(branch),
        messages,
        overflow_recovery_attempted: attempted,
    };
    check_compaction(assistant, skip_aborted, &check)
}

#[test]
fn the_trigger_decision_follows_threshold_overflow_and_compaction_age() {
    let ts = pi_session::ids::iso_to_ms("2026-01-01T00:00:00.000Z").unwrap();
    let mut big = assistant_msg(vec![Content::text("ok")]);
    big.timestamp = ts + 1;
    big.usage = usage(90_000);
    assert_eq!(
        check_with(&big, true, &[], &[], false),
        Some(CompactionTrigger::Threshold)
    );
    let mut small = big.clone();
    small.usage = usage(80_000);
    assert_eq!(check_with(&small, true, &[], &[], false), None);
    let mut aborted = big.clone();
    aborted.stop_reason = StopReason::Aborted;
    assert_eq!(check_with(&aborted, true, &[], &[], false), None);
    assert_eq!(
        check_with(&aborted, false, &[], &[], false),
        Some(CompactionTrigger::Threshold)
    );

    // Older than (or as old as) the latest compaction: nothing.
    let mut c = Chain::default();
    let id = c.user("x");
    c.compaction("S", &id, None, false);
    let mut stale = big.clone();
    stale.timestamp = ts;
    assert_eq!(check_with(&stale, true, &c.path(), &[], false), None);
    assert_eq!(
        check_with(&big, true, &c.path(), &[], false),
        Some(CompactionTrigger::Threshold)
    );

    let mut overflow = assistant_msg(vec![]);
    overflow.timestamp = ts + 1;
    overflow.stop_reason = StopReason::Error;
    overflow.error_message = Some("prompt is too long: 213462 tokens > 200000 maximum".into());
    assert_eq!(
        check_with(&overflow, true, &[], &[], false),
        Some(CompactionTrigger::Overflow)
    );
    assert_eq!(
        check_with(&overflow, true, &[], &[], true),
        Some(CompactionTrigger::OverflowRecoveryFailed)
    );
    // From another model: not an overflow of this one; an error without any usage: nothing.
    let mut other = overflow.clone();
    other.model = "other".into();
    assert_eq!(check_with(&other, true, &[], &[], false), None);

    // An error reply is measured from the last valid usage plus what follows it.
    let mut prior = big.clone();
    prior.usage = usage(83_000);
    let messages: Vec<pi_agent::AgentMessage> = vec![
        Message::Assistant(Arc::new(prior.clone())).into(),
        user_msg(&text(4000)).into(),
        Message::Assistant(Arc::new(other.clone())).into(),
    ];
    assert_eq!(
        check_with(&other, true, &[], &messages, false),
        Some(CompactionTrigger::Threshold)
    );
    assert_eq!(
        check_with(&other, true, &[], &messages[..2], false),
        Some(CompactionTrigger::Threshold)
    );
    // ... unless that usage predates the latest compaction.
    let mut old = prior;
    old.timestamp = ts;
    let messages: Vec<pi_agent::AgentMessage> =
        vec![Message::Assistant(Arc::new(old)).into(), user_msg(&text(4000)).into()];
    assert_eq!(check_with(&other, true, &c.path(), &messages, false), None);
    let disabled = CompactionSettings {
        enabled: false,
        ..settings(1)
    };
    let model = pi_ai::faux::FauxProvider::new(Default::default()).model().clone();
    let check = CompactionCheck {
        settings: &disabled,
        model: Some(&model),
        latest_compaction: None,
        messages: &[],
        overflow_recovery_attempted: false,
    };
    assert_eq!(check_compaction(&overflow, true, &check), None);
}

#[test]
fn context_usage_is_unknown_after_a_compaction_until_a_reply_reports_usage() {
    let mut c = Chain::default();
    let first = c.user("x");
    let mut replied = assistant_msg(vec![Content::text("ok")]);
    replied.usage = usage(500);
    c.message(Message::Assistant(Arc::new(replied.clone())));
    let messages: Vec<pi_agent::AgentMessage> = vec![
        user_msg(&text(40)).into(),
        Message::Assistant(Arc::new(replied.clone())).into(),
    ];
    let u = context_usage(Some(1000), &c.path(), &messages).unwrap();
    assert_eq!(u.tokens, Some(500));
    assert_eq!(u.percent, Some(50.0));
    assert_eq!(context_usage(None, &c.path(), &messages), None);
    assert_eq!(context_usage(Some(0), &c.path(), &messages), None);

    c.compaction("S", &first, None, false);
    let u = context_usage(Some(1000), &c.path(), &messages).unwrap();
    assert_eq!(u.tokens, None);
    assert_eq!(
        serde_json::to_string(&u).unwrap(),
        r#"{"tokens":null,"contextWindow":1000,"percent":null}"#
    );
    // A failed reply after it does not count; a valid one does.
    let mut failed = replied.clone();
    failed.stop_reason = StopReason::Error;
    c.message(Message::Assistant(Arc::new(failed)));
    assert_eq!(context_usage(Some(1000), &c.path(), &messages).unwrap().tokens, None);
    c.message(Message::Assistant(Arc::new(replied)));
    assert_eq!(
        context_usage(Some(1000), &c.path(), &messages).unwrap().tokens,
        Some(500)
    );
}

#[test]
fn before_any_reply_the_context_counts_the_system_message_once() {
    let system = |fields: serde_json::Value| -> pi_agent::AgentMessage {
        let serde_json::Value::Object(fields) = fields else {
            unreachable!()
        };
        pi_agent::CustomMessage::new("system", fields).into()
    };
    // Two system messages: the second replaces a section and adds a tool.
    let messages: Vec<pi_agent::AgentMessage> = vec![
        system(
            serde_json::json!({"content": "", "sections": {"a": "x".repeat(400), "b": "y".repeat(400)},
            "toolsAdded": [{"name": "t"}], "timestamp": 1}),
        ),
        system(serde_json::json!({"content": "", "sections": {"b": "z".repeat(40)}, "timestamp": 2})),
        user_msg(&text(40)).into(),
    ];
    let u = context_usage(Some(1000), &[], &messages).unwrap();
    // 400 + 40 section characters and `[{"name":"t"}]` (14) as one message, then the user's 40.
    assert_eq!(u.tokens, Some((400u64 + 40 + 14).div_ceil(4) + 10));
    // An empty transcript is empty.
    assert_eq!(context_usage(Some(1000), &[], &[]).unwrap().tokens, Some(0));
}

#[test]
fn manual_compaction_says_why_there_is_nothing_to_do() {
    let mut c = Chain::default();
    let first = c.user("hi");
    c.compaction("S", &first, None, false);
    let err = prepare_manual_compaction(&c.path(), &settings(20000)).unwrap_err();
    assert_eq!(err.to_string(), "Already compacted");
    let err = prepare_manual_compaction(&[], &settings(20000)).unwrap_err();
    assert_eq!(err.to_string(), "Nothing to compact (session too small)");
    c.user("more");
    // pi 1.6: everything fits in the kept range, so nothing precedes it to summarise.
    let err = prepare_manual_compaction(&c.path(), &settings(20000)).unwrap_err();
    assert_eq!(err.to_string(), "Nothing to compact (session too small)");
    // A window that keeps only the last prompt leaves the first to summarise.
    assert!(prepare_manual_compaction(&c.path(), &settings(1)).is_ok());
}

#[test]
fn failure_texts_follow_the_reason() {
    use crate::session::CompactionReason;
    let err = CompactionError::Summarization("boom".into());
    assert_eq!(
        compaction_error_message(CompactionReason::Manual, &err).as_deref(),
        Some("Compaction failed: Summarization failed: boom")
    );
    assert_eq!(
        compaction_error_message(CompactionReason::Threshold, &err).as_deref(),
        Some("Auto-compaction failed: Summarization failed: boom")
    );
    assert_eq!(
        compaction_error_message(CompactionReason::Overflow, &err).as_deref(),
        Some("Context overflow recovery failed: Summarization failed: boom")
    );
    assert_eq!(
        compaction_error_message(CompactionReason::Manual, &CompactionError::Cancelled),
        None
    );
    assert_eq!(
        compaction_failure_text(CompactionReason::Manual, "No model selected"),
        "Compaction failed: No model selected"
    );
}

#[test]
fn an_overflowed_single_prompt_is_summarised_as_the_turn_before_the_left_out_reply() {
    let mut c = Chain::without_usage();
    let prompt = c.user(&text(400_000));
    let failed = c.assistant_text("");
    // Without the edit the failed reply is kept and the prompt is the only thing before it
    // ... which starts the kept turn: nothing to summarise.
    assert!(prepare_compaction(&c.path(), &settings(20_000)).is_none());
    let mut fields = Map::new();
    fields.insert("targetId".into(), json!(failed));
    fields.insert("replacement".into(), serde_json::Value::Null);
    c.push(pi_session::EntryKind::Unknown {
        type_name: "context_edit".into(),
        fields: Box::new(fields),
    });
    let prep = prepare_compaction(&c.path(), &settings(20_000)).expect("a summary is asked for");
    // pi 1.6: the cut moves past the prompt onto the left-out reply; the prompt is the
    // split turn's prefix.
    assert_eq!(prep.first_kept_entry_id, failed);
    assert!(prep.is_split_turn);
    assert!(prep.messages_to_summarize.is_empty());
    assert_eq!(prep.turn_prefix_messages.len(), 1);
    assert_eq!(prep.turn_prefix_messages[0].role(), "user");
    let _ = prompt;
    // A replacement instead of an omission keeps the reply in the context: nothing changes.
    let mut fields = Map::new();
    fields.insert("targetId".into(), json!(failed));
    fields.insert(
        "replacement".into(),
        json!({"content": [{"type": "text", "text": "x"}]}),
    );
    c.push(pi_session::EntryKind::Unknown {
        type_name: "context_edit".into(),
        fields: Box::new(fields),
    });
    assert!(prepare_compaction(&c.path(), &settings(20_000)).is_none());
}
