//! The extension UI sub-protocol: dialogs and fire-and-forget UI requests sent to the client as
//! `extension_ui_request` records, and the client's `extension_ui_response` matched by id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::extension_ui::ExtensionUiHost;
use crate::modes::output::LineOutput;

/// A client's answer to a dialog, kept loose: pi reads `value`, `confirmed` and `cancelled`
/// only when present.
#[derive(Debug, Clone, PartialEq)]
pub struct UiResponse {
    /// The request id (only string ids can match a request).
    pub id: Option<String>,
    pub fields: Map<String, Value>,
}

impl UiResponse {
    pub fn from_map(map: &Map<String, Value>) -> Self {
        Self {
            id: map.get("id").and_then(Value::as_str).map(str::to_owned),
            fields: map.clone(),
        }
    }

    fn cancelled(&self) -> bool {
        self.fields.get("cancelled").is_some_and(js_truthy)
    }

    /// `value` for select / input / editor: `None` when cancelled or absent.
    fn text_value(&self) -> Option<String> {
        if self.cancelled() {
            return None;
        }
        match self.fields.get("value") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// `confirmed` for confirm: false when cancelled or absent.
    fn confirmed(&self) -> bool {
        !self.cancelled() && self.fields.get("confirmed").is_some_and(js_truthy)
    }
}

fn js_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

pub use crate::extension_ui::{DialogOptions, NotifyType, WidgetPlacement};

/// The `extension_ui_request` records, field order as pi writes them.
#[derive(Serialize)]
#[serde(tag = "method")]
enum Request<'a> {
    #[serde(rename = "select")]
    Select {
        title: &'a str,
        options: &'a [String],
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "confirm")]
    Confirm {
        title: &'a str,
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "input")]
    Input {
        title: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        placeholder: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "editor")]
    Editor {
        title: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        prefill: Option<&'a str>,
    },
    #[serde(rename = "notify")]
    Notify {
        message: &'a str,
        #[serde(rename = "notifyType", skip_serializing_if = "Option::is_none")]
        notify_type: Option<NotifyType>,
    },
    #[serde(rename = "setStatus")]
    SetStatus {
        #[serde(rename = "statusKey")]
        status_key: &'a str,
        #[serde(rename = "statusText", skip_serializing_if = "Option::is_none")]
        status_text: Option<&'a str>,
    },
    #[serde(rename = "setWidget")]
    SetWidget {
        #[serde(rename = "widgetKey")]
        widget_key: &'a str,
        #[serde(rename = "widgetLines", skip_serializing_if = "Option::is_none")]
        widget_lines: Option<&'a [String]>,
        #[serde(rename = "widgetPlacement", skip_serializing_if = "Option::is_none")]
        widget_placement: Option<WidgetPlacement>,
    },
    #[serde(rename = "setTitle")]
    SetTitle { title: &'a str },
    #[serde(rename = "set_editor_text")]
    SetEditorText { text: &'a str },
}

/// The record on the wire: `{"type":"extension_ui_request","id",...request}`.
#[derive(Serialize)]
struct Envelope<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
    #[serde(flatten)]
    request: Request<'a>,
}

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<UiResponse>>>>;

/// The UI context extensions get in RPC mode. Cloneable; all clones share the pending table.
#[derive(Clone)]
pub struct ExtensionUi {
    output: LineOutput,
    pending: Pending,
}

impl ExtensionUi {
    pub fn new(output: LineOutput) -> Self {
        Self {
            output,
            pending: Arc::default(),
        }
    }

    /// Ask the client to pick one of `options`; `None` on cancel, timeout or abort.
    pub async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String> {
        let timeout = millis(opts.timeout);
        self.dialog(
            Request::Select {
                title,
                options,
                timeout,
            },
            opts,
        )
        .await
        .and_then(|r| r.text_value())
    }

    /// Ask a yes/no question; false on cancel, timeout or abort.
    pub async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        let timeout = millis(opts.timeout);
        self.dialog(
            Request::Confirm {
                title,
                message,
                timeout,
            },
            opts,
        )
        .await
        .is_some_and(|r| r.confirmed())
    }

    /// Ask for one line of text; `None` on cancel, timeout or abort.
    pub async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String> {
        let timeout = millis(opts.timeout);
        self.dialog(
            Request::Input {
                title,
                placeholder,
                timeout,
            },
            opts,
        )
        .await
        .and_then(|r| r.text_value())
    }

    /// Ask for multi-line text. pi gives the editor no timeout and no cancel signal.
    pub async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        self.dialog(Request::Editor { title, prefill }, DialogOptions::default())
            .await
            .and_then(|r| r.text_value())
    }

    pub async fn notify(&self, message: &str, notify_type: Option<NotifyType>) {
        self.fire(Request::Notify { message, notify_type }).await;
    }

    /// `None` clears the status entry.
    pub async fn set_status(&self, key: &str, text: Option<&str>) {
        self.fire(Request::SetStatus {
            status_key: key,
            status_text: text,
        })
        .await;
    }

    /// Only string lines travel over RPC; `None` removes the widget.
    pub async fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>) {
        self.fire(Request::SetWidget {
            widget_key: key,
            widget_lines: lines,
            widget_placement: placement,
        })
        .await;
    }

    pub async fn set_title(&self, title: &str) {
        self.fire(Request::SetTitle { title }).await;
    }

    pub async fn set_editor_text(&self, text: &str) {
        self.fire(Request::SetEditorText { text }).await;
    }

    /// RPC has no paste; it becomes `set_editor_text`.
    pub async fn paste_to_editor(&self, text: &str) {
        self.set_editor_text(text).await;
    }

    /// Report an extension failure: `{"type":"extension_error","extensionPath","event","error"}`.
    pub async fn report_extension_error(&self, extension_path: &str, event: &str, error: &str) {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct ExtensionError<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            extension_path: &'a str,
            event: &'a str,
            error: &'a str,
        }
        let record = ExtensionError {
            kind: "extension_error",
            extension_path,
            event,
            error,
        };
        self.output.send(&record).await;
    }

    // What RPC cannot show. The terminal-only calls (`setWorkingMessage`, `setWorkingVisible`,
    // `setWorkingIndicator`, `setHiddenThinkingLabel`, `setFooter`, `setHeader`,
    // `setEditorComponent`, `setToolsExpanded`, `addAutocompleteProvider`, `onTerminalInput`,
    // widget factories) are no-ops the extension host need not forward here.

    /// The client keeps the editor; pi cannot read it synchronously.
    pub fn editor_text(&self) -> String {
        String::new()
    }

    pub fn tools_expanded(&self) -> bool {
        false
    }

    /// Custom components cannot cross the wire.
    pub fn custom(&self) -> Option<Value> {
        None
    }

    /// The answer pi gives `ctx.ui.setTheme()` in RPC mode.
    pub fn set_theme(&self) -> Result<(), String> {
        Err("Theme switching not supported in RPC mode".into())
    }

    /// Hand a client response to the dialog waiting for its id. Unknown ids are ignored.
    pub fn resolve(&self, response: UiResponse) {
        let Some(id) = response.id.as_deref() else { return };
        let waiter = self.pending.lock().ok().and_then(|mut p| p.remove(id));
        if let Some(tx) = waiter {
            // The dialog may have timed out in the meantime; then nobody listens.
            let _ = tx.send(response);
        }
    }

    /// Number of dialogs waiting for the client.
    pub fn pending_dialogs(&self) -> usize {
        self.pending.lock().map(|p| p.len()).unwrap_or(0)
    }

    async fn fire(&self, request: Request<'_>) {
        let id = uuid::Uuid::new_v4().to_string();
        self.output
            .send(&Envelope {
                kind: "extension_ui_request",
                id: &id,
                request,
            })
            .await;
    }

    async fn dialog(&self, request: Request<'_>, opts: DialogOptions) -> Option<UiResponse> {
        let cancel = opts.cancel.unwrap_or_default();
        if cancel.is_cancelled() {
            return None;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id.clone(), tx);
        }
        let _forget = Forget {
            pending: &self.pending,
            id: &id,
        };
        if !self
            .output
            .send(&Envelope {
                kind: "extension_ui_request",
                id: &id,
                request,
            })
            .await
        {
            return None;
        }
        // pi treats a zero timeout as none.
        let timeout = opts.timeout.filter(|t| !t.is_zero());
        let sleep = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = rx => answer.ok(),
            () = cancel.cancelled() => None,
            () = sleep => None,
        }
    }
}

/// Removes a dialog's id however the wait ends (answer, timeout, abort, or the caller dropping
/// the future).
struct Forget<'a> {
    pending: &'a Pending,
    id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(self.id);
        }
    }
}

fn millis(d: Option<Duration>) -> Option<u64> {
    d.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// RPC mode's `ctx.ui`: every call goes to the client.
#[async_trait::async_trait]
impl ExtensionUiHost for ExtensionUi {
    fn has_ui(&self) -> bool {
        true
    }
    async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String> {
        ExtensionUi::select(self, title, options, opts).await
    }
    async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        ExtensionUi::confirm(self, title, message, opts).await
    }
    async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String> {
        ExtensionUi::input(self, title, placeholder, opts).await
    }
    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        ExtensionUi::editor(self, title, prefill).await
    }
    async fn notify(&self, message: &str, notify_type: Option<NotifyType>) {
        ExtensionUi::notify(self, message, notify_type).await
    }
    async fn set_status(&self, key: &str, text: Option<&str>) {
        ExtensionUi::set_status(self, key, text).await
    }
    async fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>) {
        ExtensionUi::set_widget(self, key, lines, placement).await
    }
    async fn set_title(&self, title: &str) {
        ExtensionUi::set_title(self, title).await
    }
    async fn set_editor_text(&self, text: &str) {
        ExtensionUi::set_editor_text(self, text).await
    }
    fn editor_text(&self) -> String {
        ExtensionUi::editor_text(self)
    }
    async fn report_extension_error(&self, extension_path: &str, event: &str, error: &str) {
        ExtensionUi::report_extension_error(self, extension_path, event, error).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::output::LineWriter;
    use tokio::io::{AsyncBufReadExt, BufReader};
    use tokio_util::sync::CancellationToken;

    fn setup() -> (
        ExtensionUi,
        LineWriter,
        tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    ) {
        let (sink, read_side) = tokio::io::duplex(64 * 1024);
        let (output, writer) = LineWriter::spawn(sink);
        (ExtensionUi::new(output), writer, BufReader::new(read_side).lines())
    }

    async fn next_json(lines: &mut tokio::io::Lines<BufReader<tokio::io::DuplexStream>>) -> Value {
        let line = lines.next_line().await.expect("read").expect("a line");
        serde_json::from_str(&line).expect("json")
    }

    fn answer(id: &str, fields: Value) -> UiResponse {
        let mut map = fields.as_object().cloned().unwrap_or_default();
        map.insert("type".into(), "extension_ui_response".into());
        map.insert("id".into(), id.into());
        UiResponse::from_map(&map)
    }

    #[tokio::test]
    async fn select_sends_request_and_resolves_by_id() {
        let (ui, _writer, mut lines) = setup();
        let options = vec!["a".to_string(), "b".to_string()];
        let ui2 = ui.clone();
        let task = tokio::spawn(async move {
            let opts = DialogOptions {
                timeout: Some(Duration::from_millis(5000)),
                cancel: None,
            };
            ui2.select("Pick", &options, opts).await
        });
        let req = next_json(&mut lines).await;
        let id = req["id"].as_str().expect("id").to_string();
        let keys: Vec<&str> = req.as_object().expect("obj").keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "id", "method", "title", "options", "timeout"]);
        assert_eq!(req["method"], "select");
        assert_eq!(req["timeout"], 5000);
        ui.resolve(answer("not-this-one", serde_json::json!({"value": "a"})));
        ui.resolve(answer(&id, serde_json::json!({"value": "b"})));
        assert_eq!(task.await.expect("join"), Some("b".to_string()));
        assert_eq!(ui.pending_dialogs(), 0);
    }

    #[tokio::test]
    async fn confirm_cancelled_is_false_and_input_without_timeout_omits_it() {
        let (ui, _writer, mut lines) = setup();
        let ui2 = ui.clone();
        let task = tokio::spawn(async move { ui2.confirm("T", "sure?", DialogOptions::default()).await });
        let req = next_json(&mut lines).await;
        assert!(req.get("timeout").is_none());
        ui.resolve(answer(
            req["id"].as_str().expect("id"),
            serde_json::json!({"cancelled": true, "confirmed": true}),
        ));
        assert!(!task.await.expect("join"));

        let ui2 = ui.clone();
        let task = tokio::spawn(async move { ui2.confirm("T", "sure?", DialogOptions::default()).await });
        let req = next_json(&mut lines).await;
        ui.resolve(answer(
            req["id"].as_str().expect("id"),
            serde_json::json!({"confirmed": true}),
        ));
        assert!(task.await.expect("join"));
    }

    #[tokio::test(start_paused = true)]
    async fn timeout_resolves_with_default_and_forgets_the_id() {
        let (ui, _writer, mut lines) = setup();
        let ui2 = ui.clone();
        let task = tokio::spawn(async move {
            let opts = DialogOptions {
                timeout: Some(Duration::from_secs(3)),
                cancel: None,
            };
            ui2.input("Name", Some("who"), opts).await
        });
        let req = next_json(&mut lines).await;
        assert_eq!(req["placeholder"], "who");
        assert_eq!(task.await.expect("join"), None);
        assert_eq!(ui.pending_dialogs(), 0);
        // A late answer is ignored.
        ui.resolve(answer(
            req["id"].as_str().expect("id"),
            serde_json::json!({"value": "late"}),
        ));
    }

    #[tokio::test]
    async fn cancel_signal_resolves_with_default() {
        let (ui, _writer, mut lines) = setup();
        let token = CancellationToken::new();
        let ui2 = ui.clone();
        let t2 = token.clone();
        let task = tokio::spawn(async move {
            let opts = DialogOptions {
                timeout: None,
                cancel: Some(t2),
            };
            ui2.select("Pick", &["x".to_string()], opts).await
        });
        let _req = next_json(&mut lines).await;
        token.cancel();
        assert_eq!(task.await.expect("join"), None);
        // Already cancelled: nothing is sent at all.
        let opts = DialogOptions {
            timeout: None,
            cancel: Some(token),
        };
        assert_eq!(ui.select("Pick", &["x".to_string()], opts).await, None);
    }

    #[tokio::test]
    async fn extension_errors_are_pushed() {
        let (ui, _writer, mut lines) = setup();
        ui.report_extension_error("/x/ext.ts", "tool_call", "boom").await;
        let line = lines.next_line().await.expect("read").expect("line");
        assert_eq!(
            line,
            r#"{"type":"extension_error","extensionPath":"/x/ext.ts","event":"tool_call","error":"boom"}"#
        );
    }

    #[tokio::test]
    async fn fire_and_forget_shapes() {
        let (ui, _writer, mut lines) = setup();
        ui.notify("hi", Some(NotifyType::Warning)).await;
        ui.set_status("k", None).await;
        ui.set_widget("w", Some(&["l1".to_string()]), Some(WidgetPlacement::BelowEditor))
            .await;
        ui.set_title("t").await;
        ui.paste_to_editor("pasted").await;
        let expect: [(&str, &[&str]); 5] = [
            ("notify", &["message", "notifyType"]),
            ("setStatus", &["statusKey"]),
            ("setWidget", &["widgetKey", "widgetLines", "widgetPlacement"]),
            ("setTitle", &["title"]),
            ("set_editor_text", &["text"]),
        ];
        for (method, fields) in expect {
            let v = next_json(&mut lines).await;
            let keys: Vec<&str> = v.as_object().expect("obj").keys().map(String::as_str).collect();
            let mut want = vec!["type", "id", "method"];
            want.extend_from_slice(fields);
            assert_eq!(keys, want, "{method}");
            assert_eq!(v["method"], method);
            assert_eq!(v["type"], "extension_ui_request");
        }
    }
}
