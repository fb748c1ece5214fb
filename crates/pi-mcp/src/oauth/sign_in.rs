//! Signing in to a server: the stored refresh token when it still works, otherwise the browser
//! step (a loopback callback, or a redirect URL pasted by the user) with PKCE S256, then the code
//! exchange. Every step stops when the cancel token fires; each request to the authorization
//! server is bounded by 15 seconds.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::callback::{response_from_redirect_url, AuthorizationResponse, CallbackServer};
use super::discovery::Challenge;
use super::flow::{
    authorization_url, client_id, client_metadata_document, documents_list, new_state, offers_document, pkce,
    register_client, token_request, AuthorizationRequest,
};
use super::grant::{configured_client, discovered, refresh_stored, OAuthTarget, Refreshed};
use super::session::with_refresh_lock;
use super::settings::{loopback, CLIENT_NAME};
use super::store::ServerState;
use super::OAuthError;

/// What a sign-in tells its screen as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInEvent {
    /// Discovery and client registration are under way.
    Contacting,
    /// The user has to open this URL (the browser was asked to when `open_browser` is set).
    AuthorizationUrl(String),
    /// The authorization response arrived; the code is being exchanged.
    Exchanging,
}

pub type SignInEvents = Arc<dyn Fn(SignInEvent) + Send + Sync>;

/// How a sign-in runs.
pub struct SignInOptions {
    pub target: OAuthTarget,
    /// The server's last challenge (its metadata URL and the scope it asked for).
    pub challenge: Option<Challenge>,
    pub cancel: CancellationToken,
    pub on_event: SignInEvents,
    /// Redirect URLs the user pastes (each is checked; a wrong one fails the sign-in).
    pub pasted: Option<mpsc::Receiver<String>>,
    /// Open the authorization URL with the system's browser (or `$BROWSER`).
    pub open_browser: bool,
}

/// How the sign-in ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedIn {
    /// The stored refresh token still worked: no browser was needed.
    Refreshed,
    /// The user authorized in the browser.
    Authorized,
}

/// Scopes of all lists, each once.
fn merge_scopes(scopes: &[Option<&str>]) -> Option<String> {
    let mut merged: Vec<&str> = Vec::new();
    for scope in scopes.iter().flatten() {
        for s in scope.split_whitespace() {
            if !merged.contains(&s) {
                merged.push(s);
            }
        }
    }
    (!merged.is_empty()).then(|| merged.join(" "))
}

async fn cancellable<T>(
    cancel: &CancellationToken,
    f: impl std::future::Future<Output = Result<T, OAuthError>>,
) -> Result<T, OAuthError> {
    tokio::select! {
        _ = cancel.cancelled() => Err(OAuthError::Cancelled),
        result = f => result,
    }
}

/// Sign in to `options.target`, storing the tokens.
pub async fn sign_in(mut options: SignInOptions) -> Result<SignedIn, OAuthError> {
    let cancel = options.cancel.clone();
    if cancel.is_cancelled() {
        return Err(OAuthError::Cancelled);
    }
    let target = options.target.clone();
    let settings = &target.settings;
    let step_up = options.challenge.as_ref().is_some_and(Challenge::insufficient_scope);
    (options.on_event)(SignInEvent::Contacting);

    // A refresh keeps the granted scope; a server asking for more needs the browser step.
    if !step_up {
        let challenge = options.challenge.clone();
        let refreshed = with_refresh_lock(&target, async {
            let mut state = target.load()?;
            if state.refresh_token().is_none()
                || (settings.client_registration == "cimd"
                    && state.client_information.is_some()
                    && settings.client_id.is_none())
            {
                return Ok(Refreshed::NeedsSignIn);
            }
            refresh_stored(&target, &mut state, challenge.as_ref()).await
        });
        match cancellable(&cancel, async { refreshed.await.and_then(|inner| inner.transpose()) }).await? {
            Some(Refreshed::Authorized) => return Ok(SignedIn::Refreshed),
            Some(Refreshed::NeedsSignIn) | None => {}
        }
    }

    // The callback listens where the settings say, else on the stored client's port (so the
    // client stays valid), else on a free port.
    let loop_settings = loopback(settings);
    let stored = target.load()?;
    let registered_port = stored
        .registered_redirect_uris()
        .first()
        .and_then(|u| reqwest::Url::parse(u).ok())
        .and_then(|u| u.port());
    let port = loop_settings.port.or(registered_port);
    let mut paths = vec![loop_settings.path.clone()];
    if offers_document(settings, &loop_settings.url) {
        paths.push(format!(
            "{}/{}",
            loop_settings.path.trim_end_matches('/'),
            super::flow::callback_id(&target.url)
        ));
    }
    let mut callback = match CallbackServer::listen(&loop_settings, port.unwrap_or(0), paths.clone()).await {
        Ok(callback) => callback,
        // A configured port is required; the stored client's port is only preferred.
        Err(e) if loop_settings.port.is_some() || port.is_none() => return Err(e),
        Err(_) => CallbackServer::listen(&loop_settings, 0, paths).await?,
    };
    let redirect_url = loop_settings
        .fixed_redirect_url
        .clone()
        .unwrap_or_else(|| callback.redirect_url.clone());

    let prepared = cancellable(
        &cancel,
        prepare(&target, stored, &redirect_url, options.challenge.as_ref(), step_up),
    )
    .await?;
    if options.open_browser {
        super::browser::open(&prepared.authorization_url);
    }
    (options.on_event)(SignInEvent::AuthorizationUrl(prepared.authorization_url.clone()));

    let redirect_path = reqwest::Url::parse(&prepared.redirect_uri)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let pasted = async {
        match options.pasted.as_mut() {
            Some(rx) => match rx.recv().await {
                Some(input) if !input.trim().is_empty() => {
                    response_from_redirect_url(&input, &prepared.redirect_uri, &prepared.state)
                }
                _ => Err(OAuthError::Cancelled),
            },
            None => std::future::pending().await,
        }
    };
    let response = tokio::select! {
        _ = cancel.cancelled() => return Err(OAuthError::Cancelled),
        r = callback.wait(&prepared.state, &redirect_path) => r?,
        r = pasted => r?,
    };
    drop(callback);
    (options.on_event)(SignInEvent::Exchanging);
    cancellable(&cancel, complete(&target, &prepared, response)).await?;
    Ok(SignedIn::Authorized)
}

/// A browser step ready to go.
struct Prepared {
    authorization_url: String,
    redirect_uri: String,
    state: String,
    scope: Option<String>,
}

/// Drop what the browser step replaces, then discover, pick or register the client and build the
/// authorization URL; the state and verifier are stored for the exchange.
async fn prepare(
    target: &OAuthTarget,
    mut state: ServerState,
    redirect_url: &str,
    challenge: Option<&Challenge>,
    step_up: bool,
) -> Result<Prepared, OAuthError> {
    let settings = &target.settings;
    state.oauth_state = None;
    // A registered client cannot use another redirect URI, and its tokens belong to it.
    let keep_client = settings.client_id.is_some()
        || match &state.client_information {
            Some(_) => {
                settings.client_registration != "cimd"
                    && state.registered_redirect_uris().iter().any(|u| u == redirect_url)
            }
            None => offers_document(settings, redirect_url),
        };
    if !keep_client {
        state.client_information = None;
        state.clear_tokens();
    }
    let challenged = if step_up {
        let granted = state.tokens.as_ref().and_then(|t| t.scope.clone());
        merge_scopes(&[granted.as_deref(), challenge.and_then(|c| c.scope.as_deref())])
    } else {
        challenge.and_then(|c| c.scope.clone())
    };
    let found = discovered(target, &mut state, challenge).await?;
    let scope = merge_scopes(&[settings.scope.as_deref(), challenged.as_deref()]).or(found.scopes_supported.clone());

    let document = if state.client_information.is_none()
        && settings.client_id.is_none()
        && offers_document(settings, redirect_url)
    {
        if !documents_list(redirect_url) {
            return Err(OAuthError::Failed(format!(
                "oauth.clientRegistration \"cimd\" needs Client ID Metadata Documents that list the redirect URI {redirect_url}"
            )));
        }
        let document = client_metadata_document(&target.url, redirect_url, found.metadata.as_ref());
        if document.is_none() && settings.client_registration == "cimd" {
            return Err(OAuthError::Failed("The authorization server does not support Client ID Metadata Documents for public clients; remove oauth.clientRegistration \"cimd\"".into()));
        }
        document
    } else {
        None
    };
    let redirect_uri = document
        .as_ref()
        .map_or_else(|| redirect_url.to_string(), |(_, r)| r.clone());
    let client = match (configured_client(settings), &state.client_information, &document) {
        (Some(client), _, _) => client,
        (None, Some(stored), _) => stored.clone(),
        (None, None, Some((id, _))) => {
            let mut client = serde_json::Map::new();
            client.insert("client_id".into(), json!(id));
            client
        }
        (None, None, None) => {
            let name = settings.client_name.as_deref().unwrap_or(CLIENT_NAME);
            let registered = register_client(
                &target.http,
                &found.issuer,
                found.metadata.as_ref(),
                name,
                &redirect_uri,
                scope.as_deref(),
            )
            .await;
            let registered = match registered {
                Ok(registered) => registered,
                Err(e) => {
                    let _ = target.save(&state);
                    return Err(e);
                }
            };
            state.client_information = Some(registered.clone());
            registered
        }
    };
    let oauth_state = new_state()?;
    let (verifier, challenge_code) = pkce()?;
    let url = authorization_url(
        &found.issuer,
        found.metadata.as_ref(),
        &AuthorizationRequest {
            client_id: client_id(&client),
            redirect_uri: &redirect_uri,
            state: &oauth_state,
            challenge: &challenge_code,
            scope: scope.as_deref(),
            resource: found.resource.as_deref(),
        },
    )?;
    state.oauth_state = Some(oauth_state.clone());
    state.code_verifier = Some(verifier);
    target.save(&state)?;
    Ok(Prepared {
        authorization_url: url,
        redirect_uri,
        state: oauth_state,
        scope,
    })
}

/// Check the response and exchange its code.
async fn complete(
    target: &OAuthTarget,
    prepared: &Prepared,
    response: AuthorizationResponse,
) -> Result<(), OAuthError> {
    if response.state != prepared.state {
        return Err(OAuthError::Failed(
            "The authorization response belongs to a different sign-in".into(),
        ));
    }
    let mut state = target.load()?;
    if state.oauth_state.as_deref() != Some(prepared.state.as_str()) {
        return Err(OAuthError::Failed(
            "Another sign-in to this MCP server started since; sign in again".into(),
        ));
    }
    let found = discovered(target, &mut state, None).await?;
    // RFC 9207: never send a code from another authorization server to this one.
    let iss_supported = found
        .metadata
        .as_ref()
        .is_some_and(|m| m.flag("authorization_response_iss_parameter_supported"));
    if response.iss.is_some() || iss_supported {
        let issuer = found.metadata.as_ref().map(|m| m.issuer().to_string());
        if response.iss != issuer {
            return Err(OAuthError::Failed(format!(
                "The authorization response came from issuer {}, not {}",
                response.iss.as_deref().unwrap_or("(none)"),
                issuer.as_deref().unwrap_or("(unknown)")
            )));
        }
    }
    let client = match configured_client(&target.settings).or_else(|| state.client_information.clone()) {
        Some(client) => client,
        None => match client_metadata_document(&target.url, &prepared.redirect_uri, found.metadata.as_ref())
            .or_else(|| {
                // The document of a server-specific redirect URI names the server's own document.
                let base = prepared.redirect_uri.rsplit_once('/').map(|(b, _)| b.to_string())?;
                client_metadata_document(&target.url, &base, found.metadata.as_ref())
            }) {
            Some((id, _)) => serde_json::Map::from_iter([("client_id".to_string(), Value::String(id))]),
            None => {
                return Err(OAuthError::Failed(
                    "OAuth client information is missing during code exchange: the authorization request's client was removed, or the client settings changed".into(),
                ))
            }
        },
    };
    let verifier = state
        .code_verifier
        .clone()
        .ok_or_else(|| OAuthError::Failed("No OAuth PKCE code verifier is stored".into()))?;
    let params = vec![
        ("grant_type".to_string(), "authorization_code".to_string()),
        ("code".to_string(), response.code),
        ("code_verifier".to_string(), verifier),
        ("redirect_uri".to_string(), prepared.redirect_uri.clone()),
    ];
    let exchanged = token_request(
        &target.http,
        &found.issuer,
        found.metadata.as_ref(),
        &client,
        found.resource.as_deref(),
        params,
    )
    .await;
    let mut tokens = match exchanged {
        Ok(tokens) => tokens,
        Err(OAuthError::Grant { code, description }) => {
            if code == "invalid_client" || code == "unauthorized_client" {
                state.client_information = None;
                state.discovery = None;
                state.clear_tokens();
                let _ = target.save(&state);
            }
            return Err(OAuthError::Grant { code, description });
        }
        Err(other) => return Err(other),
    };
    // A response without `scope` grants the requested scope (RFC 6749 §5.1).
    if tokens.scope.is_none() {
        tokens.scope = prepared.scope.clone();
    }
    state.set_tokens(tokens);
    target.save(&state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_merge_once_each_in_order() {
        assert_eq!(merge_scopes(&[Some("a b"), Some("b c")]).as_deref(), Some("a b c"));
        assert_eq!(merge_scopes(&[None, Some(" ")]), None);
    }
}
