//! Reading a session file line by line without ever failing on a bad line, a piece at a
//! time: the file's bytes are never held whole beside the entries made from them.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::entry::{Entry, SessionHeader, CURRENT_SESSION_VERSION};
use crate::migrate;

/// Entries a loaded session can take before its entry list grows (a run appends a few).
const APPEND_HEADROOM: usize = 256;

/// How much of a file is read and parsed at a time. The entries own their text, so a piece's
/// bytes are dropped once its lines are parsed: loading holds the entries and one piece, not
/// the entries and the whole file.
const READ_PIECE_BYTES: usize = 1 << 20;

/// Below this size a piece is parsed on the calling thread: starting threads costs more.
const PARALLEL_PARSE_BYTES: usize = 512 * 1024;

/// What loading a file found besides its entries. Nothing here stops a load.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// Lines that are not entries (blank, cut short by a crash, malformed, a second header).
    /// They stay in the file untouched.
    pub skipped: Vec<SkippedLine>,
    /// The version the file had when it was migrated to the current one.
    pub migrated_from: Option<u64>,
    /// The file did not end with a newline (a write cut short); the next entry starts on a
    /// fresh line.
    pub unterminated_last_line: bool,
    /// A file with content but no session header was moved here before a fresh session took
    /// its path.
    pub moved_aside: Option<PathBuf>,
}

/// One line that was skipped while loading.
#[derive(Debug, Clone, PartialEq)]
pub struct SkippedLine {
    /// 1-based line number.
    pub line: usize,
    pub reason: String,
}

/// A parsed session file.
#[derive(Default)]
pub(crate) struct ParsedFile {
    /// `None` when the file holds no valid header (empty or not a session).
    pub header: Option<SessionHeader>,
    pub entries: Vec<Entry>,
    /// Byte range of each entry's line in the file, for verbatim copies. Empty after a
    /// migration (the source lines are no longer the entries).
    pub spans: Vec<Range<usize>>,
    pub report: LoadReport,
    /// The migrated file content to write back, when a migration ran.
    pub rewrite: Option<Vec<u8>>,
    /// The file holds nothing but whitespace (so it may be emptied rather than moved aside).
    pub only_whitespace: bool,
}

/// Split `bytes` into lines: `(1-based number, byte range without the newline)`.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
    let mut start = 0;
    let mut number = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        number += 1;
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| start + p);
        let range = start..end;
        start = end + 1;
        Some((number, range))
    })
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Parse a whole file held in memory. Never fails: every line that is not an entry is
/// reported and skipped.
pub(crate) fn parse(bytes: &[u8]) -> ParsedFile {
    // Reading from memory cannot fail, so the default is never taken.
    parse_from(&mut std::io::Cursor::new(bytes)).unwrap_or_default()
}

/// Parse the file `reader` reads, from its start, a piece at a time. Fails only when reading
/// fails; every line that is not an entry is reported and skipped.
pub(crate) fn parse_from<R: Read + Seek>(reader: &mut R) -> std::io::Result<ParsedFile> {
    parse_in_pieces(reader, READ_PIECE_BYTES)
}

/// The complete lines of a file, read `piece` bytes at a time; a line longer than a piece is
/// read whole.
struct Pieces<'r, R> {
    reader: &'r mut R,
    piece: usize,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    base: usize,
    /// Bytes at the front of `buf` handed out last time, dropped before the next read.
    handed_out: usize,
    /// Number of the last line handed out.
    line_number: usize,
    done: bool,
}

/// Complete lines of the file: `bytes` starts at file offset `base`; `lines` are numbered in
/// the whole file, with ranges into `bytes`.
struct Piece<'a> {
    bytes: &'a [u8],
    base: usize,
    lines: Vec<(usize, Range<usize>)>,
}

impl<'r, R: Read> Pieces<'r, R> {
    fn new(reader: &'r mut R, piece: usize, size: usize) -> Self {
        Pieces {
            reader,
            piece: piece.max(1),
            buf: Vec::with_capacity(piece.min(size).saturating_add(1)),
            base: 0,
            handed_out: 0,
            line_number: 0,
            done: false,
        }
    }

    fn next_piece(&mut self) -> std::io::Result<Option<Piece<'_>>> {
        self.buf.drain(..self.handed_out);
        self.base += self.handed_out;
        self.handed_out = 0;
        let end = loop {
            if self.done {
                return Ok(None);
            }
            let want = self.piece as u64;
            let read = (&mut *self.reader).take(want).read_to_end(&mut self.buf)?;
            if (read as u64) < want {
                // The end of the file: what is left is the last line, newline or not.
                self.done = true;
                break self.buf.len();
            }
            if let Some(newline) = self.buf.iter().rposition(|&b| b == b'\n') {
                break newline + 1;
            }
        };
        if end == 0 {
            return Ok(None);
        }
        self.handed_out = end;
        let bytes = &self.buf[..end];
        let first = self.line_number;
        let lines: Vec<_> = lines(bytes).map(|(n, range)| (first + n, range)).collect();
        self.line_number += lines.len();
        Ok(Some(Piece {
            bytes,
            base: self.base,
            lines,
        }))
    }
}

/// What the first line that parses as JSON says (pi takes it as the header).
enum HeaderLine {
    /// Not JSON (or blank): skipped, the search goes on.
    Skip(String),
    /// JSON: the file's header when it is a session header object, else no session.
    Json(Option<SessionHeader>),
}

fn header_line(line: &[u8]) -> HeaderLine {
    if is_blank(line) {
        return HeaderLine::Skip("blank line".to_string());
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(map)) => HeaderLine::Json(SessionHeader::from_map(map)),
        Ok(_) => HeaderLine::Json(None),
        Err(e) => HeaderLine::Skip(format!("not JSON: {e}")),
    }
}

fn parse_in_pieces<R: Read + Seek>(reader: &mut R, piece: usize) -> std::io::Result<ParsedFile> {
    let size = usize::try_from(reader.seek(SeekFrom::End(0))?).unwrap_or(usize::MAX);
    let mut report = LoadReport::default();
    if size > 0 {
        let mut last = [0u8; 1];
        reader.seek(SeekFrom::End(-1))?;
        reader.read_exact(&mut last)?;
        report.unterminated_last_line = last[0] != b'\n';
    }
    reader.seek(SeekFrom::Start(0))?;

    let mut pieces = Pieces::new(reader, piece, size);
    let mut header: Option<SessionHeader> = None;
    let mut searching = true;
    let mut only_whitespace = true;
    let mut old_header_line = None;
    let mut out = ParsedRun::default();
    while let Some(piece) = pieces.next_piece()? {
        let mut first_entry_line = 0;
        if searching {
            for (i, (number, range)) in piece.lines.iter().enumerate() {
                let line = &piece.bytes[range.clone()];
                match header_line(line) {
                    HeaderLine::Skip(reason) => {
                        only_whitespace &= is_blank(line);
                        report.skipped.push(skip(*number, &reason));
                    }
                    HeaderLine::Json(found) => {
                        searching = false;
                        only_whitespace = false;
                        header = found;
                        first_entry_line = i + 1;
                        if header
                            .as_ref()
                            .is_some_and(|h| h.version.unwrap_or(1) < CURRENT_SESSION_VERSION)
                        {
                            old_header_line = Some(*number);
                        }
                        break;
                    }
                }
            }
            if searching {
                continue;
            }
            if header.is_none() || old_header_line.is_some() {
                break;
            }
            // The list is made once, large enough for every entry (judged from this piece's
            // lines per byte) plus the ones a run appends.
            let per_byte = piece.lines.len() as f64 / piece.bytes.len().max(1) as f64;
            let estimate = (per_byte * size as f64 * 1.05) as usize;
            out.entries.reserve_exact(estimate.min(size) + APPEND_HEADROOM);
            out.spans.reserve_exact(estimate.min(size));
        }
        parse_entries(piece.bytes, piece.base, &piece.lines[first_entry_line..], &mut out);
    }
    if let Some(header_line) = old_header_line {
        // An old version is migrated as a whole: read the file again, all of it.
        let reader = pieces.reader;
        reader.seek(SeekFrom::Start(0))?;
        let mut bytes = Vec::with_capacity(size);
        reader.read_to_end(&mut bytes)?;
        return Ok(parse_old(&bytes, header_line, report));
    }
    if header.is_none() {
        return Ok(ParsedFile {
            report,
            only_whitespace: only_whitespace && searching,
            ..ParsedFile::default()
        });
    }
    if out.entries.capacity() - out.entries.len() < APPEND_HEADROOM {
        out.entries.reserve_exact(APPEND_HEADROOM);
    }
    report.skipped.append(&mut out.skipped);
    Ok(ParsedFile {
        header,
        entries: out.entries,
        spans: out.spans,
        report,
        rewrite: None,
        only_whitespace: false,
    })
}

/// The entries of a run of lines, with their spans and the lines that were no entry.
#[derive(Default)]
struct ParsedRun {
    entries: Vec<Entry>,
    spans: Vec<Range<usize>>,
    skipped: Vec<SkippedLine>,
}

impl ParsedRun {
    fn with_capacity(entries: usize) -> Self {
        ParsedRun {
            entries: Vec::with_capacity(entries),
            spans: Vec::with_capacity(entries),
            skipped: Vec::new(),
        }
    }

    fn append(&mut self, mut other: ParsedRun) {
        self.entries.append(&mut other.entries);
        self.spans.append(&mut other.spans);
        self.skipped.append(&mut other.skipped);
    }
}

/// Parse the entry lines `lines` (line number, byte range) of `bytes` (found at file offset
/// `base`) onto the end of `out`, in order. A large piece is split into contiguous runs parsed
/// on scoped threads, one per core: each line is independent, and reading the entries is most
/// of the time it takes to open a long session. The first run is parsed straight into `out`
/// and the others are moved into it, so only one piece's entries are ever held twice.
fn parse_entries(bytes: &[u8], base: usize, lines: &[(usize, Range<usize>)], out: &mut ParsedRun) {
    let parse_run = |run: &[(usize, Range<usize>)], out: &mut ParsedRun| {
        for (number, range) in run {
            let line = &bytes[range.clone()];
            let parsed = if is_blank(line) {
                Err("blank line".to_string())
            } else {
                std::str::from_utf8(line)
                    .map_err(|e| format!("not UTF-8: {e}"))
                    .and_then(|s| Entry::from_json_line(s).map_err(|e| e.to_string()))
            };
            match parsed {
                Ok(entry) => {
                    out.entries.push(entry);
                    out.spans.push(base + range.start..base + range.end);
                }
                Err(reason) => out.skipped.push(skip(*number, &reason)),
            }
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(8);
    if threads < 2 || bytes.len() < PARALLEL_PARSE_BYTES || lines.len() < threads {
        parse_run(lines, out);
        return;
    }
    let per_thread = lines.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let mut runs = lines.chunks(per_thread);
        let first = runs.next().unwrap_or_default();
        let handles: Vec<_> = runs
            .map(|run| {
                scope.spawn(move || {
                    let mut own = ParsedRun::with_capacity(run.len());
                    parse_run(run, &mut own);
                    own
                })
            })
            .collect();
        parse_run(first, out);
        for handle in handles {
            match handle.join() {
                Ok(parsed) => out.append(parsed),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
}

/// A v1/v2 file: migrate the raw objects, then read them as entries; build the rewritten file
/// with every unreadable line kept in its place.
fn parse_old(bytes: &[u8], header_line: usize, mut report: LoadReport) -> ParsedFile {
    enum Slot {
        Object(usize),
        Raw(Range<usize>),
        Blank,
    }
    let mut objects: Vec<Map<String, Value>> = Vec::new();
    let mut slots = Vec::new();
    for (number, range) in lines(bytes) {
        if number < header_line {
            let line = &bytes[range.clone()];
            slots.push(if is_blank(line) { Slot::Blank } else { Slot::Raw(range) });
            continue;
        }
        let line = &bytes[range.clone()];
        if is_blank(line) {
            if number > header_line {
                report.skipped.push(skip(number, "blank line"));
            }
            slots.push(Slot::Blank);
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(map)) if number == header_line || map.get("type") != Some(&Value::from("session")) => {
                slots.push(Slot::Object(objects.len()));
                objects.push(map);
            }
            Ok(_) => {
                report.skipped.push(skip(number, "not a session entry"));
                slots.push(Slot::Raw(range));
            }
            Err(e) => {
                report.skipped.push(skip(number, &format!("not JSON: {e}")));
                slots.push(Slot::Raw(range));
            }
        }
    }
    report.migrated_from = migrate::migrate(&mut objects);
    let mut rewrite = Vec::with_capacity(bytes.len() + objects.len() * 40);
    for slot in &slots {
        match slot {
            Slot::Object(i) => {
                if let Ok(line) = serde_json::to_vec(&objects[*i]) {
                    rewrite.extend_from_slice(&line);
                    rewrite.push(b'\n');
                }
            }
            Slot::Raw(range) => {
                rewrite.extend_from_slice(&bytes[range.clone()]);
                rewrite.push(b'\n');
            }
            Slot::Blank => {}
        }
    }
    let mut objects = objects.into_iter();
    let header = objects.next().and_then(SessionHeader::from_map);
    let mut entries = Vec::new();
    for obj in objects {
        match Entry::from_value(Value::Object(obj)) {
            Ok(e) => entries.push(e),
            Err(e) => report.skipped.push(SkippedLine {
                line: 0,
                reason: format!("migrated entry unreadable: {e}"),
            }),
        }
    }
    ParsedFile {
        header,
        entries,
        spans: Vec::new(),
        report,
        rewrite: Some(rewrite),
        only_whitespace: false,
    }
}

fn skip(line: usize, reason: &str) -> SkippedLine {
    SkippedLine {
        line,
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn bad_lines_are_reported_not_fatal() {
        let text = format!(
            "{HEADER}\n\n{}\nnot json\n{}\n{}",
            r#"{"type":"model_change","id":"aaaaaaaa","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}"#,
            r#"{"type":"thinking_level_change","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","thinkingLevel":"high"}"#,
            r#"{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"t","mess"#
        );
        let p = parse(text.as_bytes());
        assert_eq!(p.header.unwrap().id, "s1");
        assert_eq!(p.entries.len(), 2);
        assert!(p.report.unterminated_last_line);
        let lines: Vec<usize> = p.report.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![2, 4, 6]);
        assert_eq!(
            &text.as_bytes()[p.spans[1].clone()],
            text.lines().nth(4).unwrap().as_bytes()
        );
    }

    #[test]
    fn a_large_file_parses_in_order_with_its_bad_lines_reported() {
        // Over PARALLEL_PARSE_BYTES, so the lines are split across threads.
        let mut text = format!("{HEADER}\n");
        let mut bad = Vec::new();
        let filler = "x".repeat(200);
        for i in 0..6000 {
            let line_number = i + 2;
            if i % 1000 == 999 {
                text.push_str("{broken\n");
                bad.push(line_number);
                continue;
            }
            let parent = if i == 0 {
                "null".to_string()
            } else {
                format!("\"{:08x}\"", i - 1)
            };
            text.push_str(&format!(
                r#"{{"type":"message","id":"{i:08x}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":"{filler}","timestamp":{i}}}}}"#
            ));
            text.push('\n');
        }
        assert!(text.len() > PARALLEL_PARSE_BYTES);
        let p = parse(text.as_bytes());
        assert_eq!(p.entries.len(), 6000 - bad.len());
        let ids: Vec<usize> = p
            .entries
            .iter()
            .map(|e| usize::from_str_radix(&e.id, 16).unwrap())
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "entries keep file order");
        assert_eq!(p.report.skipped.iter().map(|s| s.line).collect::<Vec<_>>(), bad);
        for (entry, span) in p.entries.iter().zip(&p.spans).step_by(997) {
            let line = std::str::from_utf8(&text.as_bytes()[span.clone()]).unwrap();
            assert!(line.contains(&format!("\"id\":\"{}\"", entry.id)));
        }
    }

    fn assert_same(whole: &ParsedFile, pieces: &ParsedFile, text: &str) {
        assert_eq!(
            whole.header.as_ref().map(|h| &h.id),
            pieces.header.as_ref().map(|h| &h.id),
            "{text}"
        );
        assert_eq!(whole.report, pieces.report, "{text}");
        assert_eq!(whole.entries.len(), pieces.entries.len(), "{text}");
        if whole.report.migrated_from.is_some() {
            return; // a migration gives the entries fresh ids
        }
        let ids = |p: &ParsedFile| p.entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(whole), ids(pieces), "{text}");
        assert_eq!(whole.spans, pieces.spans, "{text}");
        assert_eq!(whole.rewrite, pieces.rewrite, "{text}");
        assert_eq!(whole.only_whitespace, pieces.only_whitespace, "{text}");
    }

    #[test]
    fn a_file_read_in_pieces_loads_as_read_whole() {
        // Spans are offsets in the whole file, lines cut across pieces are joined, a line
        // longer than a piece is read whole.
        let long = format!(
            r#"{{"type":"message","id":"dddddddd","parentId":"cccccccc","timestamp":"t","message":{{"role":"user","content":"{}","timestamp":1}}}}"#,
            "y".repeat(5000)
        );
        let text = format!(
            "\n  \n{HEADER}\n{}\nbroken\n{}\n{long}\n{}",
            r#"{"type":"model_change","id":"aaaaaaaa","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}"#,
            r#"{"type":"thinking_level_change","id":"cccccccc","parentId":"aaaaaaaa","timestamp":"t","thinkingLevel":"high"}"#,
            r#"{"type":"label","id":"eeeeeeee","parentId":"dddddddd","timestamp":"t","targetId":"aaaaaaaa","label":"x"}"#,
        );
        let whole = parse_in_pieces(&mut std::io::Cursor::new(text.as_bytes()), usize::MAX).unwrap();
        assert_eq!(whole.entries.len(), 4);
        assert!(whole.report.unterminated_last_line);
        assert_eq!(
            whole.report.skipped.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![1, 2, 5]
        );
        for piece in [1, 2, 7, 64, 100, 4096] {
            let parsed = parse_in_pieces(&mut std::io::Cursor::new(text.as_bytes()), piece).unwrap();
            assert_same(&whole, &parsed, &text);
        }
        assert_eq!(&text.as_bytes()[whole.spans[2].clone()], long.as_bytes());
        for blank in ["", "\n", " \n\t\n"] {
            let p = parse_in_pieces(&mut std::io::Cursor::new(blank.as_bytes()), 1).unwrap();
            assert!(p.header.is_none() && p.only_whitespace, "{blank:?}");
        }
        assert!(!parse(b"\ngarbage\n").only_whitespace);
    }

    #[test]
    fn no_header_means_no_session() {
        assert!(parse(b"").header.is_none());
        assert!(parse(b"{\"type\":\"message\",\"id\":\"x\"}\n").header.is_none());
        assert!(parse(b"garbage\n").header.is_none());
    }

    #[test]
    fn a_second_header_is_skipped() {
        let text = format!("{HEADER}\n{HEADER}\n");
        let p = parse(text.as_bytes());
        assert!(p.entries.is_empty());
        assert_eq!(p.report.skipped.len(), 1);
    }

    #[test]
    fn old_files_keep_unreadable_lines_in_the_rewrite() {
        let text = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/p\"}\n\
            {\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}}\n\
            broken{\n";
        let p = parse(text.as_bytes());
        assert_eq!(p.report.migrated_from, Some(1));
        assert_eq!(p.entries.len(), 1);
        let out = String::from_utf8(p.rewrite.unwrap()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].contains("\"version\":3"));
        assert!(lines[1].contains("\"parentId\":null"));
        assert_eq!(lines[2], "broken{");
    }

    /// A bounded, seeded fuzz run of the loader: a valid file is damaged at random (bytes
    /// flipped, lines cut, garbage and duplicate lines inserted, the header's version changed)
    /// and parsed. Nothing may panic, and every entry line left intact is still loaded.
    /// `PI_FUZZ_ITERS=100000 cargo test --release -p pi-session fuzz_` runs it longer.
    #[test]
    fn fuzz_damaged_files_load_every_intact_entry() {
        let iters: usize = std::env::var("PI_FUZZ_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1_500);
        let mut state: u64 = 0x5e55_1011_0000_0003;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let entry = |i: usize| {
            let parent = if i == 0 {
                "null".to_string()
            } else {
                format!("\"e{:07}\"", i - 1)
            };
            match i % 3 {
                0 => format!(
                    r#"{{"type":"message","id":"e{i:07}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":[{{"type":"text","text":"hé {i} 😀"}}],"timestamp":1}}}}"#
                ),
                1 => format!(
                    r#"{{"type":"model_change","id":"e{i:07}","parentId":{parent},"timestamp":"t","provider":"p","modelId":"m"}}"#
                ),
                _ => format!(
                    r#"{{"type":"label","id":"e{i:07}","parentId":{parent},"timestamp":"t","targetId":"e0000000","label":"x"}}"#
                ),
            }
        };
        for _ in 0..iters {
            let count = 1 + (next() % 12) as usize;
            let mut lines: Vec<(String, bool)> = vec![(HEADER.to_string(), false)];
            lines.extend((0..count).map(|i| (entry(i), true)));
            for _ in 0..(next() % 4) {
                let at = 1 + (next() as usize) % lines.len();
                let line_index = at.min(lines.len() - 1);
                match next() % 5 {
                    0 => {
                        // Flip one byte of a line: it is no longer intact.
                        let (text, intact) = &mut lines[line_index];
                        let mut bytes = text.clone().into_bytes();
                        if !bytes.is_empty() {
                            let i = (next() as usize) % bytes.len();
                            bytes[i] = next() as u8;
                        }
                        *text = String::from_utf8_lossy(&bytes).into_owned();
                        *intact = false;
                    }
                    1 => {
                        let (text, intact) = &mut lines[line_index];
                        let cut = (next() as usize) % (text.len() + 1);
                        let cut = (0..=cut).rev().find(|c| text.is_char_boundary(*c)).unwrap_or(0);
                        text.truncate(cut);
                        *intact = false;
                    }
                    2 => lines.insert(at.min(lines.len()), ("{\"type\":\"mess".into(), false)),
                    3 => lines.insert(at.min(lines.len()), ("[1,2,3]".into(), false)),
                    _ => {
                        let dup = lines[line_index].0.clone();
                        lines.insert(at.min(lines.len()), (dup, false));
                    }
                }
            }
            if next().is_multiple_of(7) {
                lines[0].0 = lines[0].0.replace("\"version\":3", "\"version\":1");
            }
            let mut text = lines.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>().join("\n");
            if next().is_multiple_of(2) {
                text.push('\n');
            }
            let parsed = parse(text.as_bytes());
            // Read in small pieces (lines cut across pieces, pieces shorter than a line), the
            // same file loads the same.
            let piece = 1 + (next() as usize) % 300;
            let small = parse_in_pieces(&mut std::io::Cursor::new(text.as_bytes()), piece).unwrap();
            assert_same(&parsed, &small, &text);
            if parsed.header.is_none() || parsed.report.migrated_from.is_some() {
                continue; // a migration rewrites ids; what it keeps is tested with real old files
            }
            for (line, _) in lines.iter().filter(|(_, intact)| *intact) {
                let id = &line[line.find("\"id\":\"").map_or(0, |i| i + 6)..][..8];
                assert!(
                    parsed.entries.iter().any(|e| e.id == id),
                    "intact entry {id} lost from:\n{text}"
                );
            }
        }
    }
}
