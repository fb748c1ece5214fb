//! The loopback server the browser is redirected to at the end of a sign-in, and the redirect URL
//! a user pastes instead. A response is accepted only with the sign-in's `state` and on its
//! redirect path; the browser gets a short page, the sign-in gets `code` and `iss`.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::settings::Loopback;
use super::OAuthError;

/// What the authorization server sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationResponse {
    pub code: String,
    pub state: String,
    pub iss: Option<String>,
}

/// A listening callback server; stops when dropped.
pub struct CallbackServer {
    /// `http://<host>:<port><path>` on the bound port.
    pub redirect_url: String,
    results: mpsc::Receiver<(String, Result<AuthorizationResponse, OAuthError>)>,
    task: JoinHandle<()>,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn page(status: &str, message: &str) -> Vec<u8> {
    let escaped = message.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>pi</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><p>{escaped}</p></body></html>"
    );
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn query_of(url: &reqwest::Url, key: &str) -> Option<String> {
    url.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned())
}

/// Read a response's fields; `Err` carries what the browser page says.
fn response_of(url: &reqwest::Url) -> (Option<String>, Result<AuthorizationResponse, OAuthError>) {
    let state = query_of(url, "state");
    if let Some(error) = query_of(url, "error") {
        let description = query_of(url, "error_description").unwrap_or(error);
        return (state, Err(OAuthError::Failed(description)));
    }
    let Some(code) = query_of(url, "code") else {
        return (
            state,
            Err(OAuthError::Failed(
                "OAuth callback did not include an authorization code".into(),
            )),
        );
    };
    let response = AuthorizationResponse {
        code,
        state: state.clone().unwrap_or_default(),
        iss: query_of(url, "iss"),
    };
    (state, Ok(response))
}

impl CallbackServer {
    /// Bind where `loopback` says (port 0 picks a free one) and answer on `paths`.
    pub async fn listen(loopback: &Loopback, port: u16, paths: Vec<String>) -> Result<CallbackServer, OAuthError> {
        let listener = TcpListener::bind((loopback.host.as_str(), port))
            .await
            .map_err(|e| OAuthError::Failed(format!("Could not listen on {}:{port}: {e}", loopback.host)))?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Failed(e.to_string()))?
            .port();
        let host = if loopback.redirect_host.contains(':') {
            format!("[{}]", loopback.redirect_host)
        } else {
            loopback.redirect_host.clone()
        };
        let redirect_url = format!("http://{host}:{port}{}", loopback.path);
        let (tx, results) = mpsc::channel(8);
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head);
                let target = text
                    .lines()
                    .next()
                    .and_then(|l| l.split_whitespace().nth(1))
                    .unwrap_or("/");
                let url = reqwest::Url::parse(&format!("http://localhost{target}")).ok();
                let reply = match url {
                    Some(url) if paths.iter().any(|p| p == url.path()) => {
                        let (state, result) = response_of(&url);
                        let page_text = match &result {
                            Ok(_) => page("200 OK", "Signed in to the MCP server. You may now close this page."),
                            Err(e) => page("200 OK", &format!("Sign-in failed: {e}. You may close this page.")),
                        };
                        match state {
                            Some(state) => {
                                let _ = tx.send((format!("{state}\n{}", url.path()), result)).await;
                                page_text
                            }
                            None => page("400 Bad Request", "Invalid or expired OAuth state."),
                        }
                    }
                    _ => page("404 Not Found", "Not found."),
                };
                let _ = stream.write_all(&reply).await;
                let _ = stream.shutdown().await;
            }
        });
        Ok(CallbackServer {
            redirect_url,
            results,
            task,
        })
    }

    /// The next response with `state`; one on another path than `path` fails the sign-in.
    pub async fn wait(&mut self, state: &str, path: &str) -> Result<AuthorizationResponse, OAuthError> {
        while let Some((key, result)) = self.results.recv().await {
            let (got_state, got_path) = key.split_once('\n').unwrap_or((key.as_str(), ""));
            if got_state != state {
                continue;
            }
            if got_path != path {
                return Err(OAuthError::Failed(
                    "The authorization response arrived on another redirect URI".into(),
                ));
            }
            return result;
        }
        Err(OAuthError::Failed("OAuth callback server closed".into()))
    }
}

/// The response in a redirect URL copied from the browser's address bar.
pub fn response_from_redirect_url(
    input: &str,
    redirect_url: &str,
    state: &str,
) -> Result<AuthorizationResponse, OAuthError> {
    let url = reqwest::Url::parse(input.trim())
        .map_err(|_| OAuthError::Failed("Expected the full redirect URL from the browser address bar".into()))?;
    let expected = reqwest::Url::parse(redirect_url).map_err(|e| OAuthError::Failed(e.to_string()))?;
    if url.path() != expected.path() {
        return Err(OAuthError::Failed(format!(
            "The redirect URL does not match {redirect_url}"
        )));
    }
    let (got_state, result) = response_of(&url);
    if got_state.as_deref() != Some(state) {
        return Err(OAuthError::Failed(
            "The redirect URL belongs to a different sign-in".into(),
        ));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::settings::{loopback, OAuthSettings};

    #[tokio::test]
    async fn the_callback_hands_over_the_code_of_its_state_only() {
        let settings = OAuthSettings {
            client_registration: "auto".into(),
            ..OAuthSettings::default()
        };
        let mut server = CallbackServer::listen(&loopback(&settings), 0, vec!["/callback".into()])
            .await
            .expect("listen");
        assert!(server.redirect_url.starts_with("http://127.0.0.1:"));
        let base = server.redirect_url.clone();
        let client = reqwest::Client::new();
        let other = client
            .get(format!("{base}?code=x&state=other"))
            .send()
            .await
            .expect("get");
        assert_eq!(other.status(), 200);
        let missing = client.get(format!("{base}x?code=x&state=s")).send().await.expect("get");
        assert_eq!(missing.status(), 404);
        let ok = client
            .get(format!("{base}?code=c1&state=s&iss=https%3A%2F%2Fas"))
            .send()
            .await
            .expect("get");
        assert!(ok.text().await.expect("text").contains("Signed in"));
        let response = server.wait("s", "/callback").await.expect("response");
        assert_eq!(response.code, "c1");
        assert_eq!(response.iss.as_deref(), Some("https://as"));
    }

    #[test]
    fn a_pasted_url_must_carry_the_state_and_path() {
        let r = response_from_redirect_url(
            "http://127.0.0.1:5/callback?code=c&state=s",
            "http://127.0.0.1:5/callback",
            "s",
        );
        assert_eq!(r.expect("ok").code, "c");
        assert!(response_from_redirect_url(
            "http://127.0.0.1:5/callback?code=c&state=t",
            "http://127.0.0.1:5/callback",
            "s"
        )
        .is_err());
        assert!(response_from_redirect_url(
            "http://127.0.0.1:5/other?code=c&state=s",
            "http://127.0.0.1:5/callback",
            "s"
        )
        .is_err());
        assert!(response_from_redirect_url("not a url", "http://127.0.0.1:5/callback", "s").is_err());
    }
}
