//! The files a summarised stretch of conversation read and changed, carried from summary to
//! summary in `details` and shown to the model as `<read-files>` / `<modified-files>` tags.

use std::collections::BTreeSet;

use pi_ai::{Content, Message};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tokens::MessageView;

/// Paths seen in `read`, `write` and `edit` tool calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    pub read: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub edited: BTreeSet<String>,
}

/// `details` of a compaction or branch summary entry pi writes: the two sorted lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileLists {
    /// Read and never written or edited.
    pub read_files: Vec<String>,
    /// Written or edited.
    pub modified_files: Vec<String>,
}

impl FileOps {
    /// Add the `path` of each read/write/edit tool call of an assistant message.
    pub fn add_from_message<M: MessageView + ?Sized>(&mut self, message: &M) {
        match message.llm() {
            Some(Message::Assistant(a)) => {
                for block in &a.content {
                    if let Content::ToolCall(call) = block {
                        self.add_call(&call.name, &call.arguments);
                    }
                }
            }
            // Calls a codemode script made are recorded on its result (`nestedCalls`, pi 1.6).
            Some(Message::ToolResult(r)) => self.add_nested(r.extra.get("nestedCalls")),
            Some(_) => {}
            None if message.role() == "toolResult" => self.add_nested(message.field("nestedCalls")),
            // An assistant message kept as JSON: read its blocks the same way.
            None if message.role() == "assistant" => {
                if let Some(Value::Array(blocks)) = message.field("content") {
                    for b in blocks {
                        if b.get("type").and_then(Value::as_str) == Some("toolCall") {
                            let name = b.get("name").and_then(Value::as_str).unwrap_or("");
                            if let Some(args) = b.get("arguments") {
                                self.add_call(name, args);
                            }
                        }
                    }
                }
            }
            None => {}
        }
    }

    /// The calls of a `nestedCalls` record (`{calls: [{name, arguments?}], complete}`); calls
    /// whose arguments were too large to keep are skipped.
    fn add_nested(&mut self, record: Option<&Value>) {
        let calls = record.and_then(|r| r.get("calls")).and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            let name = call.get("name").and_then(Value::as_str).unwrap_or("");
            if let Some(args) = call.get("arguments") {
                self.add_call(name, args);
            }
        }
    }

    fn add_call(&mut self, name: &str, arguments: &Value) {
        let Some(path) = arguments.get("path").and_then(Value::as_str).filter(|p| !p.is_empty()) else {
            return;
        };
        let set = match name {
            "read" => &mut self.read,
            "write" => &mut self.written,
            "edit" => &mut self.edited,
            _ => return,
        };
        set.insert(path.to_string());
    }

    /// Add the lists of an earlier summary's `details` (modified files count as edited).
    /// Anything not shaped like pi's details is ignored.
    pub fn add_details(&mut self, details: &Value) {
        let strings = |k: &str| {
            details
                .get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// The two lists pi stores: files only read, and files modified, each sorted.
    pub fn to_lists(&self) -> FileLists {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        FileLists {
            read_files: self.read.iter().filter(|f| !modified.contains(f)).cloned().collect(),
            modified_files: modified.into_iter().cloned().collect(),
        }
    }
}

impl FileLists {
    /// The tags appended to a summary: `\n\n<read-files>…</read-files>\n\n<modified-files>…`,
    /// each only when its list is not empty; empty when both are.
    pub fn to_tags(&self) -> String {
        let mut sections = Vec::with_capacity(2);
        if !self.read_files.is_empty() {
            sections.push(format!("<read-files>\n{}\n</read-files>", self.read_files.join("\n")));
        }
        if !self.modified_files.is_empty() {
            sections.push(format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            String::new()
        } else {
            format!("\n\n{}", sections.join("\n\n"))
        }
    }
}
