//! A small HTTP/1.1 server side: read requests (Content-Length or chunked bodies, keep-alive),
//! write plain responses and chunked SSE bodies.
//!
//! Why by hand rather than hyper's server: the mock must misbehave on purpose (close a chunked
//! body half-way, stop before the last event) and do it byte-exactly, which a conforming server
//! library works to prevent; and this crate is a dev-dependency of every crate, so enabling
//! hyper's server side would rebuild hyper, hyper-util and reqwest in a second feature set for
//! every test build. The subset needed here is a few hundred lines.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 256 * 1024 * 1024;

/// One parsed request.
#[derive(Debug)]
pub(crate) struct HttpRequest {
    pub method: String,
    pub target: String,
    /// Lowercased names, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The client asked to close the connection after this exchange.
    pub close: bool,
}

impl HttpRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// A client connection.
pub(crate) struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl Conn {
    pub fn new(stream: TcpStream) -> Self {
        Self {
            stream,
            buf: Vec::new(),
        }
    }

    /// The connection and the bytes read past the last request (a protocol switch takes them).
    pub fn into_parts(self) -> (TcpStream, Vec<u8>) {
        (self.stream, self.buf)
    }

    /// Write raw bytes (a protocol switch's answer).
    pub async fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await?;
        self.stream.flush().await
    }

    /// Read more bytes into the buffer; false at end of stream.
    async fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    /// Bytes up to and including the next CRLF.
    async fn line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(i) = find(&self.buf, b"\r\n") {
                return Ok(self.buf.drain(..i + 2).collect());
            }
            if self.buf.len() > MAX_HEAD {
                return Err(bad("line too long"));
            }
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    async fn exact(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// The next request, or `None` when the client closed the connection between requests.
    pub async fn read_request(&mut self) -> io::Result<Option<HttpRequest>> {
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(bad("request head too large"));
            }
            if !self.fill().await? {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(io::ErrorKind::UnexpectedEof.into())
                };
            }
        };
        let head: Vec<u8> = self.buf.drain(..head_end + 4).collect();
        let head = String::from_utf8_lossy(&head[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let request_line = lines.next().unwrap_or_default();
        let mut parts = request_line.split(' ');
        let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("malformed request line"));
        };
        let mut headers = Vec::new();
        for line in lines {
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let mut request = HttpRequest {
            method: method.to_owned(),
            target: target.to_owned(),
            close: false,
            headers,
            body: Vec::new(),
        };
        let connection = request.header("connection").unwrap_or_default().to_ascii_lowercase();
        request.close = connection.contains("close") || (version == "HTTP/1.0" && !connection.contains("keep-alive"));
        if request
            .header("expect")
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
        {
            self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        }
        let chunked = request
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        if chunked {
            let mut body = Vec::new();
            loop {
                let line = self.line().await?;
                let size_text = String::from_utf8_lossy(&line);
                let size_text = size_text.trim().split(';').next().unwrap_or_default();
                let size = usize::from_str_radix(size_text, 16).map_err(|_| bad("bad chunk size"))?;
                if size == 0 {
                    // Trailers until an empty line.
                    while self.line().await?.len() > 2 {}
                    break;
                }
                if body.len() + size > MAX_BODY {
                    return Err(bad("request body too large"));
                }
                body.extend(self.exact(size).await?);
                self.exact(2).await?;
            }
            request.body = body;
        } else if let Some(len) = request.header("content-length") {
            let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
            if len > MAX_BODY {
                return Err(bad("request body too large"));
            }
            request.body = self.exact(len).await?;
        }
        // The Codex backend's clients send zstd bodies; the header stays for tests to see.
        if request
            .header("content-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("zstd"))
        {
            request.body = unzstd(&request.body).ok_or_else(|| bad("bad zstd body"))?;
        }
        Ok(Some(request))
    }

    fn head(status: u16, headers: &[(&str, String)]) -> String {
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head
    }

    /// A whole response with a Content-Length body.
    pub async fn write_response(&mut self, status: u16, headers: &[(&str, String)], body: &[u8]) -> io::Result<()> {
        let mut head = Self::head(status, headers);
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.stream.write_all(&bytes).await?;
        self.stream.flush().await
    }

    /// Start a chunked body.
    pub async fn start_chunked(&mut self, status: u16, headers: &[(&str, String)]) -> io::Result<()> {
        let mut head = Self::head(status, headers);
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        self.stream.write_all(head.as_bytes()).await?;
        self.stream.flush().await
    }

    /// One chunk of a chunked body, flushed at once.
    pub async fn write_chunk(&mut self, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut bytes = format!("{:x}\r\n", data.len()).into_bytes();
        bytes.extend_from_slice(data);
        bytes.extend_from_slice(b"\r\n");
        self.stream.write_all(&bytes).await?;
        self.stream.flush().await
    }

    /// End a chunked body properly.
    pub async fn finish_chunked(&mut self) -> io::Result<()> {
        self.stream.write_all(b"0\r\n\r\n").await?;
        self.stream.flush().await
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

/// A zstd body decoded, at most [`MAX_BODY`] bytes of it; `None` when it is not zstd.
pub fn unzstd(body: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let decoder = ruzstd::decoding::StreamingDecoder::new(body).ok()?;
    let mut out = Vec::new();
    decoder.take(MAX_BODY as u64 + 1).read_to_end(&mut out).ok()?;
    (out.len() <= MAX_BODY).then_some(out)
}
