//! The session file on disk: reading it line by line without ever failing on a bad line,
//! and the locked append handle every write goes through.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::entry::{Entry, SessionHeader, CURRENT_SESSION_VERSION};
use crate::error::{Result, SessionError};
use crate::migrate;

/// Entries a loaded session can take before its entry list grows (a run appends a few).
const APPEND_HEADROOM: usize = 256;

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
pub(crate) struct ParsedFile {
    /// `None` when the file holds no valid header (empty or not a session).
    pub header: Option<SessionHeader>,
    pub entries: Vec<Entry>,
    /// Byte range of each entry's line in the source, for verbatim copies. Empty after a
    /// migration (the source lines are no longer the entries).
    pub spans: Vec<Range<usize>>,
    pub report: LoadReport,
    /// The migrated file content to write back, when a migration ran.
    pub rewrite: Option<Vec<u8>>,
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

/// Parse a whole file. Never fails: every line that is not an entry is reported and skipped.
pub(crate) fn parse(bytes: &[u8]) -> ParsedFile {
    let mut report = LoadReport {
        unterminated_last_line: bytes.last().is_some_and(|&b| b != b'\n'),
        ..LoadReport::default()
    };
    let mut iter = lines(bytes);
    // The header is the first line that parses as JSON at all (as pi decides).
    let mut header = None;
    let mut header_line = 0;
    for (number, range) in iter.by_ref() {
        let line = &bytes[range];
        if is_blank(line) {
            report.skipped.push(skip(number, "blank line"));
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(map)) => {
                header = SessionHeader::from_map(map);
                header_line = number;
                break;
            }
            Ok(_) => break,
            Err(e) => report.skipped.push(skip(number, &format!("not JSON: {e}"))),
        }
    }
    let Some(header) = header else {
        return ParsedFile {
            header: None,
            entries: Vec::new(),
            spans: Vec::new(),
            report,
            rewrite: None,
        };
    };
    if header.version.unwrap_or(1) < CURRENT_SESSION_VERSION {
        return parse_old(bytes, header_line, report);
    }
    let rest: Vec<(usize, Range<usize>)> = iter.collect();
    let parsed = parse_entries(bytes, &rest);
    report.skipped.extend(parsed.skipped);
    ParsedFile {
        header: Some(header),
        entries: parsed.entries,
        spans: parsed.spans,
        report,
        rewrite: None,
    }
}

/// Below this size a file is parsed on the calling thread: starting threads costs more.
const PARALLEL_PARSE_BYTES: usize = 512 * 1024;

/// The entries of a run of lines, with their spans and the lines that were no entry.
struct ParsedRun {
    entries: Vec<Entry>,
    spans: Vec<Range<usize>>,
    skipped: Vec<SkippedLine>,
}

impl ParsedRun {
    fn with_capacity(entries: usize, lines: usize) -> Self {
        ParsedRun {
            entries: Vec::with_capacity(entries),
            spans: Vec::with_capacity(lines),
            skipped: Vec::new(),
        }
    }

    fn append(&mut self, mut other: ParsedRun) {
        self.entries.append(&mut other.entries);
        self.spans.append(&mut other.spans);
        self.skipped.append(&mut other.skipped);
    }
}

/// Parse the entry lines `lines` (line number, byte range) of `bytes`, in order. A large file
/// is split into contiguous runs parsed on scoped threads, one per core: each line is
/// independent, and reading the entries is most of the time it takes to open a long session.
///
/// The first run's list is made large enough for every entry plus the ones a run appends
/// (without that room the first append after loading a long session doubles the list), and
/// the other runs are moved into it: the entries are never held in a second list of the
/// whole file's size.
fn parse_entries(bytes: &[u8], lines: &[(usize, Range<usize>)]) -> ParsedRun {
    let parse_run = |run: &[(usize, Range<usize>)], mut out: ParsedRun| -> ParsedRun {
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
                    out.spans.push(range.clone());
                }
                Err(reason) => out.skipped.push(skip(*number, &reason)),
            }
        }
        out
    };
    let whole = || ParsedRun::with_capacity(lines.len() + APPEND_HEADROOM, lines.len());
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(8);
    if threads < 2 || bytes.len() < PARALLEL_PARSE_BYTES || lines.len() < threads {
        return parse_run(lines, whole());
    }
    let per_thread = lines.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let mut runs = lines.chunks(per_thread);
        let first = runs.next().unwrap_or_default();
        let handles: Vec<_> = runs
            .map(|run| scope.spawn(move || parse_run(run, ParsedRun::with_capacity(run.len(), run.len()))))
            .collect();
        let mut out = parse_run(first, whole());
        for handle in handles {
            match handle.join() {
                Ok(parsed) => out.append(parsed),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
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
    }
}

fn skip(line: usize, reason: &str) -> SkippedLine {
    SkippedLine {
        line,
        reason: reason.to_string(),
    }
}

/// A session file opened for appending, holding an exclusive advisory lock
/// (`flock` on Unix, `LockFileEx` on Windows) for as long as it lives, so two processes never
/// interleave writes to one file. Every append is a single `write_all` of whole lines.
#[derive(Debug)]
pub(crate) struct LockedFile {
    file: File,
    path: PathBuf,
    /// Whether the file may end without a newline (just opened, or a write failed midway).
    check_tail: bool,
}

impl LockedFile {
    /// Open (creating it when `create`) and lock `path`. A lock held elsewhere is
    /// [`SessionError::Locked`].
    pub fn open(path: &Path, create: bool) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(create)
            .open(path)
            .map_err(|e| SessionError::io(path, e))?;
        lock(&file, path)?;
        Ok(LockedFile {
            file,
            path: path.to_path_buf(),
            check_tail: true,
        })
    }

    /// The whole file as it is now.
    pub fn read_all(&mut self) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_end(&mut buf))
            .map_err(|e| SessionError::io(&self.path, e))?;
        Ok(buf)
    }

    /// Append `lines` (each ending in `\n`) in one write. A file whose last line was cut short
    /// first gets a newline, so the broken line stays a line of its own and the new entries
    /// stay whole. A write that fails midway (disk full) is cut back off, so an append is in
    /// the file whole or not at all.
    pub fn append(&mut self, lines: &[u8]) -> Result<()> {
        let before = self.file.metadata().map(|m| m.len());
        let result = self.append_inner(lines);
        if result.is_err() {
            if let Ok(len) = before {
                // We hold the lock: nobody else appended since `before`.
                let _ = self.file.set_len(len);
            }
        }
        self.check_tail = result.is_err();
        result.map_err(|e| SessionError::io(&self.path, e))
    }

    fn append_inner(&mut self, lines: &[u8]) -> std::io::Result<()> {
        if self.check_tail && !self.ends_with_newline()? {
            let mut buf = Vec::with_capacity(lines.len() + 1);
            buf.push(b'\n');
            buf.extend_from_slice(lines);
            return self.file.write_all(&buf);
        }
        self.file.write_all(lines)
    }

    /// Empty the file (it held only whitespace).
    pub fn clear(&mut self) -> Result<()> {
        self.file.set_len(0).map_err(|e| SessionError::io(&self.path, e))
    }

    fn ends_with_newline(&mut self) -> std::io::Result<bool> {
        let len = self.file.metadata()?.len();
        if len == 0 {
            return Ok(true);
        }
        let mut last = [0u8; 1];
        self.file.seek(SeekFrom::Start(len - 1))?;
        self.file.read_exact(&mut last)?;
        Ok(last[0] == b'\n')
    }
}

/// Take the lock, waiting up to ~100 ms: a process of ours that forks (to run a tool) holds a
/// copy of the descriptor until it execs, so a lock just released may look held for a moment.
/// A lock still held after that belongs to another writer.
fn lock(file: &File, path: &Path) -> Result<()> {
    for attempt in 0..10 {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if attempt < 9 => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => break,
            Err(std::fs::TryLockError::Error(e)) => return Err(SessionError::io(path, e)),
        }
    }
    Err(SessionError::Locked {
        path: path.to_path_buf(),
    })
}

/// Replace `path` with `bytes` through a temporary file and a rename, so a crash leaves
/// either the old file or the new one, never half of either.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp_name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        SessionError::io(path, e)
    })
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
