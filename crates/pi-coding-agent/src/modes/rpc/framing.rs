//! Strict JSONL framing of RPC input: an LF-only line reader over any `AsyncRead`. Output goes
//! through the modes' one line writer (`modes/output.rs`).

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

const READ_CHUNK: usize = 16 * 1024;

/// The longest record read whole. A longer one is skipped (up to its newline) and reported as
/// an `InvalidData` error, so a client cannot make pi hold an unbounded line in memory.
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

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
    max_line: usize,
    /// Inside a record that was too long: dropping bytes up to its newline.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_max_line(inner, MAX_LINE_BYTES)
    }

    /// A reader that skips records longer than `max_line` bytes.
    pub fn with_max_line(inner: R, max_line: usize) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            eof: false,
            max_line,
            discarding: false,
        }
    }

    /// The next record, or `None` at EOF. Cancel-safe: a dropped call loses no bytes.
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        loop {
            let pending = &self.buf[self.start..];
            if let Some(pos) = pending[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.start + self.scanned + pos;
                if self.discarding {
                    // The end of the record that was too long: the next one starts here.
                    self.discarding = false;
                    self.start = end + 1;
                    self.scanned = 0;
                    continue;
                }
                let too_long = end - self.start > self.max_line;
                let line = (!too_long).then(|| decode_line(&self.buf[self.start..end]));
                self.start = end + 1;
                self.scanned = 0;
                return match line {
                    Some(line) => Ok(Some(line)),
                    None => Err(self.too_long()),
                };
            }
            self.scanned = pending.len();
            if !self.discarding && pending.len() > self.max_line {
                self.discarding = true;
                self.start = self.buf.len();
                self.scanned = 0;
                return Err(self.too_long());
            }
            if self.discarding {
                self.start = self.buf.len();
                self.scanned = 0;
            }
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

    fn too_long(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("Record too long: more than {} bytes; it was skipped", self.max_line),
        )
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
    async fn a_record_past_the_limit_is_skipped_and_reading_goes_on() {
        let input: &[u8] = b"{\"id\":1}\nxxxxxxxxxxxxxxxxxxxx\n{\"id\":2}\n";
        let mut reader = LineReader::with_max_line(input, 12);
        assert_eq!(reader.next_line().await.expect("first").as_deref(), Some("{\"id\":1}"));
        let too_long = reader.next_line().await.expect_err("too long");
        assert_eq!(too_long.kind(), io::ErrorKind::InvalidData);
        assert_eq!(reader.next_line().await.expect("after").as_deref(), Some("{\"id\":2}"));
        assert_eq!(reader.next_line().await.expect("eof"), None);
    }

    #[tokio::test]
    async fn a_long_record_arriving_in_pieces_is_dropped_as_it_comes() {
        let (mut write, read) = tokio::io::duplex(1024);
        let writer = tokio::spawn(async move {
            for _ in 0..20_000 {
                write.write_all(b"yyyyyyyyyy").await.expect("write");
            }
            write.write_all(b"\n{\"id\":3}\n").await.expect("write");
        });
        let mut reader = LineReader::with_max_line(read, 64);
        let err = reader.next_line().await.expect_err("too long");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(reader.next_line().await.expect("next").as_deref(), Some("{\"id\":3}"));
        writer.await.expect("writer");
        // The 200 KB record was not kept: the buffer stays at a few read chunks.
        assert!(
            reader.buf.capacity() <= 4 * READ_CHUNK,
            "buffer grew to {}",
            reader.buf.capacity()
        );
    }
}
