//! A sign-in run in the background for a screen that cannot block on it (the terminal `/login`
//! dialog): [`start_login`] returns a [`LoginSession`] whose updates say what to show (a URL,
//! a device code, progress), what to ask (each question carries its own [`Answer`]) and how
//! it ended. The credential is saved to auth.json before `Finished(Ok)` arrives.
//!
//! Dropping an [`Answer`] without sending cancels the sign-in, as does
//! [`LoginSession::cancel`] or dropping the session.

use async_trait::async_trait;
use pi_oauth::{Config, LoginEvent, LoginUi, OAuthError, Prompt};
use tokio::sync::{mpsc, oneshot};

use super::oauth::{login_and_save_with, login_providers, LoginError};
use super::paths::Paths;

/// One provider a sign-in list offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginProvider {
    pub id: &'static str,
    pub name: &'static str,
}

/// The providers with an account sign-in, in the order a list shows them.
pub fn providers() -> Vec<LoginProvider> {
    login_providers()
        .into_iter()
        .map(|(id, name)| LoginProvider { id, name })
        .collect()
}

/// The reply to one question. Sending after the flow stopped waiting (a pasted code when the
/// browser already finished) does nothing.
#[derive(Debug)]
pub struct Answer(oneshot::Sender<String>);

impl Answer {
    pub fn send(self, text: impl Into<String>) {
        let _ = self.0.send(text.into());
    }

    /// An answer that replies on `tx`: the flows make theirs this way, and the terminal UI's
    /// tests make one to drive a sign-in screen without a flow.
    pub fn replying_on(tx: oneshot::Sender<String>) -> Answer {
        Answer(tx)
    }
}

/// What a running sign-in reports.
#[derive(Debug)]
pub enum LoginUpdate {
    /// Show this (a URL to open, a device code, a progress line).
    Show(LoginEvent),
    /// Ask this and reply through `answer`.
    Ask { prompt: Prompt, answer: Answer },
    /// The sign-in ended: saved, or why not.
    Finished(Result<(), LoginError>),
}

/// A sign-in under way.
pub struct LoginSession {
    updates: mpsc::Receiver<LoginUpdate>,
    cancel: Option<oneshot::Sender<()>>,
}

impl LoginSession {
    /// The next update; `None` after `Finished` was taken.
    pub async fn next(&mut self) -> Option<LoginUpdate> {
        self.updates.recv().await
    }

    /// An update if one is ready (for a screen that polls between frames).
    pub fn try_next(&mut self) -> Option<LoginUpdate> {
        self.updates.try_recv().ok()
    }

    /// Stop the sign-in; `Finished(Err(Cancelled))` follows.
    pub fn cancel(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
    }
}

struct ChannelUi {
    updates: mpsc::Sender<LoginUpdate>,
}

#[async_trait]
impl LoginUi for ChannelUi {
    fn notify(&self, event: LoginEvent) {
        // A flow shows a few lines; a screen that stopped reading loses the rest.
        let _ = self.updates.try_send(LoginUpdate::Show(event));
    }

    async fn prompt(&self, prompt: Prompt) -> Result<String, OAuthError> {
        let (tx, rx) = oneshot::channel();
        self.updates
            .send(LoginUpdate::Ask {
                prompt,
                answer: Answer::replying_on(tx),
            })
            .await
            .map_err(|_| OAuthError::Cancelled)?;
        rx.await.map_err(|_| OAuthError::Cancelled)
    }
}

/// Start signing in to `provider` on the current tokio runtime, with the endpoints of the
/// environment ([`Config::from_env`]).
pub fn start_login(paths: Paths, provider: &str) -> LoginSession {
    start_login_with(Config::from_env(), paths, provider)
}

/// [`start_login`] with the endpoints and callback of `config`.
pub fn start_login_with(config: Config, paths: Paths, provider: &str) -> LoginSession {
    let (updates_tx, updates) = mpsc::channel(64);
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    let provider = provider.to_string();
    let ui = ChannelUi {
        updates: updates_tx.clone(),
    };
    tokio::spawn(async move {
        let result = tokio::select! {
            r = login_and_save_with(&config, &paths, &provider, &ui) => r,
            _ = cancel_rx => Err(LoginError::Cancelled),
        };
        let _ = updates_tx.send(LoginUpdate::Finished(result)).await;
    });
    LoginSession {
        updates,
        cancel: Some(cancel_tx),
    }
}

/// A sign-in that `run` performs itself, showing and asking through the session's UI (a
/// provider an extension registered with its own `login`).
pub fn start_custom_login<F, Fut>(run: F) -> LoginSession
where
    F: FnOnce(std::sync::Arc<dyn LoginUi>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), LoginError>> + Send + 'static,
{
    let (updates_tx, updates) = mpsc::channel(64);
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    let ui = std::sync::Arc::new(ChannelUi {
        updates: updates_tx.clone(),
    });
    tokio::spawn(async move {
        let result = tokio::select! {
            r = run(ui) => r,
            _ = cancel_rx => Err(LoginError::Cancelled),
        };
        let _ = updates_tx.send(LoginUpdate::Finished(result)).await;
    });
    LoginSession {
        updates,
        cancel: Some(cancel_tx),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_test_support::oauth::OAuthMock;

    fn paths(dir: &std::path::Path) -> Paths {
        Paths::new(dir, dir, dir)
    }

    #[tokio::test]
    async fn a_device_sign_in_reports_the_code_and_saves_the_login() {
        let mock = OAuthMock::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            origin: Some(mock.url()),
            ..Config::default()
        };
        assert!(providers().iter().any(|p| p.id == "xai"));
        let mut session = start_login_with(config, paths(dir.path()), "xai");
        let mut saw_code = false;
        let result = loop {
            match session.next().await.unwrap() {
                LoginUpdate::Show(LoginEvent::DeviceCode { user_code, .. }) => saw_code = user_code == "GROK-1234",
                LoginUpdate::Show(_) => {}
                LoginUpdate::Ask { prompt, .. } => panic!("the device flow asks nothing: {prompt:?}"),
                LoginUpdate::Finished(result) => break result,
            }
        };
        assert!(result.is_ok(), "{result:?}");
        assert!(saw_code);
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("auth.json")).unwrap()).unwrap();
        assert_eq!(saved["xai"]["type"], "oauth");
        assert!(saved["xai"]["refresh"].as_str().is_some_and(|r| !r.is_empty()));
    }

    #[tokio::test]
    async fn dropping_an_answer_or_cancelling_ends_the_sign_in_unsaved() {
        let mock = OAuthMock::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            origin: Some(mock.url()),
            ..Config::default()
        };
        // Copilot first asks for an Enterprise domain: no answer is a cancel.
        let mut session = start_login_with(config.clone(), paths(dir.path()), "github-copilot");
        match session.next().await.unwrap() {
            LoginUpdate::Ask { answer, .. } => drop(answer),
            other => panic!("expected a question, got {other:?}"),
        }
        assert!(matches!(
            session.next().await.unwrap(),
            LoginUpdate::Finished(Err(LoginError::Cancelled))
        ));
        // xAI polls; cancelling stops it.
        let mut session = start_login_with(config, paths(dir.path()), "xai");
        session.cancel();
        let finished = loop {
            if let LoginUpdate::Finished(r) = session.next().await.unwrap() {
                break r;
            }
        };
        assert!(matches!(finished, Err(LoginError::Cancelled)), "{finished:?}");
        assert!(!dir.path().join("auth.json").exists());
        let unknown = start_login_with(Config::default(), paths(dir.path()), "nope")
            .next()
            .await;
        assert!(matches!(
            unknown,
            Some(LoginUpdate::Finished(Err(LoginError::UnknownProvider(_))))
        ));
    }

    #[tokio::test]
    async fn sign_in_with_chatgpt_through_a_session_names_the_installation() {
        let mock = OAuthMock::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            origin: Some(mock.url()),
            callback_port: Some(0),
            ..Config::default()
        };
        let mut session = start_login_with(config, paths(dir.path()), "openai");
        let result = loop {
            match session.next().await.unwrap() {
                LoginUpdate::Show(LoginEvent::AuthUrl { url, .. }) => {
                    // The browser: the mock redirects into the loopback callback.
                    tokio::spawn(async move { reqwest::get(&url).await.map(|r| r.status().as_u16()) });
                }
                LoginUpdate::Show(_) => {}
                // The pasted alternative stays unanswered; the callback wins.
                LoginUpdate::Ask { answer, .. } => std::mem::forget(answer),
                LoginUpdate::Finished(result) => break result,
            }
        };
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(mock.violations(), Vec::<String>::new());
        let settings: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("settings.json")).unwrap()).unwrap();
        let device = settings["deviceId"].as_str().unwrap().to_string();
        let authorize = mock
            .requests()
            .into_iter()
            .find(|r| r.path == "/api/accounts/authorize")
            .unwrap();
        let host = authorize.query.iter().find(|(k, _)| k == "ext_agent_host_id").unwrap();
        assert_eq!(host.1, format!("urn:uuid:{device}"));
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("auth.json")).unwrap()).unwrap();
        assert_eq!(saved["openai"]["clientId"], "app_issued_mock");
        // A second sign-in keeps the installation's id.
        assert_eq!(
            super::super::oauth::device_id(&paths(dir.path())).as_deref(),
            Some(device.as_str())
        );
    }
}
