//! The `context` preview of pi 1.6's boundary events (`extensions/boundary_preview.ts`), ours
//! and pi 1.6's side by side against the mock: `turn_end` and `agent_before_settle` handlers
//! see the context entries with the messages each contributes, the messages, the LLM messages,
//! the pending messages and `canContinue`; a later handler sees the earlier one's proposal
//! applied (a note appended, the user's message edited); an invalid proposal is reported and
//! dropped.

use pi_test_support::{Script, Turn};
use serde_json::Value;

use crate::extensions::{environment, fixture, pi_with, reference_run};
use crate::harness::{Fixture, Mock, Pi};

/// What the handlers saw, one value per call, and the run's stderr.
fn run(mut pi: Pi, fx: &Fixture, invalid: bool) -> (Vec<Value>, String) {
    let log = fx.root.path().join("boundary.log");
    let _ = std::fs::remove_file(&log);
    pi.cmd.env("BOUNDARY_LOG", &log);
    if invalid {
        pi.cmd.env("BOUNDARY_INVALID", "1");
    } else {
        pi.cmd.env_remove("BOUNDARY_INVALID");
    }
    let run = pi.run();
    run.assert_ok();
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    let seen = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (seen, run.stderr)
}

fn args() -> Vec<String> {
    ["-e", &fixture("boundary_preview.ts"), "-p", "go"]
        .map(str::to_string)
        .to_vec()
}

#[test]
fn boundary_handlers_see_the_context_with_the_proposal_applied() {
    let test = "boundary_handlers_see_the_context_with_the_proposal_applied";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::sequential(vec![Turn::text("first")]));
    let fx = Fixture::new(&mock);
    let (ours, _) = run(pi_with(&fx, &env, args()), &fx, false);
    assert_eq!(ours.len(), 3, "{ours:#?}");
    let settle_1 = &ours[1];
    assert_eq!(settle_1["llm"], serde_json::json!(["user:go", "assistant:first"]));
    assert_eq!(settle_1["canContinue"], false);
    assert_eq!(settle_1["pending"], 0);
    // The second handler sees the first one's proposal: the note at the end, the user's
    // message edited, the mark listed without a message.
    let settle_2 = &ours[2];
    assert_eq!(
        settle_2["proposed"],
        serde_json::json!(["custom_message", "context_edit", "custom"])
    );
    assert_eq!(
        settle_2["llm"],
        serde_json::json!(["user:edited", "assistant:first", "user:a note"])
    );
    assert_eq!(settle_2["canContinue"], true);
    let entries: Vec<&str> = settle_2["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        entries.ends_with(&["custom_message:note=1", "context_edit:=0", "custom:mark=0"]),
        "{entries:?}"
    );
    // The preview is only a preview: what is committed comes after the handlers.
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    assert!(
        session.contains("\"context_edit\"") && session.contains("\"mark\""),
        "{session}"
    );

    // pi 1.6 shows its handlers the same.
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![Turn::text("first")]));
    let fx = Fixture::new(&mock);
    let (theirs, _) = run(reference_run(&reference, &fx, &args()), &fx, false);
    assert_eq!(ours, theirs);
}

#[test]
fn an_invalid_proposal_is_reported_and_nothing_of_it_is_written() {
    let test = "an_invalid_proposal_is_reported_and_nothing_of_it_is_written";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::sequential(vec![Turn::text("first")]));
    let fx = Fixture::new(&mock);
    let (ours, stderr) = run(pi_with(&fx, &env, args()), &fx, true);
    assert!(
        stderr.contains("Invalid boundary entries: Entry no-such-entry not found"),
        "{stderr}"
    );
    // The second handler still ran, on the context as it was.
    assert_eq!(ours.len(), 3, "{ours:#?}");
    assert_eq!(ours[2]["llm"], ours[1]["llm"]);
    let session = std::fs::read_to_string(fx.only_session()).unwrap();
    assert!(
        !session.contains("\"mark\"") && !session.contains("a note"),
        "{session}"
    );

    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![Turn::text("first")]));
    let fx = Fixture::new(&mock);
    let (theirs, their_stderr) = run(reference_run(&reference, &fx, &args()), &fx, true);
    assert_eq!(ours, theirs);
    assert!(
        their_stderr.contains("Invalid boundary entries: Entry no-such-entry not found"),
        "{their_stderr}"
    );
}
