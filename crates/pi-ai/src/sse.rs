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
}

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
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
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
    E: std::fmt::Display,
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
                return Ok(Some(e));
            }
            if self.done {
                return Ok(None);
            }
            match self.inner.next().await {
                Some(Ok(chunk)) => self.decoder.feed(&chunk, &mut self.scratch)?,
                Some(Err(e)) => {
                    self.done = true;
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
}
