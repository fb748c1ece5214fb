//! The steps shared by sign-in and refresh: the authorization server (cached discovery or a new
//! one), the client to use, and the refresh grant with 1.6's handling of its failures.

use serde_json::{json, Map, Value};

use super::discovery::{authorization_server_metadata, discover, select_resource, Challenge, ServerMetadata};
use super::flow::{client_metadata_document, documents_list, offers_document, token_request};
use super::http::OAuthHttp;
use super::settings::{loopback, OAuthSettings, DEFAULT_REDIRECT_URL};
use super::store::{normalize_url, AuthFile, DiscoveryState, ServerState};
use super::OAuthError;

/// One OAuth-protected server: its name, URL and settings, and where its state is stored.
#[derive(Clone)]
pub struct OAuthTarget {
    pub server: String,
    /// As configured; stored state is keyed by its normalised form.
    pub url: String,
    pub settings: OAuthSettings,
    pub file: AuthFile,
    pub http: OAuthHttp,
}

impl OAuthTarget {
    pub fn normalized_url(&self) -> String {
        normalize_url(&self.url)
    }

    /// The stored state of this server, or a fresh one; state stored for another URL is ignored.
    pub fn load(&self) -> Result<ServerState, OAuthError> {
        let url = self.normalized_url();
        let state = self.file.load(&self.server, &self.url)?;
        Ok(match state {
            Some(state) if state.server_url.as_deref() == Some(url.as_str()) => state,
            _ => ServerState {
                server_url: Some(url),
                ..ServerState::default()
            },
        })
    }

    pub fn save(&self, state: &ServerState) -> Result<(), OAuthError> {
        self.file.save(&self.server, &self.url, state)
    }
}

/// The authorization server and its metadata.
pub(crate) struct Discovered {
    pub issuer: String,
    pub metadata: Option<ServerMetadata>,
    pub resource: Option<String>,
    pub scopes_supported: Option<String>,
}

/// Use the cached discovery, or discover (and cache unless the metadata URL is configured).
pub(crate) async fn discovered(
    target: &OAuthTarget,
    state: &mut ServerState,
    challenge: Option<&Challenge>,
) -> Result<Discovered, OAuthError> {
    let configured = target.settings.auth_server_metadata_url.as_deref();
    let cached = if configured.is_some() {
        None
    } else {
        state.discovery.clone()
    };
    let discovery = match cached {
        Some(mut cached) => {
            if cached.authorization_server_metadata.is_none() {
                cached.authorization_server_metadata =
                    authorization_server_metadata(&target.http, &cached.authorization_server_url)
                        .await?
                        .map(|m| Value::Object(m.0));
            }
            cached
        }
        None => {
            let found = discover(
                &target.http,
                &target.url,
                challenge.and_then(|c| c.resource_metadata_url.as_deref()),
                configured,
            )
            .await?;
            if configured.is_none() {
                state.discovery = Some(found.clone());
            }
            found
        }
    };
    let DiscoveryState {
        authorization_server_url,
        authorization_server_metadata,
        resource_metadata,
        ..
    } = discovery;
    let metadata = authorization_server_metadata.map(ServerMetadata::parse).transpose()?;
    let resource = select_resource(&target.url, resource_metadata.as_ref())?;
    let scopes_supported = resource_metadata
        .as_ref()
        .and_then(|m| m.get("scopes_supported"))
        .and_then(Value::as_array)
        .map(|s| s.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty());
    Ok(Discovered {
        issuer: authorization_server_url,
        metadata,
        resource,
        scopes_supported,
    })
}

/// The configured client (`clientId`, `clientSecret`).
pub(crate) fn configured_client(settings: &OAuthSettings) -> Option<Map<String, Value>> {
    let id = settings.client_id.as_ref()?;
    let mut client = Map::new();
    client.insert("client_id".into(), json!(id));
    if let Some(secret) = &settings.client_secret {
        client.insert("client_secret".into(), json!(secret));
    }
    Some(client)
}

/// How a refresh ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    /// New tokens are stored.
    Authorized,
    /// Only a sign-in in the browser helps.
    NeedsSignIn,
}

/// Refresh the stored tokens with the client that got them. Never registers a client or starts
/// an authorization, so a pending sign-in stays usable. Saves what it learns.
pub(crate) async fn refresh_stored(
    target: &OAuthTarget,
    state: &mut ServerState,
    challenge: Option<&Challenge>,
) -> Result<Refreshed, OAuthError> {
    let Some(refresh_token) = state.refresh_token().map(str::to_string) else {
        return Ok(Refreshed::NeedsSignIn);
    };
    let found = discovered(target, state, challenge).await?;
    let client = match configured_client(&target.settings).or_else(|| state.client_information.clone()) {
        Some(client) => client,
        None => {
            // Tokens without a stored client came from a Client ID Metadata Document.
            let settings = &target.settings;
            let candidates = [
                loopback(settings).fixed_redirect_url,
                state.registered_redirect_uris().first().cloned(),
            ];
            let redirect = candidates
                .into_iter()
                .flatten()
                .find(|u| documents_list(u))
                .unwrap_or_else(|| DEFAULT_REDIRECT_URL.to_string());
            let document = offers_document(settings, &redirect)
                .then(|| client_metadata_document(&target.url, &redirect, found.metadata.as_ref()))
                .flatten();
            match document {
                Some((id, _)) => {
                    let mut client = Map::new();
                    client.insert("client_id".into(), json!(id));
                    client
                }
                None => {
                    target.save(state)?;
                    return Ok(Refreshed::NeedsSignIn);
                }
            }
        }
    };
    let params = vec![
        ("grant_type".to_string(), "refresh_token".to_string()),
        ("refresh_token".to_string(), refresh_token.clone()),
    ];
    match token_request(
        &target.http,
        &found.issuer,
        found.metadata.as_ref(),
        &client,
        found.resource.as_deref(),
        params,
    )
    .await
    {
        Ok(mut tokens) => {
            // A refresh keeps the refresh token and the scope it does not replace (RFC 6749 §6).
            if tokens.refresh_token.is_none() {
                tokens.refresh_token = Some(refresh_token);
            }
            if tokens.scope.is_none() {
                tokens.scope = state.tokens.as_ref().and_then(|t| t.scope.clone());
            }
            state.set_tokens(tokens);
            target.save(state)?;
            Ok(Refreshed::Authorized)
        }
        Err(OAuthError::Grant { code, .. }) if code == "invalid_grant" => {
            state.clear_tokens();
            target.save(state)?;
            Ok(Refreshed::NeedsSignIn)
        }
        Err(OAuthError::Grant { code, .. }) if code == "invalid_client" || code == "unauthorized_client" => {
            state.client_information = None;
            state.clear_tokens();
            state.discovery = None;
            target.save(state)?;
            Ok(Refreshed::NeedsSignIn)
        }
        Err(OAuthError::Grant { code, .. }) if code == "server_error" => {
            target.save(state)?;
            Ok(Refreshed::NeedsSignIn)
        }
        Err(other) => {
            let _ = target.save(state);
            Err(other)
        }
    }
}
