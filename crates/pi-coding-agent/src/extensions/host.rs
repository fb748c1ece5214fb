//! pi's side of the host's calls ([`HostHandler`]): dialogs through the mode's
//! [`ExtensionUiHost`], pi's own built-in tools for `createBashTool()` and friends, and the
//! fire-and-forget notifications, which arrive on the socket reader task and are queued to a
//! task of their own here.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_extensions::{ExtensionError, HostHandler, OutputStream};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::ExtensionSlot;
use crate::extension_ui::{DialogOptions, NotifyType, WidgetPlacement};

enum Queued {
    Notification(String, Value),
    Error(ExtensionError),
}

/// Answers the host for one pi process.
pub struct HostBridge {
    slot: Weak<ExtensionSlot>,
    cwd: PathBuf,
    tools: pi_tools::ToolsOptions,
    queue: mpsc::UnboundedSender<Queued>,
    /// Where extension output may go: not onto the terminal UI's screen.
    mode: pi_extensions::Mode,
}

fn arg(params: &Value, index: usize) -> Option<&Value> {
    params.get("args").and_then(Value::as_array).and_then(|a| a.get(index))
}

fn arg_str(params: &Value, index: usize) -> Option<&str> {
    arg(params, index).and_then(Value::as_str)
}

fn dialog_options(params: &Value, index: usize) -> DialogOptions {
    DialogOptions {
        timeout: arg(params, index)
            .and_then(|o| o.get("timeout"))
            .and_then(Value::as_u64)
            .map(std::time::Duration::from_millis),
        cancel: None,
    }
}

impl HostBridge {
    /// A handler for `slot`, with its notification queue drained on a task of the current
    /// runtime.
    pub fn spawn(
        slot: &Arc<ExtensionSlot>,
        cwd: PathBuf,
        tools: pi_tools::ToolsOptions,
        mode: pi_extensions::Mode,
    ) -> Arc<HostBridge> {
        let (queue, mut queued) = mpsc::unbounded_channel::<Queued>();
        let weak = Arc::downgrade(slot);
        tokio::spawn(async move {
            while let Some(item) = queued.recv().await {
                let Some(slot) = weak.upgrade() else { break };
                match item {
                    Queued::Error(error) => slot.report(vec![error]).await,
                    Queued::Notification(method, params) => apply_notification(&slot, &method, &params).await,
                }
            }
        });
        Arc::new(HostBridge {
            slot: Arc::downgrade(slot),
            cwd,
            tools,
            queue,
            mode,
        })
    }

    async fn builtin_tool(&self, params: &Value) -> Result<Value, String> {
        let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
        let cwd = params
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .unwrap_or_else(|| self.cwd.clone());
        let Some(tool) = pi_tools::create_tools(&cwd, &[name], &self.tools).into_iter().next() else {
            return Err(format!("pi has no built-in tool \"{name}\""));
        };
        let call_id = params.get("toolCallId").and_then(Value::as_str).unwrap_or_default();
        let args = params.get("args").cloned().unwrap_or_else(|| json!({}));
        let result = tool
            .execute(call_id, args, CancellationToken::new(), Arc::new(|_| {}))
            .await;
        Ok(match result {
            Ok(output) => json!({ "content": output.content, "details": output.details, "isError": false }),
            Err(error) => json!({
                "content": [{ "type": "text", "text": error.message }],
                "details": error.details,
                "isError": true,
            }),
        })
    }
}

/// The fire-and-forget `ui.*` calls, in the order the host sent them.
async fn apply_notification(slot: &Arc<ExtensionSlot>, method: &str, params: &Value) {
    let ui = slot.ui();
    match method {
        "ui.notify" => {
            let kind = match arg_str(params, 1) {
                Some("warning") => Some(NotifyType::Warning),
                Some("error") => Some(NotifyType::Error),
                Some("info") => Some(NotifyType::Info),
                _ => None,
            };
            ui.notify(arg_str(params, 0).unwrap_or_default(), kind).await;
        }
        "ui.setStatus" => {
            ui.set_status(arg_str(params, 0).unwrap_or_default(), arg_str(params, 1))
                .await
        }
        "ui.setTitle" => ui.set_title(arg_str(params, 0).unwrap_or_default()).await,
        "ui.setEditorText" => ui.set_editor_text(arg_str(params, 0).unwrap_or_default()).await,
        "ui.setWidget" => {
            let lines: Option<Vec<String>> = arg(params, 1)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect());
            let placement = match arg(params, 2).and_then(|o| o.get("placement")).and_then(Value::as_str) {
                Some("belowEditor") => Some(WidgetPlacement::BelowEditor),
                Some("aboveEditor") => Some(WidgetPlacement::AboveEditor),
                _ => None,
            };
            ui.set_widget(arg_str(params, 0).unwrap_or_default(), lines.as_deref(), placement)
                .await;
        }
        method if method.starts_with("pi.") => {
            if let Some(session) = slot.session() {
                super::actions::apply(slot, &session, method, params).await;
            }
        }
        "ctx.abort" => {
            if let Some(session) = slot.session() {
                session.abort();
            }
        }
        "ctx.compact" => {
            if let Some(session) = slot.session() {
                let instructions = params
                    .get("customInstructions")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                // A compaction stops the run first: on a task of its own so the action queue
                // (and a handler waiting on it) goes on.
                tokio::spawn(async move {
                    // Its outcome is reported by the compaction events.
                    let _ = session.compact(instructions.as_deref()).await;
                });
            }
        }
        // `ctx.shutdown` is not acted on yet.
        _ => {}
    }
}

#[async_trait]
impl HostHandler for HostBridge {
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        if method == "tool.builtin" {
            return self.builtin_tool(&params).await;
        }
        let Some(slot) = self.slot.upgrade() else {
            return Err("pi is shutting down".to_string());
        };
        let ui = slot.ui();
        let title = arg_str(&params, 0).unwrap_or_default();
        match method {
            "ui.select" => {
                let options: Vec<String> = arg(&params, 1)
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default();
                Ok(ui
                    .select(title, &options, dialog_options(&params, 2))
                    .await
                    .map(Value::from)
                    .unwrap_or(Value::Null))
            }
            "ui.confirm" => {
                let message = arg_str(&params, 1).unwrap_or_default();
                Ok(Value::Bool(
                    ui.confirm(title, message, dialog_options(&params, 2)).await,
                ))
            }
            "ui.input" => Ok(ui
                .input(title, arg_str(&params, 1), dialog_options(&params, 2))
                .await
                .map(Value::from)
                .unwrap_or(Value::Null)),
            "pi.setModel" => Ok(Value::Bool(match slot.session() {
                Some(session) => super::actions::set_model(&session, &params).await,
                None => false,
            })),
            "ui.editor" => Ok(ui
                .editor(title, arg_str(&params, 1))
                .await
                .map(Value::from)
                .unwrap_or(Value::Null)),
            _ => Err(format!("`{method}` is not available in this mode yet")),
        }
    }

    fn notification(&self, method: &str, params: Value) {
        let _ = self.queue.send(Queued::Notification(method.to_string(), params));
    }

    fn extension_error(&self, error: ExtensionError) {
        let _ = self.queue.send(Queued::Error(error));
    }

    fn output(&self, _stream: OutputStream, line: &str) {
        // The terminal UI owns the screen: a stray line would break its frame.
        if self.mode == pi_extensions::Mode::Tui {
            return;
        }
        // stdout belongs to pi's own output in every non-interactive mode: extension output
        // goes to stderr, as pi redirects it.
        eprintln!("{line}");
    }
}
