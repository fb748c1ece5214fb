//! JSON text the way Python's `json.dumps` writes it (", " and ": " separators, ASCII only).
//!
//! The golden transcripts were recorded against a mock that serialized tool arguments and the
//! request log this way; writing the same bytes keeps streamed argument pieces and log lines
//! identical to the golden files.

use serde_json::Value;
use std::fmt::Write;

/// Serialize `value` like `json.dumps(value)`.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, key);
                out.push_str(": ");
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python_json_dumps() {
        let v = json!({"path": "notes/todo.md", "content": "# TODO\n\n- greet pi\n", "n": [1, 2.5, null, true]});
        assert_eq!(
            to_string(&v),
            r##"{"path": "notes/todo.md", "content": "# TODO\n\n- greet pi\n", "n": [1, 2.5, null, true]}"##
        );
        assert_eq!(to_string(&json!("é😀\u{7f}")), r#""\u00e9\ud83d\ude00\u007f""#);
    }
}
