//! HTML export of a session: parses the raw JSONL entries, picks the active branch and renders one
//! self-contained page (`--export`, RPC `export_html`, `/export`).
//!
//! The export works on raw JSON values rather than the session crate's types so that it can render
//! any file the TypeScript pi wrote, including entry types this build does not know.

mod ansi;
mod file;
mod render;
mod template;
mod tool;
mod tree;

use std::collections::{HashMap, HashSet};

use serde_json::Value;

pub use ansi::{ansi_lines_to_html, ansi_to_html};
pub use file::{default_output_name, export_file, export_file_with};
pub use template::ThemeColors;

/// What can go wrong while exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("File not found: {0}")]
    NotFound(String),
    #[error("Failed to read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("Failed to write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("Invalid session file: {0}")]
    InvalidSession(String),
    #[error("Nothing to export yet - start a conversation first")]
    Empty,
    /// For callers exporting the running session when it has no file.
    #[error("Cannot export in-memory session to HTML")]
    InMemory,
}

/// A tool shown in the page header (name and description).
#[derive(Debug, Clone, Default)]
pub struct ExportTool {
    pub name: String,
    pub description: String,
}

/// Knobs for one export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The entry the active branch ends at; `None` means the last entry of the file.
    pub leaf_id: Option<String>,
    /// Theme colours; `None` uses the built-in dark theme.
    pub theme: Option<ThemeColors>,
    /// The system prompt in use, shown collapsed in the header when known.
    pub system_prompt: Option<String>,
    /// The active tools, shown collapsed in the header when known.
    pub tools: Vec<ExportTool>,
    /// What extension tool renderers drew for tool calls, by call id (pi 1.6 shows these in
    /// place of the generic block for tools the page has no layout of its own for).
    pub rendered_tools: HashMap<String, RenderedTool>,
}

/// A tool call as its extension's renderers drew it, as terminal lines.
#[derive(Debug, Clone, Default)]
pub struct RenderedTool {
    /// `renderCall`'s lines (`None`: it has none, the tool's name shows).
    pub call: Option<Vec<String>>,
    /// `renderResult`'s lines collapsed and expanded (`None`: the plain output shows).
    pub result_collapsed: Option<Vec<String>>,
    pub result_expanded: Option<Vec<String>>,
}

/// Tools the page lays out itself; renderers are not asked for them (as in pi 1.6).
pub const PAGE_LAID_OUT_TOOLS: [&str; 5] = ["bash", "read", "write", "edit", "ls"];

/// The tool calls of a session's active branch whose rendering an extension may give:
/// `(call id, tool name, arguments, result message)` for every call of a tool the page
/// does not lay out itself.
pub fn renderable_tool_calls(doc: &SessionDoc, leaf_id: Option<&str>) -> Vec<(String, String, Value, Option<Value>)> {
    let path = doc.active_path(leaf_id);
    let mut results: HashMap<&str, &Value> = HashMap::new();
    for &i in &path {
        let m = doc.entries[i].get("message");
        if let Some(m) = m.filter(|m| str_field(m, "role") == Some("toolResult")) {
            if let Some(id) = str_field(m, "toolCallId") {
                results.insert(id, m);
            }
        }
    }
    let mut out = Vec::new();
    for &i in &path {
        let Some(m) = doc.entries[i]
            .get("message")
            .filter(|m| str_field(m, "role") == Some("assistant"))
        else {
            continue;
        };
        for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            if str_field(b, "type") != Some("toolCall") {
                continue;
            }
            let (Some(id), Some(name)) = (str_field(b, "id"), str_field(b, "name")) else {
                continue;
            };
            if PAGE_LAID_OUT_TOOLS.contains(&name) {
                continue;
            }
            let args = b.get("arguments").cloned().unwrap_or(Value::Null);
            out.push((
                id.to_string(),
                name.to_string(),
                args,
                results.get(id).map(|r| (*r).clone()),
            ));
        }
    }
    out
}

/// A parsed session: its header and its entries in file order.
#[derive(Debug, Clone)]
pub struct SessionDoc {
    pub header: Value,
    pub entries: Vec<Value>,
}

impl SessionDoc {
    /// Parses JSONL text. Blank and malformed lines are skipped (as pi does on load); the first
    /// valid line must be a `session` header with a string `id`.
    pub fn parse(jsonl: &str) -> Result<Self, ExportError> {
        let mut lines = jsonl
            .split('\n')
            .filter(|l| !l.trim().is_empty())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object);
        let header = lines
            .next()
            .ok_or_else(|| ExportError::InvalidSession("the file is empty".into()))?;
        Self::from_values(header, lines.collect())
    }

    /// Builds a document from an already parsed header and entries.
    pub fn from_values(header: Value, entries: Vec<Value>) -> Result<Self, ExportError> {
        if str_field(&header, "type") != Some("session") || str_field(&header, "id").is_none() {
            return Err(ExportError::InvalidSession(
                "the first line is not a session header".into(),
            ));
        }
        let mut doc = Self { header, entries };
        doc.chain_legacy_entries();
        Ok(doc)
    }

    /// Version 1 files (no `version` in the header) have no ids: their entries form one linear
    /// chain in file order, so give them ids and parents the way the v1 to v2 migration does.
    fn chain_legacy_entries(&mut self) {
        let version = self.header.get("version").and_then(Value::as_u64).unwrap_or(1);
        if version >= 2 {
            return;
        }
        let mut prev: Option<String> = None;
        for (i, e) in self.entries.iter_mut().enumerate() {
            let Some(obj) = e.as_object_mut() else { continue };
            let id = match obj.get("id").and_then(Value::as_str) {
                Some(id) => id.to_string(),
                None => format!("legacy-{i}"),
            };
            obj.insert("id".into(), Value::String(id.clone()));
            obj.insert("parentId".into(), prev.clone().map_or(Value::Null, Value::String));
            prev = Some(id);
        }
    }

    /// Indices of the entries on the active branch, root first. The walk follows `parentId`
    /// links from the leaf and stops at a missing parent or a cycle.
    pub fn active_path(&self, leaf_id: Option<&str>) -> Vec<usize> {
        let by_id = self.index_by_id();
        // An unknown leaf falls back to the last entry rather than showing nothing.
        let leaf = leaf_id
            .and_then(|id| by_id.get(id).copied())
            .or_else(|| self.entries.iter().rposition(|e| str_field(e, "id").is_some()));
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = leaf;
        while let Some(i) = cur {
            if !seen.insert(i) {
                break;
            }
            path.push(i);
            cur = str_field(&self.entries[i], "parentId").and_then(|p| by_id.get(p).copied());
        }
        path.reverse();
        path
    }

    pub(crate) fn index_by_id(&self) -> HashMap<&str, usize> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| str_field(e, "id").map(|id| (id, i)))
            .collect()
    }
}

/// Renders a session given as JSONL text.
pub fn export_session_html(jsonl: &str, options: &ExportOptions) -> Result<String, ExportError> {
    export_doc_html(&SessionDoc::parse(jsonl)?, options)
}

/// Renders an already parsed session (for the in-process `/export` and RPC `export_html`).
pub fn export_doc_html(doc: &SessionDoc, options: &ExportOptions) -> Result<String, ExportError> {
    if doc.entries.is_empty() {
        return Err(ExportError::Empty);
    }
    Ok(render::render_page(doc, options))
}

pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests;
