//! Anthropic's per-token event, `content_block_delta`, read into borrowed fields without a JSON
//! tree (see [`crate::providers::lenient`]): it is nearly every event of a reply.

use serde::Deserialize;

use crate::providers::lenient::{Index, Object, Text};

#[derive(Debug, Default, Deserialize)]
pub(super) struct BlockDelta<'a> {
    #[serde(default, rename = "type", borrow)]
    pub kind: Text<'a>,
    #[serde(default)]
    pub index: Index,
    #[serde(default, borrow)]
    pub delta: Object<DeltaBody<'a>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct DeltaBody<'a> {
    #[serde(default, rename = "type", borrow)]
    pub kind: Text<'a>,
    #[serde(default, borrow)]
    pub text: Text<'a>,
    #[serde(default, borrow)]
    pub thinking: Text<'a>,
    #[serde(default, borrow)]
    pub partial_json: Text<'a>,
    #[serde(default, borrow)]
    pub signature: Text<'a>,
}

/// The event, when `data` is a well-formed `content_block_delta` object; anything else takes
/// the general path (which also words the errors).
pub(super) fn parse(data: &str) -> Option<BlockDelta<'_>> {
    if !data.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<BlockDelta>(data)
        .ok()
        .filter(|d| d.kind.get() == Some("content_block_delta"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_delta_is_read_in_place() {
        let d = parse(r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#)
            .expect("delta");
        assert_eq!(d.index.0, Some(1));
        let body = d.delta.0.expect("body");
        assert_eq!((body.kind.get(), body.text.get()), (Some("text_delta"), Some("Hi")));
    }

    #[test]
    fn other_events_and_broken_json_take_the_general_path() {
        assert!(parse(r#"{"type":"message_delta","delta":{}}"#).is_none());
        assert!(parse(r#"{"type":"content_block_delta","#).is_none());
        assert!(parse(r#"["content_block_delta"]"#).is_none());
    }
}
