//! Best-effort parsing of an incomplete JSON document (tool-call arguments while they stream).

use serde_json::{Map, Value};

/// Parse `text`, which may be cut anywhere, into the most complete value it can. Returns an
/// empty object when nothing usable has arrived yet.
pub fn parse_partial(text: &str) -> Value {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Value::Object(Map::new());
    }
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        return v;
    }
    // Walk back over cut points: close open strings and brackets and try again. Each attempt
    // drops the last incomplete token so that `{"a": tr` becomes `{}` rather than an error.
    let mut end = trimmed.len();
    while end > 0 {
        if let Some(closed) = close(&trimmed[..end]) {
            if let Ok(v) = serde_json::from_str::<Value>(&closed) {
                return v;
            }
        }
        end = previous_boundary(trimmed, end);
    }
    Value::Object(Map::new())
}

fn previous_boundary(s: &str, end: usize) -> usize {
    let mut i = end - 1;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Close whatever is open at the end of `prefix`; `None` when the prefix ends mid-escape.
fn close(prefix: &str) -> Option<String> {
    let mut stack: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in prefix.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    if escaped {
        return None;
    }
    let mut out = String::with_capacity(prefix.len() + stack.len() + 1);
    out.push_str(prefix);
    if in_string {
        out.push('"');
    }
    let tail = out.trim_end();
    // A dangling comma or colon cannot be closed; let the caller cut further back.
    if tail.ends_with(',') || tail.ends_with(':') {
        return None;
    }
    while let Some(c) = stack.pop() {
        out.push(c);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn complete_documents_parse_normally() {
        assert_eq!(parse_partial(r#"{"path":"a.txt"}"#), json!({"path": "a.txt"}));
    }

    #[test]
    fn cut_strings_and_objects_are_closed() {
        assert_eq!(parse_partial(r#"{"path":"a.t"#), json!({"path": "a.t"}));
        assert_eq!(
            parse_partial(r#"{"edits":[{"oldText":"x"},{"newT"#),
            json!({"edits": [{"oldText": "x"}, {}]})
        );
        assert_eq!(parse_partial(r#"{"a":1,"b":"#), json!({"a": 1}));
        assert_eq!(parse_partial(r#"{"a":tr"#), json!({}));
        assert_eq!(parse_partial(""), json!({}));
    }

    #[test]
    fn cut_escapes_do_not_break_parsing() {
        assert_eq!(parse_partial(r#"{"s":"a\"#), json!({"s": "a"}));
        assert_eq!(parse_partial(r#"{"s":"é"#), json!({"s": "é"}));
    }
}
