//! What extensions show in RPC mode before the RPC server is up (the `session_start` handlers
//! of startup run first): kept in order and handed to the server's UI once the mode sets it,
//! so the client gets them as its first records, as pi 1.6's client does.

use std::sync::Mutex;

use async_trait::async_trait;

use crate::extension_ui::{DialogOptions, ExtensionUiHost, NotifyType, WidgetPlacement};
use crate::session::agent_session::lock;

/// One call made before the server's UI was there.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    Notify(String, Option<NotifyType>),
    Status(String, Option<String>),
    Widget(String, Option<Vec<String>>, Option<WidgetPlacement>),
    Title(String),
    EditorText(String),
    Error(String, String, String),
}

/// The RPC mode's UI until the server's own is set ([`super::ExtensionSlot::set_ui`] hands
/// over what it kept). Dialogs asked this early answer their defaults.
#[derive(Debug, Default)]
pub struct EarlyRpcUi {
    calls: Mutex<Vec<Call>>,
}

impl EarlyRpcUi {
    fn push(&self, call: Call) {
        lock(&self.calls).push(call);
    }

    /// Give what was kept to `ui`, in order.
    pub async fn hand_over(&self, ui: &dyn ExtensionUiHost) {
        let calls = std::mem::take(&mut *lock(&self.calls));
        for call in calls {
            match call {
                Call::Notify(message, kind) => ui.notify(&message, kind).await,
                Call::Status(key, text) => ui.set_status(&key, text.as_deref()).await,
                Call::Widget(key, lines, placement) => ui.set_widget(&key, lines.as_deref(), placement).await,
                Call::Title(title) => ui.set_title(&title).await,
                Call::EditorText(text) => ui.set_editor_text(&text).await,
                Call::Error(path, event, error) => ui.report_extension_error(&path, &event, &error).await,
            }
        }
    }
}

#[async_trait]
impl ExtensionUiHost for EarlyRpcUi {
    fn has_ui(&self) -> bool {
        true
    }
    async fn select(&self, _title: &str, _options: &[String], _opts: DialogOptions) -> Option<String> {
        None
    }
    async fn confirm(&self, _title: &str, _message: &str, _opts: DialogOptions) -> bool {
        false
    }
    async fn input(&self, _title: &str, _placeholder: Option<&str>, _opts: DialogOptions) -> Option<String> {
        None
    }
    async fn editor(&self, _title: &str, _prefill: Option<&str>) -> Option<String> {
        None
    }
    async fn notify(&self, message: &str, notify_type: Option<NotifyType>) {
        self.push(Call::Notify(message.to_string(), notify_type));
    }
    async fn set_status(&self, key: &str, text: Option<&str>) {
        self.push(Call::Status(key.to_string(), text.map(str::to_string)));
    }
    async fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>) {
        self.push(Call::Widget(key.to_string(), lines.map(<[String]>::to_vec), placement));
    }
    async fn set_title(&self, title: &str) {
        self.push(Call::Title(title.to_string()));
    }
    async fn set_editor_text(&self, text: &str) {
        self.push(Call::EditorText(text.to_string()));
    }
    fn editor_text(&self) -> String {
        String::new()
    }
    async fn report_extension_error(&self, extension_path: &str, event: &str, error: &str) {
        self.push(Call::Error(
            extension_path.to_string(),
            event.to_string(),
            error.to_string(),
        ));
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}
