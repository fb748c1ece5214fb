//! Chat Completions' structured `reasoning_details` (OpenRouter and others): which entries are
//! well formed, and how streamed pieces add up to the entries replayed on the next request.
//! Streamed details are kept whole in the thinking block's signature, as a JSON array.

use serde_json::{Map, Value};

/// One OpenAI-style reasoning detail (`reasoning.summary`, `.encrypted` or `.text`) with
/// well-typed common fields.
pub(super) fn is_reasoning_detail(v: &Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    let common = o.get("id").is_none_or(|id| id.is_null() || id.is_string())
        && o.get("format").is_none_or(Value::is_string)
        && o.get("index").is_none_or(Value::is_number);
    common
        && match o.get("type").and_then(Value::as_str) {
            Some("reasoning.summary") => o.get("summary").is_some_and(Value::is_string),
            Some("reasoning.encrypted") => o.get("data").is_some_and(Value::is_string),
            Some("reasoning.text") => {
                o.get("text").is_some_and(Value::is_string)
                    && o.get("signature").is_none_or(|s| s.is_null() || s.is_string())
            }
            _ => false,
        }
}

fn is_unset(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_null)
}

fn is_falsy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Bool(b)) => !b,
        _ => false,
    }
}

/// Concatenate the string field `key` of `from` onto `into`'s.
fn append_text(into: &mut Map<String, Value>, from: &Map<String, Value>, key: &str) {
    let mut text = into.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    text.push_str(from.get(key).and_then(Value::as_str).unwrap_or_default());
    into.insert(key.to_string(), Value::from(text));
}

/// `into[key] = from[key]`; a value the piece lacks leaves the key unset (it is not written).
fn take_field(into: &mut Map<String, Value>, from: &Map<String, Value>, key: &str) {
    match from.get(key) {
        Some(v) => {
            into.insert(key.to_string(), v.clone());
        }
        None => {
            into.shift_remove(key);
        }
    }
}

/// The `id`, `format` and `index` a merged entry lacks, taken from the newer piece.
fn fill_common_fields(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for key in ["id", "index"] {
        if is_unset(into.get(key)) {
            take_field(into, from, key);
        }
    }
    if is_falsy(into.get("format")) {
        take_field(into, from, "format");
    }
}

/// Add one streamed detail to `details`: consecutive text pieces (and consecutive summary
/// pieces) are one logical entry, so they are merged; encrypted entries stay whole and apart.
/// `detail` must pass [`is_reasoning_detail`].
pub(super) fn append(details: &mut Vec<Value>, detail: &Value) {
    let Some(piece) = detail.as_object() else {
        return;
    };
    let kind = piece.get("type").and_then(Value::as_str);
    if let Some(Value::Object(last)) = details.last_mut() {
        let last_kind = last.get("type").and_then(Value::as_str);
        if kind == Some("reasoning.text") && last_kind == kind {
            append_text(last, piece, "text");
            if is_falsy(last.get("signature")) {
                take_field(last, piece, "signature");
            }
            fill_common_fields(last, piece);
            return;
        }
        if kind == Some("reasoning.summary") && last_kind == kind {
            append_text(last, piece, "summary");
            fill_common_fields(last, piece);
            return;
        }
    }
    details.push(detail.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_summary_pieces_merge_and_encrypted_ones_stay_apart() {
        let mut details = Vec::new();
        for d in [
            json!({"type": "reasoning.text", "text": "Thin", "index": 0}),
            json!({"type": "reasoning.text", "text": "king", "signature": "s1", "format": "f"}),
            json!({"type": "reasoning.encrypted", "data": "A"}),
            json!({"type": "reasoning.encrypted", "data": "B"}),
            json!({"type": "reasoning.summary", "summary": "Su"}),
            json!({"type": "reasoning.summary", "summary": "m", "id": "r1"}),
        ] {
            assert!(is_reasoning_detail(&d), "{d}");
            append(&mut details, &d);
        }
        assert_eq!(
            Value::from(details),
            json!([
                {"type": "reasoning.text", "text": "Thinking", "index": 0, "signature": "s1", "format": "f"},
                {"type": "reasoning.encrypted", "data": "A"},
                {"type": "reasoning.encrypted", "data": "B"},
                {"type": "reasoning.summary", "summary": "Sum", "id": "r1"},
            ])
        );
    }

    #[test]
    fn malformed_details_are_refused() {
        assert!(!is_reasoning_detail(&json!({"type": "reasoning.encrypted"})));
        assert!(!is_reasoning_detail(
            &json!({"type": "reasoning.text", "text": "x", "id": 3})
        ));
        assert!(!is_reasoning_detail(&json!({"type": "other", "text": "x"})));
        assert!(!is_reasoning_detail(&json!("reasoning.text")));
    }
}
