//! The loopback redirect target of the browser sign-ins, and the pasted alternative.
//!
//! The server answers only `GET <path>` whose `state` is the one sent; the first such request
//! with a `code` (or an `error`) settles the wait, later ones get 409. The page says where to
//! look next; nothing secret is echoed.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::ui::{LoginUi, Prompt};
use crate::OAuthError;

/// A listening callback server.
pub(crate) struct CallbackServer {
    /// The `redirect_uri` to send: `http://<redirect host>:<port><path>`.
    pub redirect_uri: String,
    result: Option<oneshot::Receiver<Result<Callback, OAuthError>>>,
    task: JoinHandle<()>,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Options of [`start`].
pub(crate) struct CallbackOptions<'a> {
    pub provider_name: &'a str,
    pub host: &'a str,
    pub port: u16,
    pub path: &'a str,
    /// The host written into the redirect URI (`localhost` where the provider registered it).
    pub redirect_host: &'a str,
    /// The `state` a callback must carry; `None` for a provider that sends none (OpenRouter,
    /// whose random callback path plays that part).
    pub state: Option<String>,
}

/// What the browser's callback carried: the code and the whole query (some providers add
/// fields, as OpenAI's issued `client_id`).
#[derive(Debug, Clone)]
pub(crate) struct Callback {
    pub code: String,
    pub query: Vec<(String, String)>,
}

impl Callback {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

fn page(status: u16, reason: &str, message: &str) -> Vec<u8> {
    let escaped = message.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>pi</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><p>{escaped}</p></body></html>"
    );
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Bind and serve until the wait settles or the server is dropped.
pub(crate) async fn start(options: CallbackOptions<'_>) -> Result<CallbackServer, OAuthError> {
    let listener = TcpListener::bind((options.host, options.port))
        .await
        .map_err(|e| OAuthError::Callback(e.to_string()))?;
    let port = listener
        .local_addr()
        .map_err(|e| OAuthError::Callback(e.to_string()))?
        .port();
    let host = options.redirect_host;
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    let redirect_uri = format!("http://{host}:{port}{}", options.path);
    let (tx, rx) = oneshot::channel();
    let path = options.path.to_string();
    let state = options.state;
    let name = options.provider_name.to_string();
    let task = tokio::spawn(async move {
        let mut tx = Some(tx);
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&head);
            let mut words = text.lines().next().unwrap_or_default().split_whitespace();
            let (method, target) = (words.next().unwrap_or_default(), words.next().unwrap_or("/"));
            let url = url::Url::parse(&format!("http://localhost{target}")).ok();
            let query = |key: &str| {
                url.as_ref()
                    .and_then(|u| u.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned()))
            };
            let reply = if method != "GET" || url.as_ref().map(url::Url::path) != Some(path.as_str()) {
                page(404, "Not Found", "Callback route not found.")
            } else if state
                .as_ref()
                .is_some_and(|s| query("state").as_deref() != Some(s.as_str()))
            {
                page(400, "Bad Request", "State mismatch.")
            } else if tx.is_none() {
                page(409, "Conflict", "This sign-in has already been handled.")
            } else if let Some(error) = query("error") {
                let description = query("error_description").unwrap_or(error);
                if let Some(tx) = tx.take() {
                    let _ = tx.send(Err(OAuthError::Invalid(format!(
                        "{name} authorization failed: {description}"
                    ))));
                }
                page(
                    400,
                    "Bad Request",
                    &format!("{name} authorization failed: {description}"),
                )
            } else if let Some(code) = query("code").filter(|c| !c.is_empty()) {
                let query = url
                    .as_ref()
                    .map(|u| u.query_pairs().into_owned().collect())
                    .unwrap_or_default();
                if let Some(tx) = tx.take() {
                    let _ = tx.send(Ok(Callback { code, query }));
                }
                page(
                    200,
                    "OK",
                    &format!("Signed in to {name}. You may now close this page and return to pi."),
                )
            } else {
                page(400, "Bad Request", "Missing authorization code.")
            };
            let _ = stream.write_all(&reply).await;
            let _ = stream.shutdown().await;
        }
    });
    Ok(CallbackServer {
        redirect_uri,
        result: Some(rx),
        task,
    })
}

/// How the code arrived.
pub(crate) enum Arrival {
    /// Through the callback server (its `state` was checked there).
    Callback(Callback),
    /// Typed or pasted by the user.
    Manual(String),
}

/// Wait for the browser's callback or for the user to paste the code or redirect URL
/// (a browser on another machine cannot reach the loopback server). Without a server only
/// the prompt is asked.
pub(crate) async fn wait_for_code(
    ui: &dyn LoginUi,
    server: Option<&mut CallbackServer>,
    message: &str,
    placeholder: String,
) -> Result<Arrival, OAuthError> {
    let manual = ui.prompt(Prompt::ManualCode {
        message: message.to_string(),
        placeholder,
    });
    let Some(rx) = server.and_then(|s| s.result.take()) else {
        return manual.await.map(Arrival::Manual);
    };
    tokio::select! {
        callback = rx => match callback {
            Ok(result) => result.map(Arrival::Callback),
            Err(_) => Err(OAuthError::Callback("the callback server stopped".into())),
        },
        typed = manual => typed.map(Arrival::Manual),
    }
}

/// Wait for the browser's callback only (a flow that offers no pasted alternative).
pub(crate) async fn wait_for_callback(server: &mut CallbackServer) -> Result<Callback, OAuthError> {
    let Some(rx) = server.result.take() else {
        return Err(OAuthError::Callback("the callback was already taken".into()));
    };
    rx.await
        .map_err(|_| OAuthError::Callback("the callback server stopped".into()))?
}

/// What a pasted answer holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationInput {
    pub code: Option<String>,
    pub state: Option<String>,
}

/// Read a pasted redirect URL, `code#state`, a query string (`code=…&state=…`) or a bare code.
pub fn parse_authorization_input(input: &str) -> AuthorizationInput {
    let value = input.trim();
    if value.is_empty() {
        return AuthorizationInput::default();
    }
    let nonempty = |s: Option<String>| s.filter(|s| !s.is_empty());
    if let Ok(url) = url::Url::parse(value) {
        if url.has_host() {
            let get = |key: &str| url.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned());
            return AuthorizationInput {
                code: nonempty(get("code")),
                state: nonempty(get("state")),
            };
        }
    }
    if let Some((code, state)) = value.split_once('#') {
        return AuthorizationInput {
            code: nonempty(Some(code.to_string())),
            state: nonempty(Some(state.to_string())),
        };
    }
    if value.contains("code=") {
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(value.as_bytes()).into_owned().collect();
        let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        return AuthorizationInput {
            code: nonempty(get("code")),
            state: nonempty(get("state")),
        };
    }
    AuthorizationInput {
        code: Some(value.to_string()),
        state: None,
    }
}

/// The code of a pasted answer whose state, if it names one, is `expected`.
pub(crate) fn code_from_manual(input: &str, expected: &str) -> Result<(String, Option<String>), OAuthError> {
    let parsed = parse_authorization_input(input);
    if parsed.state.as_deref().is_some_and(|s| s != expected) {
        return Err(OAuthError::StateMismatch);
    }
    let code = parsed.code.ok_or(OAuthError::MissingCode)?;
    Ok((code, parsed.state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_answers_in_every_form() {
        let both = |c: &str, s: &str| AuthorizationInput {
            code: Some(c.into()),
            state: Some(s.into()),
        };
        assert_eq!(
            parse_authorization_input(" http://localhost:1455/auth/callback?code=c1&state=s1 "),
            both("c1", "s1")
        );
        assert_eq!(parse_authorization_input("c2#s2"), both("c2", "s2"));
        assert_eq!(parse_authorization_input("code=c3&state=s3"), both("c3", "s3"));
        assert_eq!(
            parse_authorization_input("c4"),
            AuthorizationInput {
                code: Some("c4".into()),
                state: None
            }
        );
        assert_eq!(parse_authorization_input("  "), AuthorizationInput::default());
        assert!(matches!(
            code_from_manual("c#other", "mine"),
            Err(OAuthError::StateMismatch)
        ));
        assert!(matches!(code_from_manual("", "mine"), Err(OAuthError::MissingCode)));
        assert_eq!(code_from_manual("c#mine", "mine").expect("code").0, "c");
    }

    async fn fetch(url: &str) -> (u16, String) {
        let url = url::Url::parse(url).expect("url");
        let addr = format!("{}:{}", url.host_str().unwrap_or_default(), url.port().unwrap_or(80));
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let target = &url[url::Position::BeforePath..];
        stream
            .write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .expect("write");
        let mut out = String::new();
        stream.read_to_string(&mut out).await.expect("read");
        let status = out.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        (status, out)
    }

    struct NoAnswer;
    #[async_trait::async_trait]
    impl LoginUi for NoAnswer {
        fn notify(&self, _: crate::LoginEvent) {}
        async fn prompt(&self, _: Prompt) -> Result<String, OAuthError> {
            std::future::pending().await
        }
    }

    #[tokio::test]
    async fn the_callback_checks_path_and_state_and_settles_once() {
        let mut server = start(CallbackOptions {
            provider_name: "Test",
            host: "127.0.0.1",
            port: 0,
            path: "/cb",
            redirect_host: "127.0.0.1",
            state: Some("st".into()),
        })
        .await
        .expect("start");
        let base = server.redirect_uri.clone();
        assert!(base.ends_with("/cb"), "{base}");
        assert_eq!(fetch(&format!("{base}x?code=c&state=st")).await.0, 404);
        assert_eq!(fetch(&format!("{base}?code=c&state=wrong")).await.0, 400);
        assert_eq!(fetch(&format!("{base}?state=st")).await.0, 400);
        let (status, page) = fetch(&format!("{base}?code=the-code&state=st")).await;
        assert_eq!(status, 200);
        assert!(!page.contains("the-code"), "the page must not echo the code");
        assert_eq!(fetch(&format!("{base}?code=again&state=st")).await.0, 409);
        match wait_for_code(&NoAnswer, Some(&mut server), "m", String::new()).await {
            Ok(Arrival::Callback(c)) => assert_eq!(c.code, "the-code"),
            _ => panic!("expected the callback's code"),
        }
    }
}
