//! Server-sent events: decoding a byte stream into `event`/`data` records.
//!
//! The decoder keeps only the unfinished line and the fields of the event being built, and finds
//! line ends with `memchr` (one event per token makes this a hot path); a line that lies whole
//! in one chunk is read in place, so the work per chunk is proportional to the chunk.

use bytes::Bytes;
use futures::{Stream, StreamExt};

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; empty when the server sent none (the spec's "message").
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    pub id: Option<String>,
}

/// Why the SSE stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("{0}")]
    Transport(String),
    #[error("Invalid UTF-8 in event stream")]
    InvalidUtf8,
    /// One event (or one unterminated line) grew past the decoder's limit: a server that never
    /// ends a line must not take all memory.
    #[error("Event stream record exceeds {0} bytes")]
    TooLarge(usize),
    /// Nothing arrived for the idle timeout (`http::configure_idle_timeout`); worded as pi 1.6
    /// reports it, which its auto-retry recognises.
    #[error("{IDLE_TIMEOUT_MESSAGE}")]
    IdleTimeout,
}

/// pi 1.6's text for a response body that stalled past the idle timeout.
pub const IDLE_TIMEOUT_MESSAGE: &str = "terminated: Body Timeout Error (UND_ERR_BODY_TIMEOUT)";

/// An error of the byte stream under an [`SseStream`]: its text, and whether it was the idle
/// timeout (reported as [`SseError::IdleTimeout`]).
pub trait TransportError: std::fmt::Display {
    fn is_idle_timeout(&self) -> bool {
        false
    }
}

impl TransportError for reqwest::Error {
    fn is_idle_timeout(&self) -> bool {
        self.is_timeout()
    }
}

impl TransportError for String {
    fn is_idle_timeout(&self) -> bool {
        self == IDLE_TIMEOUT_MESSAGE
    }
}

/// The largest event the decoder holds (a line, or the data of one event): far above any
/// provider's real events, which are a few kilobytes (an inline image a few megabytes).
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Incremental SSE decoder: feed it bytes, take out complete events.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line not yet terminated.
    line: Vec<u8>,
    /// A `\r` ended the last chunk: a following `\n` belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
    id: Option<String>,
    /// `0` means [`MAX_EVENT_BYTES`].
    limit: usize,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that refuses records larger than `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        SseDecoder {
            limit,
            ..Self::default()
        }
    }

    fn limit(&self) -> usize {
        if self.limit == 0 {
            MAX_EVENT_BYTES
        } else {
            self.limit
        }
    }

    /// Decode `chunk`, appending finished events to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if rest.first() == Some(&b'\n') {
                rest = &rest[1..];
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', rest) {
            if self.line.is_empty() {
                // The whole line is in this chunk: read it in place.
                self.take_line(&rest[..end], out)?;
            } else {
                if self.line.len() + end > self.limit() {
                    return Err(SseError::TooLarge(self.limit()));
                }
                self.line.extend_from_slice(&rest[..end]);
                let line = std::mem::take(&mut self.line);
                let result = self.take_line(&line, out);
                // Keep the buffer's allocation for the next line.
                self.line = line;
                self.line.clear();
                result?;
            }
            let cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        if self.line.len() + rest.len() > self.limit() {
            return Err(SseError::TooLarge(self.limit()));
        }
        self.line.extend_from_slice(rest);
        Ok(())
    }

    /// The stream ended: dispatch a final event that lacked its blank line.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if !self.line.is_empty() {
            self.finish_line(out)?;
        }
        self.dispatch(out);
        Ok(())
    }

    fn finish_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        let result = self.take_line(&line, out);
        self.line = line;
        self.line.clear();
        result
    }

    /// One complete line (without its end): a field, a comment, or the blank line that
    /// dispatches the event.
    fn take_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        let text = std::str::from_utf8(line).map_err(|_| SseError::InvalidUtf8)?;
        if text.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match text.find(':') {
            Some(p) => {
                let v = &text[p + 1..];
                (&text[..p], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (text, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit() {
                    return Err(SseError::TooLarge(self.limit()));
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
                id: self.id.clone(),
            });
        } else {
            self.event.clear();
        }
        self.has_data = false;
    }
}

/// Reads SSE events from a byte stream (e.g. `reqwest::Response::bytes_stream`).
pub struct SseStream<S> {
    inner: S,
    decoder: SseDecoder,
    ready: std::collections::VecDeque<SseEvent>,
    scratch: Vec<SseEvent>,
    done: bool,
}

impl<S, E> SseStream<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: TransportError,
{
    pub fn new(inner: S) -> Self {
        SseStream {
            inner,
            decoder: SseDecoder::new(),
            ready: Default::default(),
            scratch: Vec::new(),
            done: false,
        }
    }

    /// The next event; `Ok(None)` when the stream ended.
    pub async fn next_event(&mut self) -> Result<Option<SseEvent>, SseError> {
        loop {
            if let Some(e) = self.ready.pop_front() {
                crate::provider_hooks::report_stream_event(&e.data).await;
                return Ok(Some(e));
            }
            if self.done {
                return Ok(None);
            }
            match self.inner.next().await {
                Some(Ok(chunk)) => self.decoder.feed(&chunk, &mut self.scratch)?,
                Some(Err(e)) => {
                    self.done = true;
                    if e.is_idle_timeout() {
                        return Err(SseError::IdleTimeout);
                    }
                    return Err(SseError::Transport(e.to_string()));
                }
                None => {
                    self.done = true;
                    self.decoder.finish(&mut self.scratch)?;
                }
            }
            self.ready.extend(self.scratch.drain(..));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out).expect("feed");
        }
        d.finish(&mut out).expect("finish");
        out
    }

    #[test]
    fn events_split_anywhere_decode_the_same() {
        let whole = b"event: a\ndata: {\"x\":1}\n\n: comment\ndata: l1\ndata: l2\r\n\r\ndata:nospace\r\rdata: tail";
        let expected = decode_chunks(&[whole]);
        assert_eq!(expected.len(), 4);
        assert_eq!(expected[0].event, "a");
        assert_eq!(expected[0].data, "{\"x\":1}");
        assert_eq!(expected[1].event, "");
        assert_eq!(expected[1].data, "l1\nl2");
        assert_eq!(expected[2].data, "nospace");
        assert_eq!(expected[3].data, "tail");
        for split in 1..whole.len() {
            let (a, b) = whole.split_at(split);
            assert_eq!(decode_chunks(&[a, b]), expected, "split at {split}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(decode_chunks(&bytes), expected, "one byte at a time");
    }

    #[test]
    fn events_without_data_are_not_dispatched() {
        let out = decode_chunks(&[b"event: ping\n\nid: 5\ndata: x\n\n"]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].event, "");
        assert_eq!(out[0].id.as_deref(), Some("5"));
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        assert_eq!(d.feed(b"data: \xff\xfe\n\n", &mut out), Err(SseError::InvalidUtf8));
    }

    #[test]
    fn a_line_that_never_ends_is_refused_at_the_limit() {
        let mut d = SseDecoder::with_limit(1024);
        let mut out = Vec::new();
        let chunk = [b'x'; 300];
        let mut result = Ok(());
        for _ in 0..10 {
            result = d.feed(&chunk, &mut out);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(SseError::TooLarge(1024)));
        let mut d = SseDecoder::with_limit(1024);
        let many_data_lines = "data: 0123456789\n".repeat(200);
        assert_eq!(
            d.feed(many_data_lines.as_bytes(), &mut out),
            Err(SseError::TooLarge(1024))
        );
    }

    /// Tiny deterministic generator: the fuzz runs below are the same on every machine.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Bounded, seeded fuzz run: random events written with random line ends and split into
    /// random chunks decode to exactly those events; random bytes never panic.
    /// `PI_FUZZ_ITERS=1000000 cargo test --release -p pi-ai sse::tests::fuzz` runs it longer.
    #[test]
    fn fuzz_round_trip_and_garbage() {
        let iters: usize = std::env::var("PI_FUZZ_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2_000);
        let mut rng = Rng(0x5eed_0000_0000_0001);
        const WORDS: &[&str] = &["", "a", "{\"x\":1}", "é", "😀", " lead", "tab\t", "colon: in", "[DONE]"];
        for _ in 0..iters {
            let mut wire = Vec::new();
            let mut expected = Vec::new();
            for _ in 0..rng.below(5) {
                let ends = ["\n", "\r\n", "\r"];
                let eol = ends[rng.below(3)];
                let event = if rng.below(2) == 0 {
                    WORDS[1 + rng.below(WORDS.len() - 1)]
                } else {
                    ""
                };
                if !event.is_empty() {
                    wire.extend_from_slice(format!("event: {}{eol}", event.trim()).as_bytes());
                }
                if rng.below(3) == 0 {
                    wire.extend_from_slice(format!(": comment{eol}").as_bytes());
                }
                let lines: Vec<&str> = (0..1 + rng.below(3)).map(|_| WORDS[rng.below(WORDS.len())]).collect();
                for l in &lines {
                    wire.extend_from_slice(format!("data: {l}{eol}").as_bytes());
                }
                wire.extend_from_slice(eol.as_bytes());
                expected.push(SseEvent {
                    event: event.trim().to_string(),
                    data: lines.join("\n"),
                    id: None,
                });
            }
            let mut d = SseDecoder::new();
            let mut out = Vec::new();
            let mut pos = 0;
            while pos < wire.len() {
                let end = (pos + 1 + rng.below(7)).min(wire.len());
                d.feed(&wire[pos..end], &mut out).expect("valid input");
                pos = end;
            }
            d.finish(&mut out).expect("finish");
            assert_eq!(out, expected, "{:?}", String::from_utf8_lossy(&wire));

            let garbage: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
            let mut d = SseDecoder::with_limit(48);
            let mut out = Vec::new();
            for c in garbage.chunks(1 + rng.below(5)) {
                if d.feed(c, &mut out).is_err() {
                    break;
                }
            }
            let _ = d.finish(&mut out);
        }
    }
}
