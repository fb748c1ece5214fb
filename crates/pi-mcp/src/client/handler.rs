//! What the client answers and hears from a server: `initialize` parameters, `roots/list` with the
//! session cwd, `ping` (rmcp answers it), progress, log messages and tool-list changes. Any other
//! request (sampling, elicitation, anything unknown) gets pi 1.6's `Method not found: <method>`.

// rmcp marks roots and logging deprecated for the 2026 revision; the revisions pi speaks have both.
#![allow(deprecated)]

use std::path::Path;
use std::sync::Arc;

use rmcp::model::{
    ClientInfo, CreateMessageRequestParams, CreateMessageResult, CustomRequest, CustomResult, ElicitRequestParams,
    ElicitResult, ErrorCode, ListRootsResult, LoggingMessageNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};
use tokio::sync::{broadcast, watch};

/// The protocol revision pi asks for.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";
/// Revisions pi accepts in a server's `initialize` answer.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A `notifications/message` from a server.
#[derive(Debug, Clone, PartialEq)]
pub struct LogMessage {
    pub level: String,
    pub logger: Option<String>,
    pub data: Value,
}

/// Receives a server's log messages.
pub type LogSink = Arc<dyn Fn(LogMessage) + Send + Sync>;

/// A `notifications/progress`, with the token it names.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub token: Value,
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

impl Progress {
    /// The text pi shows for it: the message, else `Progress n[/total]`.
    pub fn display_text(&self) -> String {
        if let Some(message) = &self.message {
            return message.clone();
        }
        let number = |n: f64| {
            if n.fract() == 0.0 && n.abs() < 1e15 {
                format!("{}", n as i64)
            } else {
                n.to_string()
            }
        };
        match self.total {
            Some(total) => format!("Progress {}/{}", number(self.progress), number(total)),
            None => format!("Progress {}", number(self.progress)),
        }
    }
}

pub(crate) struct PiClientHandler {
    info: ClientInfo,
    roots: ListRootsResult,
    pub(crate) progress: broadcast::Sender<Progress>,
    pub(crate) tools_changed: watch::Sender<u64>,
    log: Option<LogSink>,
}

fn file_url(cwd: &Path) -> String {
    reqwest::Url::from_file_path(cwd)
        .map(|u| u.to_string())
        .unwrap_or_else(|_| format!("file://{}", cwd.display()))
}

impl PiClientHandler {
    pub(crate) fn new(cwd: &Path, client_version: &str, log: Option<LogSink>) -> Result<Self, serde_json::Error> {
        // rmcp's model types are non-exhaustive: build them from their wire form.
        let info: ClientInfo = serde_json::from_value(json!({
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "pi", "version": client_version},
        }))?;
        let name = cwd
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let roots: ListRootsResult = serde_json::from_value(json!({
            "roots": [{"uri": file_url(cwd), "name": name}],
        }))?;
        let (progress, _) = broadcast::channel(256);
        let (tools_changed, _) = watch::channel(0);
        Ok(Self {
            info,
            roots,
            progress,
            tools_changed,
            log,
        })
    }
}

impl ClientHandler for PiClientHandler {
    fn get_info(&self) -> ClientInfo {
        self.info.clone()
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(self.roots.clone())
    }

    // pi declares neither sampling nor elicitation; like any request it has no handler for,
    // they are refused as pi 1.6 refuses them (rmcp would decline an elicitation instead).
    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Err(method_not_found("sampling/createMessage"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Err(method_not_found("elicitation/create"))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        Err(method_not_found(&request.method))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(log) = &self.log {
            let level = serde_json::to_value(params.level)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            log(LogMessage {
                level,
                logger: params.logger,
                data: params.data,
            });
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.send_modify(|n| *n += 1);
    }
}

/// The error pi answers a request it does not serve with.
fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_text_is_the_message_or_the_numbers() {
        let progress = |progress: f64, total: Option<f64>, message: Option<&str>| Progress {
            token: Value::Null,
            progress,
            total,
            message: message.map(str::to_string),
        };
        assert_eq!(progress(1.0, Some(4.0), Some("step 1")).display_text(), "step 1");
        assert_eq!(progress(2.0, Some(4.0), None).display_text(), "Progress 2/4");
        assert_eq!(progress(0.5, None, None).display_text(), "Progress 0.5");
    }
}
