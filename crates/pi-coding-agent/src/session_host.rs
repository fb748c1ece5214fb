//! The session host (pi's AgentSessionRuntime): owns the current AgentSession and replaces it
//! for new / switch / fork / clone / reload. A replacement makes the next store first (the old
//! session untouched until then), stops the old session, and builds the new session on the
//! kept services (`services.rs`: the registry, and settings and resources reloaded only for
//! another working directory); listeners follow the current session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pi_agent::AgentMessage;
use pi_ai::Message;
use pi_session::{NewSessionOptions, SessionManager};

use crate::cli::Args;
use crate::extensions::lifecycle::{after_replacement, before_replacement, cancelled_by_extension, Replacement};
use crate::runtime::{build_with_store, StartupError};
use crate::services::Services;
use crate::session::agent_session::lock;
use crate::session::{AgentSession, SessionListener};

/// Work on a replacement session before its extensions see `session_start` (a command's
/// `ctx.newSession({ setup })`).
pub type SessionSetup = Box<dyn FnOnce(AgentSession) -> futures::future::BoxFuture<'static, ()> + Send>;

/// What `ctx.newSession` may ask of a new session.
#[derive(Default)]
pub struct NewSessionRequest {
    /// The file the new session's header names as its parent.
    pub parent_session: Option<String>,
    pub setup: Option<SessionSetup>,
}

/// A user message of the current branch that a fork can start from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkPoint {
    pub entry_id: String,
    pub text: String,
}

pub struct SessionHost {
    args: Args,
    cwd: PathBuf,
    services: Arc<Services>,
    current: Mutex<AgentSession>,
    listeners: Mutex<Vec<Arc<dyn SessionListener>>>,
}

/// Run file work on the blocking pool; a panic there becomes an error, not a lost session.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, StartupError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StartupError::Failed(format!("session operation failed: {e}")))
}

impl SessionHost {
    pub fn new(args: Args, cwd: PathBuf, session: AgentSession) -> Self {
        SessionHost {
            args,
            cwd,
            services: Arc::clone(session.services()),
            current: Mutex::new(session),
            listeners: Mutex::new(Vec::new()),
        }
    }

    /// The command line the sessions were built from.
    pub fn args(&self) -> &Args {
        &self.args
    }

    /// The current session (a handle; it may be replaced later).
    pub fn session(&self) -> AgentSession {
        lock(&self.current).clone()
    }

    /// Listen to the current session and every one that replaces it.
    pub fn subscribe(&self, listener: Arc<dyn SessionListener>) {
        self.session().subscribe(Arc::clone(&listener));
        lock(&self.listeners).push(listener);
    }

    /// Stop the current session's work: its run (the aborted turn is recorded first) and a
    /// refresh of its cache, which must not write into a store it hands over.
    async fn stop_current(&self) {
        let old = self.session();
        old.abort();
        old.inner.cache_warmer.cancel();
        old.agent().wait_for_idle().await;
        // pi 1.6 disposes the old session's provider resources: its cached Codex sockets.
        let id = old.with_store(|s| s.session_id().to_string());
        pi_ai::providers::openai_codex::close_sessions(Some(&id)).await;
    }

    /// Take the current session's store, leaving an in-memory one behind so the old session
    /// can no longer write (and its file lock is released or moved).
    fn take_store(&self) -> SessionManager {
        let old = self.session();
        let cwd = old.cwd().to_string_lossy().to_string();
        old.with_store(|s| std::mem::replace(s, SessionManager::in_memory(&cwd)))
    }

    /// Build the replacement session off the async threads (it reads settings, resources and
    /// models.json for a new cwd) and make it current.
    async fn install(&self, store: SessionManager) -> Result<(), StartupError> {
        // Into a folder nothing has decided about yet: the extensions' `project_trust` first.
        let target = PathBuf::from(store.cwd());
        let trust = crate::extensions::pre_trust::on_replacement(&self.args, &self.services, &target).await;
        for w in &trust.warnings {
            self.services
                .extensions()
                .ui()
                .report_extension_error("project_trust", "project_trust", w)
                .await;
        }
        let (args, cwd, services) = (self.args.clone(), self.cwd.clone(), Arc::clone(&self.services));
        let runtime = blocking(move || build_with_store(&args, &cwd, store, &services)).await??;
        for l in lock(&self.listeners).iter() {
            runtime.session.subscribe(Arc::clone(l));
        }
        *lock(&self.current) = runtime.session;
        Ok(())
    }

    /// Replace the current session as pi 1.6 does: `ask` (the `session_before_*` event, not
    /// for `/reload`) may cancel first; `prepare` then makes the next store without touching
    /// the current session (`None`: continue the current store, for `/reload`), and a failure
    /// there leaves everything as it was and sends no event. Then the run stops,
    /// `session_shutdown` names the next file, the new session is built, `setup` runs on it,
    /// and `session_start` follows.
    async fn replacing<T>(
        &self,
        reason: Replacement,
        ask: Option<(&str, serde_json::Value)>,
        prepare: impl std::future::Future<Output = Result<(Option<SessionManager>, T), StartupError>>,
        setup: Option<SessionSetup>,
    ) -> Result<T, StartupError> {
        let slot = Arc::clone(self.services.extensions());
        if let Some((event, payload)) = ask {
            if cancelled_by_extension(&slot, event, payload).await {
                return Err(StartupError::Cancelled);
            }
        }
        let (next, value) = prepare.await?;
        let target = next
            .as_ref()
            .and_then(|s| s.session_file())
            .map(|p| p.display().to_string());
        self.stop_current().await;
        let previous = before_replacement(&slot, &self.session(), reason, target).await;
        let current = self.take_store();
        // The old store is dropped once the new one is in: its file lock goes with it.
        let installed = self.install(next.unwrap_or(current)).await;
        if let (Ok(()), Some(setup)) = (&installed, setup) {
            // As pi 1.6: the new session is set up before its extensions hear of it.
            setup(self.session()).await;
        }
        after_replacement(&slot, &self.session(), reason, previous).await;
        installed.map(|()| value)
    }

    /// The services every session of this host shares.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Read settings, resources (context files, skills, prompt templates, SYSTEM.md) and
    /// models.json again, and continue the same session file on them (`/reload`).
    pub async fn reload(&self) -> Result<(), StartupError> {
        let services = Arc::clone(&self.services);
        // Reading files and walking skill folders: off the async threads.
        let _ = tokio::task::spawn_blocking(move || services.reload()).await;
        self.replacing(Replacement::Reload, None, async { Ok((None, ())) }, None)
            .await
    }

    /// Start a fresh session in the same folder.
    pub async fn new_session(&self) -> Result<(), StartupError> {
        self.new_session_with(NewSessionRequest::default()).await
    }

    /// A new store beside the current one (in memory when the current one is), naming
    /// `parent_session` in its header; nothing is written before its first message.
    fn fresh_store(&self, parent_session: Option<String>) -> SessionManager {
        let mut store = self.session().with_store(|s| {
            let cwd = s.cwd().to_string();
            match s.session_dir().filter(|_| s.is_persisted()) {
                Some(dir) => SessionManager::create(dir, &cwd),
                None => SessionManager::in_memory(&cwd),
            }
        });
        if parent_session.is_some() {
            store.new_session(NewSessionOptions {
                id: None,
                parent_session,
            });
        }
        store
    }

    /// Start a fresh session in the same folder, naming `parent_session` in its header and
    /// running `setup` on it before its `session_start` (an extension's `ctx.newSession`).
    pub async fn new_session_with(&self, request: NewSessionRequest) -> Result<(), StartupError> {
        let ask = ("session_before_switch", serde_json::json!({ "reason": "new" }));
        let NewSessionRequest { parent_session, setup } = request;
        let prepare = async { Ok((Some(self.fresh_store(parent_session)), ())) };
        self.replacing(Replacement::New, Some(ask), prepare, setup).await
    }

    /// Open another session file.
    pub async fn switch_session(&self, path: &Path) -> Result<(), StartupError> {
        let ask = (
            "session_before_switch",
            serde_json::json!({ "reason": "resume", "targetSessionFile": path.display().to_string() }),
        );
        self.replacing(Replacement::Resume, Some(ask), self.open_other(path), None)
            .await
    }

    /// Open another session file whose recorded folder is gone, running it in the current
    /// session's folder this time only.
    pub async fn switch_session_here(&self, path: &Path) -> Result<(), StartupError> {
        let ask = (
            "session_before_switch",
            serde_json::json!({ "reason": "resume", "targetSessionFile": path.display().to_string() }),
        );
        let here = self.session().cwd().display().to_string();
        let prepare = async {
            let (store, ()) = self.open_other(path).await?;
            Ok((
                store.map(|mut s| {
                    s.run_in(&here);
                    s
                }),
                (),
            ))
        };
        self.replacing(Replacement::Resume, Some(ask), prepare, None).await
    }

    /// Copy another session file (whose recorded folder is gone) into a new session in the
    /// current session's folder, as `--fork` does; returns the new session's id.
    pub async fn fork_file_here(&self, path: &Path) -> Result<String, StartupError> {
        let ask = (
            "session_before_switch",
            serde_json::json!({ "reason": "resume", "targetSessionFile": path.display().to_string() }),
        );
        let (here, dir) = self
            .session()
            .with_store(|s| (s.cwd().to_string(), s.session_dir().map(Path::to_path_buf)));
        let source = path.to_path_buf();
        let prepare = async move {
            let Some(dir) = dir else {
                return Err(StartupError::Failed(
                    "This session is not saved to a folder".to_string(),
                ));
            };
            let store = blocking(move || SessionManager::fork_from(&source, &here, dir))
                .await?
                .map_err(|e| StartupError::Failed(e.to_string()))?;
            let id = store.session_id().to_string();
            Ok((Some(store), id))
        };
        self.replacing(Replacement::Resume, Some(ask), prepare, None).await
    }

    /// The store of another session file (the current store when it is the same file: it is
    /// locked by this process already).
    async fn open_other(&self, path: &Path) -> Result<(Option<SessionManager>, ()), StartupError> {
        let (dir, current) = self.session().with_store(|s| {
            (
                s.session_dir().map(Path::to_path_buf),
                s.session_file().map(Path::to_path_buf),
            )
        });
        if current.as_deref() == Some(path) {
            return Ok((None, ()));
        }
        let target = path.to_path_buf();
        // Reading (and parsing) the file is blocking work.
        match blocking(move || SessionManager::open_in(&target, dir, None)).await? {
            Ok(store) => Ok((Some(store), ())),
            Err(e) => Err(StartupError::Failed(e.to_string())),
        }
    }

    /// The user messages of the current branch (RPC `get_fork_messages`).
    pub fn fork_points(&self) -> Vec<ForkPoint> {
        self.session().with_store(|s| {
            s.get_branch(None)
                .into_iter()
                .filter_map(|e| {
                    let message = e.message()?;
                    match message {
                        AgentMessage::Llm(Message::User(u)) => Some(ForkPoint {
                            entry_id: e.id.clone(),
                            text: u.content.text(),
                        }),
                        _ => None,
                    }
                })
                .collect()
        })
    }

    /// Continue in a new session holding the branch before the user message `entry_id`;
    /// returns that message's text (for the editor).
    pub async fn fork(&self, entry_id: &str) -> Result<String, StartupError> {
        let (text, parent) = self.session().with_store(|s| {
            // pi gives the same answer for an unknown id as for one that is not a user message.
            let entry = s
                .get_entry(entry_id)
                .ok_or_else(|| StartupError::Failed("Invalid entry ID for forking".to_string()))?;
            let text = match entry.message() {
                Some(AgentMessage::Llm(Message::User(u))) => u.content.text(),
                _ => return Err(StartupError::Failed("Invalid entry ID for forking".to_string())),
            };
            Ok((text, entry.parent_id.clone()))
        })?;
        let ask = (
            "session_before_fork",
            serde_json::json!({ "entryId": entry_id, "position": "before" }),
        );
        let prepare = async {
            let store = match parent {
                Some(parent) => self.forked_store(parent).await?,
                None => {
                    // Before the first message: an empty session whose parent is this one.
                    let from = self.session().with_store(|s| {
                        s.session_file()
                            .filter(|_| s.is_persisted())
                            .map(|p| p.display().to_string())
                    });
                    self.fresh_store(from)
                }
            };
            Ok((Some(store), text))
        };
        self.replacing(Replacement::Fork, Some(ask), prepare, None).await
    }

    /// Continue in a copy of the current branch (RPC `clone`, `/clone`).
    pub async fn clone_session(&self) -> Result<(), StartupError> {
        let leaf = self.session().with_store(|s| s.get_leaf_id().map(str::to_string));
        self.fork_at(leaf).await
    }

    /// Continue in a new session holding the path through `entry_id` (an extension's
    /// `ctx.fork(id, { position: "at" })`; the leaf for `/clone`; `None`: an empty session).
    pub async fn fork_at(&self, entry_id: Option<String>) -> Result<(), StartupError> {
        if let Some(id) = &entry_id {
            if self.session().with_store(|s| s.get_entry(id).is_none()) {
                return Err(StartupError::Failed("Invalid entry ID for forking".to_string()));
            }
        }
        let ask = (
            "session_before_fork",
            serde_json::json!({ "entryId": entry_id, "position": "at" }),
        );
        let prepare = async {
            let store = match entry_id {
                Some(id) => self.forked_store(id).await?,
                None => self.fresh_store(None),
            };
            Ok((Some(store), ()))
        };
        self.replacing(Replacement::Fork, Some(ask), prepare, None).await
    }

    /// The current branch up to `entry_id` as a new session (written on the blocking pool);
    /// the current session is left as it is.
    async fn forked_store(&self, entry_id: String) -> Result<SessionManager, StartupError> {
        let session = self.session();
        blocking(move || session.with_store(|s| s.forked(&entry_id)))
            .await?
            .map_err(|e| StartupError::Failed(e.to_string()))
    }
}
