//! The HTML export with extension tool renderers, as pi 1.6 exports from a session that has
//! them (`/export`, RPC `export_html`): the calls of tools the page does not lay out itself
//! are drawn by their renderers in the extension host, and their terminal lines become HTML.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pi_extensions::ExtensionRunner;
use serde_json::{json, Value};

use crate::export::{ExportError, ExportOptions, RenderedTool, SessionDoc};

/// The width pi's export draws renderers at.
const EXPORT_WIDTH: usize = 100;

/// Renderers that take longer than this are left out (the page shows the plain layout).
const RENDER_TIMEOUT: Duration = Duration::from_secs(10);

/// What the extensions' renderers draw for the calls in `doc` (empty when no extension
/// renders tools, or the host does not answer). `theme`: the colours to draw with, as the
/// host's Theme takes them (`None`: the terminal UI's, which the host already has).
pub async fn rendered_tools(
    runner: Option<&Arc<ExtensionRunner>>,
    doc: &SessionDoc,
    theme: Option<&Value>,
) -> HashMap<String, RenderedTool> {
    let Some(runner) = runner else {
        return HashMap::new();
    };
    let registrations = runner.registrations();
    let any_tool = registrations.has_tool_renderers();
    let names = registrations.self_rendered_tools();
    if !any_tool && names.is_empty() {
        return HashMap::new();
    }
    let calls: Vec<_> = crate::export::renderable_tool_calls(doc, None)
        .into_iter()
        .filter(|(_, name, _, _)| any_tool || names.contains(name.as_str()))
        .collect();
    if calls.is_empty() {
        return HashMap::new();
    }
    let items: Vec<Value> = calls
        .iter()
        .map(|(id, name, args, result)| json!({"toolCallId": id, "toolName": name, "args": args, "result": result}))
        .collect();
    let params = json!({"items": items, "width": EXPORT_WIDTH, "theme": theme});
    let Ok(answer) = runner.ui_request("ui.renderExport", params, RENDER_TIMEOUT).await else {
        return HashMap::new();
    };
    let answered = answer
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let lines = |v: Option<&Value>| -> Option<Vec<String>> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect())
    };
    calls
        .into_iter()
        .zip(answered)
        .map(|((id, _, _, _), one)| {
            let rendered = RenderedTool {
                call: lines(one.get("call")),
                result_collapsed: lines(one.get("resultCollapsed")),
                result_expanded: lines(one.get("resultExpanded")),
            };
            (id, rendered)
        })
        .collect()
}

/// Export the session file `input` to `output` (see `pi_export::export_file_with`), with
/// what the extensions' tool renderers draw in `theme` (see [`rendered_tools`]).
pub async fn export_file(
    runner: Option<Arc<ExtensionRunner>>,
    input: PathBuf,
    output: Option<PathBuf>,
    cwd: PathBuf,
    theme: Option<Value>,
) -> Result<PathBuf, ExportError> {
    let rendered = match runner.as_ref() {
        Some(r) if !r.registrations().extensions.is_empty() => {
            let text = tokio::fs::read_to_string(cwd.join(&input)).await.unwrap_or_default();
            match SessionDoc::parse(&text) {
                Ok(doc) => rendered_tools(Some(r), &doc, theme.as_ref()).await,
                // The export below reports what is wrong with the file.
                Err(_) => HashMap::new(),
            }
        }
        _ => HashMap::new(),
    };
    let options = ExportOptions {
        rendered_tools: rendered,
        ..ExportOptions::default()
    };
    tokio::task::spawn_blocking(move || crate::export::export_file_with(&input, output.as_deref(), &cwd, &options))
        .await
        .unwrap_or_else(|e| Err(ExportError::InvalidSession(format!("export stopped: {e}"))))
}
