//! What extensions show before a mode's UI is up (the `session_start` handlers of startup run
//! first): kept in order for the terminal UI or the RPC server to take once it exists, so a
//! status, widget or notice set that early is not lost. Dialogs asked this early answer their
//! defaults, as nobody can see them yet.

use std::sync::Mutex;

use async_trait::async_trait;

use crate::extension_ui::{DialogOptions, ExtensionUiHost, NotifyType, WidgetPlacement};
use crate::session::agent_session::lock;

/// One call made before the mode's UI was there.
#[derive(Debug, Clone, PartialEq)]
pub enum EarlyCall {
    Notify(String, Option<NotifyType>),
    Status(String, Option<String>),
    Widget(String, Option<Vec<String>>, Option<WidgetPlacement>),
    Title(String),
    EditorText(String),
    /// An extension failure: its path, the event and the error.
    Error(String, String, String),
    /// A host screen notification (components extensions draw): its method and parameters.
    Screen(String, serde_json::Value),
}

/// The UI of a mode until the mode's own is set. The terminal UI applies what it kept with
/// [`EarlyUi::take`]; the RPC server gets it through [`EarlyUi::hand_over`]
/// ([`super::ExtensionSlot::take_over_ui`]).
#[derive(Debug, Default)]
pub struct EarlyUi {
    calls: Mutex<Vec<EarlyCall>>,
}

impl EarlyUi {
    fn push(&self, call: EarlyCall) {
        lock(&self.calls).push(call);
    }

    /// What was shown so far, in order; the list is empty afterwards.
    pub fn take(&self) -> Vec<EarlyCall> {
        std::mem::take(&mut *lock(&self.calls))
    }

    /// Give what was kept to `ui`, in order.
    pub async fn hand_over(&self, ui: &dyn ExtensionUiHost) {
        for call in self.take() {
            match call {
                EarlyCall::Notify(message, kind) => ui.notify(&message, kind).await,
                EarlyCall::Status(key, text) => ui.set_status(&key, text.as_deref()).await,
                EarlyCall::Widget(key, lines, placement) => ui.set_widget(&key, lines.as_deref(), placement).await,
                EarlyCall::Title(title) => ui.set_title(&title).await,
                EarlyCall::EditorText(text) => ui.set_editor_text(&text).await,
                EarlyCall::Error(path, event, error) => ui.report_extension_error(&path, &event, &error).await,
                EarlyCall::Screen(method, params) => ui.screen_notification(&method, &params).await,
            }
        }
    }
}

#[async_trait]
impl ExtensionUiHost for EarlyUi {
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
        self.push(EarlyCall::Notify(message.to_string(), notify_type));
    }
    async fn set_status(&self, key: &str, text: Option<&str>) {
        self.push(EarlyCall::Status(key.to_string(), text.map(str::to_string)));
    }
    async fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>) {
        self.push(EarlyCall::Widget(
            key.to_string(),
            lines.map(<[String]>::to_vec),
            placement,
        ));
    }
    async fn set_title(&self, title: &str) {
        self.push(EarlyCall::Title(title.to_string()));
    }
    async fn set_editor_text(&self, text: &str) {
        self.push(EarlyCall::EditorText(text.to_string()));
    }
    fn editor_text(&self) -> String {
        String::new()
    }
    async fn report_extension_error(&self, extension_path: &str, event: &str, error: &str) {
        self.push(EarlyCall::Error(
            extension_path.to_string(),
            event.to_string(),
            error.to_string(),
        ));
    }
    async fn screen_notification(&self, method: &str, params: &serde_json::Value) {
        self.push(EarlyCall::Screen(method.to_string(), params.clone()));
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UI that writes down what reaches it, to compare with what was kept.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    #[async_trait]
    impl ExtensionUiHost for Recorder {
        fn has_ui(&self) -> bool {
            true
        }
        async fn select(&self, _: &str, _: &[String], _: DialogOptions) -> Option<String> {
            None
        }
        async fn confirm(&self, _: &str, _: &str, _: DialogOptions) -> bool {
            false
        }
        async fn input(&self, _: &str, _: Option<&str>, _: DialogOptions) -> Option<String> {
            None
        }
        async fn editor(&self, _: &str, _: Option<&str>) -> Option<String> {
            None
        }
        async fn notify(&self, message: &str, _: Option<NotifyType>) {
            lock(&self.0).push(format!("notify {message}"));
        }
        async fn set_status(&self, key: &str, text: Option<&str>) {
            lock(&self.0).push(format!("status {key}={text:?}"));
        }
        async fn set_widget(&self, key: &str, lines: Option<&[String]>, _: Option<WidgetPlacement>) {
            lock(&self.0).push(format!("widget {key} {lines:?}"));
        }
        async fn set_title(&self, title: &str) {
            lock(&self.0).push(format!("title {title}"));
        }
        async fn set_editor_text(&self, text: &str) {
            lock(&self.0).push(format!("editor {text}"));
        }
        fn editor_text(&self) -> String {
            String::new()
        }
        async fn report_extension_error(&self, path: &str, event: &str, error: &str) {
            lock(&self.0).push(format!("error {path} {event} {error}"));
        }
        async fn screen_notification(&self, method: &str, _: &serde_json::Value) {
            lock(&self.0).push(format!("screen {method}"));
        }
    }

    #[tokio::test]
    async fn what_was_shown_early_reaches_the_real_ui_in_order_once() {
        let early = EarlyUi::default();
        early.set_status("k", Some("on")).await;
        early.notify("hello", Some(NotifyType::Info)).await;
        early
            .screen_notification("ui.setHeader", &serde_json::json!({"id": 1}))
            .await;
        early.report_extension_error("/x.ts", "session_start", "boom").await;
        early.set_title("t").await;
        assert!(!early.confirm("sure?", "", DialogOptions::default()).await);

        let ui = Recorder::default();
        early.hand_over(&ui).await;
        assert_eq!(
            *lock(&ui.0),
            [
                "status k=Some(\"on\")",
                "notify hello",
                "screen ui.setHeader",
                "error /x.ts session_start boom",
                "title t"
            ]
        );
        // Handed over once: a second hand-over has nothing left.
        early.hand_over(&ui).await;
        assert_eq!(lock(&ui.0).len(), 5);
        assert!(early.take().is_empty());
    }
}
