//! Seeded fuzzing of what the extension host sends: mutated frames and results never panic,
//! a frame that parses is written back to the same frame, and the typed readings of results
//! accept or reject without panicking.
//! `PI_FUZZ_ITERS=200000 cargo test --release -p pi-extensions --lib protocol_fuzz_tests` runs longer.

use pi_test_support::fuzz::{self, Rng};
use serde_json::Value;

use crate::outcomes::{self, InputOutcome, SessionBeforeOutcome, ToolCallOutcome};
use crate::protocol::{CommandResult, Dispatched, Frame, Hello, LoadResult, StateUpdate, ToolResult};

const FRAMES: &[&str] = &[
    r#"{"method":"hello","params":{"protocolVersion":2,"node":"v22.0.0","pid":42}}"#,
    r#"{"id":1,"result":{"protocolVersion":2,"node":"v22","pid":7}}"#,
    r#"{"id":2,"result":{"extensions":[{"path":"a.ts","resolvedPath":"/x/a.ts","tools":[{"name":"t","parameters":{"type":"object"}}],"commands":[{"name":"c"}],"flags":[{"name":"f","type":"boolean"}],"events":["input"]}],"errors":[{"path":"b.ts","error":"boom"}]}}"#,
    r#"{"id":3,"result":{"result":{"action":"transform","text":"x"},"errors":[{"extensionPath":"a.ts","event":"input","error":"e"}]}}"#,
    r#"{"id":4,"result":{"content":[{"type":"text","text":"ok"}],"details":{},"isError":false,"terminate":true}}"#,
    r#"{"id":5,"error":{"code":"failed","message":"no such tool","stack":"at x"}}"#,
    r#"{"id":6,"method":"ui.confirm","params":{"title":"Sure?","message":"really"}}"#,
    r#"{"id":7,"method":"tool.builtin","params":{"name":"read","args":{"path":"a"}}}"#,
    r#"{"method":"notify","params":{"message":"hi","type":"info"}}"#,
    r#"{"method":"sendUserMessage","params":{"content":"again","deliverAs":"followUp"}}"#,
    r#"{"id":8,"result":{"found":true,"error":null}}"#,
    r#"{"id":9,"result":{"block":true,"reason":"no","input":{"path":"x"}}}"#,
    r#"{"id":10,"result":{"cancel":true}}"#,
    r#"{"id":11,"result":{"cwd":"/p","entries":{"reset":true,"append":[{"type":"message"}]}}}"#,
];

/// Every typed reading the runner applies to a result; each either reads or says why not.
fn read_all_ways(result: &Value) {
    let _ = serde_json::from_value::<Hello>(result.clone());
    let _ = serde_json::from_value::<LoadResult>(result.clone());
    let _ = serde_json::from_value::<Dispatched>(result.clone());
    let _ = serde_json::from_value::<ToolResult>(result.clone());
    let _ = serde_json::from_value::<CommandResult>(result.clone());
    let _ = serde_json::from_value::<StateUpdate>(result.clone());
    let _ = outcomes::parse::<ToolCallOutcome>(result).map(|o| o.block_message());
    let _ = InputOutcome::from_result(result);
    let _ = SessionBeforeOutcome::from_result(result);
    if let Some(inner) = result.get("result") {
        let _ = InputOutcome::from_result(inner);
        let _ = outcomes::parse::<ToolCallOutcome>(inner);
    }
}

#[test]
fn fuzz_mutated_frames_parse_or_fail_cleanly() {
    let mut rng = Rng::new(0x5eed_0000_0000_0e01);
    let mut parsed = 0;
    for _ in 0..fuzz::iters(4_000) {
        let seed = *rng.pick(FRAMES);
        let bytes = fuzz::mutated(&mut rng, seed.as_bytes());
        // The connection reads lines of text: invalid UTF-8 ends the stream before this point.
        let Ok(line) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let Ok(frame) = Frame::parse(line) else {
            continue;
        };
        parsed += 1;
        let again = Frame::parse(&frame.to_line()).unwrap_or_else(|e| panic!("{line:?} written back: {e}"));
        assert_eq!(again, frame, "round trip of {line:?}");
        match &frame {
            Frame::Response {
                outcome: Ok(result), ..
            } => read_all_ways(result),
            Frame::Request { params, .. } | Frame::Notification { params, .. } => read_all_ways(params),
            Frame::Response { outcome: Err(_), .. } => {}
        }
    }
    // The mutations must leave enough frames intact to exercise the typed readings.
    assert!(parsed > fuzz::iters(4_000) / 50, "only {parsed} mutated frames parsed");
}
