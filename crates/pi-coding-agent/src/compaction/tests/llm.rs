//! The summary requests, checked through a faux model that records each call.

use std::sync::{Arc, Mutex};

use pi_ai::faux::{faux_error, faux_reply, faux_text, FauxModel, FauxOptions, FauxProvider, FauxStep};
use pi_ai::{Context, Message, StopReason, StreamFn, StreamOptions, ThinkingLevel};
use pi_session::SessionManager;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::compaction::*;

/// What one call received.
#[derive(Clone)]
struct Call {
    context: Context,
    options: StreamOptions,
}

impl Call {
    fn prompt(&self) -> String {
        assert_eq!(self.context.messages.len(), 1);
        match &self.context.messages[0] {
            Message::User(u) => u.content.text(),
            _ => panic!("the request is one user message"),
        }
    }
}

struct Recorder {
    faux: FauxProvider,
    stream_fn: StreamFn,
    calls: Arc<Mutex<Vec<Call>>>,
}

/// A faux model answering `HISTORY`, `PREFIX` or `BRANCH` by the prompt it gets, or failing
/// with `error` when the prompt contains `fail_on`.
fn recorder(reasoning: bool, fail_on: Option<(&'static str, &'static str)>) -> Recorder {
    let faux = FauxProvider::new(FauxOptions {
        models: vec![FauxModel {
            id: "faux-1".into(),
            reasoning,
            context_window: Some(100_000),
            ..Default::default()
        }],
        ..Default::default()
    });
    let calls: Arc<Mutex<Vec<Call>>> = Arc::default();
    let rec = calls.clone();
    let step = FauxStep::Dynamic(Arc::new(move |ctx: &Context, opts: &StreamOptions, _n, _m| {
        let call = Call {
            context: ctx.clone(),
            options: opts.clone(),
        };
        let prompt = call.prompt();
        rec.lock().unwrap().push(call);
        if let Some((needle, error)) = fail_on {
            if prompt.contains(needle) {
                return faux_error(vec![], error);
            }
        }
        let answer = if prompt.contains(TURN_PREFIX_SUMMARIZATION_PROMPT) {
            "PREFIX"
        } else if prompt.contains(BRANCH_SUMMARY_PROMPT) || !prompt.contains("## Goal") {
            "BRANCH"
        } else {
            "HISTORY"
        };
        faux_reply(vec![faux_text(answer)], StopReason::Stop)
    }));
    faux.set_responses(vec![step; 4]);
    let stream_fn = faux.stream_fn();
    Recorder { faux, stream_fn, calls }
}

impl Recorder {
    fn llm(&self) -> SummaryModel<'_> {
        SummaryModel {
            stream_fn: &self.stream_fn,
            model: self.faux.model(),
            api_key: Some("key".into()),
            headers: vec![("x-h".into(), "v".into())],
            retry: Default::default(),
        }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}

/// A session of two turns: the first is summarised, the second kept.
fn two_turns() -> Chain {
    let mut c = Chain::default();
    c.user("please read a.rs"); // e0
    c.assistant(vec![tool_call("read", json!({"path": "a.rs"}))]); // e1
    c.tool_result("fn a() {}"); // e2
    c.assistant(vec![tool_call("edit", json!({"path": "b.rs"}))]); // e3
    c.tool_result("edited"); // e4
    c.user(&text(800)); // e5
    c.assistant_text(&text(800)); // e6
    c
}

#[tokio::test]
async fn compact_sends_one_history_request_and_appends_file_tags() {
    let r = recorder(false, None);
    let c = two_turns();
    let p = prepare_compaction(&c.path(), &settings(300)).unwrap();
    assert_eq!(p.first_kept_entry_id, "e5");
    let result = compact(&p, &r.llm(), None, ThinkingLevel::High, &CancellationToken::new())
        .await
        .unwrap();
    let calls = r.calls();
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    assert_eq!(call.context.system_prompt.as_deref(), Some(SUMMARIZATION_SYSTEM_PROMPT));
    assert!(call.context.tools.is_empty());
    let prompt = call.prompt();
    assert!(prompt.starts_with(
        "<conversation>\n[User]: please read a.rs\n\n[Assistant tool calls]: read(path=\"a.rs\")\n\n[Tool result]: fn a() {}"
    ));
    assert!(prompt.ends_with(&format!("\n</conversation>\n\n{SUMMARIZATION_PROMPT}")));
    assert!(!prompt.contains("<previous-summary>"));
    // The model's own output limit (pi 1.6: the reserve only decides when to compact).
    assert_eq!(call.options.max_tokens, None);
    // The model does not reason: no reasoning whatever the session's level.
    assert_eq!(call.options.reasoning, None);
    assert_eq!(call.options.api_key.as_deref(), Some("key"));
    assert_eq!(call.options.headers, vec![("x-h".to_string(), "v".to_string())]);

    assert_eq!(
        result.summary,
        "HISTORY\n\n<read-files>\na.rs\n</read-files>\n\n<modified-files>\nb.rs\n</modified-files>"
    );
    assert_eq!(result.first_kept_entry_id, "e5");
    assert_eq!(result.tokens_before, p.tokens_before);
    // The JSON of `compaction_end.result`, field order as pi writes it.
    let wire = serde_json::to_string(&result).unwrap();
    assert!(wire.starts_with(r#"{"summary":"HISTORY"#));
    assert!(wire.ends_with(r#""details":{"readFiles":["a.rs"],"modifiedFiles":["b.rs"]}}"#));
    let value: serde_json::Value = serde_json::from_str(&wire).unwrap();
    let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    // `estimatedTokensAfter` is the session's to add, after the entry is written.
    assert_eq!(
        keys,
        ["summary", "firstKeptEntryId", "tokensBefore", "usage", "details"]
    );
    assert_eq!(value["tokensBefore"], p.tokens_before);
    assert_eq!(
        result.details_value(),
        json!({"readFiles": ["a.rs"], "modifiedFiles": ["b.rs"]})
    );
}

#[tokio::test]
async fn an_update_carries_the_previous_summary_focus_and_thinking_level() {
    let r = recorder(true, None);
    let mut c = two_turns();
    c.compaction("OLD SUMMARY", "e5", None, false);
    c.user(&text(800));
    c.assistant_text(&text(800));
    let p = prepare_compaction(&c.path(), &settings(300)).unwrap();
    compact(
        &p,
        &r.llm(),
        Some("the parser"),
        ThinkingLevel::Medium,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let call = &r.calls()[0];
    let prompt = call.prompt();
    assert!(prompt.contains("\n</conversation>\n\n<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\n"));
    assert!(prompt.ends_with(&format!(
        "{UPDATE_SUMMARIZATION_PROMPT}\n\nAdditional focus: the parser"
    )));
    assert_eq!(call.options.reasoning, Some(ThinkingLevel::Medium));

    // Thinking off: no reasoning even for a reasoning model.
    let r = recorder(true, None);
    compact(&p, &r.llm(), None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.calls()[0].options.reasoning, None);
}

/// One long turn; the cut falls inside it.
fn split_turn(with_history: bool) -> Chain {
    let mut c = Chain::default();
    if with_history {
        c.user("earlier");
        c.assistant_text("done earlier");
    }
    c.user("big task");
    c.assistant(vec![tool_call("write", json!({"path": "w.rs"}))]);
    c.tool_result(&text(800));
    c.assistant(vec![tool_call("read", json!({"path": "kept.rs"}))]);
    c.tool_result(&text(40));
    c
}

#[tokio::test]
async fn a_split_turn_asks_for_both_summaries_and_joins_them() {
    let r = recorder(true, None);
    let c = split_turn(true);
    let p = prepare_compaction(&c.path(), &settings(100)).unwrap();
    assert!(p.is_split_turn);
    let result = compact(&p, &r.llm(), None, ThinkingLevel::Low, &CancellationToken::new())
        .await
        .unwrap();
    let calls = r.calls();
    assert_eq!(calls.len(), 2);
    let prefix = calls
        .iter()
        .find(|c| c.prompt().contains(TURN_PREFIX_SUMMARIZATION_PROMPT))
        .unwrap();
    assert!(prefix.prompt().starts_with("# Conversation\n[User]: big task\n\n"));
    assert!(prefix
        .prompt()
        .contains(&format!("\n\n# Instructions\n{TURN_PREFIX_SUMMARIZATION_PROMPT}")));
    assert_eq!(prefix.options.max_tokens, None);
    assert_eq!(prefix.options.reasoning, Some(ThinkingLevel::Low));
    let history = calls
        .iter()
        .find(|c| c.prompt().contains(SUMMARIZATION_PROMPT))
        .unwrap();
    assert!(history
        .prompt()
        .starts_with("<conversation>\n[User]: earlier\n\n[Assistant]: done earlier\n</conversation>"));
    assert_eq!(
        result.summary,
        "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<modified-files>\nw.rs\n</modified-files>"
    );
    // Both requests' usage, added up.
    let usage: pi_ai::Usage = serde_json::from_value(result.usage.clone().unwrap()).unwrap();
    assert!(usage.input > 0 && usage.output > 0, "{usage:?}");

    // Nothing before the turn: only the prefix is asked for.
    let r = recorder(false, None);
    let p = prepare_compaction(&split_turn(false).path(), &settings(100)).unwrap();
    let result = compact(&p, &r.llm(), None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.calls().len(), 1);
    assert!(result
        .summary
        .starts_with("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"));
}

#[tokio::test]
async fn summary_failures_name_the_request_that_failed() {
    let c = split_turn(true);
    let p = prepare_compaction(&c.path(), &settings(100)).unwrap();
    let r = recorder(false, Some((TURN_PREFIX_SUMMARIZATION_PROMPT, "overloaded")));
    let err = compact(&p, &r.llm(), None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Turn prefix summarization failed: overloaded");

    let r = recorder(false, Some(("## Critical Context", "rate limited")));
    let err = compact(&p, &r.llm(), None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err, CompactionError::Summarization("rate limited".into()));
    assert_eq!(err.to_string(), "Summarization failed: rate limited");

    let r = recorder(false, Some(("<conversation>", "")));
    let p = prepare_compaction(&two_turns().path(), &settings(300)).unwrap();
    let err = compact(&p, &r.llm(), None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Summarization failed: Unknown error");
}

#[tokio::test]
async fn a_cancelled_compaction_returns_no_summary() {
    let r = recorder(false, None);
    let p = prepare_compaction(&two_turns().path(), &settings(300)).unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = compact(&p, &r.llm(), None, ThinkingLevel::Off, &cancel)
        .await
        .unwrap_err();
    assert_eq!(err, CompactionError::Cancelled);
    assert_eq!(err.to_string(), "Compaction cancelled");
}

#[test]
fn every_prompt_matches_the_mock_summary_scenario() {
    // The golden RPC scenario answers requests matching this pattern with a summary.
    let re = regex::Regex::new("context checkpoint summary|conversation to summarize").unwrap();
    for p in [
        SUMMARIZATION_PROMPT,
        UPDATE_SUMMARIZATION_PROMPT,
        TURN_PREFIX_SUMMARIZATION_PROMPT,
        BRANCH_SUMMARY_PROMPT,
    ] {
        assert!(re.is_match(p), "{p}");
        for section in ["## ", "\n"] {
            assert!(p.contains(section));
        }
    }
    for section in [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress\n### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ] {
        assert!(SUMMARIZATION_PROMPT.contains(section), "{section}");
        assert!(UPDATE_SUMMARIZATION_PROMPT.contains(section), "{section}");
        if section != "## Critical Context" {
            assert!(BRANCH_SUMMARY_PROMPT.contains(section), "{section}");
        }
    }
    for section in ["## Original Request", "## Early Progress", "## Context for Suffix"] {
        assert!(TURN_PREFIX_SUMMARIZATION_PROMPT.contains(section));
    }
}

// ---------------------------------------------------------------------------------------------
// Branch summaries

#[test]
fn branch_entries_run_from_the_old_leaf_back_to_the_common_ancestor() {
    let mut s = SessionManager::in_memory("/tmp");
    let a = s.append_message(user_msg("a")).unwrap();
    let b = s
        .append_message(Message::Assistant(Arc::new(assistant_msg(vec![pi_ai::Content::text(
            "b",
        )]))))
        .unwrap();
    s.append_message(user_msg("c")).unwrap();
    let d = s
        .append_message(Message::Assistant(Arc::new(assistant_msg(vec![pi_ai::Content::text(
            "d",
        )]))))
        .unwrap();
    s.branch(&b).unwrap();
    let e = s.append_message(user_msg("e")).unwrap();
    let f = s
        .append_message(Message::Assistant(Arc::new(assistant_msg(vec![pi_ai::Content::text(
            "f",
        )]))))
        .unwrap();

    let found = collect_entries_for_branch_summary(&s, Some(&f), &d);
    assert_eq!(found.common_ancestor_id.as_deref(), Some(b.as_str()));
    let ids: Vec<&str> = found.entries.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(ids, [e.as_str(), f.as_str()]);
    // Back to an ancestor on the same path: the entries after it.
    let found = collect_entries_for_branch_summary(&s, Some(&f), &a);
    assert_eq!(found.common_ancestor_id.as_deref(), Some(a.as_str()));
    assert_eq!(found.entries.len(), 3);
    assert!(collect_entries_for_branch_summary(&s, None, &a).entries.is_empty());
}

#[test]
fn branch_preparation_keeps_the_newest_messages_that_fit() {
    let mut c = Chain::default();
    c.branch_summary(
        &text(400),
        Some(json!({"readFiles": ["r.rs"], "modifiedFiles": ["m.rs"]})),
        false,
    );
    c.branch_summary("ext", Some(json!({"readFiles": ["ext.rs"]})), true);
    c.user(&text(400)); // 100 tokens
    c.assistant(vec![tool_call("read", json!({"path": "x.rs"}))]); // 5 tokens
    c.tool_result(&text(4000)); // skipped
    c.user(&text(400)); // 100 tokens
    let p = prepare_branch_entries(&c.entries, 150);
    assert_eq!(p.messages.len(), 2);
    assert_eq!(p.messages[0].role(), "assistant");
    assert_eq!(p.total_tokens, 105);
    let lists = p.file_ops.to_lists();
    // Details of all pi-written summaries count even when their text did not fit.
    assert_eq!(lists.read_files, ["r.rs", "x.rs"]);
    assert_eq!(lists.modified_files, ["m.rs"]);
    // No budget: everything but the tool result.
    assert_eq!(prepare_branch_entries(&c.entries, 0).messages.len(), 5);

    // A summary that overflows is still taken while under 90% of the budget.
    let mut c = Chain::default();
    let first = c.user("x");
    c.compaction(&text(400), &first, None, false);
    c.user(&text(400));
    let p = prepare_branch_entries(&c.entries[1..], 150);
    assert_eq!(p.messages.len(), 2);
    assert_eq!(p.messages[0].role(), "compactionSummary");
    assert_eq!(p.total_tokens, 200);
    let p = prepare_branch_entries(&c.entries[1..], 105);
    assert_eq!(p.messages.len(), 1);
}

#[tokio::test]
async fn a_branch_summary_has_the_preamble_focus_and_file_tags() {
    let r = recorder(true, None);
    let mut c = Chain::default();
    c.user("try approach B");
    c.assistant(vec![tool_call("write", json!({"path": "b.rs"}))]);
    c.tool_result("ok");
    let options = BranchSummaryOptions {
        custom_instructions: Some("the API".into()),
        replace_instructions: false,
        reserve_tokens: 16384,
        thinking_level: ThinkingLevel::High,
    };
    let result = generate_branch_summary(&c.entries, &r.llm(), &options, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        result.summary,
        format!("{BRANCH_SUMMARY_PREAMBLE}BRANCH\n\n<modified-files>\nb.rs\n</modified-files>")
    );
    assert!(result.summary.starts_with(
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
    ));
    assert_eq!(
        result.details_value(),
        json!({"readFiles": [], "modifiedFiles": ["b.rs"]})
    );
    let call = &r.calls()[0];
    assert_eq!(call.context.system_prompt.as_deref(), Some(SUMMARIZATION_SYSTEM_PROMPT));
    assert_eq!(
        call.prompt(),
        format!(
            "<conversation>\n[User]: try approach B\n\n[Assistant tool calls]: write(path=\"b.rs\")\n</conversation>\n\n\
             {BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: the API"
        )
    );
    // The model's own output limit, the session's reasoning level, no prompt cache, and a
    // routing id of its own.
    assert_eq!(call.options.max_tokens, None);
    assert_eq!(call.options.reasoning, Some(ThinkingLevel::High));
    assert_eq!(call.options.cache_retention, pi_ai::CacheRetention::None);
    assert!(call.options.session_id.is_some());
    assert!(
        result.usage.is_some(),
        "the request's usage comes back with the summary"
    );

    let r = recorder(false, None);
    let replace = BranchSummaryOptions {
        custom_instructions: Some("Just list the files.".into()),
        replace_instructions: true,
        reserve_tokens: 16384,
        thinking_level: ThinkingLevel::Off,
    };
    generate_branch_summary(&c.entries, &r.llm(), &replace, &CancellationToken::new())
        .await
        .unwrap();
    assert!(r.calls()[0]
        .prompt()
        .ends_with("</conversation>\n\nJust list the files."));
}

#[tokio::test]
async fn branch_summary_edge_cases() {
    let options = BranchSummaryOptions {
        reserve_tokens: 16384,
        ..Default::default()
    };
    // Nothing to summarise: pi's placeholder text, no request.
    let r = recorder(false, None);
    let mut c = Chain::default();
    c.tool_result("only a result");
    c.model_change();
    let result = generate_branch_summary(&c.entries, &r.llm(), &options, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(result.summary, NO_CONTENT_SUMMARY);
    assert_eq!(result.details, FileLists::default());
    assert_eq!(r.faux.call_count(), 0);

    let mut c = Chain::default();
    c.user("hello");
    let r = recorder(false, Some(("<conversation>", "server exploded")));
    let err = generate_branch_summary(&c.entries, &r.llm(), &options, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Branch summarization failed: server exploded");
    let r = recorder(false, Some(("<conversation>", "")));
    let err = generate_branch_summary(&c.entries, &r.llm(), &options, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Branch summarization failed: Unknown error");

    let r = recorder(false, None);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = generate_branch_summary(&c.entries, &r.llm(), &options, &cancel)
        .await
        .unwrap_err();
    assert_eq!(err, BranchSummaryError::Aborted);
}

// ---------------------------------------------------------------------------------------------
// The TypeScript pi's own compaction, from the golden RPC session.

/// The golden session up to and including its manual compaction.
const GOLDEN_SESSION: &str = include_str!("golden-rpc-session.jsonl");

#[test]
fn the_golden_0_73_manual_compaction_is_refused_as_pi_16_does() {
    let entries: Vec<pi_session::Entry> = GOLDEN_SESSION
        .lines()
        .skip(1)
        .map(|l| pi_session::Entry::from_json_line(l).unwrap())
        .collect();
    let (compaction, before) = entries.split_last().unwrap();
    assert!(matches!(compaction.kind, pi_session::EntryKind::Compaction { .. }));
    let path: Vec<&pi_session::Entry> = before.iter().collect();
    // pi 0.73 summarised an empty conversation here (everything fit in keepRecentTokens);
    // pi 1.6 refuses: nothing precedes the kept range.
    assert!(prepare_compaction(&path, &settings(20000)).is_none());
    let err = prepare_manual_compaction(&path, &settings(20000)).unwrap_err();
    assert_eq!(err.to_string(), "Nothing to compact (session too small)");
}

/// A faux model (no reasoning, a 100k window) that answers what the test scripts.
fn scripted_faux() -> FauxProvider {
    FauxProvider::new(FauxOptions {
        models: vec![FauxModel {
            id: "faux-1".into(),
            context_window: Some(100_000),
            ..Default::default()
        }],
        ..Default::default()
    })
}

/// A summary cut at the output limit is partial: the compaction fails with pi 1.6's text and
/// nothing is kept.
#[tokio::test]
async fn a_summary_cut_at_the_output_limit_is_refused() {
    let faux = scripted_faux();
    faux.set_responses(vec![
        faux_reply(vec![faux_text("## Goal\npart")], StopReason::Length).into()
    ]);
    let stream_fn = faux.stream_fn();
    let llm = SummaryModel {
        stream_fn: &stream_fn,
        model: faux.model(),
        api_key: Some("key".into()),
        headers: Vec::new(),
        retry: Default::default(),
    };
    let p = prepare_compaction(&two_turns().path(), &settings(300)).unwrap();
    let err = compact(&p, &llm, None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Summarization failed: generation hit the token cap and the summary is incomplete"
    );
}

#[test]
fn usages_add_up_and_the_cost_is_the_providers_only_when_both_are() {
    let part = |input, reasoning, from_provider| pi_ai::Usage {
        input,
        output: 2,
        cache_read: 1,
        cache_write: 0,
        reasoning,
        total_tokens: input + 3,
        cost: pi_ai::UsageCost {
            input: 0.5,
            output: 0.25,
            total: 0.75,
            total_from_provider: from_provider,
            ..Default::default()
        },
        cache_write_1h: None,
    };
    let sum = combine_usage(&part(10, None, Some(true)), &part(5, Some(4), Some(true)));
    assert_eq!(
        (sum.input, sum.output, sum.cache_read, sum.total_tokens),
        (15, 4, 2, 21)
    );
    assert_eq!(sum.reasoning, Some(4), "one side's reasoning counts");
    assert_eq!(sum.cache_write_1h, None, "absent on both sides stays absent");
    assert_eq!(sum.cost.total, 1.5);
    assert_eq!(sum.cost.total_from_provider, Some(true));
    let mixed = combine_usage(&part(1, None, Some(true)), &part(1, None, None));
    assert_eq!(mixed.cost.total_from_provider, Some(false));
}

/// A summary request that fails with a transient error is retried under the `retry`
/// settings, and the observer hears the schedule, the new attempt and the end.
#[tokio::test]
async fn a_transient_summary_error_is_retried_and_reported() {
    use crate::compaction::{SummaryRetry, SummaryRetryEvent, SummaryRetryObserver};
    use std::future::Future;
    use std::pin::Pin;

    #[derive(Default)]
    struct Heard(Mutex<Vec<SummaryRetryEvent>>);
    impl SummaryRetryObserver for Heard {
        fn notify<'s>(&'s self, event: SummaryRetryEvent) -> Pin<Box<dyn Future<Output = ()> + Send + 's>> {
            self.0.lock().unwrap().push(event);
            Box::pin(async {})
        }
    }

    let faux = scripted_faux();
    faux.set_responses(vec![
        faux_error(vec![], "503 service unavailable").into(),
        faux_reply(vec![faux_text("the summary")], StopReason::Stop).into(),
    ]);
    let stream_fn = faux.stream_fn();
    let heard = Heard::default();
    let llm = SummaryModel {
        stream_fn: &stream_fn,
        model: faux.model(),
        api_key: None,
        headers: Vec::new(),
        retry: SummaryRetry {
            policy: Some(crate::config::settings::RetrySettings {
                enabled: true,
                max_retries: 2,
                base_delay_ms: 1,
            }),
            observer: Some(&heard),
        },
    };
    let p = prepare_compaction(&two_turns().path(), &settings(300)).unwrap();
    let result = compact(&p, &llm, None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap();
    assert!(result.summary.starts_with("the summary"), "{}", result.summary);
    assert_eq!(faux.call_count(), 2);
    assert_eq!(
        *heard.0.lock().unwrap(),
        vec![
            SummaryRetryEvent::Scheduled {
                attempt: 1,
                max_attempts: 2,
                delay_ms: 1,
                error_message: "503 service unavailable".into(),
            },
            SummaryRetryEvent::AttemptStart,
            SummaryRetryEvent::Finished,
        ]
    );

    // A tool call instead of a summary is refused with pi 1.6's words.
    faux.set_responses(vec![faux_reply(
        vec![pi_ai::faux::faux_tool_call("read", json!({"path": "x"}))],
        StopReason::ToolUse,
    )
    .into()]);
    let err = compact(&p, &llm, None, ThinkingLevel::Off, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Summarization attempted to call a tool");
}
