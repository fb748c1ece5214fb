//! `tools/call` results turned into what the model sees: text and image blocks, resource links and
//! embedded resources rendered as text (binary ones saved to files), `isError`, and the 20 KB cut.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// Model-facing text of a result past this many UTF-8 bytes is cut in the middle.
pub const MCP_OUTPUT_MAX_BYTES: usize = 20 * 1024;

/// A content block for the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl ContentBlock {
    fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}

/// A converted result: what pi puts into its tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<ContentBlock>,
    /// `{server, tool, fullOutputPath?}`.
    pub details: Value,
    /// The whole `CallToolResult` minus `_meta`, untruncated (what scripts receive).
    pub structured_content: Value,
    pub is_error: bool,
}

/// Where files go and what the text may point to.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// Whether `read_mcp_resource` can read this server's resources (adds a hint to resource links).
    pub readable_resources: bool,
    /// Directory for saved binary resources and full outputs (the OS temp dir by default).
    pub output_dir: PathBuf,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        Self {
            readable_resources: false,
            output_dir: std::env::temp_dir(),
        }
    }
}

/// pi's size format: `512B`, `1.5KB`, `2.0MB`.
pub fn format_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Write a new file readable only by the user: `<dir>/pi-mcp-<16 hex><extension>`.
pub fn write_output_file(dir: &Path, extension: &str, data: &[u8]) -> std::io::Result<PathBuf> {
    let id = uuid::Uuid::new_v4();
    let bytes = id.as_bytes();
    // Bytes 6 and 8 carry the version and variant; the others are random.
    let hex: String = [0, 1, 2, 3, 4, 5, 10, 11]
        .iter()
        .map(|i| format!("{:02x}", bytes[*i]))
        .collect();
    let path = dir.join(format!("pi-mcp-{hex}{extension}"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path)?;
    file.write_all(data)?;
    Ok(path)
}

fn is_text_mime(mime: Option<&str>) -> bool {
    let Some(mime) = mime else {
        return false;
    };
    let kind = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    kind.starts_with("text/") || kind == "application/json" || kind.ends_with("+json") || kind.ends_with("+xml")
}

/// The file extension for a saved resource: from its URI's path, else `.bin`.
fn extension_of(uri: &str) -> String {
    let path = reqwest::Url::parse(uri)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| uri.to_string());
    let Some(dot) = path.rfind('.') else {
        return ".bin".into();
    };
    let ext = &path[dot + 1..];
    if (1..=8).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric()) {
        format!(".{ext}")
    } else {
        ".bin".into()
    }
}

fn str_field<'a>(block: &'a Value, key: &str) -> Option<&'a str> {
    block.get(key).and_then(Value::as_str)
}

fn block_to_content(server: &str, block: &Value, options: &ConvertOptions) -> ContentBlock {
    let kind = str_field(block, "type").unwrap_or("");
    match kind {
        "text" => ContentBlock::text(str_field(block, "text").unwrap_or("")),
        "image" => ContentBlock::Image {
            data: str_field(block, "data").unwrap_or("").to_string(),
            mime_type: str_field(block, "mimeType").unwrap_or("").to_string(),
        },
        "audio" => ContentBlock::text(format!(
            "[audio {} omitted]",
            str_field(block, "mimeType").unwrap_or("undefined")
        )),
        "resource_link" => {
            let uri = str_field(block, "uri").unwrap_or("");
            let title = str_field(block, "title")
                .or_else(|| str_field(block, "name"))
                .unwrap_or("");
            let mut details = Vec::new();
            if let Some(mime) = str_field(block, "mimeType").filter(|m| !m.is_empty()) {
                details.push(mime.to_string());
            }
            if let Some(size) = block.get("size").and_then(Value::as_u64) {
                details.push(format_size(size));
            }
            let details = if details.is_empty() {
                String::new()
            } else {
                format!(" ({})", details.join(", "))
            };
            let description = str_field(block, "description")
                .filter(|d| !d.is_empty())
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            let read = if options.readable_resources {
                format!(". Read it with read_mcp_resource (server \"{server}\")")
            } else {
                String::new()
            };
            ContentBlock::text(format!("[Resource {uri} \"{title}\"{details}{description}{read}]"))
        }
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            if let Some(text) = str_field(&resource, "text") {
                return ContentBlock::text(text);
            }
            let mime = str_field(&resource, "mimeType");
            let blob = str_field(&resource, "blob").unwrap_or("");
            if mime.is_some_and(|m| m.starts_with("image/")) {
                return ContentBlock::Image {
                    data: blob.to_string(),
                    mime_type: mime.unwrap_or("").to_string(),
                };
            }
            let uri = str_field(&resource, "uri").unwrap_or("");
            let data = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .unwrap_or_default();
            if is_text_mime(mime) {
                return ContentBlock::text(String::from_utf8_lossy(&data));
            }
            let kind = format!("{}, {}", mime.unwrap_or("unknown type"), format_size(data.len() as u64));
            match write_output_file(&options.output_dir, &extension_of(uri), &data) {
                Ok(path) => ContentBlock::text(format!("[Binary resource {uri} ({kind}) saved to {}]", path.display())),
                Err(e) => ContentBlock::text(format!("[Binary resource {uri} ({kind}) could not be saved: {e}]")),
            }
        }
        other => ContentBlock::text(format!("[unsupported MCP content {other}]")),
    }
}

fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

struct Truncation {
    content: String,
    total_bytes: usize,
    total_lines: usize,
}

/// Keep half of `max_bytes` from each end, cutting at character boundaries.
fn truncate_middle(text: &str, max_bytes: usize) -> Option<Truncation> {
    if text.len() <= max_bytes {
        return None;
    }
    let mut head_end = max_bytes / 2;
    while head_end > 0 && !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - (max_bytes - max_bytes / 2);
    while tail_start < text.len() && !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = text[head_end..tail_start].chars().count();
    let lines = text.split('\n').count() - usize::from(text.ends_with('\n'));
    Some(Truncation {
        content: format!(
            "{}…{removed} chars truncated…{}",
            &text[..head_end],
            &text[tail_start..]
        ),
        total_bytes: text.len(),
        total_lines: lines,
    })
}

/// Apply the 20 KB limit: longer text becomes one block (with the path of the full text) followed
/// by the images. Returns the content and the saved file's path.
pub fn limit_content(content: Vec<ContentBlock>, output_dir: Option<&Path>) -> (Vec<ContentBlock>, Option<PathBuf>) {
    let combined = text_of(&content);
    let Some(truncation) = truncate_middle(&combined, MCP_OUTPUT_MAX_BYTES) else {
        return (content, None);
    };
    let mut saved = None;
    let mut location = String::new();
    if let Some(dir) = output_dir {
        match write_output_file(dir, ".txt", combined.as_bytes()) {
            Ok(path) => {
                location = format!("\n\n[Full output: {} (read it with offset/limit)]", path.display());
                saved = Some(path);
            }
            Err(e) => location = format!("\n\n[Could not save the full output: {e}]"),
        }
    }
    let tokens = truncation.total_bytes.div_ceil(4);
    let text = format!(
        "Warning: truncated output (original token count: {tokens})\nTotal output lines: {}\n\n{}{location}",
        truncation.total_lines, truncation.content
    );
    let mut limited = vec![ContentBlock::text(text)];
    limited.extend(content.into_iter().filter(|b| matches!(b, ContentBlock::Image { .. })));
    (limited, saved)
}

/// Convert a raw `CallToolResult` of `server`'s `tool`.
pub fn convert_tool_result(server: &str, tool: &str, result: &Value, options: &ConvertOptions) -> ToolOutput {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut content: Vec<ContentBlock> = blocks.iter().map(|b| block_to_content(server, b, options)).collect();
    if content.is_empty() {
        // Servers should mirror structured results as text, but do not always.
        if let Some(structured) = result.get("structuredContent") {
            let text = serde_json::to_string_pretty(structured).unwrap_or_default();
            content.push(ContentBlock::text(text));
        }
    }
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    if is_error && text_of(&content).is_empty() {
        content.push(ContentBlock::text(format!(
            "MCP tool {server}/{tool} returned an error"
        )));
    }
    let (content, full_output) = limit_content(content, Some(&options.output_dir));
    let mut details = Map::new();
    details.insert("server".into(), json!(server));
    details.insert("tool".into(), json!(tool));
    if let Some(path) = full_output {
        details.insert("fullOutputPath".into(), json!(path.display().to_string()));
    }
    let mut structured = result.as_object().cloned().unwrap_or_default();
    structured.shift_remove("_meta");
    ToolOutput {
        content,
        details: Value::Object(details),
        structured_content: Value::Object(structured),
        is_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(dir: &Path, readable: bool) -> ConvertOptions {
        ConvertOptions {
            readable_resources: readable,
            output_dir: dir.to_path_buf(),
        }
    }

    #[test]
    fn renders_each_kind_of_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "title": "A file", "mimeType": "text/plain", "size": 2048, "description": "the a"},
                {"type": "resource_link", "uri": "x://b", "name": "b"},
                {"type": "resource", "resource": {"uri": "x://t", "text": "embedded"}},
                {"type": "resource", "resource": {"uri": "x://j", "mimeType": "application/json", "blob": "eyJhIjoxfQ=="}},
                {"type": "resource", "resource": {"uri": "x://i", "mimeType": "image/gif", "blob": "R0lG"}},
                {"type": "resource", "resource": {"uri": "x://data.bin", "mimeType": "application/octet-stream", "blob": "AAEC"}},
                {"type": "audio", "data": "", "mimeType": "audio/wav"},
                {"type": "video"}
            ],
            "_meta": {"x": 1}
        });
        let out = convert_tool_result("s", "t", &result, &options(dir.path(), true));
        let texts: Vec<String> = out
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => text.clone(),
                ContentBlock::Image { mime_type, .. } => format!("<image {mime_type}>"),
            })
            .collect();
        assert_eq!(texts[0], "hello");
        assert_eq!(texts[1], "<image image/png>");
        assert_eq!(texts[2], "[Resource file:///a.txt \"A file\" (text/plain, 2.0KB): the a. Read it with read_mcp_resource (server \"s\")]");
        assert_eq!(
            texts[3],
            "[Resource x://b \"b\". Read it with read_mcp_resource (server \"s\")]"
        );
        assert_eq!(texts[4], "embedded");
        assert_eq!(texts[5], "{\"a\":1}");
        assert_eq!(texts[6], "<image image/gif>");
        let prefix = "[Binary resource x://data.bin (application/octet-stream, 3B) saved to ";
        assert!(texts[7].starts_with(prefix), "{}", texts[7]);
        let path = texts[7].trim_start_matches(prefix).trim_end_matches(']');
        assert!(path.ends_with(".bin") && path.contains("pi-mcp-"));
        assert_eq!(std::fs::read(path).expect("saved"), [0, 1, 2]);
        assert_eq!(texts[8], "[audio audio/wav omitted]");
        assert_eq!(texts[9], "[unsupported MCP content video]");
        assert!(!out.is_error);
        assert_eq!(out.details, json!({"server": "s", "tool": "t"}));
        assert!(out.structured_content.get("_meta").is_none());
    }

    #[test]
    fn errors_and_structured_only_results() {
        let dir = tempfile::tempdir().expect("tempdir");
        let o = options(dir.path(), false);
        let out = convert_tool_result("s", "t", &json!({"content": [], "isError": true}), &o);
        assert!(out.is_error);
        assert_eq!(out.content, [ContentBlock::text("MCP tool s/t returned an error")]);
        let out = convert_tool_result(
            "s",
            "t",
            &json!({"content": [], "structuredContent": {"echoed": "x"}}),
            &o,
        );
        assert_eq!(out.content, [ContentBlock::text("{\n  \"echoed\": \"x\"\n}")]);
        assert_eq!(
            out.structured_content,
            json!({"content": [], "structuredContent": {"echoed": "x"}})
        );
    }

    #[test]
    fn long_text_is_cut_in_the_middle_and_saved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let line = "é".repeat(99) + "\n"; // 199 bytes a line
        let text = line.repeat(160);
        let result = json!({"content": [{"type": "text", "text": text}, {"type": "image", "data": "AA", "mimeType": "image/png"}]});
        let out = convert_tool_result("s", "t", &result, &options(dir.path(), false));
        assert_eq!(out.content.len(), 2);
        let ContentBlock::Text { text: cut } = &out.content[0] else {
            panic!("text first")
        };
        assert!(
            cut.starts_with("Warning: truncated output (original token count: 7960)\nTotal output lines: 160\n\n"),
            "{cut}"
        );
        let full = out.details["fullOutputPath"].as_str().expect("saved path");
        assert!(cut.ends_with(&format!("\n\n[Full output: {full} (read it with offset/limit)]")));
        assert_eq!(std::fs::read_to_string(full).expect("full"), text);
        let removed: usize = cut
            .split('…')
            .nth(1)
            .and_then(|m| m.trim_end_matches(" chars truncated").parse().ok())
            .expect("marker");
        let kept = cut.split('…').next().map(|h| h.len()).unwrap_or(0);
        assert!(kept > 10_000 && removed > 5_000);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(full).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
}
