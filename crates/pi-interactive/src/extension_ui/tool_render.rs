//! An extension tool's own rendering (`renderCall` / `renderResult`) in its tool block: the
//! lines the host sent for the call and the result, and what they were made for (the
//! content width, the expanded state, the theme, and the state of the call).

use serde_json::{json, Value};

use super::super::tool_block::{ToolBlock, ToolStatus};
use super::message_block::RenderKey;

/// What a tool's lines depend on besides the render key.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolState {
    pub args: Value,
    pub status: ToolStatus,
    pub output_len: usize,
}

impl ToolState {
    pub fn of(block: &ToolBlock) -> Self {
        ToolState {
            args: block.args().clone(),
            status: block.status(),
            output_len: block.output().len(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ToolRender {
    /// The renderer's lines of the call and of the result, for the width they were made at
    /// (`None` inside: the renderer gave nothing, pi's default shows).
    call: Option<(usize, Option<Vec<String>>)>,
    result: Option<(usize, Option<Vec<String>>)>,
    made_for: Option<(RenderKey, ToolState)>,
}

impl ToolRender {
    pub fn call_lines(&self, width: usize) -> Option<&Vec<String>> {
        match &self.call {
            Some((w, Some(lines))) if *w == width => Some(lines),
            _ => None,
        }
    }

    pub fn result_lines(&self, width: usize) -> Option<&Vec<String>> {
        match &self.result {
            Some((w, Some(lines))) if *w == width => Some(lines),
            _ => None,
        }
    }

    pub fn is_current(&self, key: RenderKey, state: &ToolState) -> bool {
        self.made_for.as_ref().is_some_and(|(k, s)| *k == key && s == state)
    }

    /// Note that lines for `key` and `state` are asked for (so they are not asked twice).
    pub fn asked(&mut self, key: RenderKey, state: ToolState) {
        self.made_for = Some((key, state));
    }

    pub fn set_lines(&mut self, width: usize, call: Option<Vec<String>>, result: Option<Vec<String>>) {
        self.call = Some((width, call));
        self.result = Some((width, result));
    }
}

/// The request item for one tool block: what `renderCall` / `renderResult` receive.
pub fn request_item(block: &ToolBlock, cwd: &str) -> Value {
    let finished = block.status() != ToolStatus::Pending;
    let result = (finished || !block.output().is_empty()).then(|| {
        json!({
            "content": [{"type": "text", "text": block.output()}],
            "details": block.details().cloned().unwrap_or(Value::Null),
        })
    });
    json!({
        "toolName": block.name(),
        "toolCallId": block.id,
        "args": block.args(),
        "result": result,
        "isPartial": !finished,
        "isError": block.status() == ToolStatus::Error,
        "expanded": block.is_expanded(),
        "executionStarted": true,
        "cwd": cwd,
    })
}
