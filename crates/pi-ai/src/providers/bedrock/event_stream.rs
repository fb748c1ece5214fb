//! The AWS event-stream binary framing (`application/vnd.amazon.eventstream`) that Bedrock's
//! ConverseStream answers in: frames of a prelude (total and header lengths, their CRC-32),
//! typed headers, a payload and a CRC-32 of the whole frame.
//!
//! The decoder is fed the body as it arrives and yields whole frames; a frame whose checksums
//! do not match, or whose lengths are impossible, is an error (the stream cannot be resynchronised).

/// Frames larger than this are refused (AWS limits a frame to 16 MiB).
const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;
/// Total length, headers length, prelude CRC.
const PRELUDE_BYTES: usize = 12;
/// The trailing message CRC.
const TRAILER_BYTES: usize = 4;

/// One decoded frame: its string headers (others are skipped) and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub headers: Vec<(String, String)>,
    pub payload: Vec<u8>,
}

impl Frame {
    /// A string header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Why a body is not a valid event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("event stream frame of {0} bytes is out of range")]
    BadLength(usize),
    #[error("event stream prelude checksum mismatch")]
    PreludeChecksum,
    #[error("event stream message checksum mismatch")]
    MessageChecksum,
    #[error("event stream frame has malformed headers")]
    BadHeaders,
    #[error("event stream ended inside a frame")]
    Truncated,
}

/// Incremental decoder: feed bytes, take frames.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already consumed by returned frames.
    start: usize,
}

impl FrameDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `chunk` and append every frame it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Frame>) -> Result<(), FrameError> {
        self.buf.extend_from_slice(chunk);
        while let Some(frame) = self.next_frame()? {
            out.push(frame);
        }
        // Drop consumed bytes once they dominate, so a long stream does not grow the buffer.
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        Ok(())
    }

    /// The body ended: an error if a frame was left half-read.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.start < self.buf.len() {
            return Err(FrameError::Truncated);
        }
        Ok(())
    }

    fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        let data = &self.buf[self.start..];
        if data.len() < PRELUDE_BYTES {
            return Ok(None);
        }
        let total = be_u32(&data[0..4]) as usize;
        let headers_len = be_u32(&data[4..8]) as usize;
        if !(PRELUDE_BYTES + TRAILER_BYTES..=MAX_FRAME_BYTES).contains(&total)
            || headers_len > total - PRELUDE_BYTES - TRAILER_BYTES
        {
            return Err(FrameError::BadLength(total));
        }
        if crc32fast::hash(&data[0..8]) != be_u32(&data[8..12]) {
            return Err(FrameError::PreludeChecksum);
        }
        if data.len() < total {
            return Ok(None);
        }
        let frame = &data[..total];
        if crc32fast::hash(&frame[..total - TRAILER_BYTES]) != be_u32(&frame[total - TRAILER_BYTES..]) {
            return Err(FrameError::MessageChecksum);
        }
        let headers = parse_headers(&frame[PRELUDE_BYTES..PRELUDE_BYTES + headers_len])?;
        let payload = frame[PRELUDE_BYTES + headers_len..total - TRAILER_BYTES].to_vec();
        self.start += total;
        Ok(Some(Frame { headers, payload }))
    }
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Header value types and the sizes of the fixed-width ones.
fn fixed_width(kind: u8) -> Option<usize> {
    match kind {
        0 | 1 => Some(0), // bool true / false
        2 => Some(1),     // byte
        3 => Some(2),     // short
        4 => Some(4),     // integer
        5 | 8 => Some(8), // long, timestamp
        9 => Some(16),    // uuid
        _ => None,
    }
}

fn parse_headers(mut data: &[u8]) -> Result<Vec<(String, String)>, FrameError> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let name_len = usize::from(data[0]);
        let name = data.get(1..1 + name_len).ok_or(FrameError::BadHeaders)?;
        let kind = *data.get(1 + name_len).ok_or(FrameError::BadHeaders)?;
        let rest = &data[2 + name_len..];
        let (value, used) = match kind {
            6 | 7 => {
                let len = rest.get(0..2).ok_or(FrameError::BadHeaders)?;
                let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
                let bytes = rest.get(2..2 + len).ok_or(FrameError::BadHeaders)?;
                // Byte arrays (6) are not needed by any event; keep strings only.
                let value = (kind == 7).then(|| String::from_utf8_lossy(bytes).into_owned());
                (value, 2 + len)
            }
            other => {
                let width = fixed_width(other).ok_or(FrameError::BadHeaders)?;
                if rest.len() < width {
                    return Err(FrameError::BadHeaders);
                }
                (None, width)
            }
        };
        if let Some(value) = value {
            out.push((String::from_utf8_lossy(name).into_owned(), value));
        }
        data = &rest[used..];
    }
    Ok(out)
}

/// Encode a frame with string headers (the mock server and tests write frames with it).
pub fn encode_frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        // Names are at most 255 bytes and values 32 KiB by the format; ours are short literals.
        head.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
        head.extend_from_slice(&name.as_bytes()[..name.len().min(255)]);
        head.push(7);
        let len = u16::try_from(value.len()).unwrap_or(u16::MAX);
        head.extend_from_slice(&len.to_be_bytes());
        head.extend_from_slice(&value.as_bytes()[..usize::from(len)]);
    }
    let total = PRELUDE_BYTES + head.len() + payload.len() + TRAILER_BYTES;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&u32::try_from(total).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&u32::try_from(head.len()).unwrap_or(u32::MAX).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, payload: &str) -> Vec<u8> {
        encode_frame(
            &[
                (":event-type", kind),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            payload.as_bytes(),
        )
    }

    #[test]
    fn frames_split_anywhere_decode_whole() {
        let mut body = event("messageStart", r#"{"role":"assistant"}"#);
        body.extend(event(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#,
        ));
        for split in 0..body.len() {
            let mut decoder = FrameDecoder::new();
            let mut frames = Vec::new();
            decoder.feed(&body[..split], &mut frames).unwrap();
            decoder.feed(&body[split..], &mut frames).unwrap();
            decoder.finish().unwrap();
            assert_eq!(frames.len(), 2, "split at {split}");
            assert_eq!(frames[0].header(":event-type"), Some("messageStart"));
            assert_eq!(frames[1].payload, br#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#);
        }
    }

    #[test]
    fn corrupt_and_truncated_frames_are_errors() {
        let frame = event("messageStop", r#"{"stopReason":"end_turn"}"#);
        let mut bad = frame.clone();
        let last = bad.len() - 6;
        bad[last] ^= 1;
        assert_eq!(
            FrameDecoder::new().feed(&bad, &mut Vec::new()),
            Err(FrameError::MessageChecksum)
        );
        let mut bad_prelude = frame.clone();
        bad_prelude[3] ^= 1;
        assert_eq!(
            FrameDecoder::new().feed(&bad_prelude, &mut Vec::new()),
            Err(FrameError::PreludeChecksum)
        );
        let mut decoder = FrameDecoder::new();
        decoder.feed(&frame[..frame.len() - 1], &mut Vec::new()).unwrap();
        assert_eq!(decoder.finish(), Err(FrameError::Truncated));
    }

    #[test]
    fn other_header_types_are_skipped() {
        // An `int` header (type 4) before a string one.
        let mut head = vec![2, b':', b'n', 4, 0, 0, 0, 7];
        head.extend([2, b':', b's', 7, 0, 1, b'x']);
        let total = 12 + head.len() + 4;
        let mut frame = Vec::new();
        frame.extend((total as u32).to_be_bytes());
        frame.extend((head.len() as u32).to_be_bytes());
        frame.extend(crc32fast::hash(&frame).to_be_bytes());
        frame.extend(&head);
        frame.extend(crc32fast::hash(&frame).to_be_bytes());
        let mut out = Vec::new();
        FrameDecoder::new().feed(&frame, &mut out).unwrap();
        assert_eq!(out[0].headers, vec![(":s".to_string(), "x".to_string())]);
    }
}
