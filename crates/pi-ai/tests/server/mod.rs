//! A scripted HTTP server on 127.0.0.1 for provider tests: each request takes the next reply
//! from a queue and is recorded. Replies stream with chunked encoding so a dropped connection
//! can be told apart from a finished body.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a reply's body ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Finish the chunked body properly.
    Complete,
    /// Close the socket without the final chunk.
    Drop,
    /// Keep the connection open and send nothing more.
    Hang,
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Body pieces, each written (and flushed) as one chunk.
    pub chunks: Vec<Vec<u8>>,
    pub ending: Ending,
}

impl Reply {
    pub fn sse(events: Vec<String>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: events.into_iter().map(String::into_bytes).collect(),
            ending: Ending::Complete,
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.as_bytes().to_vec()],
            ending: Ending::Complete,
        }
    }

    /// A 200 reply of binary pieces with the given content type.
    #[allow(dead_code)] // not every test binary streams binary bodies
    pub fn bytes(content_type: &str, chunks: Vec<Vec<u8>>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            chunks,
            ending: Ending::Complete,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn ending(mut self, ending: Ending) -> Reply {
        self.ending = ending;
        self
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone)]
pub struct Server {
    pub base_url: String,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    pub async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = Server {
            base_url: format!("http://{addr}/v1"),
            replies: Arc::new(Mutex::new(replies.into())),
            requests: Arc::new(Mutex::new(Vec::new())),
        };
        let s = server.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move { s.serve(socket).await });
            }
        });
        server
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }

    async fn serve(&self, mut socket: TcpStream) {
        let Some(recorded) = read_request(&mut socket).await else {
            return;
        };
        self.requests.lock().expect("lock").push(recorded);
        let reply = self
            .replies
            .lock()
            .expect("lock")
            .pop_front()
            .unwrap_or_else(|| Reply::status(500, r#"{"error":{"message":"no scripted reply"}}"#));
        let mut head = format!(
            "HTTP/1.1 {} X\r\ntransfer-encoding: chunked\r\nconnection: close\r\n",
            reply.status
        );
        for (n, v) in &reply.headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for chunk in &reply.chunks {
            if chunk.is_empty() {
                continue;
            }
            let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
            framed.extend_from_slice(chunk);
            framed.extend_from_slice(b"\r\n");
            if socket.write_all(&framed).await.is_err() {
                return;
            }
            let _ = socket.flush().await;
        }
        match reply.ending {
            Ending::Complete => {
                let _ = socket.write_all(b"0\r\n\r\n").await;
                let _ = socket.shutdown().await;
            }
            Ending::Drop => {
                // Give the client a moment to read what was sent, then vanish.
                tokio::time::sleep(Duration::from_millis(20)).await;
                drop(socket);
            }
            Ending::Hang => {
                tokio::time::sleep(Duration::from_secs(30)).await;
            }
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?;
    let path = request_line.split(' ').nth(1)?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + length {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let mut raw = buf[header_end..].to_vec();
    // Codex bodies arrive zstd-compressed, as from pi 1.6.
    if headers.iter().any(|(n, v)| n == "content-encoding" && v == "zstd") {
        raw = pi_test_support::unzstd(&raw)?;
    }
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Some(Recorded { path, headers, body })
}

/// A port nothing listens on.
/// A server that reads each request's head and closes the connection without answering;
/// the URL ends in `/v1`.
pub async fn unanswering_url() -> String {
    use tokio::io::AsyncReadExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            drop(socket);
        }
    });
    format!("http://{addr}/v1")
}

pub async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}/v1")
}
