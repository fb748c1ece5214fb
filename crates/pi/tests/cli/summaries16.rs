//! pi 1.6's summary records, ours and the reference's side by side against the mock: a
//! branch summary written through an extension's `ctx.navigateTree` (its `fromId`, place,
//! label and `usage`), and what a manual compaction keeps (`usage`, `estimatedTokensAfter`)
//! and asks of the model. Without the reference pi only ours is checked.

use serde_json::{json, Value};

use crate::extensions::{environment, fixture, pi_with};
use crate::harness::{Fixture, Mock, Pi};
use crate::session16::{keys, reference, session_entries};
use pi_test_support::Script;

/// A request body's keys, sorted.
fn body_keys(body: &Value) -> Vec<String> {
    let mut k = keys(body);
    k.sort();
    k
}

/// Two prompts, then `/back` (the extension navigates to the first prompt with a summary);
/// what the session and the summary request show.
fn branch_summary_record(run: &dyn Fn(&Fixture, &[&str]) -> Option<Pi>) -> Option<Value> {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let ext = fixture("tree_summary.ts");
    run(&fx, &["-p", "one"])?.run().assert_ok();
    run(&fx, &["-c", "-p", "two"])?.run().assert_ok();
    let before = session_entries(&fx);
    let old_leaf = before.last().unwrap()["id"].clone();
    let out = run(&fx, &["-c", "-e", &ext, "-p", "/back"])?.run();
    out.assert_ok();
    assert!(out.stderr.contains("navigated cancelled=false"), "{}", out.stderr);

    let entries = session_entries(&fx);
    let first_user = entries
        .iter()
        .find(|e| e["message"]["role"] == "user")
        .expect("a user message");
    let summary = entries
        .iter()
        .find(|e| e["type"] == "branch_summary")
        .expect("a branch summary");
    let label = entries.iter().find(|e| e["type"] == "label").expect("a label");
    let requests = mock.requests();
    let summary_request = requests
        .iter()
        .find(|r| r.body.get("tools").is_none())
        .map(|r| r.body.clone())
        .expect("a summary request");
    let prompt = summary_request["messages"][1]["content"].clone();
    let prompt_text = match &prompt {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    };
    Some(json!({
        "keys": keys(summary),
        "fromIdIsTheOldLeaf": summary["fromId"] == old_leaf,
        "parentIsTheFirstPromptsParent": summary["parentId"] == first_user["parentId"],
        "usageKeys": keys(&summary["usage"]),
        "detailsKeys": keys(&summary["details"]),
        "labelTargetsTheSummary": label["targetId"] == summary["id"] && label["label"] == "tried",
        "summaryStartsWithThePreamble": summary["summary"].as_str().unwrap_or_default()
            .starts_with("The user explored a different conversation branch"),
        "requestKeys": body_keys(&summary_request),
        "promptQuotesTheBranch": prompt_text.contains("<conversation>") && prompt_text.contains("two"),
        "requests": requests.len(),
    }))
}

#[test]
fn a_branch_summary_written_through_navigate_tree_matches_pi_16() {
    let Some(env) = environment("a_branch_summary_written_through_navigate_tree_matches_pi_16") else {
        return;
    };
    let ours = branch_summary_record(&|fx, args| Some(pi_with(fx, &env, args))).unwrap();
    assert_eq!(ours["fromIdIsTheOldLeaf"], true, "{ours}");
    assert_eq!(ours["parentIsTheFirstPromptsParent"], true, "{ours}");
    assert_eq!(ours["labelTargetsTheSummary"], true, "{ours}");
    assert_eq!(
        ours["keys"],
        json!([
            "type",
            "id",
            "parentId",
            "timestamp",
            "fromId",
            "summary",
            "details",
            "usage",
            "fromHook"
        ])
    );
    assert!(
        ours["usageKeys"].as_array().is_some_and(|k| k.contains(&json!("cost"))),
        "{ours}"
    );
    if let Some(theirs) = branch_summary_record(&reference) {
        assert_eq!(ours, theirs);
    }
}

/// Two prompts and an RPC `compact`: the entry, the response and the summary request.
fn compaction_record(run: &dyn Fn(&Fixture, &[&str]) -> Option<Pi>) -> Option<Value> {
    let (mock, fx, response) = crate::session16::two_prompts_then_compact(run)?;
    let stats = crate::session16::rpc_until_answered(
        run(&fx, &["--mode", "rpc", "-c"])?,
        r#"{"id":"s","type":"get_session_stats"}"#,
        "s",
    );
    let mut stats = stats["data"].clone();
    for volatile in ["sessionFile", "sessionId", "contextUsage"] {
        stats.as_object_mut().unwrap().remove(volatile);
    }
    let entries = session_entries(&fx);
    let compaction = entries
        .iter()
        .find(|e| e["type"] == "compaction")
        .expect("a compaction");
    let summary_request = mock
        .requests()
        .into_iter()
        .find(|r| r.body.get("tools").is_none())
        .map(|r| r.body)
        .expect("a summary request");
    let data = &response["data"];
    Some(json!({
        "entryKeys": keys(compaction),
        "entryUsageKeys": keys(&compaction["usage"]),
        "responseKeys": keys(data),
        "responseUsageIsTheEntrys": data["usage"] == compaction["usage"],
        "estimatedTokensAfterIsANumber": data["estimatedTokensAfter"].is_u64(),
        "requestKeys": body_keys(&summary_request),
        "stats": stats,
        "entryUsageInput": compaction["usage"]["input"],
        "replyInputs": entries
            .iter()
            .filter(|e| e["message"]["role"] == "assistant")
            .filter_map(|e| e["message"]["usage"]["input"].as_u64())
            .sum::<u64>(),
    }))
}

#[test]
fn a_compaction_keeps_its_usage_as_pi_16_does() {
    let ours = compaction_record(&|fx, args| Some(fx.pi(args))).unwrap();
    assert_eq!(
        ours["responseKeys"],
        json!([
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "estimatedTokensAfter",
            "usage",
            "details"
        ]),
        "{ours}"
    );
    assert_eq!(ours["responseUsageIsTheEntrys"], true, "{ours}");
    assert_eq!(ours["estimatedTokensAfterIsANumber"], true, "{ours}");
    // The stats count the whole file (the compacted exchange too) and the summary's tokens.
    assert_eq!(ours["stats"]["userMessages"], 2, "{ours}");
    let summary_input = ours["entryUsageInput"].as_u64().unwrap();
    assert!(summary_input > 0, "{ours}");
    assert_eq!(
        ours["stats"]["tokens"]["input"].as_u64().unwrap(),
        ours["replyInputs"].as_u64().unwrap() + summary_input,
        "{ours}"
    );
    // Token counts depend on the prompts' words, which are our own: compare the shapes.
    let shape = |mut record: Value| {
        let record_map = record.as_object_mut().unwrap();
        record_map.remove("entryUsageInput");
        record_map.remove("replyInputs");
        let stats = record_map["stats"].as_object_mut().unwrap();
        let tokens = stats.remove("tokens").unwrap();
        stats.insert("tokens".into(), json!(keys(&tokens)));
        stats.remove("cost");
        record
    };
    if let Some(theirs) = compaction_record(&reference) {
        assert_eq!(shape(ours), shape(theirs));
    }
}
