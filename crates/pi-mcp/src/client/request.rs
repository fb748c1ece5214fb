//! Requests to a connected server: the shared request loop (timeout restarted by progress,
//! cancellation with `notifications/cancelled`), `ping`, paginated `tools/list` and `tools/call`.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{json, Map, Value};
use tokio::sync::broadcast::error::RecvError;

use super::{CallOptions, McpClient, McpTool};
use crate::error::McpError;

/// Pagination stops with an error past this many pages.
const MAX_LIST_PAGES: usize = 1_000;
/// The reason pi gives when the user aborts a call.
const ABORT_REASON: &str = "AbortError: This operation was aborted";
const TIMEOUT_REASON: &str = "Request timed out";

fn service_error(error: ServiceError) -> McpError {
    if super::is_closed_pipe(&error) {
        return McpError::ConnectionClosed;
    }
    match error {
        ServiceError::McpError(data) => McpError::Rpc {
            code: data.code.0,
            message: data.message.to_string(),
        },
        ServiceError::TransportClosed => McpError::ConnectionClosed,
        ServiceError::TransportSend(error) if super::is_closed_pipe(error.error.as_ref()) => McpError::ConnectionClosed,
        other => McpError::Transport(other.to_string()),
    }
}

fn invalid(message: String) -> McpError {
    McpError::InvalidResult(message)
}

fn tool_from(value: &Map<String, Value>) -> Option<McpTool> {
    let name = value.get("name")?.as_str()?.to_string();
    let mut schema = value.get("inputSchema")?.as_object()?.clone();
    let type_entry = schema.entry("type").or_insert(Value::Null);
    if type_entry.is_null() {
        *type_entry = json!("object");
    }
    schema.entry("properties").or_insert_with(|| json!({}));
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let hints = value.get("annotations").and_then(Value::as_object);
    let annotations = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
        .iter()
        .filter_map(|hint| {
            let flag = hints?.get(*hint)?.as_bool()?;
            Some((hint.to_string(), Value::Bool(flag)))
        })
        .collect();
    let title = text("title").or_else(|| {
        hints
            .and_then(|h| h.get("title"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Some(McpTool {
        name,
        title,
        description: text("description"),
        input_schema: Value::Object(schema),
        output_schema: value.get("outputSchema").filter(|s| s.is_object()).cloned(),
        annotations,
    })
}

impl McpClient {
    /// Send one request and wait for its answer, its timeout, or `cancel`.
    pub async fn request(&self, method: &str, params: Option<Value>, options: &CallOptions) -> Result<Value, McpError> {
        if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Err(McpError::Aborted);
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, params));
        // Subscribe before sending, so the first progress notification is not missed.
        let mut progress = self.progress.subscribe();
        let mut handle = self
            .service
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(service_error)?;
        let token = serde_json::to_value(&handle.progress_token).unwrap_or(Value::Null);
        let timeout = options.timeout.unwrap_or(self.timeout);
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let cancel = options.cancel.clone().unwrap_or_default();
        let mut progress_open = true;
        loop {
            tokio::select! {
                biased;
                answer = &mut handle.rx => {
                    // Progress sent before the answer was handed on before it (the transport
                    // wrapper sees messages in order), so what is queued still belongs to this call.
                    while let Ok(note) = progress.try_recv() {
                        if note.token == token {
                            if let Some(report) = &options.on_progress {
                                report(&note);
                            }
                        }
                    }
                    return match answer {
                        Ok(Ok(result)) => serde_json::to_value(result).map_err(|e| invalid(e.to_string())),
                        Ok(Err(error)) => Err(service_error(error)),
                        Err(_) => Err(McpError::ConnectionClosed),
                    };
                }
                _ = cancel.cancelled() => {
                    let _ = handle.cancel(Some(ABORT_REASON.into())).await;
                    return Err(McpError::Aborted);
                }
                _ = &mut deadline => {
                    let _ = handle.cancel(Some(TIMEOUT_REASON.into())).await;
                    return Err(McpError::Timeout(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)));
                }
                note = progress.recv(), if progress_open => match note {
                    Ok(note) if note.token == token => {
                        deadline.as_mut().reset(tokio::time::Instant::now() + timeout);
                        if let Some(report) = &options.on_progress {
                            report(&note);
                        }
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => progress_open = false,
                },
            }
        }
    }

    /// `ping`, answered with `{}`.
    pub async fn ping(&self, timeout: Option<Duration>) -> Result<(), McpError> {
        let options = CallOptions {
            timeout,
            ..CallOptions::default()
        };
        self.request("ping", None, &options).await.map(|_| ())
    }

    /// Every tool, following `nextCursor` through all pages. Servers without the `tools`
    /// capability are not asked and have none.
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, McpError> {
        if !self.info.has_tools() {
            return Ok(Vec::new());
        }
        let method = "tools/list";
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor.as_ref().map(|c| json!({"cursor": c}));
            let page = self.request(method, params, &CallOptions::default()).await?;
            let items = page
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid(format!("Invalid MCP {method} result")))?;
            for item in items {
                let tool = item
                    .as_object()
                    .and_then(tool_from)
                    .ok_or_else(|| invalid(format!("Invalid entry in MCP {method} result")))?;
                tools.push(tool);
            }
            // Some servers end pagination with `null` or `""` instead of leaving the cursor out.
            let next = match page.get("nextCursor") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.is_empty() => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err(invalid(format!("Invalid MCP {method} cursor"))),
            };
            let Some(next) = next else {
                return Ok(tools);
            };
            if !seen.insert(next.clone()) {
                return Err(McpError::Transport(format!(
                    "MCP {method} returned duplicate cursor: {next}"
                )));
            }
            cursor = Some(next);
        }
        Err(McpError::Transport(format!(
            "MCP {method} exceeded {MAX_LIST_PAGES} pages"
        )))
    }

    /// Call a tool. The answer is the raw `CallToolResult` (with `content` defaulted to `[]`); turn
    /// it into model content with [`crate::content::convert_tool_result`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        options: &CallOptions,
    ) -> Result<Value, McpError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_string()));
        if let Some(arguments) = arguments {
            params.insert("arguments".into(), Value::Object(arguments));
        }
        let mut result = self.request("tools/call", Some(Value::Object(params)), options).await?;
        let Some(object) = result.as_object_mut() else {
            return Err(invalid("Invalid MCP tools/call result".into()));
        };
        match object.get("content") {
            None => {
                object.insert("content".into(), Value::Array(Vec::new()));
            }
            Some(Value::Array(_)) => {}
            Some(_) => return Err(invalid("Invalid MCP tools/call result".into())),
        }
        Ok(result)
    }
}
