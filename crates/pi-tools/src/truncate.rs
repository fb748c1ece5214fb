//! Output truncation shared by the tools: head (read, grep, find, ls) and tail (bash) cuts.

use serde::Serialize;

/// Most lines a tool result keeps.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Most bytes a tool result keeps (50 KiB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep line, in UTF-16 units as pi counts them, before it is cut.
pub const GREP_MAX_LINE_LENGTH: usize = 500;
/// `Number.MAX_SAFE_INTEGER`: the "no line cap" value pi records for grep/find/ls.
pub const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

/// What a truncation kept; serialised as pi's `TruncationResult` in tool details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    pub content: String,
    pub truncated: bool,
    pub truncated_by: Option<TruncatedBy>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    pub last_line_partial: bool,
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl TruncationResult {
    fn untouched(content: &str, lines: usize, max_lines: usize, max_bytes: usize) -> Self {
        TruncationResult {
            content: content.to_string(),
            truncated: false,
            truncated_by: None,
            total_lines: lines,
            total_bytes: content.len(),
            output_lines: lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines,
            max_bytes,
        }
    }

    /// The details JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// Human size as pi prints it: `512B`, `50.0KB`, `1.5MB`.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// The lines of `content` as they are counted: a trailing newline ends the last line instead of
/// starting an empty one, and empty content has none.
fn counted_lines(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = content.split('\n').collect();
    if content.ends_with('\n') {
        lines.pop();
    }
    lines
}

/// Keep whole lines from the start until either limit is hit.
pub fn truncate_head(content: &str, max_lines: usize, max_bytes: usize) -> TruncationResult {
    let lines = counted_lines(content);
    let total_lines = lines.len();
    if total_lines <= max_lines && content.len() <= max_bytes {
        return TruncationResult::untouched(content, total_lines, max_lines, max_bytes);
    }
    let mut result = TruncationResult {
        content: String::new(),
        truncated: true,
        truncated_by: Some(TruncatedBy::Bytes),
        total_lines,
        total_bytes: content.len(),
        output_lines: 0,
        output_bytes: 0,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    };
    if lines[0].len() > max_bytes {
        result.first_line_exceeds_limit = true;
        return result;
    }
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    for (i, line) in lines.iter().enumerate().take(max_lines) {
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        kept += 1;
        bytes += cost;
    }
    if kept >= max_lines && bytes <= max_bytes {
        by = TruncatedBy::Lines;
    }
    result.content = lines[..kept].join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result
}

/// Keep whole lines from the end; a single over-long last line is kept partially.
pub fn truncate_tail(content: &str, max_lines: usize, max_bytes: usize) -> TruncationResult {
    let lines = counted_lines(content);
    let total_lines = lines.len();
    if total_lines <= max_lines && content.len() <= max_bytes {
        return TruncationResult::untouched(content, total_lines, max_lines, max_bytes);
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    let mut partial = false;
    for line in lines.iter().rev() {
        if kept.len() >= max_lines {
            break;
        }
        let cost = line.len() + usize::from(!kept.is_empty());
        if bytes + cost > max_bytes {
            by = TruncatedBy::Bytes;
            if kept.is_empty() {
                let tail = tail_on_char_boundary(line, max_bytes);
                bytes = tail.len();
                kept.push(tail);
                partial = true;
            }
            break;
        }
        kept.push(line);
        bytes += cost;
    }
    if kept.len() >= max_lines && bytes <= max_bytes {
        by = TruncatedBy::Lines;
    }
    kept.reverse();
    let total_bytes = content.len();
    let content = kept.join("\n");
    TruncationResult {
        output_bytes: content.len(),
        output_lines: kept.len(),
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes,
        last_line_partial: partial,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// The last `max_bytes` bytes of `s`, moved forward to a character boundary.
fn tail_on_char_boundary(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut start = s.len() - max_bytes;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Number of UTF-16 code units, the length JavaScript reports.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// Cut a grep line to `max_chars` UTF-16 units, adding `... [truncated]`.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    if utf16_len(line) <= max_chars {
        return (line.to_string(), false);
    }
    let mut units = 0usize;
    let mut end = 0usize;
    for (i, c) in line.char_indices() {
        let w = c.len_utf16();
        if units + w > max_chars {
            break;
        }
        units += w;
        end = i + c.len_utf8();
    }
    (format!("{}... [truncated]", &line[..end]), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_format_like_pi() {
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(1536 * 1024), "1.5MB");
    }

    #[test]
    fn head_keeps_whole_lines_within_the_line_limit() {
        let text = (1..=10).map(|i| i.to_string()).collect::<Vec<_>>().join("\n");
        let r = truncate_head(&text, 3, 1000);
        assert_eq!(r.content, "1\n2\n3");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((r.total_lines, r.output_lines), (10, 3));
    }

    #[test]
    fn head_stops_at_the_byte_limit() {
        let r = truncate_head("aaaa\nbbbb\ncccc", 100, 9);
        assert_eq!(r.content, "aaaa\nbbbb");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn head_flags_an_oversized_first_line() {
        let r = truncate_head("abcdef\nx", 100, 3);
        assert!(r.first_line_exceeds_limit);
        assert_eq!(r.content, "");
    }

    #[test]
    fn tail_keeps_the_end_and_may_cut_a_line() {
        let r = truncate_tail("1\n2\n3\n4", 2, 100);
        assert_eq!(r.content, "3\n4");
        let r = truncate_tail("short\néééé", 100, 5);
        assert!(r.last_line_partial);
        assert_eq!(r.content, "éé");
    }

    #[test]
    fn grep_lines_are_cut_in_utf16_units() {
        let (t, cut) = truncate_line(&"x".repeat(501), 500);
        assert!(cut);
        assert_eq!(t, format!("{}... [truncated]", "x".repeat(500)));
        assert!(!truncate_line("short", 500).1);
    }
}
