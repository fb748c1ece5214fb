//! `ctx.ui` in the terminal UI: each call becomes effects on the UI thread, sent through the
//! app's channel as a continuation. Dialogs are overlays whose result comes back to the
//! waiting extension through a one-shot channel; a timeout or the cancel signal resolves
//! them with their default, as pi does. What extensions draw themselves (widgets, header,
//! footer, custom components) is kept in [`screen::ExtensionScreen`]; keys go to their
//! components as terminal bytes ([`keys`]).

pub mod autocomplete;
pub mod issues;
pub mod keys;
pub mod message_block;
pub mod screen;
pub mod shortcuts;
pub mod slash;
pub use pi_coding_agent::theme_colors;
pub mod themes;
pub mod tool_render;
pub mod working;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pi_tui::components::SelectItem;
use tokio::sync::oneshot;

use super::dialogs::{countdown_length, Dialog};
use super::effect::{notice, Ctx, Effect, Overlay, Picker};
use super::events::{Msg, UiSender};
use pi_coding_agent::extension_ui::{DialogOptions, ExtensionUiHost, NotifyType, WidgetPlacement};
use screen::ScreenChange;

/// The terminal UI's `ctx.ui`. Cheap to clone; every clone talks to the same app.
#[derive(Clone)]
pub struct InteractiveUi {
    tx: UiSender,
}

impl InteractiveUi {
    pub fn new(tx: UiSender) -> Self {
        InteractiveUi { tx }
    }

    /// Run `make` on the UI thread (with a fresh context) and apply the effects it returns.
    async fn on_ui(&self, make: impl FnOnce(&Ctx<'_>) -> Vec<Effect> + Send + 'static) -> bool {
        self.tx.send(Msg::Then(Box::new(make))).await
    }

    /// Apply a change to the extension screen on the UI thread.
    async fn change(&self, change: ScreenChange) {
        self.on_ui(move |_| vec![Effect::Extension(change)]).await;
    }

    /// Show the dialog `make` builds and wait for its result, its timeout or its cancel.
    /// `kind` and `title` are what the program status reports while it waits. A timed
    /// dialog counts down in its title each second and closes when the count ends, as pi
    /// 1.6's do; a cancelled one closes at once. Either way the extension gets the default.
    async fn dialog(
        &self,
        opts: DialogOptions,
        kind: &'static str,
        title: String,
        make: impl FnOnce(&Ctx<'_>) -> Dialog + Send + 'static,
    ) -> Option<String> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let timeout = opts.timeout.filter(|t| !t.is_zero()).map(countdown_length);
        let opened = Instant::now();
        let (done, result) = oneshot::channel::<Option<String>>();
        let shown = self
            .on_ui(move |cx| {
                let mut view = make(cx);
                if let Some(length) = timeout {
                    view = view.counting_down(opened + length);
                }
                vec![Effect::Open(Overlay {
                    view: Box::new(view),
                    picker: Picker::Asking {
                        id,
                        kind,
                        title,
                        on_result: Box::new(move |_, value| {
                            let _ = done.send(value);
                            Vec::new()
                        }),
                    },
                })]
            })
            .await;
        if !shown {
            return None;
        }
        let cancelled = async {
            match &opts.cancel {
                Some(c) => c.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let tx = self.tx.clone();
        let timed_out = async move {
            let Some(length) = timeout else {
                return std::future::pending().await;
            };
            // A frame each second draws the count anew.
            let end = tokio::time::Instant::from_std(opened + length);
            let mut tick = tokio::time::interval_at(
                tokio::time::Instant::from_std(opened) + Duration::from_secs(1),
                Duration::from_secs(1),
            );
            loop {
                let at = tick.tick().await;
                if at >= end {
                    return;
                }
                tx.send(Msg::Then(Box::new(|_| Vec::new()))).await;
            }
        };
        tokio::select! {
            r = result => r.ok().flatten(),
            _ = cancelled => {
                self.on_ui(move |_| vec![Effect::CloseAsking(id)]).await;
                None
            }
            _ = timed_out => {
                self.on_ui(move |_| vec![Effect::CloseAsking(id)]).await;
                None
            }
        }
    }
}

#[async_trait]
impl ExtensionUiHost for InteractiveUi {
    fn has_ui(&self) -> bool {
        true
    }

    /// Drawn as pi's own selector prompts are (`Dialog::selector`); `confirm` is the same
    /// selector with the message as a second title line and Yes/No.
    async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String> {
        let title = title.to_string();
        let items: Vec<SelectItem> = options.iter().map(|o| SelectItem::new(o.clone())).collect();
        self.dialog(opts, "question", title.clone(), move |cx| {
            Dialog::selector(title, items, cx.theme.clone())
        })
        .await
    }

    async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        let shown = if message.is_empty() {
            title.to_string()
        } else {
            format!("{title}\n{message}")
        };
        let items = vec![SelectItem::new("Yes"), SelectItem::new("No")];
        // pi 1.6 reports a confirm as asking for permission, named by its title alone.
        self.dialog(opts, "permission", title.to_string(), move |cx| {
            Dialog::selector(shown, items, cx.theme.clone())
        })
        .await
        .is_some_and(|v| v == "Yes")
    }

    async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String> {
        let title = title.to_string();
        let message = placeholder.unwrap_or_default().to_string();
        self.dialog(opts, "question", title.clone(), move |cx| {
            Dialog::prompt(title, message, "", cx.theme.clone())
        })
        .await
    }

    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        let title = title.to_string();
        let prefill = prefill.unwrap_or_default().to_string();
        self.dialog(DialogOptions::default(), "question", title.clone(), move |cx| {
            Dialog::prompt(title, "", &prefill, cx.theme.clone())
        })
        .await
    }

    async fn notify(&self, message: &str, notify_type: Option<NotifyType>) {
        let style = notice_style(notify_type);
        let text = message.to_string();
        self.on_ui(move |_| vec![notify_effect(text, style)]).await;
    }

    async fn set_status(&self, key: &str, text: Option<&str>) {
        self.change(ScreenChange::Status {
            key: key.to_string(),
            text: text.map(str::to_string),
        })
        .await;
    }

    async fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<WidgetPlacement>) {
        self.change(ScreenChange::WidgetLines {
            key: key.to_string(),
            lines: lines.map(<[String]>::to_vec),
            below: placement == Some(WidgetPlacement::BelowEditor),
        })
        .await;
    }

    async fn set_title(&self, title: &str) {
        self.change(ScreenChange::Title(title.to_string())).await;
    }

    async fn set_editor_text(&self, text: &str) {
        self.change(ScreenChange::EditorText(text.to_string())).await;
    }

    /// The host's mirror has the editor's text (the app pushes it as it changes).
    fn editor_text(&self) -> String {
        String::new()
    }

    async fn screen_notification(&self, method: &str, params: &serde_json::Value) {
        if method == "ui.setTheme" {
            let Some(name) = params.get("name").and_then(serde_json::Value::as_str) else {
                return;
            };
            let name = name.to_string();
            let persist = params.get("persist").and_then(serde_json::Value::as_bool) == Some(true);
            self.on_ui(move |cx| themes::set_theme_effects(cx, name, persist)).await;
            return;
        }
        if let Some(change) = ScreenChange::from_notification(method, params) {
            self.change(change).await;
        }
    }

    async fn report_extension_error(&self, extension_path: &str, _event: &str, error: &str) {
        let text = extension_error_text(extension_path, error);
        self.on_ui(move |_| vec![notice(text, "error")]).await;
    }

    async fn reloading(&self, on: bool) {
        self.on_ui(move |_| vec![Effect::Reloading(on)]).await;
    }

    /// As pi 1.6's `/reload`: a warning or an error in the chat, and `ctx.reload()` resolves.
    async fn reload_refused(&self, message: &str, error: bool) -> bool {
        let text = message.to_string();
        let style = if error { "error" } else { "warning" };
        self.on_ui(move |_| vec![notice(text, style)]).await;
        true
    }

    async fn session_replaced(&self, notice: Option<&str>, editor_text: Option<&str>) {
        let notice = notice.map(str::to_string);
        let editor_text = editor_text.map(str::to_string);
        // As after the app's own /new or /fork: the chat is rebuilt from the new session.
        self.on_ui(move |_| vec![Effect::Replaced { notice, editor_text }])
            .await;
    }
}

/// An error or a warning is a chat line of its own; anything else is shown as pi's status
/// line, which the next status line right after it replaces (as pi 1.6 shows `info`).
fn notify_effect(text: String, style: &'static str) -> Effect {
    if style == "dim" {
        Effect::StatusLine(text)
    } else {
        notice(text, style)
    }
}

pub(super) fn notice_style(notify_type: Option<NotifyType>) -> &'static str {
    match notify_type {
        Some(NotifyType::Error) => "error",
        Some(NotifyType::Warning) => "warning",
        _ => "dim",
    }
}

pub(super) fn extension_error_text(extension_path: &str, error: &str) -> String {
    format!("Extension \"{extension_path}\" error: {error}")
}
