//! `ctx.ui` in the terminal UI: each call becomes effects on the UI thread, sent through the
//! app's channel as a continuation. Dialogs are overlays whose result comes back to the
//! waiting extension through a one-shot channel; a timeout or the cancel signal resolves
//! them with their default, as pi does.

use async_trait::async_trait;
use pi_tui::components::SelectItem;
use tokio::sync::oneshot;

use super::dialogs::Dialog;
use super::effect::{notice, Ctx, Effect, Overlay, Picker};
use super::events::{Msg, UiSender};
use crate::extension_ui::{DialogOptions, ExtensionUiHost, NotifyType, WidgetPlacement};

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

    /// Show the dialog `make` builds and wait for its result, its timeout or its cancel.
    async fn dialog(
        &self,
        opts: DialogOptions,
        make: impl FnOnce(&Ctx<'_>) -> Dialog + Send + 'static,
    ) -> Option<String> {
        let (done, result) = oneshot::channel::<Option<String>>();
        let shown = self
            .on_ui(move |cx| {
                vec![Effect::Open(Overlay {
                    view: Box::new(make(cx)),
                    picker: Picker::Custom(Box::new(move |_, value| {
                        let _ = done.send(value);
                        Vec::new()
                    })),
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
        let timed_out = async {
            match opts.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        // A dialog left open after its timeout stays on screen until answered; its answer
        // then goes nowhere (the extension already has its default).
        tokio::select! {
            r = result => r.ok().flatten(),
            _ = cancelled => None,
            _ = timed_out => None,
        }
    }
}

#[async_trait]
impl ExtensionUiHost for InteractiveUi {
    fn has_ui(&self) -> bool {
        true
    }

    async fn select(&self, title: &str, options: &[String], opts: DialogOptions) -> Option<String> {
        let title = title.to_string();
        let items: Vec<SelectItem> = options.iter().map(|o| SelectItem::new(o.clone())).collect();
        self.dialog(opts, move |cx| Dialog::choice(title, items, false, cx.theme.clone()))
            .await
    }

    async fn confirm(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        let title = if message.is_empty() {
            title.to_string()
        } else {
            format!("{title}\n{message}")
        };
        let items = vec![SelectItem::new("Yes"), SelectItem::new("No")];
        self.dialog(opts, move |cx| Dialog::choice(title, items, false, cx.theme.clone()))
            .await
            .is_some_and(|v| v == "Yes")
    }

    async fn input(&self, title: &str, placeholder: Option<&str>, opts: DialogOptions) -> Option<String> {
        let title = title.to_string();
        let message = placeholder.unwrap_or_default().to_string();
        self.dialog(opts, move |cx| Dialog::prompt(title, message, "", cx.theme.clone()))
            .await
    }

    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        let title = title.to_string();
        let prefill = prefill.unwrap_or_default().to_string();
        self.dialog(DialogOptions::default(), move |cx| {
            Dialog::prompt(title, "", &prefill, cx.theme.clone())
        })
        .await
    }

    async fn notify(&self, message: &str, notify_type: Option<NotifyType>) {
        let style = match notify_type {
            Some(NotifyType::Error) => "error",
            Some(NotifyType::Warning) => "warning",
            _ => "dim",
        };
        let text = message.to_string();
        self.on_ui(move |_| vec![notice(text, style)]).await;
    }

    async fn set_status(&self, _key: &str, text: Option<&str>) {
        let text = text.map(str::to_string);
        self.on_ui(move |_| vec![Effect::Status(text)]).await;
    }

    // Widgets, the title and the editor text need the app's extension slots, which the
    // terminal UI does not have yet; they are accepted and not shown.
    async fn set_widget(&self, _key: &str, _lines: Option<&[String]>, _placement: Option<WidgetPlacement>) {}

    async fn set_title(&self, _title: &str) {}

    async fn set_editor_text(&self, _text: &str) {}

    fn editor_text(&self) -> String {
        String::new()
    }

    async fn report_extension_error(&self, extension_path: &str, _event: &str, error: &str) {
        let text = format!("Extension \"{extension_path}\" error: {error}");
        self.on_ui(move |_| vec![notice(text, "error")]).await;
    }
}
