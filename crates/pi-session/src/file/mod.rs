//! The session file on disk: the locked append handle every write goes through, atomic
//! replacement, and (in `parse`) reading a file line by line without ever failing on a bad line.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, SessionError};

mod parse;

pub(crate) use parse::{parse, parse_from, ParsedFile};
pub use parse::{LoadReport, SkippedLine};

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

    /// Parse the whole file as it is now, a piece at a time.
    pub fn parse(&mut self) -> Result<ParsedFile> {
        parse_from(&mut self.file).map_err(|e| SessionError::io(&self.path, e))
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
