//! The `read` tool: text with head truncation and continuation hints, images as attachments.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use pi_ai::Content;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::args::{js_number, Args};
use crate::image::{detect_image_mime, prepare_image, SNIFF_BYTES};
use crate::os_error;
use crate::paths::resolve_read_path;
use crate::tool_support::blocking;
use crate::truncate::{format_size, truncate_head, TruncatedBy, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use crate::{cancellable, ToolsOptions};

const NON_VISION_NOTE: &str = "[Current model does not support images. The image will be omitted from this request.]";

/// Reads files for the model.
pub struct ReadTool {
    cwd: PathBuf,
    options: ToolsOptions,
}

impl ReadTool {
    pub fn new(cwd: impl Into<PathBuf>, options: ToolsOptions) -> Self {
        ReadTool {
            cwd: cwd.into(),
            options,
        }
    }
}

#[async_trait]
impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        "Read a file. Text comes back as is, cut to 2000 lines or 50KB, whichever comes first; \
         pass offset/limit to page through larger files and keep reading with offset until you have \
         what you need. Images (jpg, png, gif, webp) come back as attachments."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "File to read, relative to the working directory or absolute"},
                "offset": {"type": "number", "description": "First line to return, counting from 1"},
                "limit": {"type": "number", "description": "How many lines to return at most"}
            }
        })
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(crate::prefer_schema_sampling())
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Read the contents of a file".to_string())
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        vec!["Look at files with read rather than cat or sed.".to_string()]
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let args = Args::new("read", &arguments);
        let path = args.string("path")?;
        let offset = args.opt_number("offset")?;
        let limit = args.opt_number("limit")?;
        let cwd = self.cwd.clone();
        let options = self.options.clone();
        cancellable(&cancel, async move {
            let abs = {
                let (p, c) = (path.clone(), cwd.clone());
                blocking(move || resolve_read_path(&p, &c)).await?
            };
            let mut out = read_file(&abs, &path, offset, limit, &options).await?;
            out.structured_content = Some(read_output(&out.content));
            Ok(out)
        })
        .await
    }
}

/// The read result for programmatic callers: the text, or for an image the image with the
/// text as its note.
fn read_output(content: &[Content]) -> Value {
    let text = content.iter().find_map(Content::as_text).unwrap_or_default();
    match content.iter().find_map(|c| match c {
        Content::Image(i) => Some(i),
        _ => None,
    }) {
        Some(image) => json!({"type": "image", "data": image.data, "mimeType": image.mime_type, "note": text}),
        None => json!(text),
    }
}

async fn read_file(
    abs: &Path,
    raw_path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    options: &ToolsOptions,
) -> Result<ToolOutput, ToolError> {
    // Opening for reading doubles as pi's access(R_OK) check.
    let file = tokio::fs::File::open(abs)
        .await
        .map_err(|e| ToolError::new(os_error::with_path(&e, "access", abs)))?;
    let meta = file
        .metadata()
        .await
        .map_err(|e| ToolError::new(os_error::with_path(&e, "access", abs)))?;
    if meta.is_dir() {
        let err = std::io::Error::from_raw_os_error(libc::EISDIR);
        return Err(ToolError::new(os_error::without_path(&err, "read")));
    }
    drop(file);
    let bytes = tokio::fs::read(abs)
        .await
        .map_err(|e| ToolError::new(os_error::without_path(&e, "read")))?;
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if let Some(mime) = detect_image_mime(head) {
        return read_image(bytes, mime, options).await;
    }
    if head.contains(&0) {
        return Err(ToolError::new(format!(
            "Cannot read binary file: {}. Use bash to inspect it (e.g. file or xxd).",
            abs.display()
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    read_text(&text, raw_path, offset, limit)
}

async fn read_image(bytes: Vec<u8>, mime: &'static str, options: &ToolsOptions) -> Result<ToolOutput, ToolError> {
    let non_vision = options
        .model_accepts_images
        .as_ref()
        .is_some_and(|accepts| !accepts())
        .then_some(NON_VISION_NOTE);
    let with_note = |mut text: String| {
        if let Some(note) = non_vision {
            text.push('\n');
            text.push_str(note);
        }
        text
    };
    if !options.auto_resize_images {
        return Ok(ToolOutput {
            content: vec![
                Content::text(with_note(format!("Read image file [{mime}]"))),
                Content::image(base64_of(&bytes), mime),
            ],
            details: None,
            structured_content: None,
            is_error: false,
            terminate: false,
            usage: None,
        });
    }
    let prepared = blocking(move || prepare_image(&bytes, mime)).await?;
    let content = match prepared {
        None => vec![Content::text(with_note(format!(
            "Read image file [{mime}]\n[Image omitted: could not be resized below the inline image size limit.]"
        )))],
        Some(img) => {
            let mut text = format!("Read image file [{}]", img.mime_type);
            if let Some(note) = img.dimension_note() {
                text.push('\n');
                text.push_str(&note);
            }
            vec![Content::text(with_note(text)), Content::image(img.data, img.mime_type)]
        }
    };
    Ok(ToolOutput {
        content,
        details: None,
        structured_content: None,
        is_error: false,
        terminate: false,
        usage: None,
    })
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Select, truncate and annotate the lines of a text file.
pub fn read_text(text: &str, raw_path: &str, offset: Option<f64>, limit: Option<f64>) -> Result<ToolOutput, ToolError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len();
    // A falsy offset (absent or 0) starts at the top, as in pi.
    let start = match offset {
        Some(o) if o != 0.0 && !o.is_nan() => (o - 1.0).max(0.0).trunc() as usize,
        _ => 0,
    };
    if start >= total {
        return Err(ToolError::new(format!(
            "Offset {} is beyond end of file ({total} lines total)",
            offset.map(js_number).unwrap_or_default()
        )));
    }
    let start_display = start + 1;
    let (selected, user_limited) = match limit {
        Some(l) => {
            let count = if l.is_nan() || l <= 0.0 { 0 } else { l.trunc() as usize };
            let end = start.saturating_add(count).min(total);
            let end = end.max(start);
            (lines[start..end].join("\n"), Some(end - start))
        }
        None => (lines[start..].join("\n"), None),
    };
    let truncation = truncate_head(&selected, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let mut details = None;
    let output = if truncation.first_line_exceeds_limit {
        let size = format_size(lines[start].len());
        details = Some(json!({ "truncation": truncation.to_value() }));
        format!(
            "[Line {start_display} is {size}, exceeds {} limit. Use bash: sed -n '{start_display}p' {raw_path} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(DEFAULT_MAX_BYTES)
        )
    } else if truncation.truncated {
        let end_display = start_display + truncation.output_lines - 1;
        let next = end_display + 1;
        let mut out = truncation.content.clone();
        if truncation.truncated_by == Some(TruncatedBy::Lines) {
            out.push_str(&format!(
                "\n\n[Showing lines {start_display}-{end_display} of {total}. Use offset={next} to continue.]"
            ));
        } else {
            out.push_str(&format!(
                "\n\n[Showing lines {start_display}-{end_display} of {total} ({} limit). Use offset={next} to continue.]",
                format_size(DEFAULT_MAX_BYTES)
            ));
        }
        details = Some(json!({ "truncation": truncation.to_value() }));
        out
    } else if let Some(count) = user_limited.filter(|c| start + c < total) {
        let remaining = total - (start + count);
        format!(
            "{}\n\n[{remaining} more lines in file. Use offset={} to continue.]",
            truncation.content,
            start + count + 1
        )
    } else {
        truncation.content
    };
    Ok(ToolOutput {
        content: vec![Content::text(output)],
        details,
        structured_content: None,
        is_error: false,
        terminate: false,
        usage: None,
    })
}

/// Shared constructor used by `create_tools`.
pub(crate) fn tool(cwd: &Path, options: &ToolsOptions) -> Arc<dyn AgentTool> {
    Arc::new(ReadTool::new(cwd, options.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(out: &ToolOutput) -> String {
        out.content.iter().filter_map(|c| c.as_text()).collect()
    }

    #[test]
    fn offset_and_limit_leave_a_hint() {
        let out = read_text("# TODO\n\n- greet pi\n- run checks\n", "x", Some(3.0), Some(1.0)).expect("read");
        assert_eq!(
            text_of(&out),
            "- greet pi\n\n[2 more lines in file. Use offset=4 to continue.]"
        );
        assert!(out.details.is_none());
    }

    #[test]
    fn offset_past_the_end_is_an_error() {
        let err = read_text("a\nb", "x", Some(5.0), None).expect_err("beyond");
        assert_eq!(err.message, "Offset 5 is beyond end of file (2 lines total)");
    }

    #[test]
    fn long_files_stop_at_2000_lines() {
        let text = (1..=2500).map(|i| format!("l{i}")).collect::<Vec<_>>().join("\n");
        let out = read_text(&text, "x", None, None).expect("read");
        let t = text_of(&out);
        assert!(t.ends_with("l2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"));
        let d = out.details.expect("details");
        assert_eq!(d["truncation"]["truncatedBy"], "lines");
        assert_eq!(d["truncation"]["maxBytes"], 51200);
    }

    #[test]
    fn byte_limit_names_the_size() {
        let line = "y".repeat(1000);
        let text = vec![line.as_str(); 100].join("\n");
        let out = read_text(&text, "x", Some(2.0), None).expect("read");
        assert!(text_of(&out).ends_with("[Showing lines 2-52 of 100 (50.0KB limit). Use offset=53 to continue.]"));
    }

    #[test]
    fn an_oversized_line_points_at_sed() {
        let text = format!("short\n{}", "z".repeat(60 * 1024));
        let out = read_text(&text, "big.txt", Some(2.0), None).expect("read");
        assert_eq!(
            text_of(&out),
            "[Line 2 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '2p' big.txt | head -c 51200]"
        );
    }
}
