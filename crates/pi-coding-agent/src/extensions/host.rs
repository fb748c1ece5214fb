//! pi's side of the host's calls ([`HostHandler`]): dialogs through the mode's
//! [`ExtensionUiHost`], pi's own built-in tools for `createBashTool()` and friends, and the
//! fire-and-forget notifications, which arrive on the socket reader task and are queued to a
//! task of their own here.
//!
//! The queue is bounded: an extension that sends notifications faster than pi applies them
//! loses the excess, and pi says how many were dropped. The reader never waits on the queue:
//! applying a notification may itself wait for the host's answers, which that reader reads.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_extensions::{ExtensionError, HostHandler, OutputStream};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::ExtensionSlot;
use crate::extension_ui::{DialogOptions, NotifyType, WidgetPlacement};
use crate::session::agent_session::lock;

enum Queued {
    Notification(String, Value),
    Error(ExtensionError),
    /// Answered once everything queued before it is applied.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

tokio::task_local! {
    /// Set on the task that applies notifications, which must never wait for itself.
    static APPLYING: ();
}

/// Waits until the notifications the host sent so far are applied: the host writes its
/// actions before the answer to the event that caused them, so after an answer this makes
/// them take effect before pi goes on (as pi applies them at once).
#[derive(Clone)]
pub struct NotificationBarrier(mpsc::Sender<Queued>);

impl NotificationBarrier {
    pub async fn wait(&self) {
        if APPLYING.try_with(|_| ()).is_ok() {
            return;
        }
        let (done, applied) = tokio::sync::oneshot::channel();
        if self.0.send(Queued::Barrier(done)).await.is_ok() {
            let _ = applied.await;
        }
    }
}

/// How many dialogs are open, and the outermost one's kind and title.
#[derive(Default)]
struct OpenPrompts {
    depth: usize,
    outer: Option<(String, Option<String>)>,
}

/// Notifications that may wait to be applied; more are dropped (and counted).
pub const MAX_QUEUED_NOTIFICATIONS: usize = 4096;

/// The error reported once notifications were dropped.
fn dropped_error(dropped: u64) -> ExtensionError {
    ExtensionError {
        extension_path: "<host>".to_string(),
        event: "notification".to_string(),
        error: format!(
            "{dropped} extension notification(s) dropped: more than {MAX_QUEUED_NOTIFICATIONS} were waiting to be applied"
        ),
        stack: None,
    }
}

/// Answers the host for one pi process.
pub struct HostBridge {
    slot: Weak<ExtensionSlot>,
    cwd: PathBuf,
    tools: pi_tools::ToolsOptions,
    queue: mpsc::Sender<Queued>,
    /// Notifications dropped since the last report.
    dropped: Arc<AtomicU64>,
    /// The dialogs open now (`ui_prompt_start/end` coalesce nested ones).
    prompt: std::sync::Mutex<OpenPrompts>,
    /// Where extension output may go: not onto the terminal UI's screen.
    mode: pi_extensions::Mode,
    /// The `ctx.modelRegistry` requests running now, by the host's stream id, so that
    /// `models.cancel` can stop them.
    model_requests: super::model_requests::Running,
}

fn arg(params: &Value, index: usize) -> Option<&Value> {
    params.get("args").and_then(Value::as_array).and_then(|a| a.get(index))
}

fn arg_str(params: &Value, index: usize) -> Option<&str> {
    arg(params, index).and_then(Value::as_str)
}

/// Dialogs an extension may still abort with its `signal`, by the id the host gave them
/// (the host sends `ui.cancelDialog` with it when the signal fires).
fn abortable() -> &'static std::sync::Mutex<std::collections::HashMap<String, CancellationToken>> {
    static DIALOGS: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, CancellationToken>>> =
        std::sync::OnceLock::new();
    DIALOGS.get_or_init(Default::default)
}

/// Forgets an abortable dialog once it is answered.
struct Abortable(Option<String>);

impl Drop for Abortable {
    fn drop(&mut self) {
        if let Some(id) = self.0.take() {
            lock(abortable()).remove(&id);
        }
    }
}

/// The options of a dialog request (`timeout`; `dialogId` when the extension gave a signal),
/// and what keeps it abortable until it is answered.
fn dialog_options(params: &Value, index: usize) -> (DialogOptions, Abortable) {
    let opts = arg(params, index);
    let id = opts.and_then(|o| o.get("dialogId")).and_then(Value::as_str);
    let cancel = id.map(|id| {
        let token = CancellationToken::new();
        lock(abortable()).insert(id.to_string(), token.clone());
        token
    });
    let options = DialogOptions {
        timeout: opts
            .and_then(|o| o.get("timeout"))
            .and_then(Value::as_u64)
            .map(std::time::Duration::from_millis),
        cancel,
    };
    (options, Abortable(id.map(str::to_string)))
}

/// The extension's signal aborted a dialog: it closes with its default.
fn cancel_dialog(params: &Value) {
    let Some(id) = params.get("dialogId").and_then(Value::as_str) else {
        return;
    };
    if let Some(token) = lock(abortable()).remove(id) {
        token.cancel();
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
        let (queue, mut queued) = mpsc::channel::<Queued>(MAX_QUEUED_NOTIFICATIONS);
        let dropped = Arc::new(AtomicU64::new(0));
        let weak = Arc::downgrade(slot);
        let dropped_seen = Arc::clone(&dropped);
        slot.set_notification_barrier(NotificationBarrier(queue.clone()));
        tokio::spawn(APPLYING.scope((), async move {
            while let Some(item) = queued.recv().await {
                let Some(slot) = weak.upgrade() else { break };
                match item {
                    Queued::Error(error) => slot.report(vec![error]).await,
                    Queued::Notification(method, params) => apply_notification(&slot, &method, &params).await,
                    Queued::Barrier(done) => {
                        let _ = done.send(());
                    }
                }
                let lost = dropped_seen.swap(0, Ordering::Relaxed);
                if lost > 0 {
                    slot.report(vec![dropped_error(lost)]).await;
                }
            }
        }));
        Arc::new(HostBridge {
            slot: Arc::downgrade(slot),
            cwd,
            tools,
            queue,
            dropped,
            prompt: std::sync::Mutex::new(OpenPrompts::default()),
            mode,
            model_requests: Default::default(),
        })
    }

    /// Queue `item` without waiting; a full queue drops it and counts the loss.
    fn enqueue(&self, item: Queued) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.queue.try_send(item) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
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
        "ui.cancelDialog" => cancel_dialog(params),
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
        method if method.starts_with("ui.") => ui.screen_notification(method, params).await,
        method if method.starts_with("pi.") || method == "registrations.changed" => {
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
        // The mode decides when: RPC once idle, print mode never (it ends by itself).
        "ctx.shutdown" => slot.request_shutdown(),
        // `pi.registerMcpServer` / `unregisterMcpServer` after binding.
        "mcp.serversChanged" => {
            let servers: Vec<pi_extensions::RegisteredMcpServer> = params
                .get("servers")
                .cloned()
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default();
            if let Some(session) = slot.session() {
                super::mcp_servers::take_up(slot, &session, &servers).await;
            }
        }
        _ => {}
    }
}

#[async_trait]
impl HostHandler for HostBridge {
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let Some(kind) = prompt_kind(method).filter(|_| self.announces_prompts()) else {
            return self.answer(method, params).await;
        };
        let title = arg_str(&params, 0).map(str::to_string);
        self.prompt_event(true, kind, title.as_deref()).await;
        let answer = self.answer(method, params).await;
        self.prompt_event(false, kind, title.as_deref()).await;
        answer
    }

    fn notification(&self, method: &str, params: Value) {
        // A cancel must not wait behind queued actions: the request it stops is running now.
        if method == "models.cancel" {
            self.model_requests.cancel(&params);
            return;
        }
        // A sign-in's screen is not an action of the session: it shows at once.
        if method == "oauth.notify" {
            if let Some(slot) = self.slot.upgrade() {
                super::oauth_login::notify(&slot, &params);
            }
            return;
        }
        self.enqueue(Queued::Notification(method.to_string(), params));
    }

    fn extension_error(&self, error: ExtensionError) {
        self.enqueue(Queued::Error(error));
    }

    fn output(&self, _stream: OutputStream, line: &str) {
        // The terminal UI owns the screen: a stray line would break its frame.
        if self.mode == pi_extensions::Mode::Tui {
            return;
        }
        // stdout belongs to pi's own output in every non-interactive mode: extension output
        // goes to stderr, as pi redirects it, byte for byte as printed.
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
    }
}

/// The `kind` of `ui_prompt_start/end` for a dialog request.
fn prompt_kind(method: &str) -> Option<&'static str> {
    Some(match method {
        "ui.select" => "select",
        "ui.confirm" => "confirm",
        "ui.input" => "input",
        "ui.editor" => "editor",
        "ui.custom" => "custom",
        _ => return None,
    })
}

impl HostBridge {
    /// pi announces dialogs only where a person answers them (the terminal UI and RPC).
    fn announces_prompts(&self) -> bool {
        matches!(self.mode, pi_extensions::Mode::Tui | pi_extensions::Mode::Rpc)
    }

    /// `ui_prompt_start` when the first dialog opens and `ui_prompt_end` when the last one
    /// closes (nested dialogs are one prompt, named by the outermost).
    async fn prompt_event(&self, start: bool, kind: &str, title: Option<&str>) {
        let (event, payload) = {
            let mut active = lock(&self.prompt);
            if start {
                active.depth += 1;
                if active.depth > 1 {
                    return;
                }
                active.outer = Some((kind.to_string(), title.map(str::to_string)));
            } else {
                active.depth = active.depth.saturating_sub(1);
                if active.depth > 0 {
                    return;
                }
            }
            let (kind, title) = if start {
                (kind.to_string(), title.map(str::to_string))
            } else {
                active
                    .outer
                    .take()
                    .unwrap_or_else(|| (kind.to_string(), title.map(str::to_string)))
            };
            let mut payload = json!({ "reason": "ui_prompt", "kind": kind });
            if let Some(title) = title.filter(|t| !t.is_empty()) {
                payload["title"] = Value::from(title);
            }
            (if start { "ui_prompt_start" } else { "ui_prompt_end" }, payload)
        };
        let Some(slot) = self.slot.upgrade() else { return };
        let Some(runner) = slot.runner() else { return };
        let emitted = runner.emit(event, payload).await;
        slot.settle(event, emitted.map(|errors| ((), errors))).await;
    }

    async fn answer(&self, method: &str, params: Value) -> Result<Value, String> {
        if method == "tool.builtin" {
            return self.builtin_tool(&params).await;
        }
        if method == "ui.fileSuggestions" {
            // A replacement editor's `@` references, from the files pi's own editor lists.
            let prefix = params.get("prefix").and_then(Value::as_str).unwrap_or("@").to_string();
            let cwd = self.cwd.clone();
            let items = tokio::task::spawn_blocking(move || crate::file_index::suggestions(&cwd, &prefix))
                .await
                .unwrap_or_default();
            let items: Vec<Value> = items
                .iter()
                .map(|i| json!({ "value": i.value, "label": i.label, "description": i.description }))
                .collect();
            return Ok(json!({ "items": items }));
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
                let (opts, _abortable) = dialog_options(&params, 2);
                Ok(ui
                    .select(title, &options, opts)
                    .await
                    .map(Value::from)
                    .unwrap_or(Value::Null))
            }
            "ui.confirm" => {
                let message = arg_str(&params, 1).unwrap_or_default();
                let (opts, _abortable) = dialog_options(&params, 2);
                Ok(Value::Bool(ui.confirm(title, message, opts).await))
            }
            "ui.input" => {
                let (opts, _abortable) = dialog_options(&params, 2);
                Ok(ui
                    .input(title, arg_str(&params, 1), opts)
                    .await
                    .map(Value::from)
                    .unwrap_or(Value::Null))
            }
            "pi.setModel" => Ok(Value::Bool(match slot.session() {
                Some(session) => super::actions::set_model(&session, &params).await,
                None => false,
            })),
            "oauth.prompt" => Ok(super::oauth_login::prompt(&slot, &params).await),
            "session.boundaryContext" => {
                let session = slot.session().ok_or("no session")?;
                let event = params.get("event").and_then(Value::as_str).unwrap_or_default();
                let boundary = crate::session::boundary::Boundary::parse(event)
                    .ok_or_else(|| format!("`{event}` is not a boundary event"))?;
                let Some(entries) = params.get("entries").and_then(Value::as_array) else {
                    return Ok(json!({ "ok": false, "error": "entries must be an array" }));
                };
                Ok(match session.boundary_context(entries, boundary) {
                    Ok(context) => json!({ "ok": true, "context": context }),
                    Err(error) => json!({ "ok": false, "error": error }),
                })
            }
            "models.complete" => {
                let session = slot.session().ok_or("no session")?;
                Ok(super::model_requests::complete(&slot, &session, &params, &self.model_requests).await)
            }
            method if method.starts_with("models.") => {
                let session = slot.session().ok_or("no session")?;
                Ok(super::model_requests::answer(&slot, &session, method, &params).await)
            }
            "ui.editor" => Ok(ui
                .editor(title, arg_str(&params, 1))
                .await
                .map(Value::from)
                .unwrap_or(Value::Null)),
            "ctx.navigateTree" => {
                let session = slot.session().ok_or("no session is open")?;
                navigate_tree(&session, &params).await
            }
            method if super::replace::handles(method) => super::replace::answer(&slot, method, &params).await,
            "ctx.waitForIdle" => {
                if let Some(session) = slot.session() {
                    session.agent().wait_for_idle().await;
                }
                Ok(Value::Null)
            }
            _ => Err(format!("`{method}` is not available in this mode yet")),
        }
    }
}

/// A command's `ctx.navigateTree(targetId, options)`: move in the session tree as `/tree`
/// does (with a branch summary when asked); answers `{cancelled}` as pi 1.6.
async fn navigate_tree(session: &crate::session::AgentSession, params: &Value) -> Result<Value, String> {
    let target = arg_str(params, 0).ok_or("navigateTree needs an entry id")?.to_string();
    let options = arg(params, 1);
    let text = |key: &str| {
        options
            .and_then(|o| o.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let flag = |key: &str| options.and_then(|o| o.get(key)).and_then(Value::as_bool) == Some(true);
    let navigate = crate::session::tree_ops::NavigateOptions {
        summarize: flag("summarize"),
        custom_instructions: text("customInstructions"),
        replace_instructions: flag("replaceInstructions"),
        label: text("label"),
    };
    let outcome = session
        .navigate_tree(&target, navigate, CancellationToken::new())
        .await
        .map_err(|e| e.to_string())?;
    Ok(json!({ "cancelled": outcome.cancelled }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A UI that records the statuses set and the errors reported.
    #[derive(Default)]
    struct Recording {
        statuses: Mutex<u64>,
        errors: Mutex<Vec<String>>,
    }

    #[async_trait]
    impl crate::extension_ui::ExtensionUiHost for Recording {
        fn has_ui(&self) -> bool {
            false
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
        async fn notify(&self, _: &str, _: Option<NotifyType>) {}
        async fn set_status(&self, _: &str, _: Option<&str>) {
            *self.statuses.lock().unwrap() += 1;
        }
        async fn set_widget(&self, _: &str, _: Option<&[String]>, _: Option<WidgetPlacement>) {}
        async fn set_title(&self, _: &str) {}
        async fn set_editor_text(&self, _: &str) {}
        fn editor_text(&self) -> String {
            String::new()
        }
        async fn report_extension_error(&self, _: &str, _: &str, error: &str) {
            self.errors.lock().unwrap().push(error.to_string());
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_flood_of_notifications_is_cut_at_the_bound_and_the_loss_reported() {
        let slot = Arc::new(ExtensionSlot::default());
        let ui = Arc::new(Recording::default());
        slot.set_ui(ui.clone());
        let bridge = HostBridge::spawn(
            &slot,
            PathBuf::from("."),
            pi_tools::ToolsOptions::default(),
            pi_extensions::Mode::Print,
        );
        // The reader side never waits: all of these return at once, before any is applied.
        let sent = MAX_QUEUED_NOTIFICATIONS + 100;
        for i in 0..sent {
            bridge.notification("ui.setStatus", json!({ "args": ["k", format!("{i}")] }));
        }
        for _ in 0..100 {
            tokio::task::yield_now().await;
            if *ui.statuses.lock().unwrap() == MAX_QUEUED_NOTIFICATIONS as u64 && !ui.errors.lock().unwrap().is_empty()
            {
                break;
            }
        }
        assert_eq!(*ui.statuses.lock().unwrap(), MAX_QUEUED_NOTIFICATIONS as u64);
        assert_eq!(
            ui.errors.lock().unwrap().clone(),
            vec![format!(
                "100 extension notification(s) dropped: more than {MAX_QUEUED_NOTIFICATIONS} were waiting to be applied"
            )]
        );
        // Once drained, notifications are applied again.
        bridge.notification("ui.setStatus", json!({ "args": ["k", "after"] }));
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(*ui.statuses.lock().unwrap(), MAX_QUEUED_NOTIFICATIONS as u64 + 1);
    }
}
