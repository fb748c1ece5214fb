//! The UI an extension's `ctx.ui` talks to, independent of the mode: each mode implements
//! [`ExtensionUiHost`] (RPC forwards to its client as `extension_ui_request` records, print and
//! JSON mode answer with pi's headless defaults, the terminal UI shows real dialogs), and the
//! extension runner only ever sees the trait.
//!
//! The headless answers are pi's: dialogs resolve to their default at once (`select`/`input`/
//! `editor` to nothing, `confirm` to false), status, widgets, title and notifications go
//! nowhere, and `has_ui` is false so extensions can tell.

use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

/// Severity of a `notify` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyType {
    Info,
    Warning,
    Error,
}

/// Where a widget goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum WidgetPlacement {
    AboveEditor,
    BelowEditor,
}

/// Options of a dialog: a timeout and a cancel signal. Either resolves the dialog with its
/// default.
#[derive(Debug, Clone, Default)]
pub struct DialogOptions {
    pub timeout: Option<Duration>,
    pub cancel: Option<CancellationToken>,
}

/// `ctx.ui` as a mode provides it.
#[async_trait]
pub trait ExtensionUiHost: Send + Sync {
    /// `ctx.hasUI`: whether dialogs can be answered by a person.
    fn has_ui(&self) -> bool;
    /// Pick one of `options`; `None` on cancel, timeout or abort.
    async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String>;
    /// A yes/no question; false on cancel, timeout or abort.
    async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool;
    /// One line of text; `None` on cancel, timeout or abort.
    async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String>;
    /// Multi-line text; `None` on cancel.
    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String>;
    async fn notify(&self, message: &str, notify_type: Option<NotifyType>);
    /// `None` clears the entry.
    async fn set_status(&self, key: &str, text: Option<&str>);
    /// `None` removes the widget.
    async fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>);
    async fn set_title(&self, title: &str);
    async fn set_editor_text(&self, text: &str);
    /// The editor's text as the mode knows it (empty where the mode has no editor).
    fn editor_text(&self) -> String;
    /// Report an extension failure where the mode reports them (pi's error sinks).
    async fn report_extension_error(&self, extension_path: &str, event: &str, error: &str);
    /// One of the host's screen notifications (`ui.setWidgetComponent`, `ui.setHeader`,
    /// `ui.setFooter`, `ui.custom`, `ui.requestRender`, ...): components extensions draw,
    /// which only the terminal UI shows.
    async fn screen_notification(&self, method: &str, params: &serde_json::Value) {
        let _ = (method, params);
    }
    /// An extension command replaced the session (`ctx.newSession`, `fork`, `switchSession`,
    /// `reload`): a mode that shows the conversation draws the new one, with `notice` and the
    /// editor text a fork restores.
    async fn session_replaced(&self, notice: Option<&str>, editor_text: Option<&str>) {
        let _ = (notice, editor_text);
    }
    /// An extension command's `ctx.reload()` started (`true`) or failed (`false`): a mode
    /// with a screen shows the same "Reloading ..." notice as its own `/reload` meanwhile (a
    /// finished reload ends it through [`Self::session_replaced`]).
    async fn reloading(&self, on: bool) {
        let _ = on;
    }
    /// An extension command's `ctx.reload()` could not run (a reply is streaming) or failed,
    /// with `message` saying why (`error`: it failed). A mode with a screen shows it there and
    /// returns `true`, and the call then resolves as pi's interactive mode resolves it; the
    /// others return `false` and the call rejects with `message`.
    async fn reload_refused(&self, message: &str, error: bool) -> bool {
        let _ = (message, error);
        false
    }
    /// The concrete UI, for a mode that takes over from the one it set up first.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// Print and JSON mode: no person to ask. Extension errors go to stderr as pi prints them.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadlessUi;

#[async_trait]
impl ExtensionUiHost for HeadlessUi {
    fn has_ui(&self) -> bool {
        false
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
    async fn notify(&self, _message: &str, _notify_type: Option<NotifyType>) {}
    async fn set_status(&self, _key: &str, _text: Option<&str>) {}
    async fn set_widget(&self, _key: &str, _lines: Option<&[String]>, _placement: Option<WidgetPlacement>) {}
    async fn set_title(&self, _title: &str) {}
    async fn set_editor_text(&self, _text: &str) {}
    fn editor_text(&self) -> String {
        String::new()
    }
    async fn report_extension_error(&self, extension_path: &str, _event: &str, error: &str) {
        let line = headless_error_line(extension_path, error);
        // stderr is the sink pi uses in print and JSON mode; stdout carries the answer.
        tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{line}");
        })
        .await
        .ok();
    }
}

/// pi's print/JSON error line: `Extension error (<path>): <message>`.
pub fn headless_error_line(extension_path: &str, error: &str) -> String {
    format!("Extension error ({extension_path}): {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn headless_dialogs_answer_their_defaults_at_once() {
        let ui: &dyn ExtensionUiHost = &HeadlessUi;
        assert!(!ui.has_ui());
        assert_eq!(ui.select("t", &["a".into()], DialogOptions::default()).await, None);
        assert!(!ui.confirm("t", "m", DialogOptions::default()).await);
        assert_eq!(ui.input("t", None, DialogOptions::default()).await, None);
        assert_eq!(ui.editor("t", Some("x")).await, None);
        assert_eq!(ui.editor_text(), "");
    }

    #[test]
    fn the_headless_error_line_is_pis() {
        assert_eq!(
            headless_error_line("/p/ext.ts", "boom"),
            "Extension error (/p/ext.ts): boom"
        );
    }
}
