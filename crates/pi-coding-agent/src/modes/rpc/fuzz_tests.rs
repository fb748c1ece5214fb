//! Seeded fuzzing of the RPC input path: the line reader over random chunkings and the
//! classification of mutated command lines. No input panics, every answer is one JSON record.
//! `PI_FUZZ_ITERS=200000 cargo test --release -p pi-coding-agent --lib rpc::fuzz_tests` runs longer.

use pi_test_support::fuzz::{self, Rng};
use serde_json::Value;

use super::framing::LineReader;
use super::protocol::{parse_line, CommandError, Incoming, RpcResponse, COMMAND_TYPES};

/// Valid lines of every command type, the seeds the mutations start from.
fn seeds() -> Vec<String> {
    let mut out: Vec<String> = COMMAND_TYPES
        .iter()
        .map(|t| format!(r#"{{"id":"req-1","type":"{t}"}}"#))
        .collect();
    out.extend(
        [
            r#"{"id":"1","type":"prompt","message":"hello","streamingBehavior":"steer"}"#,
            r#"{"type":"prompt","message":"look","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}"#,
            r#"{"id":2,"type":"set_model","provider":"mock","modelId":"m"}"#,
            r#"{"id":null,"type":"set_thinking_level","level":"high"}"#,
            r#"{"id":"3","type":"set_steering_mode","mode":"one-at-a-time"}"#,
            r#"{"id":"4","type":"compact","customInstructions":"keep it short"}"#,
            r#"{"id":"5","type":"bash","command":"echo hi"}"#,
            r#"{"id":"6","type":"fork","entryId":"abcd1234"}"#,
            r#"{"id":"7","type":"export_html","outputPath":"/tmp/x.html"}"#,
            r#"{"id":"8","type":"extension_ui_response","requestId":"r1","value":"yes"}"#,
            r#"{"type":"extension_ui_response","id":"r2","confirmed":true}"#,
            r#"{"id":"9","type":"get_entries","since":"abc"}"#,
            "[1,2,3]",
            "\"just a string\"",
            "",
        ]
        .map(String::from),
    );
    out
}

/// The answer pi would write for a line that is not a UI response.
fn answer(incoming: &Incoming) -> Option<String> {
    match incoming {
        Incoming::Malformed(resp) => Some(resp.to_line()),
        Incoming::UiResponse(_) => None,
        Incoming::Command(env) => match &env.command {
            Ok(cmd) => Some(RpcResponse::ok(env.id.clone(), cmd.type_name()).to_line()),
            Err(CommandError::Unknown(text)) => {
                Some(RpcResponse::unknown(env.id.clone(), env.type_value.clone(), text).to_line())
            }
            Err(e @ CommandError::Invalid(_)) => {
                Some(RpcResponse::err(env.id.clone(), env.type_value.clone(), e.to_string()).to_line())
            }
        },
    }
}

#[test]
fn fuzz_mutated_command_lines_get_one_json_answer() {
    let seeds = seeds();
    let mut rng = Rng::new(0x5eed_0000_0000_0a01);
    for _ in 0..fuzz::iters(4_000) {
        let seed = rng.pick(&seeds).clone();
        let bytes = fuzz::mutated(&mut rng, seed.as_bytes());
        // The reader decodes lossily and splits on \n: classify what it would hand over.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let incoming = parse_line(line);
            if let Some(answer) = answer(&incoming) {
                assert!(!answer.contains('\n'), "a raw newline in the answer to {line:?}");
                let parsed: Value =
                    serde_json::from_str(&answer).unwrap_or_else(|e| panic!("answer to {line:?} is not JSON: {e}"));
                assert_eq!(parsed["type"], "response", "answer to {line:?}: {answer}");
            }
            // A command that parsed round-trips through the client's form of it.
            if let Incoming::Command(env) = &incoming {
                if let Ok(cmd) = &env.command {
                    let again = parse_line(&cmd.to_line(Some("x")));
                    let Incoming::Command(env2) = again else {
                        panic!("{line:?} written back is no longer a command")
                    };
                    assert_eq!(env2.command.as_ref().ok(), Some(cmd), "round trip of {line:?}");
                }
            }
        }
    }
}

#[test]
fn fuzz_line_reader_splits_any_chunking_like_a_whole_read() {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let mut rng = Rng::new(0x5eed_0000_0000_0a02);
    let pieces: &[&[u8]] = &[
        b"{\"a\":1}",
        b"\n",
        b"\r\n",
        b"\r",
        "\u{2028}".as_bytes(),
        b"\xff",
        "é".as_bytes(),
        b"x",
    ];
    for _ in 0..fuzz::iters(1_500) {
        let mut input = Vec::new();
        for _ in 0..rng.below(40) {
            let piece: &[u8] = pieces[rng.below(pieces.len())];
            input.extend_from_slice(piece);
        }
        // What a reader must produce: split on \n, one trailing \r dropped, a final partial line
        // kept, lossy UTF-8 per line.
        let mut expected: Vec<String> = Vec::new();
        let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        if parts.last().is_some_and(|p| p.is_empty()) {
            parts.pop();
        }
        for p in parts {
            let p = p.strip_suffix(b"\r").unwrap_or(p);
            expected.push(String::from_utf8_lossy(p).into_owned());
        }
        // Feed it through a pipe in random chunks.
        let mut builder = tokio_test_reader(&mut rng, &input);
        let got = rt.block_on(async {
            let mut reader = LineReader::new(&mut builder);
            let mut lines = Vec::new();
            while let Some(line) = reader.next_line().await.expect("in-memory read") {
                lines.push(line);
                assert!(lines.len() <= input.len() + 1, "more lines than bytes");
            }
            lines
        });
        assert_eq!(got, expected, "input {input:?}");
    }
}

/// An `AsyncRead` that hands out `input` in random chunk sizes.
fn tokio_test_reader(rng: &mut Rng, input: &[u8]) -> ChunkedReader {
    let mut chunks = Vec::new();
    let mut pos = 0;
    while pos < input.len() {
        let end = (pos + 1 + rng.below(9)).min(input.len());
        chunks.push(input[pos..end].to_vec());
        pos = end;
    }
    chunks.reverse();
    ChunkedReader { chunks }
}

struct ChunkedReader {
    /// Reversed: the next chunk is last.
    chunks: Vec<Vec<u8>>,
}

impl tokio::io::AsyncRead for ChunkedReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if let Some(mut chunk) = self.chunks.pop() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            if n < chunk.len() {
                self.chunks.push(chunk.split_off(n));
            }
        }
        std::task::Poll::Ready(Ok(()))
    }
}
