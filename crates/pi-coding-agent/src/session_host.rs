//! The session host (pi's AgentSessionRuntime): owns the current AgentSession and replaces it
//! for new / switch / fork / clone / reload. A replacement stops the old session, moves its
//! store to the target file, and builds the new session on the kept services (`services.rs`:
//! the registry, and settings and resources reloaded only for another working directory);
//! listeners follow the current session.

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

    /// The current session (a handle; it may be replaced later).
    pub fn session(&self) -> AgentSession {
        lock(&self.current).clone()
    }

    /// Listen to the current session and every one that replaces it.
    pub fn subscribe(&self, listener: Arc<dyn SessionListener>) {
        self.session().subscribe(Arc::clone(&listener));
        lock(&self.listeners).push(listener);
    }

    /// Stop the current session and take its store, leaving an in-memory one behind so the
    /// old session can no longer write (and its file lock is released or moved).
    async fn retire_current(&self) -> SessionManager {
        let old = self.session();
        old.abort();
        // A refresh of the old session's cache must not write into the store it hands over.
        old.inner.cache_warmer.cancel();
        old.agent().wait_for_idle().await;
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

    /// Run a replacement between the extensions' `session_shutdown` and `session_start`;
    /// a replacement that fails before touching the session sends neither.
    ///
    /// `ask` is the `session_before_*` event that may cancel the replacement first (not for
    /// `/reload`).
    async fn replacing<T>(
        &self,
        reason: Replacement,
        target: Option<String>,
        ask: Option<(&str, serde_json::Value)>,
        work: impl std::future::Future<Output = Result<T, StartupError>>,
    ) -> Result<T, StartupError> {
        let slot = Arc::clone(self.services.extensions());
        if let Some((event, payload)) = ask {
            if cancelled_by_extension(&slot, event, payload).await {
                return Err(StartupError::Cancelled);
            }
        }
        let previous = before_replacement(&slot, &self.session(), reason, target).await;
        let result = work.await;
        after_replacement(&slot, &self.session(), reason, previous).await;
        result
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
        self.replacing(Replacement::Reload, None, None, async {
            let store = self.retire_current().await;
            self.install(store).await
        })
        .await
    }

    /// Start a fresh session in the same folder.
    pub async fn new_session(&self) -> Result<(), StartupError> {
        let ask = ("session_before_switch", serde_json::json!({ "reason": "new" }));
        self.replacing(Replacement::New, None, Some(ask), async {
            let mut store = self.retire_current().await;
            store.new_session(NewSessionOptions::default());
            self.install(store).await
        })
        .await
    }

    /// Open another session file.
    pub async fn switch_session(&self, path: &Path) -> Result<(), StartupError> {
        let target = Some(path.display().to_string());
        let ask = (
            "session_before_switch",
            serde_json::json!({ "reason": "resume", "targetSessionFile": target }),
        );
        self.replacing(Replacement::Resume, target, Some(ask), self.switch_to(path))
            .await
    }

    async fn switch_to(&self, path: &Path) -> Result<(), StartupError> {
        let dir = self.session().with_store(|s| s.session_dir().map(Path::to_path_buf));
        let previous = self.retire_current().await;
        let target = path.to_path_buf();
        // Reading (and parsing) the file is blocking work.
        match blocking(move || SessionManager::open_in(&target, dir, None)).await? {
            Ok(store) => self.install(store).await,
            Err(e) => {
                // Put the previous session back so the caller keeps a working session.
                self.install(previous).await?;
                Err(StartupError::Failed(e.to_string()))
            }
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
        self.replacing(Replacement::Fork, None, Some(ask), self.fork_from(text, parent))
            .await
    }

    async fn fork_from(&self, text: String, parent: Option<String>) -> Result<String, StartupError> {
        self.move_current_store(move |store| match &parent {
            Some(parent) => store.fork_to(parent).map(|_| ()),
            None => {
                let from = store.session_file().map(|p| p.display().to_string());
                store.new_session(NewSessionOptions {
                    id: None,
                    parent_session: from,
                });
                Ok(())
            }
        })
        .await?;
        Ok(text)
    }

    /// Continue in a copy of the current branch (RPC `clone`, `/clone`).
    pub async fn clone_session(&self) -> Result<(), StartupError> {
        let leaf = self.session().with_store(|s| s.get_leaf_id().map(str::to_string));
        let ask = (
            "session_before_fork",
            serde_json::json!({ "entryId": leaf, "position": "at" }),
        );
        self.replacing(Replacement::Fork, None, Some(ask), self.clone_current())
            .await
    }

    async fn clone_current(&self) -> Result<(), StartupError> {
        let leaf = self.session().with_store(|s| s.get_leaf_id().map(str::to_string));
        self.move_current_store(move |store| match leaf {
            Some(leaf) => store.fork_to(&leaf).map(|_| ()),
            None => {
                store.new_session(NewSessionOptions::default());
                Ok(())
            }
        })
        .await
    }

    /// Retire the current session, point its store at another file with `change` (on the
    /// blocking pool: it writes files), and build the next session on it. When `change`
    /// fails, the store is installed as it is and the error returned.
    async fn move_current_store(
        &self,
        change: impl FnOnce(&mut SessionManager) -> Result<(), pi_session::SessionError> + Send + 'static,
    ) -> Result<(), StartupError> {
        let store = self.retire_current().await;
        let (store, result) = blocking(move || {
            let mut store = store;
            let result = change(&mut store);
            (store, result)
        })
        .await?;
        if let Err(e) = result {
            self.install(store).await?;
            return Err(StartupError::Failed(e.to_string()));
        }
        self.install(store).await
    }
}
