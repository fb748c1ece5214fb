//! What the model sees of a script: the `Script completed` / `Script failed` header, the text
//! and image items in order (numbered when there are several texts), the console lines in one
//! block, the error and the calls made before it, the output budget with the full text saved
//! to a temp file, and each image saved to a temp file named before it.

use std::io::Write;
use std::path::PathBuf;

use base64::Engine;

use crate::sandbox::{OutputItem, ScriptError};

/// Characters per estimated token.
pub const CHARS_PER_TOKEN: usize = 4;
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;

/// One block of the result.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    Image { data: String, mime_type: String },
}

/// Number the text items when there are several and gather the console lines after the rest.
pub fn layout(items: &[OutputItem]) -> Vec<Block> {
    let total = items
        .iter()
        .filter(|i| matches!(i, OutputItem::Text { console: false, .. }))
        .count();
    let mut blocks = Vec::with_capacity(items.len() + 1);
    let mut console = Vec::new();
    let mut index = 0;
    for item in items {
        match item {
            OutputItem::Image { data, mime_type } => blocks.push(Block::Image {
                data: data.clone(),
                mime_type: mime_type.clone(),
            }),
            OutputItem::Text { text, console: true } => console.push(text.as_str()),
            OutputItem::Text { text, console: false } => {
                index += 1;
                blocks.push(Block::Text(if total > 1 {
                    format!("==> text {index}/{total} <==\n{text}")
                } else {
                    text.clone()
                }));
            }
        }
    }
    if !console.is_empty() {
        blocks.push(Block::Text(format!(
            "<console_output>\n{}\n</console_output>",
            console.join("\n")
        )));
    }
    blocks
}

/// Join neighbouring texts into one block, each part on its own line.
pub fn join_texts(blocks: Vec<Block>) -> Vec<Block> {
    let mut joined: Vec<Block> = Vec::with_capacity(blocks.len());
    let mut current: Option<String> = None;
    for block in blocks {
        match block {
            Block::Text(text) => match current.as_mut() {
                Some(acc) => {
                    if !acc.is_empty() && !acc.ends_with('\n') {
                        acc.push('\n');
                    }
                    acc.push_str(&text);
                }
                None => current = Some(text),
            },
            image => {
                if let Some(text) = current.take() {
                    joined.push(Block::Text(text));
                }
                joined.push(image);
            }
        }
    }
    if let Some(text) = current {
        joined.push(Block::Text(text));
    }
    joined
}

/// The error part of a failed script's result.
pub fn error_text(error: &ScriptError, calls: &[(String, String)]) -> String {
    let head = match error {
        ScriptError::Thrown { text } => text.clone(),
        ScriptError::Timeout(message) => format!("Script timed out: {message}"),
        ScriptError::Aborted(message) => format!("Script aborted: {message}"),
        ScriptError::Sandbox(message) => format!("Script sandbox failed: {message}"),
    };
    let summary = if calls.is_empty() {
        "No tool calls were made.".to_string()
    } else {
        let list: Vec<String> = calls
            .iter()
            .map(|(name, status)| format!("{name} ({status})"))
            .collect();
        format!(
            "Tool calls made before the failure (they are not undone): {}",
            list.join(", ")
        )
    };
    format!("Script error:\n{head}\n\n{summary}")
}

fn head_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

fn tail_chars(text: &str, n: usize) -> &str {
    let count = text.chars().count();
    if n >= count {
        return text;
    }
    match text.char_indices().nth(count - n) {
        Some((at, _)) => &text[at..],
        None => "",
    }
}

/// Write `bytes` to a new private temp file `<prefix>-<16 hex><ext>`.
pub fn write_temp(prefix: &str, extension: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let path = std::env::temp_dir().join(format!("{prefix}-{}{extension}", &id[..16]));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path)?;
    file.write_all(bytes)?;
    Ok(path)
}

/// Blocks within the budget, and the path of the full text when it was cut.
pub struct Budgeted {
    pub blocks: Vec<Block>,
    pub full_output_path: Option<PathBuf>,
}

/// Keep the head and the tail of the text when it passes `max_tokens`; images follow it.
pub fn apply_budget(blocks: Vec<Block>, max_tokens: u64) -> Budgeted {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            Block::Image { .. } => None,
        })
        .collect();
    let combined = texts.join("\n");
    let budget = usize::try_from(max_tokens)
        .unwrap_or(usize::MAX / 8)
        .saturating_mul(CHARS_PER_TOKEN);
    let length = combined.chars().count();
    if texts.is_empty() || length <= budget {
        return Budgeted {
            blocks,
            full_output_path: None,
        };
    }
    let head_len = budget / 2;
    let tail_len = budget - head_len;
    let removed = length - head_len - tail_len;
    let mut text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}…{} tokens truncated…{}",
        length.div_ceil(CHARS_PER_TOKEN),
        combined.split('\n').count(),
        head_chars(&combined, head_len),
        removed.div_ceil(CHARS_PER_TOKEN),
        tail_chars(&combined, tail_len),
    );
    let saved = write_temp("pi-codemode", ".txt", combined.as_bytes());
    match &saved {
        Ok(path) => text.push_str(&format!(
            "\n\n[Full output: {} (read with offset/limit)]",
            path.display()
        )),
        Err(e) => text.push_str(&format!("\n\n[Could not save the full output: {e}]")),
    }
    let mut out = vec![Block::Text(text)];
    out.extend(blocks.into_iter().filter(|b| matches!(b, Block::Image { .. })));
    Budgeted {
        blocks: out,
        full_output_path: saved.ok(),
    }
}

fn image_extension(mime_type: &str) -> &'static str {
    match mime_type {
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        _ => ".webp",
    }
}

/// pi's size wording: `512B`, `1.5KB`, `2.0MB`.
fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Put a line naming a saved copy before every image (each distinct image saved once).
pub fn save_images(blocks: Vec<Block>) -> Vec<Block> {
    let mut saved: Vec<(String, String)> = Vec::new();
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        if let Block::Image { data, mime_type } = &block {
            let label = match saved.iter().find(|(d, _)| d == data) {
                Some((_, label)) => label.clone(),
                None => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(data.as_bytes())
                        .unwrap_or_default();
                    let kind = format!("{mime_type}, {}", format_size(bytes.len()));
                    let label = match write_temp("pi-codemode", image_extension(mime_type), &bytes) {
                        Ok(path) => format!("[Image saved to {} ({kind})]", path.display()),
                        Err(e) => format!("[Image ({kind}) could not be saved: {e}]"),
                    };
                    saved.push((data.clone(), label.clone()));
                    label
                }
            };
            out.push(Block::Text(label));
        }
        out.push(block);
    }
    out
}

/// `Script completed` or `Script failed`, the wall time and the `Output:` line.
pub fn header(ok: bool, wall_seconds: f64) -> String {
    format!(
        "{}\nWall time {:.1} seconds\nOutput:\n",
        if ok { "Script completed" } else { "Script failed" },
        wall_seconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str, console: bool) -> OutputItem {
        OutputItem::Text {
            text: t.to_string(),
            console,
        }
    }

    #[test]
    fn several_texts_are_numbered_and_console_lines_come_last() {
        let items = [text("a", false), text("log", true), text("b", false)];
        let blocks = join_texts(layout(&items));
        assert_eq!(
            blocks,
            [Block::Text(
                "==> text 1/2 <==\na\n==> text 2/2 <==\nb\n<console_output>\nlog\n</console_output>".to_string()
            )]
        );
        assert_eq!(join_texts(layout(&[text("only", false)])), [Block::Text("only".into())]);
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_saves_the_rest() {
        let long = "x".repeat(50) + &"y".repeat(50);
        let out = apply_budget(vec![Block::Text(long)], 5);
        let Block::Text(t) = &out.blocks[0] else { panic!() };
        assert!(t.starts_with("Warning: truncated output (original token count: 25)\nTotal output lines: 1\n\nxxxxxxxxxx…20 tokens truncated…yyyyyyyyyy"), "{t}");
        let path = out.full_output_path.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().len(), 100);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn failure_lists_the_calls_made() {
        let error = ScriptError::Thrown {
            text: "Error: boom".into(),
        };
        assert_eq!(
            error_text(&error, &[("bash".into(), "ok".into())]),
            "Script error:\nError: boom\n\nTool calls made before the failure (they are not undone): bash (ok)"
        );
        assert!(error_text(&ScriptError::Timeout("t".into()), &[]).ends_with("No tool calls were made."));
    }
}
