//! Streaming command output: UTF-8 decoding, a bounded tail for display, and a temp file for the rest.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;

use tokio::io::AsyncWriteExt;

use crate::truncate::{truncate_tail, TruncatedBy, TruncationResult, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

/// Decodes UTF-8 across chunk boundaries, replacing invalid bytes with U+FFFD.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn decode(&mut self, data: &[u8], last: bool) -> String {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(data);
        let mut out = String::with_capacity(bytes.len());
        let mut rest: &[u8] = &bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    out.push_str(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            rest = &bad[n..];
                        }
                        None => {
                            // An incomplete character at the end: keep it for the next chunk.
                            if last {
                                out.push('\u{FFFD}');
                            } else {
                                self.pending = bad.to_vec();
                            }
                            break;
                        }
                    }
                }
            }
        }
        out
    }
}

/// A fresh `$TMPDIR/<prefix>-<16 hex>.log` path.
pub fn temp_log_path(prefix: &str) -> PathBuf {
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    std::env::temp_dir().join(format!("{prefix}-{:016x}.log", h.finish()))
}

/// What the output looks like right now.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSnapshot {
    /// The tail-truncated text.
    pub content: String,
    pub truncation: TruncationResult,
    pub full_output_path: Option<PathBuf>,
}

/// Collects a command's output with bounded memory; spills everything to a temp file once the
/// output passes either limit.
pub struct OutputAccumulator {
    max_lines: usize,
    max_bytes: usize,
    max_rolling: usize,
    prefix: String,
    decoder: Utf8Stream,
    raw_chunks: Vec<Vec<u8>>,
    tail: String,
    tail_at_line_start: bool,
    total_raw: usize,
    total_decoded: usize,
    total_lines: usize,
    current_line_bytes: usize,
    temp_path: Option<PathBuf>,
    temp_file: Option<tokio::fs::File>,
    write_error: bool,
}

impl OutputAccumulator {
    pub fn new(prefix: &str) -> Self {
        Self::with_limits(prefix, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    }

    pub fn with_limits(prefix: &str, max_lines: usize, max_bytes: usize) -> Self {
        OutputAccumulator {
            max_lines,
            max_bytes,
            max_rolling: (max_bytes * 2).max(1),
            prefix: prefix.to_string(),
            decoder: Utf8Stream::default(),
            raw_chunks: Vec::new(),
            tail: String::new(),
            tail_at_line_start: true,
            total_raw: 0,
            total_decoded: 0,
            total_lines: 1,
            current_line_bytes: 0,
            temp_path: None,
            temp_file: None,
            write_error: false,
        }
    }

    /// Add a chunk; returns the newly decoded text.
    pub async fn append(&mut self, data: &[u8]) -> String {
        self.total_raw += data.len();
        let text = self.decoder.decode(data, false);
        self.add_text(&text);
        if self.temp_file.is_some() || self.needs_temp_file() {
            self.ensure_temp_file().await;
            self.write_temp(data).await;
        } else if !data.is_empty() {
            self.raw_chunks.push(data.to_vec());
        }
        text
    }

    /// Flush the decoder and close the temp file.
    pub async fn finish(&mut self) -> String {
        let text = self.decoder.decode(&[], true);
        self.add_text(&text);
        if self.needs_temp_file() {
            self.ensure_temp_file().await;
        }
        if let Some(mut f) = self.temp_file.take() {
            let _ = f.flush().await;
        }
        text
    }

    /// Bytes of the last (unfinished) line.
    pub fn last_line_bytes(&self) -> usize {
        self.current_line_bytes
    }

    /// The tail-truncated view; opens the temp file when the output is truncated.
    pub async fn snapshot(&mut self) -> OutputSnapshot {
        let text = self.snapshot_text();
        let tail = truncate_tail(text, self.max_lines, self.max_bytes);
        // A trailing newline ends the last line rather than starting an empty one.
        let total_lines = if self.total_decoded == 0 {
            0
        } else if self.current_line_bytes == 0 {
            self.total_lines - 1
        } else {
            self.total_lines
        };
        let truncated = total_lines > self.max_lines || self.total_decoded > self.max_bytes;
        let truncated_by = if truncated {
            tail.truncated_by.or(Some(if self.total_decoded > self.max_bytes {
                TruncatedBy::Bytes
            } else {
                TruncatedBy::Lines
            }))
        } else {
            None
        };
        let truncation = TruncationResult {
            truncated,
            truncated_by,
            total_lines,
            total_bytes: self.total_decoded,
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
            ..tail
        };
        if truncated {
            self.ensure_temp_file().await;
        }
        OutputSnapshot {
            content: truncation.content.clone(),
            truncation,
            full_output_path: self.temp_path.clone(),
        }
    }

    fn needs_temp_file(&self) -> bool {
        self.total_raw > self.max_bytes || self.total_decoded > self.max_bytes || self.total_lines > self.max_lines
    }

    fn add_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_decoded += text.len();
        self.tail.push_str(text);
        if self.tail.len() > self.max_rolling * 2 {
            self.trim_tail();
        }
        match text.rfind('\n') {
            None => self.current_line_bytes += text.len(),
            Some(last) => {
                self.total_lines += text.bytes().filter(|&b| b == b'\n').count();
                self.current_line_bytes = text.len() - last - 1;
            }
        }
    }

    fn trim_tail(&mut self) {
        if self.tail.len() <= self.max_rolling {
            return;
        }
        let mut start = self.tail.len() - self.max_rolling;
        while !self.tail.is_char_boundary(start) {
            start += 1;
        }
        self.tail_at_line_start = self.tail.as_bytes()[start - 1] == b'\n';
        self.tail.drain(..start);
    }

    fn snapshot_text(&self) -> &str {
        if self.tail_at_line_start {
            return &self.tail;
        }
        match self.tail.find('\n') {
            Some(i) => &self.tail[i + 1..],
            None => &self.tail,
        }
    }

    async fn ensure_temp_file(&mut self) {
        if self.temp_path.is_some() {
            return;
        }
        let path = temp_log_path(&self.prefix);
        match tokio::fs::File::create(&path).await {
            Ok(f) => {
                self.temp_file = Some(f);
                self.temp_path = Some(path);
                for chunk in std::mem::take(&mut self.raw_chunks) {
                    self.write_temp(&chunk).await;
                }
            }
            Err(_) => {
                // Without a temp file the output is still returned, only not saved in full.
                self.write_error = true;
                self.raw_chunks.clear();
                self.temp_path = Some(path);
            }
        }
    }

    async fn write_temp(&mut self, data: &[u8]) {
        if let Some(f) = self.temp_file.as_mut() {
            if f.write_all(data).await.is_err() {
                self.write_error = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_are_joined_across_chunks() {
        let mut d = Utf8Stream::default();
        let bytes = "é".as_bytes();
        assert_eq!(d.decode(&bytes[..1], false), "");
        assert_eq!(d.decode(&bytes[1..], false), "é");
        assert_eq!(d.decode(b"a\xffb", false), "a\u{FFFD}b");
    }

    #[tokio::test]
    async fn small_output_stays_in_memory() {
        let mut acc = OutputAccumulator::new("pi-test");
        acc.append(b"hello\n").await;
        acc.finish().await;
        let snap = acc.snapshot().await;
        assert_eq!(snap.content, "hello\n");
        assert!(!snap.truncation.truncated);
        assert!(snap.full_output_path.is_none());
    }

    #[tokio::test]
    async fn many_lines_spill_everything_to_the_temp_file() {
        let mut acc = OutputAccumulator::new("pi-test");
        let mut all = String::new();
        for i in 0..3000 {
            let line = format!("{i}\n");
            all.push_str(&line);
            acc.append(line.as_bytes()).await;
        }
        acc.finish().await;
        let snap = acc.snapshot().await;
        assert!(snap.truncation.truncated);
        assert_eq!(snap.truncation.total_lines, 3000);
        assert_eq!(snap.truncation.output_lines, 2000);
        let path = snap.full_output_path.expect("temp file");
        let saved = tokio::fs::read_to_string(&path).await.expect("read");
        assert_eq!(saved, all);
        let _ = std::fs::remove_file(path);
    }
}
