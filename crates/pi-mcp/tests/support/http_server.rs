//! The test server behind Streamable HTTP on 127.0.0.1: one POST per client message (JSON or SSE
//! answers), 405 for the GET stream, DELETE accepted, an optional bearer token that gives 401 when
//! missing. Every request's method, headers and body are recorded.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::sync::mpsc;

use super::server::State;

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Default)]
pub struct HttpOptions {
    /// Answer requests with an SSE stream instead of a JSON body.
    pub sse: bool,
    /// Require `Authorization: Bearer <token>`.
    pub bearer: Option<String>,
    /// Answer this many POSTs with 503 first.
    pub fail_first: usize,
}

pub struct HttpServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

fn full(status: StatusCode, body: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed_unsync());
    *response.status_mut() = status;
    response
}

async fn serve(
    request: Request<Incoming>,
    state: Arc<State>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    options: HttpOptions,
) -> Result<Response<Body>, Infallible> {
    let method = request.method().to_string();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let bytes = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body: Option<Value> = serde_json::from_slice(&bytes).ok();
    requests.lock().unwrap_or_else(|p| p.into_inner()).push(Recorded {
        method: method.clone(),
        headers: headers.clone(),
        body: body.clone(),
    });
    if let Some(token) = &options.bearer {
        let expected = format!("Bearer {token}");
        if !headers.iter().any(|(k, v)| k == "authorization" && *v == expected) {
            let mut response = full(StatusCode::UNAUTHORIZED, "");
            response.headers_mut().insert(
                "www-authenticate",
                hyper::header::HeaderValue::from_static(
                    "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\"",
                ),
            );
            return Ok(response);
        }
    }
    match method.as_str() {
        "GET" => return Ok(full(StatusCode::METHOD_NOT_ALLOWED, "")),
        "DELETE" => return Ok(full(StatusCode::OK, "")),
        "POST" => {}
        _ => return Ok(full(StatusCode::METHOD_NOT_ALLOWED, "")),
    }
    if options.fail_first > 0 {
        let failures = requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|r| r.method == "POST")
            .count();
        if failures <= options.fail_first {
            return Ok(full(StatusCode::SERVICE_UNAVAILABLE, "warming up"));
        }
    }
    let Some(message) = body else {
        return Ok(full(StatusCode::BAD_REQUEST, "not json"));
    };
    let is_request = message.get("method").is_some() && message.get("id").is_some();
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let handler_state = state.clone();
    tokio::spawn(async move { handler_state.handle(message, tx).await });
    if !is_request {
        return Ok(full(StatusCode::ACCEPTED, ""));
    }
    let mut response = if options.sse {
        let events = futures::stream::unfold(rx, |mut rx| async move {
            let message = rx.recv().await?;
            let event = format!("event: message\ndata: {message}\n\n");
            Some((Ok::<_, Infallible>(Frame::data(Bytes::from(event))), rx))
        });
        let mut response = Response::new(BodyExt::boxed_unsync(StreamBody::new(StreamExt::boxed(events))));
        response.headers_mut().insert(
            "content-type",
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
        response
    } else {
        let mut answer = None;
        while let Some(message) = rx.recv().await {
            if message.get("result").is_some() || message.get("error").is_some() {
                answer = Some(message);
                break;
            }
        }
        let Some(answer) = answer else {
            return Ok(full(StatusCode::INTERNAL_SERVER_ERROR, "no answer"));
        };
        let mut response = full(StatusCode::OK, &answer.to_string());
        response.headers_mut().insert(
            "content-type",
            hyper::header::HeaderValue::from_static("application/json"),
        );
        response
    };
    if is_initialize {
        response
            .headers_mut()
            .insert("mcp-session-id", hyper::header::HeaderValue::from_static("session-1"));
    }
    Ok(response)
}

pub async fn start(options: HttpOptions) -> HttpServer {
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(listener) => listener,
        Err(e) => panic!("bind 127.0.0.1: {e}"),
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let state = Arc::new(State::default());
    let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
    let (s, r) = (state, requests.clone());
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (s, r, o) = (s.clone(), r.clone(), options.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| serve(req, s.clone(), r.clone(), o.clone()));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    HttpServer {
        url: format!("http://127.0.0.1:{port}/mcp"),
        requests,
        task,
    }
}
