//! One WebSocket to the Codex backend: the connection (TCP, an HTTP proxy's `CONNECT` tunnel
//! when `HTTPS_PROXY`/`HTTP_PROXY` name one, TLS for `wss:`), the upgrade with pi's headers,
//! and the reply's frames read as Responses events.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use crate::providers::openai_responses::stream::{Failure, RawEvent, ResponsesEvents};

/// The byte stream under a socket: plain TCP or TLS, possibly through a proxy tunnel.
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

pub(crate) type Socket = WebSocketStream<Box<dyn Io>>;

/// The close code Node reports for a connection that ended without a close frame.
const ABNORMAL_CLOSE: u16 = 1006;
const MESSAGE_TOO_BIG: u16 = 1009;

/// Open a socket to `url` (`ws:` or `wss:`) with `headers`, within `timeout` (none if zero).
/// Errors are worded as pi 1.6 words them; every one is a transport failure.
pub(crate) async fn connect(url: &str, headers: &[(String, String)], timeout: Duration) -> Result<Socket, String> {
    let attempt = open(url, headers);
    if timeout.is_zero() {
        return attempt.await;
    }
    match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(format!("WebSocket connect timeout after {}ms", timeout.as_millis())),
    }
}

async fn open(url: &str, headers: &[(String, String)]) -> Result<Socket, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("Invalid WebSocket URL {url}: {e}"))?;
    let secure = match parsed.scheme() {
        "wss" => true,
        "ws" => false,
        other => return Err(format!("Unsupported WebSocket scheme: {other}")),
    };
    let host = parsed
        .host_str()
        .ok_or_else(|| format!("WebSocket URL has no host: {url}"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
    let port = parsed.port_or_known_default().unwrap_or(if secure { 443 } else { 80 });

    let tcp = match proxy_for(&host, secure) {
        Some(proxy) => tunnel(&proxy, &host, port).await?,
        None => TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| connect_error(&e, &host, port))?,
    };
    let _ = tcp.set_nodelay(true);
    let io: Box<dyn Io> = if secure {
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|_| format!("Invalid TLS server name: {host}"))?;
        let tls = tokio_rustls::TlsConnector::from(tls_config())
            .connect(name, tcp)
            .await
            .map_err(|e| format!("WebSocket TLS handshake failed: {e}"))?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };

    let mut request = url.into_client_request().map_err(|e| e.to_string())?;
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("Invalid header name: {name}"))?;
        let value = HeaderValue::from_str(value).map_err(|_| format!("Invalid value for header {name}"))?;
        request.headers_mut().insert(name, value);
    }
    let (socket, _response) = tokio_tungstenite::client_async(request, io)
        .await
        .map_err(|e| match e {
            WsError::Http(response) => format!("Unexpected server response: {}", response.status().as_u16()),
            other => other.to_string(),
        })?;
    Ok(socket)
}

/// rustls with the webpki roots and ring, as reqwest is built.
fn tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    Arc::clone(CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = match rustls::ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions() {
            Ok(builder) => builder.with_root_certificates(roots).with_no_client_auth(),
            // ring always offers the default versions; keep a working config regardless.
            Err(_) => rustls::ClientConfig::builder()
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth(),
        };
        Arc::new(config)
    }))
}

fn connect_error(error: &std::io::Error, host: &str, port: u16) -> String {
    let code = match error.kind() {
        std::io::ErrorKind::ConnectionRefused => "ECONNREFUSED",
        std::io::ErrorKind::ConnectionReset => "ECONNRESET",
        std::io::ErrorKind::TimedOut => "ETIMEDOUT",
        _ => return format!("WebSocket connection to {host}:{port} failed: {error}"),
    };
    format!("connect {code} {host}:{port}")
}

/// The proxy for `host` from the environment, as reqwest reads it for HTTP requests
/// (`HTTPS_PROXY` for `wss:`, `HTTP_PROXY` for `ws:`, `ALL_PROXY` for both, minus `NO_PROXY`).
fn proxy_for(host: &str, secure: bool) -> Option<url::Url> {
    let var = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
    };
    let raw = if secure {
        var(&["HTTPS_PROXY", "https_proxy"])
    } else {
        var(&["HTTP_PROXY", "http_proxy"])
    }
    .or_else(|| var(&["ALL_PROXY", "all_proxy"]))?;
    if let Some(no_proxy) = var(&["NO_PROXY", "no_proxy"]) {
        if bypasses(&no_proxy, host) {
            return None;
        }
    }
    let with_scheme = if raw.contains("://") {
        raw
    } else {
        format!("http://{raw}")
    };
    url::Url::parse(&with_scheme).ok().filter(|u| u.scheme() == "http")
}

/// Whether `NO_PROXY` (comma-separated hosts, `.suffix` domains, `*`) covers `host`.
fn bypasses(no_proxy: &str, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    no_proxy
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            let entry = entry.to_ascii_lowercase();
            let entry = entry.split(':').next().unwrap_or(&entry).to_string();
            if entry == "*" {
                return true;
            }
            let domain = entry.trim_start_matches('.');
            host == domain || host.ends_with(&format!(".{domain}"))
        })
}

/// A TCP stream to `host:port` through an HTTP proxy's `CONNECT`.
async fn tunnel(proxy: &url::Url, host: &str, port: u16) -> Result<TcpStream, String> {
    let proxy_host = proxy.host_str().unwrap_or("localhost").to_string();
    let proxy_port = proxy.port_or_known_default().unwrap_or(80);
    let mut stream = TcpStream::connect((proxy_host.as_str(), proxy_port))
        .await
        .map_err(|e| connect_error(&e, &proxy_host, proxy_port))?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if !proxy.username().is_empty() {
        use base64::Engine;
        let user = percent_decode(proxy.username());
        let pass = percent_decode(proxy.password().unwrap_or(""));
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        head.push_str(&format!("Proxy-Authorization: Basic {token}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(|e| format!("Proxy CONNECT failed: {e}"))?;
    // Read the proxy's answer byte by byte up to the blank line, so nothing of the tunnel's
    // own traffic is consumed.
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() > 16 * 1024 {
            return Err("Proxy CONNECT answer too long".to_string());
        }
        let byte = stream
            .read_u8()
            .await
            .map_err(|e| format!("Proxy CONNECT failed: {e}"))?;
        answer.push(byte);
    }
    let status_line = String::from_utf8_lossy(&answer);
    let status = status_line.split_whitespace().nth(1).unwrap_or("");
    if status != "200" {
        return Err(format!("Proxy CONNECT to {authority} answered {status}"));
    }
    Ok(stream)
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| text.to_string())
}

/// The reply's frames on a socket as Responses events; a silence longer than `idle` fails.
pub(crate) struct FrameEvents<'a> {
    pub socket: &'a mut Socket,
    pub idle: Option<Duration>,
}

impl ResponsesEvents for FrameEvents<'_> {
    async fn next_event(&mut self) -> Result<Option<RawEvent>, Failure> {
        loop {
            let next = match self.idle {
                Some(limit) => match tokio::time::timeout(limit, self.socket.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        return Err(Failure::Transport(format!(
                            "WebSocket idle timeout after {}ms",
                            limit.as_millis()
                        )))
                    }
                },
                None => self.socket.next().await,
            };
            let text = match next {
                None => return Err(Failure::Transport(format!("WebSocket closed {ABNORMAL_CLOSE}"))),
                Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => {
                    return Err(Failure::Transport(format!("WebSocket closed {ABNORMAL_CLOSE}")))
                }
                Some(Err(WsError::Capacity(_))) => {
                    return Err(Failure::Transport(format!(
                        "WebSocket closed {MESSAGE_TOO_BIG} message too big"
                    )))
                }
                Some(Err(WsError::Protocol(_) | WsError::Io(_))) => {
                    return Err(Failure::Transport(format!("WebSocket closed {ABNORMAL_CLOSE}")))
                }
                Some(Err(e)) => return Err(Failure::Transport(e.to_string())),
                Some(Ok(Message::Text(text))) => text.as_str().to_string(),
                Some(Ok(Message::Binary(bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
                Some(Ok(Message::Close(frame))) => {
                    let text = match frame {
                        Some(f) => {
                            let code = u16::from(f.code);
                            let reason = if f.reason.is_empty() && f.code == CloseCode::Size {
                                "message too big".to_string()
                            } else {
                                f.reason.as_str().to_string()
                            };
                            format!("WebSocket closed {code} {reason}").trim().to_string()
                        }
                        None => "WebSocket closed 1005".to_string(),
                    };
                    return Err(Failure::Transport(text));
                }
                Some(Ok(_)) => continue,
            };
            if text.is_empty() {
                continue;
            }
            crate::provider_hooks::report_stream_event(&text).await;
            return Ok(Some(RawEvent {
                event: String::new(),
                data: text,
            }));
        }
    }

    fn carrier(&self) -> &'static str {
        "WebSocket"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_proxy_entries_cover_hosts_and_their_subdomains() {
        assert!(bypasses("localhost,.example.com", "api.example.com"));
        assert!(bypasses("example.com:443", "example.com"));
        assert!(bypasses("*", "chatgpt.com"));
        assert!(!bypasses("example.com", "notexample.com"));
        assert!(!bypasses("", "chatgpt.com"));
    }
}
