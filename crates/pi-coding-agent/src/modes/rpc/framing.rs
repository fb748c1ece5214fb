//! Strict JSONL framing: an LF-only line reader over any `AsyncRead`, and one writer task that
//! owns the output so records never interleave within a line.

use std::io;

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Lines queued for output before senders wait (backpressure from a slow reader).
const OUTPUT_QUEUE: usize = 1024;
const READ_CHUNK: usize = 16 * 1024;

/// Reads records split on `\n` only. U+2028/U+2029 and lone `\r` stay inside a record, one
/// trailing `\r` is dropped, and a final line without `\n` is still returned at EOF.
///
/// Bytes are split before decoding, so a UTF-8 sequence cut across reads is whole again in
/// its line. Invalid UTF-8 becomes U+FFFD, as Node's decoder does; the JSON parser then
/// judges the line.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of the unread part of `buf`.
    start: usize,
    /// How far past `start` we already looked for `\n`.
    scanned: usize,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            eof: false,
        }
    }

    /// The next record, or `None` at EOF. Cancel-safe: a dropped call loses no bytes.
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        loop {
            let pending = &self.buf[self.start..];
            if let Some(pos) = pending[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.start + self.scanned + pos;
                let line = decode_line(&self.buf[self.start..end]);
                self.start = end + 1;
                self.scanned = 0;
                return Ok(Some(line));
            }
            self.scanned = pending.len();
            if self.eof {
                if pending.is_empty() {
                    return Ok(None);
                }
                let line = decode_line(pending);
                self.start = self.buf.len();
                self.scanned = 0;
                return Ok(Some(line));
            }
            self.compact();
            self.buf.reserve(READ_CHUNK);
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                self.eof = true;
            }
        }
    }

    /// Drop consumed bytes so the buffer does not grow with the whole input.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }
}

fn decode_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

enum Item {
    Line(String),
    /// Everything queued before this is written and flushed, then the writer ends.
    Close,
}

/// A handle that queues whole records for output. Cloneable; every clone feeds the same
/// ordered queue, so a record sent before another is written before it.
#[derive(Clone)]
pub struct RpcOutput {
    tx: mpsc::Sender<Item>,
}

impl RpcOutput {
    /// Queue one record (serialized JSON without the newline). Waits while the queue is full.
    /// Returns false once the output is closed.
    pub async fn send_line(&self, line: String) -> bool {
        debug_assert!(!line.contains('\n'), "a JSONL record cannot contain a raw newline");
        self.tx.send(Item::Line(line)).await.is_ok()
    }

    /// Serialize and queue one record.
    pub async fn send<T: Serialize + ?Sized>(&self, value: &T) -> bool {
        match serde_json::to_string(value) {
            Ok(line) => self.send_line(line).await,
            Err(_) => false,
        }
    }

    /// Queue one record without waiting; false if the queue is full or closed. For callers
    /// that cannot await (synchronous event listeners).
    pub fn try_send_line(&self, line: String) -> bool {
        self.tx.try_send(Item::Line(line)).is_ok()
    }
}

/// The task writing queued records; [`close`](Self::close) ends it after the queue drains.
pub struct OutputWriter {
    output: RpcOutput,
    task: JoinHandle<io::Result<()>>,
}

impl OutputWriter {
    /// Spawn the writer task over `sink`.
    pub fn spawn<W: AsyncWrite + Unpin + Send + 'static>(sink: W) -> (RpcOutput, OutputWriter) {
        let (tx, rx) = mpsc::channel(OUTPUT_QUEUE);
        let output = RpcOutput { tx };
        let task = tokio::spawn(write_loop(sink, rx));
        (output.clone(), OutputWriter { output, task })
    }

    /// Write everything queued so far, flush, and stop. Returns the first write error.
    pub async fn close(self) -> io::Result<()> {
        // A send failure means the task already ended; its result says why.
        let _ = self.output.tx.send(Item::Close).await;
        match self.task.await {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join)),
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(sink: W, mut rx: mpsc::Receiver<Item>) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, sink);
    let mut failed: Option<io::Error> = None;
    while let Some(item) = rx.recv().await {
        let mut next = Some(item);
        // Write everything already queued, then flush once.
        while let Some(item) = next.take() {
            match item {
                Item::Close => {
                    if failed.is_none() {
                        if let Err(e) = out.flush().await {
                            failed = Some(e);
                        }
                    }
                    return failed.map_or(Ok(()), Err);
                }
                Item::Line(mut line) => {
                    if failed.is_none() {
                        line.push('\n');
                        if let Err(e) = out.write_all(line.as_bytes()).await {
                            // Keep draining so senders never block on a dead output.
                            failed = Some(e);
                        }
                    }
                }
            }
            next = rx.try_recv().ok();
        }
        if failed.is_none() {
            if let Err(e) = out.flush().await {
                failed = Some(e);
            }
        }
    }
    failed.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    async fn lines_of(chunks: &[&[u8]]) -> Vec<String> {
        let (mut tx, rx) = tokio::io::duplex(64);
        let owned: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
        let feeder = tokio::spawn(async move {
            for chunk in owned {
                tx.write_all(&chunk).await.expect("write");
                tx.flush().await.expect("flush");
                tokio::task::yield_now().await;
            }
        });
        let mut reader = LineReader::new(rx);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.expect("read") {
            out.push(line);
        }
        feeder.await.expect("feeder");
        out
    }

    #[tokio::test]
    async fn splits_on_lf_only_and_strips_one_cr() {
        let got = lines_of(&[b"a\r\nb\r\r\nc\rd\n"]).await;
        assert_eq!(got, vec!["a", "b\r", "c\rd"]);
    }

    #[tokio::test]
    async fn unicode_separators_are_not_line_breaks() {
        let got = lines_of(&["{\"m\":\"x\u{2028}y\u{2029}z\"}\n".as_bytes()]).await;
        assert_eq!(got, vec!["{\"m\":\"x\u{2028}y\u{2029}z\"}"]);
    }

    #[tokio::test]
    async fn utf8_split_across_reads_is_reassembled() {
        let text = "é€😀\n".as_bytes();
        // Cut inside every multi-byte sequence.
        let chunks: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(lines_of(&chunks).await, vec!["é€😀"]);
    }

    #[tokio::test]
    async fn final_unterminated_line_is_returned_at_eof() {
        assert_eq!(lines_of(&[b"one\ntwo"]).await, vec!["one", "two"]);
        assert_eq!(lines_of(&[b"one\n"]).await, vec!["one"]);
        assert_eq!(lines_of(&[b"\n\n"]).await, vec!["", ""]);
        assert!(lines_of(&[b""]).await.is_empty());
    }

    #[tokio::test]
    async fn invalid_utf8_is_replaced_not_dropped() {
        assert_eq!(lines_of(&[b"a\xffb\n"]).await, vec!["a\u{fffd}b"]);
    }

    #[tokio::test]
    async fn long_lines_across_many_reads() {
        let long = "x".repeat(100_000);
        let input = format!("{long}\nshort\n");
        let chunks: Vec<&[u8]> = input.as_bytes().chunks(777).collect();
        assert_eq!(lines_of(&chunks).await, vec![long, "short".to_string()]);
    }

    #[tokio::test]
    async fn writer_keeps_order_and_whole_lines() {
        let (sink, mut read_side) = tokio::io::duplex(16);
        let (output, writer) = OutputWriter::spawn(sink);
        let mut tasks = Vec::new();
        for t in 0..4 {
            let output = output.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..50 {
                    assert!(
                        output
                            .send_line(format!("{{\"t\":{t},\"i\":{i},\"pad\":\"{}\"}}", "p".repeat(40)))
                            .await
                    );
                }
            }));
        }
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            read_side.read_to_end(&mut all).await.expect("read");
            all
        });
        for t in tasks {
            t.await.expect("task");
        }
        writer.close().await.expect("close");
        drop(output);
        let all = String::from_utf8(reader.await.expect("reader")).expect("utf8");
        let mut last = [-1i64; 4];
        let mut count = 0;
        for line in all.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("whole JSON line");
            let t = v["t"].as_u64().expect("t") as usize;
            let i = v["i"].as_i64().expect("i");
            assert!(i > last[t], "per-sender order kept");
            last[t] = i;
            count += 1;
        }
        assert_eq!(count, 200);
    }
}
