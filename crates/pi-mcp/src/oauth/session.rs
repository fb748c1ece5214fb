//! The OAuth side of a connection: the stored access token for every request, refreshed shortly
//! before it expires and after a 401. Never opens a browser: when only a sign-in helps, requests
//! fail and the server is reported as needing one. Requests of this process share one refresh,
//! and other processes are kept out by the lock file `<agentDir>/mcp-auth-refresh-<hash>`, held
//! from reading the tokens to saving new ones (refresh tokens often rotate: a second refresh with
//! the same one would lose the grant). For the same reason a refresh, once sent, is never
//! cancelled: it runs on a task of its own that outlives the request that started it, and
//! [`refreshes_settled`] lets pi wait for such tasks before it exits.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::discovery::{parse_www_authenticate, Challenge};
use super::grant::{refresh_stored, OAuthTarget, Refreshed};
use super::store::{now_ms, store_keys, DirLock};
use super::OAuthError;

/// Tokens this close to expiry are refreshed before they are sent.
const REFRESH_SKEW_MS: f64 = 30_000.0;
/// A refresh lock its holder stopped renewing (the process died) is taken over after this.
const REFRESH_LOCK_STALE: Duration = Duration::from_secs(20);
/// How long to wait for another process's refresh: longer than a stale lock lives.
const REFRESH_LOCK_WAIT: Duration = Duration::from_secs(25);
const REFRESH_LOCK_RETRY: Duration = Duration::from_millis(100);

/// The lock file of a server's refreshes (the lock itself is the directory `<this>.lock`).
pub(crate) fn refresh_lock_path(target: &OAuthTarget) -> PathBuf {
    let (key, _) = store_keys(&target.server, &target.url);
    let hash: String = Sha256::digest(key.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = target.file.path().parent().map(PathBuf::from).unwrap_or_default();
    dir.join(format!("mcp-auth-refresh-{hash}"))
}

/// Hold the cross-process refresh lock while `f` runs; `None` when another process held it for
/// the whole wait.
pub(crate) async fn with_refresh_lock<T>(
    target: &OAuthTarget,
    f: impl std::future::Future<Output = T>,
) -> Result<Option<T>, OAuthError> {
    let path = refresh_lock_path(target);
    let deadline = Instant::now() + REFRESH_LOCK_WAIT;
    let lock = loop {
        match DirLock::try_take(&path, REFRESH_LOCK_STALE) {
            Ok(Some(lock)) => break lock,
            Ok(None) if Instant::now() < deadline => tokio::time::sleep(REFRESH_LOCK_RETRY).await,
            Ok(None) => return Ok(None),
            Err(e) => return Err(OAuthError::Store(format!("{}: {e}", path.display()))),
        }
    };
    let result = f.await;
    drop(lock);
    Ok(Some(result))
}

/// Refreshes of this process whose task has not ended yet.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static SETTLED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Counts one refresh task while it lives.
struct InFlight;

impl InFlight {
    fn start() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if IN_FLIGHT.fetch_sub(1, Ordering::SeqCst) == 1 {
            SETTLED.notify_waiters();
        }
    }
}

/// Wait until no token refresh of this process is under way. A refresh the authorization
/// server answered may have rotated the refresh token: exiting before the new tokens are
/// saved would lose the sign-in.
pub async fn refreshes_settled() {
    loop {
        let notified = SETTLED.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if IN_FLIGHT.load(Ordering::SeqCst) == 0 {
            return;
        }
        notified.await;
    }
}

/// The auth of one OAuth server's connections.
pub struct OAuthSession {
    target: Arc<OAuthTarget>,
    /// Held by the refresh under way (by its task, not by the request that asked for it).
    refreshing: Arc<tokio::sync::Mutex<()>>,
    challenge: std::sync::Mutex<Option<Challenge>>,
}

impl OAuthSession {
    pub fn new(target: OAuthTarget) -> Self {
        Self {
            target: Arc::new(target),
            refreshing: Arc::new(tokio::sync::Mutex::new(())),
            challenge: std::sync::Mutex::new(None),
        }
    }

    /// Resolves once no refresh of this session is under way.
    pub async fn settled(&self) {
        drop(self.refreshing.lock().await);
    }

    pub fn target(&self) -> &OAuthTarget {
        &self.target
    }

    /// The last challenge the server sent (sign-in uses its metadata URL and scope).
    pub fn challenge(&self) -> Option<Challenge> {
        self.challenge.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The access token to send, refreshed first when it is about to expire. Failures fall
    /// through: the request goes out with what is stored and a 401 decides.
    pub async fn token(&self) -> Option<String> {
        drop(self.refreshing.lock().await);
        let state = self.target.load().ok()?;
        let token = state.access_token().map(str::to_string);
        let expired = state
            .tokens_expire_at
            .is_some_and(|at| at - REFRESH_SKEW_MS <= now_ms());
        if !expired || state.refresh_token().is_none() {
            return token;
        }
        let _ = self.refresh(token.as_deref(), None).await;
        self.target.load().ok()?.access_token().map(str::to_string)
    }

    /// After a 401 (or a 403 asking for scope) with `token`: whether the request is worth
    /// sending again with the (new) stored token.
    pub async fn on_unauthorized(&self, token: Option<&str>, www_authenticate: Option<&str>) -> bool {
        let challenge = parse_www_authenticate(www_authenticate);
        *self.challenge.lock().unwrap_or_else(|p| p.into_inner()) = Some(challenge.clone());
        // A refresh keeps the granted scope, so more scope needs a new sign-in.
        if challenge.insufficient_scope() {
            return false;
        }
        matches!(self.refresh(token, Some(&challenge)).await, Ok(true))
    }

    /// Replace `stale`: `Ok(true)` when another token is stored now. The work runs on a task
    /// of its own, so a caller that goes away (an aborted connect, a closed connection) does
    /// not cut a refresh short between the server's answer and saving it.
    async fn refresh(&self, stale: Option<&str>, challenge: Option<&Challenge>) -> Result<bool, OAuthError> {
        let one = Arc::clone(&self.refreshing).lock_owned().await;
        let counted = InFlight::start();
        let target = Arc::clone(&self.target);
        let stale = stale.map(str::to_string);
        let challenge = challenge.cloned();
        let task = tokio::spawn(async move {
            let _one = one;
            let _counted = counted;
            refresh_once(&target, stale.as_deref(), challenge.as_ref()).await
        });
        task.await
            .unwrap_or_else(|e| Err(OAuthError::Store(format!("token refresh stopped: {e}"))))
    }
}

async fn refresh_once(
    target: &OAuthTarget,
    stale: Option<&str>,
    challenge: Option<&Challenge>,
) -> Result<bool, OAuthError> {
    let outcome = with_refresh_lock(target, async {
        let mut state = target.load()?;
        if state.access_token() != stale {
            return Ok(state.access_token().is_some());
        }
        if state.refresh_token().is_none() {
            return Ok(false);
        }
        Ok(refresh_stored(target, &mut state, challenge).await? == Refreshed::Authorized)
    })
    .await?;
    match outcome {
        Some(result) => result,
        // Another process kept the lock: its refresh may have stored new tokens.
        None => Ok(target.load()?.access_token().is_some_and(|t| Some(t) != stale)),
    }
}
