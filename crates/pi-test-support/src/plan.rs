//! A reply cut into the pieces every wire format streams: reasoning words, text words, tool
//! calls with their arguments in 12-character pieces, the stop reason and the token counts.
//!
//! Token numbers are deterministic estimates, the same rule the golden runs used:
//! * input = request body bytes / 4 (integer division),
//! * output = number of streamed content pieces (one per reasoning or text word, one per
//!   12-character piece of tool arguments).
//!
//! A turn's `usage` replaces either number.

use serde_json::Value;

use crate::pyjson;
use crate::script::Turn;

/// Characters per streamed piece of tool-call arguments.
const ARG_PIECE_CHARS: usize = 12;

/// Words `big` turns stream, in a cycle.
const LOREM: &[&str] = &[
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
];

/// Why the reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    End,
    Tools,
    Length,
}

/// One planned tool call.
#[derive(Debug, Clone)]
pub(crate) struct PlannedCall {
    pub name: String,
    pub arguments: Value,
    pub args_json: String,
    pub pieces: Vec<String>,
}

/// Token counts reported at the end.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
}

/// Everything a wire format needs to stream one reply.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub turn_index: usize,
    pub model: String,
    pub thinking: Vec<String>,
    pub text: Vec<String>,
    pub calls: Vec<PlannedCall>,
    pub stop: Stop,
    pub tokens: Tokens,
    pub encrypted_content: Option<String>,
    pub input_transformations: Option<serde_json::Value>,
    /// Tools the request declared as custom (grammar) tools: their calls carry raw input.
    pub custom_tools: Vec<String>,
}

impl Plan {
    pub fn new(turn: &Turn, turn_index: usize, model: &str, body_bytes: usize) -> Plan {
        let thinking = turn.thinking.as_deref().map(words).unwrap_or_default();
        let mut text = turn.text.as_deref().map(words).unwrap_or_default();
        if let Some(n) = turn.big {
            text.extend((0..n).map(|i| format!("{} ", LOREM[i % LOREM.len()])));
        }
        let calls: Vec<PlannedCall> = turn
            .tool_calls
            .iter()
            .map(|call| {
                let args_json = pyjson::to_string(&call.arguments);
                let pieces = pieces(&args_json, ARG_PIECE_CHARS);
                PlannedCall {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    args_json,
                    pieces,
                }
            })
            .collect();
        let stop = if turn.stop.as_deref() == Some("length") {
            Stop::Length
        } else if calls.is_empty() {
            Stop::End
        } else {
            Stop::Tools
        };
        let streamed = thinking.len() + text.len() + calls.iter().map(|c| c.pieces.len()).sum::<usize>();
        let usage = turn.usage.clone().unwrap_or_default();
        let tokens = Tokens {
            input: usage.input.unwrap_or((body_bytes / 4) as u64),
            output: usage.output.unwrap_or(streamed as u64),
            cache_read: usage.cache_read.unwrap_or(0),
            cache_write: usage.cache_write.unwrap_or(0),
            reasoning: thinking.len() as u64,
        };
        Plan {
            turn_index,
            model: model.to_owned(),
            thinking,
            text,
            calls,
            stop,
            tokens,
            encrypted_content: turn.encrypted_content.clone(),
            input_transformations: turn.input_transformations.clone(),
            custom_tools: Vec::new(),
        }
    }

    pub fn thinking_text(&self) -> String {
        self.thinking.concat()
    }

    pub fn text_text(&self) -> String {
        self.text.concat()
    }
}

/// Split text into words that keep their trailing whitespace ("echo: hello" -> "echo: ", "hello").
/// Leading whitespace stays with the first word, so the pieces always join back to the text.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            in_space = true;
        } else if in_space && current.chars().any(|c| !c.is_whitespace()) {
            out.push(std::mem::take(&mut current));
            in_space = false;
        } else {
            in_space = false;
        }
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Split text into pieces of `n` characters.
pub(crate) fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_keep_trailing_space_and_join_back() {
        assert_eq!(words("echo: hello"), vec!["echo: ", "hello"]);
        assert_eq!(words("  a\n\nb "), vec!["  a\n\n", "b "]);
        assert!(words("").is_empty());
        let text = "## Goal\nx y\n\n- z";
        assert_eq!(words(text).concat(), text);
    }

    #[test]
    fn golden_usage_for_the_first_tools_turn() {
        let turn = Turn::text("Let me read the file first.")
            .with_thinking("The user wants me to inspect hello.txt first.")
            .with_tool_call("read", json!({"path": "hello.txt"}));
        let plan = Plan::new(&turn, 0, "mock-model", 5663);
        assert_eq!(plan.calls[0].pieces, vec!["{\"path\": \"he", "llo.txt\"}"]);
        assert_eq!((plan.tokens.input, plan.tokens.output), (1415, 16));
        assert_eq!(plan.stop, Stop::Tools);
    }

    #[test]
    fn big_streams_lorem_tokens() {
        let plan = Plan::new(&Turn::big(3), 0, "m", 0);
        assert_eq!(plan.text, vec!["lorem ", "ipsum ", "dolor "]);
        assert_eq!(plan.tokens.output, 3);
    }
}
