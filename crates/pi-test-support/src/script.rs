//! Scripts: what the mock answers, in the golden scenario JSON format or built in Rust.
//!
//! A scenario file is one of
//!
//! * `{"mode": "echo"}`: every request is answered `echo: <last user text>`.
//! * `{"mode": "sequential", "turns": [...], "default": {...}}`: the reply is chosen by how many
//!   assistant turns the request's conversation already holds (0 for a fresh prompt, 1 after the
//!   first reply or tool round, and so on). Retries of the same request therefore get the same
//!   turn, and `--continue` picks up where the previous run stopped. Past the end, `default`.
//! * `{"mode": "match", "rules": [{"match": "regex", "turns": [...]}], "default": {...}}`: the
//!   first rule whose regex (case-insensitive) is found in the last user text answers; its turn
//!   is chosen by the number of assistant turns after that user message.
//! * `{"mode": "queue", "turns": [...]}` (not used by the golden runs): the n-th request gets the
//!   n-th turn, whatever the conversation holds. Handy for provider-level tests.
//!
//! A turn (`Turn`) has optional `thinking`, `text`, `tool_calls` (`[{name, arguments}]`), `big`
//! (that many extra lorem-ipsum tokens of text), `delay_ms` (pause before every streamed event
//! after the first), `stop` (`"length"` to end as if out of tokens), `usage` (token numbers to
//! report instead of the estimate), `encrypted_content` (Responses reasoning items carry it),
//! `input_transformations` (reported with the reply) and `fault` (see [`Fault`]). `{{last_user}}` in `text` or `thinking` becomes the last user text.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::MockError;

/// How requests are mapped to turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Reply `echo: {{last_user}}`.
    #[default]
    Echo,
    /// Turn n for a conversation that already holds n assistant turns.
    Sequential,
    /// First matching rule, then its turn by assistant turns since the last user text.
    Match,
    /// The n-th request (counted by the server) gets turn n.
    Queue,
}

/// A rule of a `match` script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// A regular expression searched (case-insensitively) in the last user text.
    #[serde(rename = "match")]
    pub pattern: String,
    /// Turns answered in order while the conversation continues after that user message.
    pub turns: Vec<Turn>,
}

/// One tool call of a scripted turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSpec {
    /// Tool name as the client declared it.
    pub name: String,
    /// Arguments; streamed as JSON with `", "` and `": "` separators in 12-character pieces.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Token numbers a turn reports instead of the estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct UsageSpec {
    /// Uncached input tokens (default: request body bytes / 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Output tokens (default: number of streamed content pieces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
}

/// What goes wrong with a reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultKind {
    /// An HTTP error status before any streaming, with a body shaped like the provider's.
    Http {
        status: u16,
        /// Error message in the body (a default per status otherwise).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// `retry-after` header value in seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<u64>,
        /// `retry-after-ms` header value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
    },
    /// The connection closes after `after_events` events, without ending the chunked body.
    Drop {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_events: Option<usize>,
    },
    /// An error inside the 200 stream after `after_events` events: an OpenAI-style error chunk,
    /// an Anthropic `error` event, a Responses `error` event, a Google error object.
    ErrorEvent {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_events: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Anthropic error type (default `overloaded_error`), OpenAI error type/code otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_type: Option<String>,
    },
    /// The stream ends cleanly after `after_events` events, before its final events.
    Truncate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_events: Option<usize>,
    },
}

/// A fault and how many times it fires before the turn is served normally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    #[serde(flatten)]
    pub kind: FaultKind,
    /// Fire on this many requests for the turn, then answer normally. `None`: always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

impl Fault {
    /// An HTTP error status with a provider-shaped body.
    pub fn status(status: u16) -> Self {
        Self {
            kind: FaultKind::Http {
                status,
                message: None,
                retry_after: None,
                retry_after_ms: None,
            },
            times: None,
        }
    }

    /// A 429 with `retry-after: secs`.
    pub fn rate_limited(secs: u64) -> Self {
        Self::status(429).retry_after(secs)
    }

    /// Anthropic's 529 `overloaded_error` (other APIs get a 529 with their error shape).
    pub fn overloaded() -> Self {
        Self::status(529)
    }

    /// The connection drops after `events` streamed events.
    pub fn drop_after(events: usize) -> Self {
        Self {
            kind: FaultKind::Drop {
                after_events: Some(events),
            },
            times: None,
        }
    }

    /// An error event inside the stream after `events` streamed events.
    pub fn error_event_after(events: usize) -> Self {
        Self {
            kind: FaultKind::ErrorEvent {
                after_events: Some(events),
                message: None,
                error_type: None,
            },
            times: None,
        }
    }

    /// The stream ends without its final events after `events` streamed events.
    pub fn truncate_after(events: usize) -> Self {
        Self {
            kind: FaultKind::Truncate {
                after_events: Some(events),
            },
            times: None,
        }
    }

    /// Set the `retry-after` header (HTTP faults only).
    pub fn retry_after(mut self, secs: u64) -> Self {
        if let FaultKind::Http { retry_after, .. } = &mut self.kind {
            *retry_after = Some(secs);
        }
        self
    }

    /// Set the error message (HTTP and error-event faults).
    pub fn message(mut self, text: impl Into<String>) -> Self {
        match &mut self.kind {
            FaultKind::Http { message, .. } | FaultKind::ErrorEvent { message, .. } => *message = Some(text.into()),
            _ => {}
        }
        self
    }

    /// Set the error type of an error event (e.g. `overloaded_error`, `api_error`).
    pub fn error_type(mut self, kind: impl Into<String>) -> Self {
        if let FaultKind::ErrorEvent { error_type, .. } = &mut self.kind {
            *error_type = Some(kind.into());
        }
        self
    }

    /// Fire only `n` times for this turn, then serve the turn normally.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }
}

/// One scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Turn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallSpec>,
    /// Extra text of this many lorem-ipsum tokens (one streamed piece each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub big: Option<usize>,
    /// Pause before every streamed event after the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// `"length"`: end as if the output limit was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSpec>,
    /// Responses API: put this `encrypted_content` on the reasoning item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
    /// What the provider changed in the request before the model saw it (Anthropic's
    /// `input_transformations` on `message_delta`, the Responses API's on the response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_transformations: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
}

impl Turn {
    /// A text reply.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A reply with one tool call and no text.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::default().with_tool_call(name, arguments)
    }

    /// A reply of `n` lorem-ipsum tokens.
    pub fn big(n: usize) -> Self {
        Self {
            big: Some(n),
            ..Self::default()
        }
    }

    /// A turn that fails with `fault` every time (use [`Fault::times`] to limit it).
    pub fn fault(fault: Fault) -> Self {
        Self {
            fault: Some(fault),
            ..Self::default()
        }
    }

    /// Add reasoning before the reply.
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Self {
        self.thinking = Some(thinking.into());
        self
    }

    /// Set the text.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Add a tool call.
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push(ToolCallSpec {
            name: name.into(),
            arguments,
        });
        self
    }

    /// Report these input transformations (a JSON array) with the reply.
    pub fn with_input_transformations(mut self, transformations: Value) -> Self {
        self.input_transformations = Some(transformations);
        self
    }

    /// Pause before every streamed event after the first.
    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms = Some(ms);
        self
    }

    /// Attach a fault.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Report these token numbers.
    pub fn with_usage(mut self, usage: UsageSpec) -> Self {
        self.usage = Some(usage);
        self
    }

    /// End as if the output limit was reached.
    pub fn with_length_stop(mut self) -> Self {
        self.stop = Some("length".into());
        self
    }

    /// Replace `{{last_user}}` in text and thinking.
    pub(crate) fn render(&self, last_user: &str) -> Turn {
        let mut turn = self.clone();
        for field in [&mut turn.text, &mut turn.thinking].into_iter().flatten() {
            if field.contains("{{last_user}}") {
                *field = field.replace("{{last_user}}", last_user);
            }
        }
        turn
    }
}

/// A whole script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Script {
    #[serde(default)]
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<Turn>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Turn>,
}

impl Script {
    /// Echo the last user text.
    pub fn echo() -> Self {
        Self::default()
    }

    /// Turn n answers a conversation holding n assistant turns.
    pub fn sequential(turns: Vec<Turn>) -> Self {
        Self {
            mode: Mode::Sequential,
            turns,
            ..Self::default()
        }
    }

    /// The n-th request gets turn n.
    pub fn queue(turns: Vec<Turn>) -> Self {
        Self {
            mode: Mode::Queue,
            turns,
            ..Self::default()
        }
    }

    /// Rules matched against the last user text (add them with [`Script::rule`]).
    pub fn matching() -> Self {
        Self {
            mode: Mode::Match,
            ..Self::default()
        }
    }

    /// Add a `match` rule.
    pub fn rule(mut self, pattern: impl Into<String>, turns: Vec<Turn>) -> Self {
        self.rules.push(Rule {
            pattern: pattern.into(),
            turns,
        });
        self
    }

    /// The reply once the turns run out (or no rule matches).
    pub fn with_default(mut self, turn: Turn) -> Self {
        self.default = Some(turn);
        self
    }

    /// Parse a scenario file's text.
    pub fn from_json(text: &str) -> Result<Self, MockError> {
        let script: Script = serde_json::from_str(text).map_err(MockError::Script)?;
        script.compile()?;
        Ok(script)
    }

    /// Load a scenario file.
    pub fn from_file(path: &std::path::Path) -> Result<Self, MockError> {
        let text = std::fs::read_to_string(path).map_err(|source| MockError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&text)
    }

    /// Check the rules' regexes.
    pub(crate) fn compile(&self) -> Result<Vec<regex::Regex>, MockError> {
        self.rules
            .iter()
            .map(|rule| {
                regex::RegexBuilder::new(&rule.pattern)
                    .case_insensitive(true)
                    .build()
                    .map_err(|e| MockError::Pattern {
                        pattern: rule.pattern.clone(),
                        message: e.to_string(),
                    })
            })
            .collect()
    }
}

/// Which turn a request gets: `(key for fault counting, turn index, turn before templating)`.
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    pub rule: Option<usize>,
    pub index: usize,
    pub turn: Turn,
}

/// What the chooser needs to know about a request's conversation.
pub(crate) struct ConversationFacts {
    pub assistant_turns: usize,
    pub assistant_turns_since_user: usize,
    pub last_user: String,
}

impl Script {
    pub(crate) fn choose(&self, regexes: &[regex::Regex], facts: &ConversationFacts, request_number: usize) -> Choice {
        let fallback = |index| {
            let turn = self.default.clone().unwrap_or_else(|| match self.mode {
                Mode::Echo => Turn::text("echo: {{last_user}}"),
                _ => Turn::text("(mock script exhausted)"),
            });
            Choice {
                rule: None,
                index,
                turn,
            }
        };
        match self.mode {
            Mode::Echo => fallback(facts.assistant_turns),
            Mode::Sequential | Mode::Queue => {
                let index = if self.mode == Mode::Queue {
                    request_number
                } else {
                    facts.assistant_turns
                };
                match self.turns.get(index) {
                    Some(turn) => Choice {
                        rule: None,
                        index,
                        turn: turn.clone(),
                    },
                    None => fallback(index),
                }
            }
            Mode::Match => {
                let index = facts.assistant_turns_since_user;
                for (i, (rule, re)) in self.rules.iter().zip(regexes).enumerate() {
                    if re.is_match(&facts.last_user) {
                        if let Some(turn) = rule.turns.get(index) {
                            return Choice {
                                rule: Some(i),
                                index,
                                turn: turn.clone(),
                            };
                        }
                        return fallback(index);
                    }
                }
                fallback(index)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts(assistant_turns: usize, since: usize, last_user: &str) -> ConversationFacts {
        ConversationFacts {
            assistant_turns,
            assistant_turns_since_user: since,
            last_user: last_user.into(),
        }
    }

    #[test]
    fn golden_scenarios_parse() {
        let tools = r#"{"mode": "sequential", "turns": [{"thinking": "t", "text": "x",
            "tool_calls": [{"name": "read", "arguments": {"path": "hello.txt"}}]}], "default": {"text": "done"}}"#;
        let script = Script::from_json(tools).unwrap();
        assert_eq!(script.mode, Mode::Sequential);
        assert_eq!(script.turns[0].tool_calls[0].arguments, json!({"path": "hello.txt"}));
        let rpc = r#"{"mode": "match", "rules": [{"match": "a|b", "turns": [{"big": 300, "delay_ms": 20}]}],
            "default": {"text": "echo: {{last_user}}"}}"#;
        let script = Script::from_json(rpc).unwrap();
        assert_eq!(script.rules[0].turns[0].big, Some(300));
        assert_eq!(
            serde_json::to_string(&script.rules[0].turns[0]).unwrap(),
            r#"{"big":300,"delay_ms":20}"#
        );
    }

    #[test]
    fn bad_regex_is_an_error() {
        let err = Script::from_json(r#"{"mode": "match", "rules": [{"match": "(", "turns": []}]}"#).unwrap_err();
        assert!(err.to_string().contains("("), "{err}");
    }

    #[test]
    fn sequential_picks_by_assistant_turns_then_default() {
        let script = Script::sequential(vec![Turn::text("a"), Turn::text("b")]).with_default(Turn::text("z"));
        assert_eq!(script.choose(&[], &facts(1, 0, ""), 0).turn.text.as_deref(), Some("b"));
        let past = script.choose(&[], &facts(5, 0, ""), 0);
        assert_eq!((past.index, past.turn.text.as_deref()), (5, Some("z")));
    }

    #[test]
    fn match_uses_first_matching_rule_and_turns_since_user() {
        let script = Script::matching()
            .rule("use a tool", vec![Turn::text("one"), Turn::text("two")])
            .with_default(Turn::text("echo: {{last_user}}"));
        let re = script.compile().unwrap();
        let c = script.choose(&re, &facts(3, 1, "please USE A TOOL"), 0);
        assert_eq!((c.rule, c.turn.text.as_deref()), (Some(0), Some("two")));
        let c = script.choose(&re, &facts(3, 0, "hi"), 0);
        assert_eq!(c.turn.render("hi").text.as_deref(), Some("echo: hi"));
    }

    #[test]
    fn queue_follows_the_request_count_not_the_conversation() {
        let script = Script::queue(vec![Turn::text("a"), Turn::text("b")]);
        assert_eq!(script.choose(&[], &facts(0, 0, ""), 1).turn.text.as_deref(), Some("b"));
        assert_eq!(
            script.choose(&[], &facts(0, 0, ""), 2).turn.text.as_deref(),
            Some("(mock script exhausted)")
        );
    }

    #[test]
    fn fault_json_round_trips() {
        let turn: Turn = serde_json::from_value(
            json!({"text": "ok", "fault": {"kind": "http", "status": 429, "retry_after": 1, "times": 2}}),
        )
        .unwrap();
        assert_eq!(turn.fault, Some(Fault::rate_limited(1).times(2)));
    }
}
