//! Streamable HTTP for rmcp's transport worker, on the workspace's reqwest client: POSTs with the
//! configured headers and a bearer token, JSON or SSE answers, the GET event stream and DELETE on
//! close. rmcp's worker adds the session id and protocol-version headers and does the reconnects.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt};
use http::{HeaderName, HeaderValue};
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

use crate::oauth::OAuthSession;

const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// JSON bodies past this are refused (an answer of pi's own size limit).
const MAX_JSON_BYTES: usize = 16 * 1024 * 1024;
/// Error bodies are read only this far.
const MAX_ERROR_BYTES: usize = 8 * 1024;

/// Supplies the bearer token for each request (a provider's login token, read fresh every time).
pub type TokenSource = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// Where a server's bearer token comes from.
#[derive(Clone)]
pub enum HttpAuth {
    /// A provider's login token (`auth.provider`).
    Provider(TokenSource),
    /// MCP OAuth: the stored token, refreshed before expiry and after a 401.
    OAuth(Arc<OAuthSession>),
}

/// What the last failed HTTP exchange said, for the connection to classify its failure: rmcp's
/// handshake errors carry the transport error only as text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpFailure {
    #[default]
    None,
    AuthRequired,
    /// Network errors and 408, 429, 5xx except 501: worth another try.
    Transient,
    Other,
}

/// The HTTP client of one server.
#[derive(Clone)]
pub struct PiHttpClient {
    client: reqwest::Client,
    headers: HeaderMap,
    auth: Option<HttpAuth>,
    failure: Arc<std::sync::Mutex<HttpFailure>>,
    /// The last request that could not be sent, as `fetch failed: <cause>`.
    send_error: Arc<std::sync::Mutex<Option<String>>>,
}

impl PiHttpClient {
    pub fn new(client: reqwest::Client, headers: HeaderMap, auth: Option<HttpAuth>) -> Self {
        Self {
            client,
            headers,
            auth,
            failure: Arc::default(),
            send_error: Arc::default(),
        }
    }

    /// The kind of the last failure seen.
    pub fn last_failure(&self) -> HttpFailure {
        *self.failure.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Why the last request could not be sent at all (no connection, DNS, TLS), if that happened.
    pub fn send_error(&self) -> Option<String> {
        self.send_error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn note<T>(
        &self,
        result: Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        if let Err(StreamableHttpError::Client(error)) = &result {
            // The innermost cause says what went wrong ("Connection refused"); the outer ones repeat the URL.
            let mut cause: &dyn std::error::Error = error;
            while let Some(source) = cause.source() {
                cause = source;
            }
            *self.send_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("fetch failed: {cause}"));
        }
        if let Err(error) = &result {
            let kind = match error {
                StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_) => {
                    HttpFailure::AuthRequired
                }
                StreamableHttpError::HttpStatus(status) if status.status != 501 => HttpFailure::Transient,
                StreamableHttpError::Client(e) if e.is_connect() || e.is_timeout() || e.is_request() => {
                    HttpFailure::Transient
                }
                StreamableHttpError::ServerDoesNotSupportSse => return result,
                _ => HttpFailure::Other,
            };
            *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = kind;
        }
        result
    }

    /// The bearer token for the next request.
    async fn token(&self) -> Option<String> {
        match &self.auth {
            Some(HttpAuth::Provider(source)) => source(),
            Some(HttpAuth::OAuth(session)) => session.token().await,
            None => None,
        }
    }

    /// After a 401 or a scope challenge: whether to send the request again (an OAuth token was
    /// refreshed). Provider tokens are read per request, so there is nothing to refresh.
    async fn retry_after_unauthorized(&self, response: &reqwest::Response, token: Option<&str>) -> bool {
        let Some(HttpAuth::OAuth(session)) = &self.auth else {
            return false;
        };
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string);
        session.on_unauthorized(token, challenge.as_deref()).await
    }

    fn request(
        &self,
        method: reqwest::Method,
        uri: &str,
        session_id: Option<&str>,
        custom_headers: &HashMap<HeaderName, HeaderValue>,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut builder = self.client.request(method, uri).headers(self.headers.clone());
        for (name, value) in custom_headers {
            builder = builder.header(name.clone(), value.clone());
        }
        if let Some(session_id) = session_id {
            builder = builder.header(SESSION_ID, session_id);
        }
        if let Some(token) = token {
            builder = builder.bearer_auth(token);
        }
        builder
    }
}

fn media_type_is(value: &str, expected: &str) -> bool {
    value
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(expected))
}

/// A 401, or a 403 asking for more scope.
fn is_auth_challenge(response: &reqwest::Response) -> bool {
    let status = response.status();
    status == StatusCode::UNAUTHORIZED
        || (status == StatusCode::FORBIDDEN
            && response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|h| h.to_str().ok())
                .is_some_and(|c| c.contains("insufficient_scope")))
}

/// 401, and 403 with a scope challenge, become rmcp's auth errors; 429 and 5xx its status error.
fn status_error(response: &reqwest::Response) -> Option<StreamableHttpError<reqwest::Error>> {
    let status = response.status();
    let challenge = response
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    if status == StatusCode::UNAUTHORIZED {
        return Some(StreamableHttpError::AuthRequired(AuthRequiredError::new(
            challenge.unwrap_or_default(),
        )));
    }
    if status == StatusCode::FORBIDDEN {
        if let Some(challenge) = challenge.filter(|c| c.contains("insufficient_scope")) {
            return Some(StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
                challenge, None,
            )));
        }
    }
    if status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        return Some(StreamableHttpError::HttpStatus(HttpStatusError::new(
            status.as_u16(),
            retry_after,
        )));
    }
    None
}

async fn read_limited(
    response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, StreamableHttpError<reqwest::Error>> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        if body.len() + chunk.len() > limit {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn error_prefix(response: reqwest::Response) -> String {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BYTES {
            body.truncate(MAX_ERROR_BYTES);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

fn sse_events(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(response.bytes_stream()).boxed()
}

impl PiHttpClient {
    async fn post_inner(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let awaits_no_response = !matches!(message, ClientJsonRpcMessage::Request(_));
        let body = serde_json::to_vec(&message)?;
        let mut retried = false;
        let response = loop {
            let token = self.token().await;
            let response = self
                .request(
                    reqwest::Method::POST,
                    &uri,
                    session_id.as_deref(),
                    &custom_headers,
                    token.as_deref(),
                )
                .header(ACCEPT, ACCEPT_BOTH)
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone())
                .send()
                .await
                .map_err(StreamableHttpError::Client)?;
            if !retried
                && is_auth_challenge(&response)
                && self.retry_after_unauthorized(&response, token.as_deref()).await
            {
                retried = true;
                continue;
            }
            break response;
        };
        let status = response.status();
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if let Some(error) = status_error(&response) {
            return Err(error);
        }
        let new_session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let is_json = content_type
            .as_deref()
            .is_some_and(|c| media_type_is(c, "application/json"));
        if !status.is_success() {
            if is_json {
                let body = read_limited(response, MAX_JSON_BYTES).await?;
                if let Ok(message @ ServerJsonRpcMessage::Error(_)) =
                    serde_json::from_slice::<ServerJsonRpcMessage>(&body)
                {
                    return Ok(StreamableHttpPostResponse::Json(message, new_session));
                }
                let text = String::from_utf8_lossy(&body[..body.len().min(MAX_ERROR_BYTES)]).into_owned();
                return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                    "HTTP {status}: {text}"
                ))));
            }
            let text = error_prefix(response).await;
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                "HTTP {status}: {text}"
            ))));
        }
        match content_type.as_deref() {
            Some(c) if media_type_is(c, "text/event-stream") => {
                Ok(StreamableHttpPostResponse::Sse(sse_events(response), new_session))
            }
            Some(c) if media_type_is(c, "application/json") => {
                let body = read_limited(response, MAX_JSON_BYTES).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, new_session)),
                    Err(_) if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::Deserialize(e)),
                }
            }
            _ if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(other.map(str::to_string))),
        }
    }

    async fn delete_inner(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let token = self.token().await;
        let send = self
            .request(
                reqwest::Method::DELETE,
                &uri,
                Some(&session_id),
                &custom_headers,
                token.as_deref(),
            )
            .send();
        // Closing must not hang on a server that does not answer.
        match tokio::time::timeout(std::time::Duration::from_secs(1), send).await {
            Ok(Ok(_)) | Err(_) => Ok(()),
            Ok(Err(e)) => Err(StreamableHttpError::Client(e)),
        }
    }

    async fn get_inner(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<reqwest::Error>> {
        let mut retried = false;
        let response = loop {
            let token = self.token().await;
            let mut builder = self
                .request(
                    reqwest::Method::GET,
                    &uri,
                    session_id.as_deref(),
                    &custom_headers,
                    token.as_deref(),
                )
                .header(ACCEPT, "text/event-stream");
            if let Some(id) = &last_event_id {
                builder = builder.header(LAST_EVENT_ID, id.clone());
            }
            let response = builder.send().await.map_err(StreamableHttpError::Client)?;
            if !retried
                && is_auth_challenge(&response)
                && self.retry_after_unauthorized(&response, token.as_deref()).await
            {
                retried = true;
                continue;
            }
            break response;
        };
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(error) = status_error(&response) {
            return Err(error);
        }
        if !response.status().is_success() {
            let status = response.status();
            let text = error_prefix(response).await;
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                "HTTP {status}: {text}"
            ))));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if !content_type
            .as_deref()
            .is_some_and(|c| media_type_is(c, "text/event-stream"))
        {
            return Err(StreamableHttpError::UnexpectedContentType(content_type));
        }
        Ok(sse_events(response))
    }
}

impl StreamableHttpClient for PiHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let result = self
            .post_inner(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.note(result)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.delete_inner(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let result = self
            .get_inner(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.note(result)
    }
}
