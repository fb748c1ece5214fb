//! One streamed chat-completions chunk, read into the few fields the stream uses.
//!
//! A reply arrives as one chunk per token, so reading chunks is the hot path of streaming.
//! Building a `serde_json::Value` tree per chunk (an ordered map per object) was half of a long
//! reply's CPU time; these types borrow the text and skip everything else. Every field is
//! lenient, as the tree-walking code it replaced was: a field of an unexpected type reads as
//! absent instead of failing the stream.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::providers::lenient::{skip, skip_map, Object, Text};

/// The chunk's top level.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Chunk<'a> {
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default, borrow)]
    pub id: Text<'a>,
    #[serde(default, borrow)]
    pub model: Text<'a>,
    #[serde(default)]
    pub usage: Option<Value>,
    #[serde(default, borrow)]
    pub choices: FirstChoice<'a>,
}

/// The first entry of `choices` (the API streams one choice).
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Choice<'a> {
    #[serde(default)]
    pub usage: Option<Value>,
    #[serde(default, borrow)]
    pub finish_reason: Text<'a>,
    #[serde(default, borrow)]
    pub delta: Object<Delta<'a>>,
}

/// What the token added.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Delta<'a> {
    #[serde(default, borrow)]
    pub content: Text<'a>,
    #[serde(default, borrow)]
    pub reasoning_content: Text<'a>,
    #[serde(default, borrow)]
    pub reasoning: Text<'a>,
    #[serde(default, borrow)]
    pub reasoning_text: Text<'a>,
    #[serde(default)]
    pub tool_calls: Option<Value>,
    #[serde(default)]
    pub reasoning_details: Option<Value>,
}

impl<'a> Delta<'a> {
    /// The reasoning text and the field it came in (servers differ in the name).
    pub fn reasoning(&self) -> Option<(&'static str, &str)> {
        [
            ("reasoning_content", &self.reasoning_content),
            ("reasoning", &self.reasoning),
            ("reasoning_text", &self.reasoning_text),
        ]
        .into_iter()
        .find_map(|(field, text)| text.non_empty().map(|t| (field, t)))
    }
}

/// `choices`: the first element when it is an object.
#[derive(Debug, Default)]
pub(crate) struct FirstChoice<'a>(pub Option<Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FirstVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for FirstVisitor<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstChoice<'a>, A::Error> {
                let first = seq.next_element::<Object<Choice<'a>>>()?.and_then(|o| o.0);
                skip(seq)?;
                Ok(FirstChoice(first))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FirstChoice<'a>, A::Error> {
                skip_map(map).map(|()| FirstChoice(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<FirstChoice<'a>, E> {
                Ok(FirstChoice(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<FirstChoice<'a>, E> {
                Ok(FirstChoice(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<FirstChoice<'a>, E> {
                Ok(FirstChoice(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<FirstChoice<'a>, E> {
                Ok(FirstChoice(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<FirstChoice<'a>, E> {
                Ok(FirstChoice(None))
            }
            fn visit_unit<E>(self) -> Result<FirstChoice<'a>, E> {
                Ok(FirstChoice(None))
            }
        }
        d.deserialize_any(FirstVisitor(PhantomData))
    }
}

/// What a `data:` line holds: a chunk, or something else that is skipped (valid JSON that is
/// not an object).
pub(crate) enum Parsed<'a> {
    Chunk(Box<Chunk<'a>>),
    NotAnObject,
}

/// Read one `data:` payload; the error is pi's text for JSON it cannot parse.
pub(crate) fn parse(data: &str) -> Result<Parsed<'_>, String> {
    let error = |e: serde_json::Error| format!("Could not parse stream message as JSON: {e}");
    // A derived struct would also read a JSON array as its fields in order.
    if !data.trim_start().starts_with('{') {
        return match serde_json::from_str::<IgnoredAny>(data) {
            Ok(_) => Ok(Parsed::NotAnObject),
            Err(e) => Err(error(e)),
        };
    }
    match serde_json::from_str::<Chunk>(data) {
        Ok(chunk) => Ok(Parsed::Chunk(Box::new(chunk))),
        // Only the top level is strict about its type: find out whether this was JSON at all.
        Err(e) => match serde_json::from_str::<IgnoredAny>(data) {
            Ok(_) => Ok(Parsed::NotAnObject),
            Err(_) => Err(error(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn chunk(data: &str) -> Chunk<'_> {
        match parse(data).expect("parses") {
            Parsed::Chunk(c) => *c,
            Parsed::NotAnObject => panic!("not an object: {data}"),
        }
    }

    #[test]
    fn a_token_chunk_borrows_its_text() {
        let data = r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#;
        let c = chunk(data);
        assert_eq!(c.id.get(), Some("c1"));
        assert_eq!(c.model.get(), Some("m"));
        let choice = c.choices.0.expect("choice");
        assert_eq!(choice.finish_reason.get(), None);
        let delta = choice.delta.0.expect("delta");
        assert!(matches!(delta.content.0, Some(Cow::Borrowed("Hel"))));
    }

    #[test]
    fn escaped_text_is_unescaped() {
        let c = chunk(r#"{"choices":[{"delta":{"content":"a\nb \u00e9"}}]}"#);
        let delta = c.choices.0.and_then(|c| c.delta.0).expect("delta");
        assert_eq!(delta.content.get(), Some("a\nb é"));
    }

    #[test]
    fn fields_of_unexpected_types_read_as_absent() {
        let c = chunk(
            r#"{"id":5,"model":["x"],"choices":[{"delta":"text","finish_reason":{"a":1}},{"delta":{}}],"usage":{"prompt_tokens":3}}"#,
        );
        assert_eq!(c.id.get(), None);
        assert_eq!(c.model.get(), None);
        assert_eq!(c.usage, Some(serde_json::json!({"prompt_tokens": 3})));
        let choice = c.choices.0.expect("first choice");
        assert!(choice.delta.0.is_none());
        assert_eq!(choice.finish_reason.get(), None);
        let c = chunk(r#"{"choices":{"0":{}}}"#);
        assert!(c.choices.0.is_none());
        let c = chunk(r#"{"choices":[7,{"delta":{"content":"x"}}]}"#);
        assert!(c.choices.0.is_none(), "only the first choice counts, as before");
    }

    #[test]
    fn reasoning_comes_from_whichever_field_the_server_uses() {
        let c = chunk(r#"{"choices":[{"delta":{"reasoning":"","reasoning_text":"think"}}]}"#);
        let delta = c.choices.0.and_then(|c| c.delta.0).expect("delta");
        assert_eq!(delta.reasoning(), Some(("reasoning_text", "think")));
    }

    #[test]
    fn non_objects_are_skipped_and_broken_json_is_an_error() {
        assert!(matches!(parse("[1,2]"), Ok(Parsed::NotAnObject)));
        assert!(matches!(parse("\"x\""), Ok(Parsed::NotAnObject)));
        let e = parse("{\"choices\":").err().expect("error");
        assert!(e.starts_with("Could not parse stream message as JSON: "), "{e}");
    }
}
