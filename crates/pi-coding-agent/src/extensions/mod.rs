//! pi's TypeScript extensions in the product: the runner kept across sessions
//! ([`ExtensionSlot`], held by `Services`), how it starts ([`startup`]), and the three bridges
//! to the session: the prompt pipeline ([`bridge`], with every session event through
//! [`observe`]), the agent loop's hooks ([`hooks`]) and the host's requests and notifications
//! ([`host`]).

pub mod actions;
pub mod bridge;
pub mod builtin;
pub mod early_ui;
pub mod export_render;
pub mod hooks;
pub mod host;
pub mod lifecycle;
pub mod mcp_servers;
mod model_requests;
mod oauth;
pub mod oauth_login;
pub mod observe;
pub mod pre_trust;
pub mod provider_events;
pub mod providers;
pub mod replace;
pub mod startup;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use pi_extensions::{ExtensionError, ExtensionRunner, HostError};
use serde_json::Value;

use crate::extension_ui::{ExtensionUiHost, HeadlessUi};
use crate::session::agent_session::lock;
use crate::session::AgentSession;

pub use startup::{attach, start};

/// The extension runner of a pi process (none until started, or when nothing is configured)
/// and the UI its errors and dialogs go to.
pub struct ExtensionSlot {
    runner: Mutex<Option<Arc<ExtensionRunner>>>,
    /// The runner of the pre-trust pass, until the start completes and binds it.
    pre_trust: Mutex<Option<Arc<ExtensionRunner>>>,
    /// MCP servers extensions registered that were connected or reported (each once).
    mcp_seen: Mutex<std::collections::HashSet<String>>,
    /// pi's own MCP support is on (`builtin:mcp`): it connects what extensions register.
    mcp_connects: AtomicBool,
    ui: Mutex<Arc<dyn ExtensionUiHost>>,
    /// The session the extensions act on (`pi.appendEntry`, ...); follows replacement.
    session: Mutex<Option<AgentSession>>,
    /// One lost host gives one message, not one per event that follows.
    loss_reported: AtomicBool,
    /// `ctx.shutdown()` was called: the mode ends once what runs has settled.
    shutdown_requested: AtomicBool,
    shutdown_signal: tokio::sync::Notify,
    /// What `turn_end` handlers left, until the agent loop asks at the turn's boundary.
    turn_boundary: Mutex<Option<crate::session::boundary::BoundaryResult>>,
    /// The `api`s extension providers stream themselves (`streamSimple`).
    stream_apis: Mutex<std::collections::HashSet<String>>,
    /// The providers extensions registered with an `oauth` block: their key comes from the
    /// host (`provider.oauthKey`) at each request.
    oauth_providers: Mutex<std::collections::HashSet<String>>,
    /// A fingerprint of the model list the host has (`push_all_models`), to send it again
    /// only when it changed.
    all_models_sent: Mutex<Option<u64>>,
    /// The model registry's revision the host's model view was last brought up to date at.
    models_revision: Mutex<Option<u64>>,
    /// Waits for the host's queued notifications to be applied.
    barrier: Mutex<Option<host::NotificationBarrier>>,
    /// What replaces the session for a command's `ctx.newSession` / `fork` / `switchSession` /
    /// `reload` (weak: the host holds the services that hold this slot).
    session_host: Mutex<Option<Weak<crate::session_host::SessionHost>>>,
    /// The sign-ins of extension providers under way (`/login`).
    logins: oauth_login::Logins,
}

impl Default for ExtensionSlot {
    fn default() -> Self {
        ExtensionSlot {
            runner: Mutex::new(None),
            pre_trust: Mutex::new(None),
            mcp_seen: Mutex::default(),
            mcp_connects: AtomicBool::new(false),
            ui: Mutex::new(Arc::new(HeadlessUi)),
            session: Mutex::new(None),
            loss_reported: AtomicBool::new(false),
            shutdown_requested: AtomicBool::new(false),
            shutdown_signal: tokio::sync::Notify::new(),
            turn_boundary: Mutex::new(None),
            stream_apis: Mutex::new(std::collections::HashSet::new()),
            oauth_providers: Mutex::new(std::collections::HashSet::new()),
            all_models_sent: Mutex::new(None),
            models_revision: Mutex::new(None),
            barrier: Mutex::new(None),
            session_host: Mutex::new(None),
            logins: oauth_login::Logins::default(),
        }
    }
}

impl ExtensionSlot {
    /// Keep what the `turn_end` handlers left for the turn's boundary.
    pub fn set_turn_boundary(&self, result: Option<crate::session::boundary::BoundaryResult>) {
        *lock(&self.turn_boundary) = result;
    }

    /// The drafts `turn_end` handlers left (taken: each is committed once).
    pub fn take_turn_drafts(&self) -> Vec<Value> {
        lock(&self.turn_boundary)
            .as_mut()
            .map(|b| std::mem::take(&mut b.entries))
            .unwrap_or_default()
    }

    /// Whether `turn_end` handlers asked for one more request (taken).
    pub fn take_turn_continue(&self) -> bool {
        lock(&self.turn_boundary).take().is_some_and(|b| b.continue_run)
    }

    /// `ctx.shutdown()`: remember the request and wake whoever waits for one.
    pub fn request_shutdown(&self) {
        self.shutdown_requested.store(true, Ordering::SeqCst);
        self.shutdown_signal.notify_waiters();
    }

    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested.load(Ordering::SeqCst)
    }

    /// Wait until an extension asks pi to shut down.
    pub async fn shutdown_wanted(&self) {
        loop {
            let notified = self.shutdown_signal.notified();
            if self.shutdown_requested() {
                return;
            }
            notified.await;
        }
    }

    /// Whether an extension provider streams `api` (its requests go to the host).
    pub fn streams_api(&self, api: &str) -> bool {
        lock(&self.stream_apis).contains(api)
    }

    pub fn set_stream_apis(&self, apis: std::collections::HashSet<String>) {
        *lock(&self.stream_apis) = apis;
    }

    /// Whether an extension registered `provider` with an `oauth` block.
    pub fn has_oauth_provider(&self, provider: &str) -> bool {
        lock(&self.oauth_providers).contains(provider)
    }

    /// The providers extensions registered with an `oauth` block, as `/login` lists them:
    /// id and the name of their sign-in (the last registration of an id wins).
    pub fn oauth_logins(&self) -> Vec<(String, String)> {
        let Some(runner) = self.runner() else {
            return Vec::new();
        };
        let mut out: Vec<(String, String)> = Vec::new();
        for provider in runner.registrations().extensions.iter().flat_map(|ext| &ext.providers) {
            if let Some(oauth) = &provider.oauth {
                out.retain(|(id, _)| id != &provider.name);
                out.push((provider.name.clone(), oauth.name.clone()));
            }
        }
        out
    }

    pub fn set_oauth_providers(&self, providers: std::collections::HashSet<String>) {
        *lock(&self.oauth_providers) = providers;
    }

    /// The runner, when extensions are loaded.
    pub fn runner(&self) -> Option<Arc<ExtensionRunner>> {
        lock(&self.runner).clone()
    }

    pub fn set_runner(&self, runner: Option<Arc<ExtensionRunner>>) {
        *lock(&self.runner) = runner;
        self.loss_reported.store(false, Ordering::SeqCst);
        *lock(&self.all_models_sent) = None;
    }

    /// Record that the host has the model list `fingerprint`; false when it had it already.
    pub fn note_all_models(&self, fingerprint: u64) -> bool {
        lock(&self.all_models_sent).replace(fingerprint) != Some(fingerprint)
    }

    /// Note that the host's model view matches registry revision `revision`; false when it
    /// already did.
    pub fn note_models_revision(&self, revision: u64) -> bool {
        lock(&self.models_revision).replace(revision) != Some(revision)
    }

    /// Keep the pre-trust pass's runner for the start to complete (not bound to any session
    /// before that).
    pub fn set_pre_trust(&self, runner: Arc<ExtensionRunner>) {
        *lock(&self.pre_trust) = Some(runner);
    }

    /// The pre-trust pass's runner (taken: the start binds it once).
    pub fn take_pre_trust(&self) -> Option<Arc<ExtensionRunner>> {
        lock(&self.pre_trust).take()
    }

    /// Whether pi's own MCP support connects the servers extensions register.
    pub fn mcp_connects(&self) -> bool {
        self.mcp_connects.load(Ordering::SeqCst)
    }

    pub fn set_mcp_connects(&self, on: bool) {
        self.mcp_connects.store(on, Ordering::SeqCst);
    }

    /// The servers of `servers` not connected or reported before (marked as seen now).
    pub fn unseen_mcp_servers(
        &self,
        servers: &[pi_extensions::RegisteredMcpServer],
    ) -> Vec<pi_extensions::RegisteredMcpServer> {
        let mut seen = lock(&self.mcp_seen);
        servers
            .iter()
            .filter(|s| seen.insert(s.name.clone()))
            .cloned()
            .collect()
    }

    /// The current session, once one is attached.
    pub fn session(&self) -> Option<AgentSession> {
        lock(&self.session).clone()
    }

    pub fn set_session(&self, session: &AgentSession) {
        *lock(&self.session) = Some(session.clone());
    }

    /// The session host of the mode, which commands' session replacements go through.
    pub fn session_host(&self) -> Option<Arc<crate::session_host::SessionHost>> {
        lock(&self.session_host).as_ref().and_then(Weak::upgrade)
    }

    pub fn set_session_host(&self, host: &Arc<crate::session_host::SessionHost>) {
        *lock(&self.session_host) = Some(Arc::downgrade(host));
    }

    /// The mode's UI (print and JSON: headless; RPC: the client's).
    pub fn ui(&self) -> Arc<dyn ExtensionUiHost> {
        lock(&self.ui).clone()
    }

    pub fn set_ui(&self, ui: Arc<dyn ExtensionUiHost>) {
        *lock(&self.ui) = ui;
    }

    /// [`Self::set_ui`] for a mode whose UI comes up after extensions started (RPC): what
    /// they showed meanwhile (`session_start` handlers) goes to `ui` first, in order.
    pub async fn take_over_ui(&self, ui: Arc<dyn ExtensionUiHost>) {
        let previous = std::mem::replace(&mut *lock(&self.ui), Arc::clone(&ui));
        if let Some(early) = previous.as_any().and_then(|a| a.downcast_ref::<early_ui::EarlyUi>()) {
            early.hand_over(ui.as_ref()).await;
        }
    }

    /// Report handler errors where the mode reports them (pi's error sinks).
    pub async fn report(&self, errors: Vec<ExtensionError>) {
        if errors.is_empty() {
            return;
        }
        let ui = self.ui();
        for e in errors {
            ui.report_extension_error(&e.extension_path, &e.event, &e.error).await;
        }
    }

    /// A host that crashed, hung or stopped answering: say so once; the session goes on
    /// without extensions.
    pub async fn host_failed(&self, event: &str, error: &HostError) {
        if self.loss_reported.swap(true, Ordering::SeqCst) {
            return;
        }
        let message = format!("{error}; extensions are unavailable for the rest of this session");
        self.ui()
            .report_extension_error("extension host", event, &message)
            .await;
    }

    /// The outcome of an emit: errors reported, host failures turned into `None`.
    pub fn set_notification_barrier(&self, barrier: host::NotificationBarrier) {
        *lock(&self.barrier) = Some(barrier);
    }

    /// Wait until the actions the host sent so far are applied. The boundary events call it:
    /// there a handler's actions (a tool registered and turned on, say) must hold before the
    /// run goes on.
    pub async fn apply_pending_actions(&self) {
        let barrier = lock(&self.barrier).clone();
        if let Some(barrier) = barrier {
            barrier.wait().await;
        }
    }

    pub async fn settle<T>(&self, event: &str, result: Result<(T, Vec<ExtensionError>), HostError>) -> Option<T> {
        match result {
            Ok((outcome, errors)) => {
                self.report(errors).await;
                Some(outcome)
            }
            Err(error) => {
                self.host_failed(event, &error).await;
                None
            }
        }
    }
}
