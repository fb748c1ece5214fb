//! The `edit` tool: exact (or fuzzy) text replacements in one file, inside the mutation queue.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use pi_ai::Content;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::edit_diff::{
    apply_edits, detect_line_ending, generate_diff_string, normalize_to_lf, restore_line_endings, strip_bom,
    unified_patch, Edit,
};
use crate::os_error;
use crate::paths::resolve_to_cwd;
use crate::tool_support::mutate_file;

/// Replaces text in files for the model.
pub struct EditTool {
    cwd: PathBuf,
}

impl EditTool {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        EditTool { cwd: cwd.into() }
    }
}

/// One edit object: string `oldText` and `newText`.
fn is_single_edit(value: &Value) -> bool {
    value.get("oldText").is_some_and(Value::is_string) && value.get("newText").is_some_and(Value::is_string)
}

/// Fold other argument shapes into `{path, edits}`: `edits` sent as a JSON string is parsed, one
/// edit object (bare or as that string) becomes a one-element list, and a top-level
/// `oldText`/`newText` pair is appended to `edits`. Other fields are left alone: the schema
/// allows extra fields and they are ignored.
pub fn prepare_edit_arguments(arguments: Value) -> Value {
    let Value::Object(mut obj) = arguments else {
        return arguments;
    };
    if let Some(Value::String(s)) = obj.get("edits") {
        match serde_json::from_str::<Value>(s) {
            Ok(parsed @ Value::Array(_)) => {
                obj.insert("edits".into(), parsed);
            }
            Ok(parsed) if is_single_edit(&parsed) => {
                obj.insert("edits".into(), Value::Array(vec![parsed]));
            }
            _ => {}
        }
    } else if let Some(single) = obj.get("edits").filter(|e| is_single_edit(e)).cloned() {
        obj.insert("edits".into(), Value::Array(vec![single]));
    }
    let legacy = match (obj.get("oldText"), obj.get("newText")) {
        (Some(Value::String(o)), Some(Value::String(n))) => Some((o.clone(), n.clone())),
        _ => None,
    };
    if let Some((old_text, new_text)) = legacy {
        let mut edits = match obj.get("edits") {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        edits.push(json!({"oldText": old_text, "newText": new_text}));
        obj.remove("oldText");
        obj.remove("newText");
        obj.insert("edits".into(), Value::Array(edits));
    }
    Value::Object(obj)
}

fn parse_edits(arguments: &Value) -> Result<Vec<Edit>, ToolError> {
    let invalid = || ToolError::new("Edit tool input is invalid. edits must contain at least one replacement.");
    let Some(Value::Array(items)) = arguments.get("edits") else {
        return Err(invalid());
    };
    if items.is_empty() {
        return Err(invalid());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = |k: &str| {
                item.get(k).and_then(Value::as_str).map(str::to_string).ok_or_else(|| {
                    ToolError::new(format!(
                        "Validation failed for tool \"edit\":\n  - edits.{i}.{k}: Expected string\n\nReceived arguments:\n{}",
                        serde_json::to_string_pretty(arguments).unwrap_or_default()
                    ))
                })
            };
            Ok(Edit {
                old_text: field("oldText")?,
                new_text: field("newText")?,
            })
        })
        .collect()
}

async fn edit_file(abs: &Path, path: &str, edits: &[Edit]) -> Result<ToolOutput, ToolError> {
    // pi checks read and write access first and reports the errno code.
    if let Err(e) = tokio::fs::OpenOptions::new().read(true).write(true).open(abs).await {
        let code = if e.raw_os_error() == Some(libc::EISDIR) {
            None
        } else {
            Some(os_error::code_and_message(&e).0)
        };
        if let Some(code) = code {
            return Err(ToolError::new(format!(
                "Could not edit file: {path}. Error code: {code}."
            )));
        }
    }
    let bytes = tokio::fs::read(abs)
        .await
        .map_err(|e| ToolError::new(os_error::without_path(&e, "read")))?;
    let raw = String::from_utf8_lossy(&bytes);
    let (bom, content) = strip_bom(&raw);
    let ending = detect_line_ending(content);
    let normalized = normalize_to_lf(content);
    let applied = apply_edits(&normalized, edits, path).map_err(ToolError::new)?;
    let final_content = format!("{bom}{}", restore_line_endings(&applied.new, ending));
    tokio::fs::write(abs, final_content)
        .await
        .map_err(|e| ToolError::new(os_error::with_path(&e, "open", abs)))?;
    let diff = generate_diff_string(&applied.base, &applied.new, 4);
    let mut details = serde_json::Map::new();
    details.insert("diff".into(), json!(diff.diff));
    details.insert(
        "patch".into(),
        json!(unified_patch(path, &applied.base, &applied.new, 4)),
    );
    if let Some(line) = diff.first_changed_line {
        details.insert("firstChangedLine".into(), json!(line));
    }
    Ok(ToolOutput {
        content: vec![Content::text(format!(
            "Successfully replaced {} block(s) in {path}.",
            edits.len()
        ))],
        details: Some(Value::Object(details)),
        structured_content: None,
        is_error: false,
        terminate: false,
        usage: None,
    })
}

/// What an edit will do, worked out before it runs, as pi 1.6's call preview: the diff, or
/// the error the edit would fail with. `None` when the arguments do not name a path and
/// string `oldText`/`newText` pairs (as `edits` or a single pair) yet.
pub fn preview(arguments: &Value, cwd: &Path) -> Option<Result<String, String>> {
    let path = arguments
        .get("path")
        .or_else(|| arguments.get("file_path"))
        .and_then(Value::as_str)?;
    let pair = |v: &Value| {
        Some(Edit {
            old_text: v.get("oldText")?.as_str()?.to_string(),
            new_text: v.get("newText")?.as_str()?.to_string(),
        })
    };
    let edits: Vec<Edit> = match arguments.get("edits").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => items.iter().map(pair).collect::<Option<_>>()?,
        _ => vec![pair(arguments)?],
    };
    let abs = resolve_to_cwd(path, cwd);
    // Read access first, reported with its errno code as the edit itself reports it.
    let bytes = match std::fs::File::open(&abs) {
        Err(e) => {
            let code = os_error::code_and_message(&e).0;
            return Some(Err(format!("Could not edit file: {path}. Error code: {code}.")));
        }
        Ok(_) => match std::fs::read(&abs) {
            Ok(b) => b,
            Err(e) => return Some(Err(os_error::without_path(&e, "read"))),
        },
    };
    let raw = String::from_utf8_lossy(&bytes);
    let (_, content) = strip_bom(&raw);
    let normalized = normalize_to_lf(content);
    Some(
        apply_edits(&normalized, &edits, path).map(|applied| generate_diff_string(&applied.base, &applied.new, 4).diff),
    )
}

#[async_trait]
impl AgentTool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        "Change one file by replacing exact text. Each edits[].oldText has to match one unique spot \
         in the file as it is now, and no two edits may overlap. Changes that touch the same or \
         neighbouring lines belong in a single edit; do not pad oldText with unchanged text to \
         bridge distant changes."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "File to edit, relative to the working directory or absolute"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {"type": "string", "description": "The exact text to replace; unique in the file and not overlapping any other edit's oldText."},
                            "newText": {"type": "string", "description": "What replaces oldText."}
                        }
                    },
                    "description": "The replacements. All are matched against the file before any is applied; they must not overlap or nest, so merge changes to nearby lines into one."
                }
            }
        })
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(crate::prefer_schema_sampling())
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Edit files by exact text replacement, several separate spots in one call if needed".to_string())
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        vec![
            "Make targeted changes with edit; every edits[].oldText must match the file exactly".to_string(),
            "For several separate changes in one file, send one edit call with several edits[] entries rather than several calls".to_string(),
            "All edits[].oldText are matched against the file as it was before the call, not after earlier entries; never send overlapping or nested edits, merge neighbouring changes into one.".to_string(),
            "Keep each edits[].oldText short but unique; leave out unchanged surrounding text you do not need.".to_string(),
        ]
    }

    fn prepare_arguments(&self, arguments: Value) -> Value {
        prepare_edit_arguments(arguments)
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        // Idempotent, so a caller that skipped prepare_arguments still gets the legacy shape folded.
        let arguments = prepare_edit_arguments(arguments);
        let edits = parse_edits(&arguments)?;
        let path = Args::new("edit", &arguments).string("path")?;
        let abs = resolve_to_cwd(&path, &self.cwd);
        mutate_file(&abs, &cancel, edit_file(&abs, &path, &edits)).await
    }
}

pub(crate) fn tool(cwd: &Path) -> Arc<dyn AgentTool> {
    Arc::new(EditTool::new(cwd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_shows_the_diff_or_the_error_the_edit_would_give() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").expect("file");
        let args = json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]});
        let diff = preview(&args, dir.path()).expect("renderable").expect("diff");
        assert!(diff.contains("-2 two") && diff.contains("+2 2"), "{diff}");
        // The file is not changed.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).expect("file"),
            "one\ntwo\n"
        );
        let bad = json!({"path": "a.txt", "oldText": "zzz", "newText": "y"});
        let err = preview(&bad, dir.path()).expect("renderable").expect_err("no match");
        assert!(err.starts_with("Could not find the exact text in a.txt."), "{err}");
        let missing = json!({"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]});
        assert_eq!(
            preview(&missing, dir.path()),
            Some(Err("Could not edit file: nope.txt. Error code: ENOENT.".into()))
        );
        // Arguments still streaming (no text pair yet) give no preview.
        assert_eq!(
            preview(&json!({"path": "a.txt", "edits": [{"oldText": "two"}]}), dir.path()),
            None
        );
        assert_eq!(preview(&json!({"edits": []}), dir.path()), None);
    }

    #[test]
    fn legacy_pair_joins_edits() {
        let v = prepare_edit_arguments(json!({"path": "a", "oldText": "x", "newText": "y"}));
        assert_eq!(v, json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}));
        let v = prepare_edit_arguments(json!({"path": "a", "edits": "[{\"oldText\":\"p\",\"newText\":\"q\"}]"}));
        assert_eq!(v["edits"][0]["oldText"], "p");
    }

    #[test]
    fn a_single_edit_object_becomes_a_list() {
        let v = prepare_edit_arguments(json!({"path": "a", "edits": {"oldText": "x", "newText": "y"}, "why": 1}));
        assert_eq!(
            v,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "why": 1})
        );
        let v = prepare_edit_arguments(json!({"path": "a", "edits": "{\"oldText\":\"p\",\"newText\":\"q\"}"}));
        assert_eq!(v["edits"], json!([{"oldText": "p", "newText": "q"}]));
        // Not an edit: left for validation to reject.
        let v = prepare_edit_arguments(json!({"path": "a", "edits": {"oldText": "x"}}));
        assert_eq!(v["edits"], json!({"oldText": "x"}));
    }

    #[test]
    fn the_schema_allows_extra_fields() {
        let schema = EditTool::new("/").parameters();
        assert!(schema.get("additionalProperties").is_none());
        assert!(schema["properties"]["edits"]["items"]
            .get("additionalProperties")
            .is_none());
    }

    #[test]
    fn empty_edits_are_rejected_with_pis_text() {
        let err = parse_edits(&json!({"path": "a", "edits": []})).expect_err("empty");
        assert_eq!(
            err.message,
            "Edit tool input is invalid. edits must contain at least one replacement."
        );
    }
}
