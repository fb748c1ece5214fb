//! The session manager: one session's tree in memory, its leaf cursor, and the file behind it.
//!
//! Writes are synchronous and small: an append is one `write_all` of one JSON line to a file
//! this manager holds locked (no fsync, as pi). That is cheap enough to call from async code on
//! `message_end`; opening, forking and listing read whole files and belong in
//! `spawn_blocking`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use pi_ai::UserContent;
use serde_json::{Map, Value};

use crate::context::{self, SessionContext};
use crate::entry::{Entry, EntryKind, SessionHeader};
use crate::error::{Result, SessionError};
use crate::file::{self, LoadReport, LockedFile};
use crate::ids;
use crate::listing;
use crate::message::AgentMessage;
use crate::tree::{self, Label, SessionTree};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing touches the disk.
    InMemory,
    /// Loaded for viewing; appends are refused.
    ReadOnly,
    Persistent,
}

/// Options for [`SessionManager::new_session`].
#[derive(Debug, Clone, Default)]
pub struct NewSessionOptions {
    /// A session id chosen by the caller (an extension); a new UUIDv7 otherwise.
    pub id: Option<String>,
    /// The session this one came from (a path), written in the header.
    pub parent_session: Option<String>,
}

/// One session: header, entries in file order, id index, labels and the leaf cursor.
///
/// Lazy persistence as pi 1.6: nothing is written until the session holds a user or assistant
/// message (so a first prompt whose reply fails is kept);
/// then the header and every entry so far go out in one write, and each later entry is
/// appended. The file is locked exclusively from the first write (or from `open` of an
/// existing file) until the manager moves to another file or is dropped, so a second writer
/// gets [`SessionError::Locked`] instead of interleaving lines.
#[derive(Debug)]
pub struct SessionManager {
    header: SessionHeader,
    entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    labels: HashMap<String, Label>,
    leaf: Option<usize>,
    cwd: String,
    session_dir: Option<PathBuf>,
    file: Option<PathBuf>,
    mode: Mode,
    writer: Option<LockedFile>,
    header_written: bool,
    /// `entries[..written]` are in the file.
    written: usize,
    has_assistant: bool,
    report: LoadReport,
    /// The id the next append takes instead of a random one (see [`Self::with_entry_id`]).
    next_id: Option<String>,
}

impl SessionManager {
    fn blank(cwd: &str, session_dir: Option<PathBuf>, mode: Mode) -> Self {
        SessionManager {
            header: SessionHeader::new(String::new(), String::new(), cwd.to_string(), None),
            entries: Vec::new(),
            by_id: HashMap::new(),
            labels: HashMap::new(),
            leaf: None,
            cwd: cwd.to_string(),
            session_dir,
            file: None,
            mode,
            writer: None,
            header_written: false,
            written: 0,
            has_assistant: false,
            report: LoadReport::default(),
            next_id: None,
        }
    }

    /// A new session whose file will be `<session_dir>/<timestamp>_<id>.jsonl` (written on the
    /// first assistant message).
    pub fn create(session_dir: impl Into<PathBuf>, cwd: &str) -> Self {
        let mut sm = Self::blank(cwd, Some(session_dir.into()), Mode::Persistent);
        sm.new_session(NewSessionOptions::default());
        sm
    }

    /// A session that never touches the disk.
    pub fn in_memory(cwd: &str) -> Self {
        let mut sm = Self::blank(cwd, None, Mode::InMemory);
        sm.new_session(NewSessionOptions::default());
        sm
    }

    /// Open a session file to continue it, locking it. New and forked sessions go to the
    /// file's directory; the cwd is the header's. A missing file becomes a new session at that
    /// path; a file without a session header is moved aside (see [`LoadReport::moved_aside`])
    /// and a fresh session takes its path.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_in(path, None, None)
    }

    /// [`open`](Self::open) with an explicit directory for later new/forked sessions and an
    /// optional cwd replacing the header's.
    pub fn open_in(path: impl AsRef<Path>, session_dir: Option<PathBuf>, cwd_override: Option<&str>) -> Result<Self> {
        Self::open_inner(path.as_ref(), session_dir, cwd_override, Mode::Persistent)
    }

    /// Load a session for viewing (export, inspection) without locking it; appends fail.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_inner(path.as_ref(), None, None, Mode::ReadOnly)
    }

    /// The most recently modified session in `session_dir` (pi's `--continue`), or a new one.
    pub fn continue_recent(session_dir: impl Into<PathBuf>, cwd: &str) -> Result<Self> {
        let dir = session_dir.into();
        match listing::find_most_recent(&dir) {
            Some(path) => Self::open_in(path, Some(dir), Some(cwd)),
            None => Ok(Self::create(dir, cwd)),
        }
    }

    fn open_inner(path: &Path, session_dir: Option<PathBuf>, cwd_override: Option<&str>, mode: Mode) -> Result<Self> {
        let path = resolve(path)?;
        let dir = session_dir.or_else(|| path.parent().map(Path::to_path_buf));
        let fallback_cwd = || {
            std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        if !path.exists() {
            if mode == Mode::ReadOnly {
                return Err(SessionError::io(&path, std::io::ErrorKind::NotFound.into()));
            }
            let cwd = cwd_override.map_or_else(fallback_cwd, str::to_string);
            let mut sm = Self::blank(&cwd, dir, mode);
            sm.new_session(NewSessionOptions::default());
            sm.file = Some(path);
            return Ok(sm);
        }
        let mut writer = None;
        let parsed = if mode == Mode::ReadOnly {
            let mut f = std::fs::File::open(&path).map_err(|e| SessionError::io(&path, e))?;
            file::parse_from(&mut f).map_err(|e| SessionError::io(&path, e))?
        } else {
            writer.insert(LockedFile::open(&path, false)?).parse()?
        };
        let Some(header) = parsed.header else {
            if mode == Mode::ReadOnly {
                return Err(SessionError::InvalidSource { path });
            }
            // Not a session: keep whatever it holds beside it, and start fresh at this path
            // with the header written at once (as pi does for an explicitly opened file).
            let mut report = parsed.report;
            let mut w = match writer {
                Some(w) if parsed.only_whitespace => {
                    let mut w = w;
                    w.clear()?;
                    w
                }
                held => {
                    let aside = aside_path(&path);
                    std::fs::rename(&path, &aside).map_err(|e| SessionError::io(&path, e))?;
                    report.moved_aside = Some(aside);
                    drop(held);
                    LockedFile::open(&path, true)?
                }
            };
            let cwd = cwd_override.map_or_else(fallback_cwd, str::to_string);
            let mut sm = Self::blank(&cwd, dir, mode);
            sm.new_session(NewSessionOptions::default());
            sm.file = Some(path.clone());
            sm.report = report;
            w.append(&line(&sm.header)?)?;
            sm.writer = Some(w);
            sm.header_written = true;
            return Ok(sm);
        };
        if let (Some(rewrite), Mode::Persistent) = (&parsed.rewrite, mode) {
            // Migrated: replace the file while still holding the old lock, then lock the new one.
            file::write_atomic(&path, rewrite)?;
            let fresh = LockedFile::open(&path, false)?;
            writer = Some(fresh);
        }
        let cwd = match cwd_override {
            Some(c) => c.to_string(),
            None if !header.cwd.is_empty() => header.cwd.clone(),
            None => fallback_cwd(),
        };
        let mut sm = Self::blank(&cwd, dir, mode);
        sm.header = header;
        sm.entries = parsed.entries;
        sm.file = Some(path);
        sm.writer = writer;
        sm.header_written = true;
        sm.written = sm.entries.len();
        sm.report = parsed.report;
        sm.reindex();
        Ok(sm)
    }

    /// Copy every entry of `source` (another project's session, `--fork`) into a new session
    /// for `target_cwd` in `session_dir`, written at once: new id, `parentSession` = source,
    /// entries byte for byte (migrated first if the source is an older version).
    pub fn fork_from(source: impl AsRef<Path>, target_cwd: &str, session_dir: impl Into<PathBuf>) -> Result<Self> {
        Self::fork_from_as(source, target_cwd, session_dir, None)
    }

    /// [`fork_from`](Self::fork_from) with the new session's id chosen by the caller
    /// (`--fork … --session-id <id>`); `None` generates one.
    pub fn fork_from_as(
        source: impl AsRef<Path>,
        target_cwd: &str,
        session_dir: impl Into<PathBuf>,
        id: Option<String>,
    ) -> Result<Self> {
        let source = resolve(source.as_ref())?;
        let bytes = std::fs::read(&source).map_err(|e| SessionError::io(&source, e))?;
        let parsed = file::parse(&bytes);
        if parsed.header.is_none() {
            return Err(SessionError::InvalidSource { path: source });
        }
        let mut sm = Self::blank(target_cwd, Some(session_dir.into()), Mode::Persistent);
        sm.new_session(NewSessionOptions {
            id,
            parent_session: Some(source.to_string_lossy().into_owned()),
        });
        let mut out = line(&sm.header)?;
        if parsed.spans.len() == parsed.entries.len() {
            for span in &parsed.spans {
                out.extend_from_slice(&bytes[span.clone()]);
                out.push(b'\n');
            }
        } else {
            for e in &parsed.entries {
                out.extend_from_slice(&line(e)?);
            }
        }
        sm.entries = parsed.entries;
        sm.reindex();
        sm.write_new_file(&out)?;
        Ok(sm)
    }

    /// Start a new, empty session in this manager (pi's `newSession`). The previous file is
    /// released. Returns the new file path (not yet written).
    pub fn new_session(&mut self, options: NewSessionOptions) -> Option<PathBuf> {
        let id = options.id.unwrap_or_else(ids::new_session_id);
        let timestamp = ids::now_iso();
        self.header = SessionHeader::new(id, timestamp, self.cwd.clone(), options.parent_session);
        self.entries.clear();
        self.reindex();
        self.writer = None;
        self.header_written = false;
        self.written = 0;
        self.report = LoadReport::default();
        self.file = match (self.mode, &self.session_dir) {
            (Mode::Persistent, Some(dir)) => {
                Some(dir.join(listing::session_file_name(&self.header.timestamp, &self.header.id)))
            }
            _ => None,
        };
        self.file.clone()
    }

    fn reindex(&mut self) {
        self.by_id.clear();
        self.labels.clear();
        self.has_assistant = false;
        for i in 0..self.entries.len() {
            self.index_entry(i);
        }
        self.leaf = self.entries.len().checked_sub(1);
    }

    fn index_entry(&mut self, i: usize) {
        let entry = &self.entries[i];
        self.by_id.insert(entry.id.clone(), i);
        if entry.is_assistant_message() || entry.message().is_some_and(|m| m.role() == "user") {
            self.has_assistant = true;
        }
        if let EntryKind::Label { target_id, label, .. } = &entry.kind {
            match label.as_deref().filter(|l| !l.is_empty()) {
                Some(l) => {
                    self.labels.insert(
                        target_id.clone(),
                        Label {
                            label: l.to_string(),
                            timestamp: entry.timestamp.clone(),
                        },
                    );
                }
                None => {
                    self.labels.remove(target_id);
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Writing

    /// Run `append` so that the entry it appends gets `id`, an id chosen elsewhere (an
    /// extension host hands out ids before pi writes the entries). Fails, appending nothing,
    /// when `id` is empty or already in the session.
    pub fn with_entry_id<T, E: From<SessionError>>(
        &mut self,
        id: &str,
        append: impl FnOnce(&mut Self) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        if id.is_empty() || self.by_id.contains_key(id) {
            return Err(SessionError::DuplicateEntryId(id.to_string()).into());
        }
        self.next_id = Some(id.to_string());
        let result = append(self);
        self.next_id = None;
        result
    }

    /// The id for a new entry: the one [`Self::with_entry_id`] chose, else a fresh one.
    fn take_entry_id(&mut self) -> String {
        match self.next_id.take() {
            Some(id) => id,
            None => ids::new_entry_id(|c| self.by_id.contains_key(c)),
        }
    }

    fn append_entry(&mut self, kind: EntryKind) -> Result<String> {
        self.append_entry_with(ids::now_iso(), |_| kind)
    }

    /// Append the entry `kind_for(id)` builds for its new id, stamped `timestamp`.
    fn append_entry_with(&mut self, timestamp: String, kind_for: impl FnOnce(&str) -> EntryKind) -> Result<String> {
        if self.mode == Mode::ReadOnly {
            return Err(SessionError::ReadOnly {
                path: self.file.clone().unwrap_or_default(),
            });
        }
        let id = self.take_entry_id();
        let kind = kind_for(&id);
        let parent_id = self.leaf_id().map(str::to_string);
        self.entries.push(Entry {
            id: id.clone(),
            parent_id,
            timestamp,
            kind,
        });
        let i = self.entries.len() - 1;
        self.index_entry(i);
        self.leaf = Some(i);
        self.persist()?;
        Ok(id)
    }

    /// Write what is not yet on disk, once the session has a user or assistant message. On an error
    /// the entries stay in memory and the next append tries again.
    fn persist(&mut self) -> Result<()> {
        if self.mode != Mode::Persistent || !self.has_assistant {
            return Ok(());
        }
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        let mut buf = Vec::new();
        if !self.header_written {
            buf.extend_from_slice(&line(&self.header)?);
        }
        for e in &self.entries[self.written..] {
            buf.extend_from_slice(&line(e)?);
        }
        if buf.is_empty() {
            return Ok(());
        }
        let writer = match &mut self.writer {
            Some(w) => w,
            None => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| SessionError::io(parent, e))?;
                }
                self.writer.insert(LockedFile::open(&path, true)?)
            }
        };
        writer.append(&buf)?;
        self.header_written = true;
        self.written = self.entries.len();
        Ok(())
    }

    /// Write a whole new file (fork) and keep it locked.
    fn write_new_file(&mut self, content: &[u8]) -> Result<()> {
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SessionError::io(parent, e))?;
        }
        let mut w = LockedFile::open(&path, true)?;
        w.append(content)?;
        self.writer = Some(w);
        self.header_written = true;
        self.written = self.entries.len();
        Ok(())
    }

    /// Append a message as a child of the leaf; returns the new entry id.
    pub fn append_message(&mut self, message: impl Into<AgentMessage>) -> Result<String> {
        self.append_entry(EntryKind::Message {
            message: message.into(),
            extra: Default::default(),
        })
    }

    /// Leave `target_id` out of the model's context from now on (`replacement` `None`), or
    /// replace its content there (`Some(content)`). The raw history keeps the original.
    /// Returns the new entry.
    pub fn append_context_edit(&mut self, target_id: &str, replacement: Option<Value>) -> Result<Entry> {
        let replacement = replacement.map_or(Value::Null, |content| serde_json::json!({ "content": content }));
        self.append_untyped(
            "context_edit",
            [("targetId", Value::from(target_id)), ("replacement", replacement)],
        )
    }

    /// Record usage that belongs to no message and stays out of the model's context (pi 1.6's
    /// `usage` entry; `kind` is e.g. `cache_warm`). Returns the new entry.
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: &pi_ai::Usage,
        note: Option<&str>,
    ) -> Result<Entry> {
        let usage = serde_json::to_value(usage)?;
        let mut fields = vec![
            ("kind", Value::from(kind)),
            ("provider", Value::from(provider)),
            ("model", Value::from(model)),
            ("usage", usage),
        ];
        if let Some(note) = note {
            fields.push(("note", Value::from(note)));
        }
        self.append_untyped("usage", fields)
    }

    /// Append an entry of a type this crate keeps as its JSON fields (written in the order
    /// given, after pi's `type`, `id`, `parentId`, `timestamp`) as a child of the leaf.
    fn append_untyped<'a>(
        &mut self,
        type_name: &str,
        fields: impl IntoIterator<Item = (&'a str, Value)>,
    ) -> Result<Entry> {
        if self.mode == Mode::ReadOnly {
            return Err(SessionError::ReadOnly {
                path: self.file.clone().unwrap_or_default(),
            });
        }
        let id = self.take_entry_id();
        let parent_id = self.leaf_id().map(str::to_string);
        let timestamp = ids::now_iso();
        let mut map = Map::new();
        map.insert("type".into(), Value::from(type_name));
        map.insert("id".into(), Value::from(id.clone()));
        map.insert("parentId".into(), parent_id.clone().map_or(Value::Null, Value::from));
        map.insert("timestamp".into(), Value::from(timestamp.clone()));
        for (name, value) in fields {
            map.insert(name.into(), value);
        }
        let entry = Entry {
            id,
            parent_id,
            timestamp,
            kind: EntryKind::Unknown {
                type_name: type_name.into(),
                fields: Box::new(map),
            },
        };
        self.entries.push(entry.clone());
        let i = self.entries.len() - 1;
        self.index_entry(i);
        self.leaf = Some(i);
        self.persist()?;
        Ok(entry)
    }

    /// The id of the last entry holding `message` (searched from the end: it is normally the
    /// last one or close to it).
    pub fn find_message_entry(&self, pred: impl Fn(&AgentMessage) -> bool) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.message().is_some_and(&pred))
            .map(|e| e.id.as_str())
    }

    pub fn append_thinking_level_change(&mut self, thinking_level: &str) -> Result<String> {
        self.append_entry(EntryKind::ThinkingLevelChange {
            thinking_level: thinking_level.to_string(),
            extra: Default::default(),
        })
    }

    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<String> {
        self.append_entry(EntryKind::ModelChange {
            provider: provider.to_string(),
            model_id: model_id.to_string(),
            extra: Default::default(),
        })
    }

    /// A compaction entry. `usage` is what the summary requests cost (pi 1.6 counts it in the
    /// session's totals). `system_message` is the prompt and tools checkpoint (pi 1.6's
    /// `systemMessage`): the context after the compaction starts with it, so the system
    /// messages before the compaction are not needed; it is stamped with the entry's time.
    #[allow(clippy::too_many_arguments)]
    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: u64,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Value>,
        system_message: Option<Value>,
    ) -> Result<String> {
        let kept = Some(first_kept_entry_id);
        self.append_compaction_entry(summary, kept, tokens_before, details, from_hook, usage, system_message)
    }

    /// A compaction an extension wrote (a boundary draft): `first_kept_entry_id` `None` keeps
    /// nothing before it (the entry names itself, as pi does), and its `usage`, if given, is
    /// kept with it.
    pub fn append_extension_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: Option<&str>,
        tokens_before: u64,
        details: Option<Value>,
        usage: Option<Value>,
        system_message: Option<Value>,
    ) -> Result<String> {
        self.append_compaction_entry(
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            Some(true),
            usage,
            system_message,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn append_compaction_entry(
        &mut self,
        summary: &str,
        first_kept_entry_id: Option<&str>,
        tokens_before: u64,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Value>,
        system_message: Option<Value>,
    ) -> Result<String> {
        let timestamp = ids::now_iso();
        let mut extra = Map::new();
        if let Some(usage) = usage {
            extra.insert("usage".into(), usage);
        }
        if let Some(mut message) = system_message.filter(Value::is_object) {
            message["timestamp"] = Value::from(ids::iso_to_ms(&timestamp).unwrap_or_default());
            extra.insert("systemMessage".to_string(), message);
        }
        self.append_entry_with(timestamp, |id| EntryKind::Compaction {
            summary: summary.to_string(),
            first_kept_entry_id: first_kept_entry_id.unwrap_or(id).to_string(),
            tokens_before: Box::new(Value::from(tokens_before)),
            details: details.map(Box::new),
            from_hook,
            extra: extra.into(),
        })
    }

    /// Extension state, never in the LLM context.
    pub fn append_custom(&mut self, custom_type: &str, data: Option<Value>) -> Result<String> {
        self.append_entry(EntryKind::Custom {
            custom_type: custom_type.to_string(),
            data: data.map(Box::new),
            extra: Default::default(),
        })
    }

    /// An extension message the LLM sees as a user message.
    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: UserContent,
        display: bool,
        details: Option<Value>,
    ) -> Result<String> {
        self.append_entry(EntryKind::CustomMessage {
            custom_type: custom_type.to_string(),
            content,
            display,
            details: details.map(Box::new),
            extra: Default::default(),
        })
    }

    /// Set (or with `None`/empty, clear) the label of an existing entry.
    pub fn append_label(&mut self, target_id: &str, label: Option<&str>) -> Result<String> {
        if !self.by_id.contains_key(target_id) {
            return Err(SessionError::EntryNotFound(target_id.to_string()));
        }
        self.append_entry(EntryKind::Label {
            target_id: target_id.to_string(),
            label: label.map(str::to_string),
            extra: Default::default(),
        })
    }

    /// Name the session (trimmed; an empty name clears it).
    pub fn append_session_info(&mut self, name: &str) -> Result<String> {
        self.append_entry(EntryKind::SessionInfo {
            name: Some(name.trim().to_string()),
            extra: Default::default(),
        })
    }

    /// Move the leaf to `to` (or before the first entry with `None`) and append there a
    /// `branch_summary` of the path left behind. Its `fromId` is the leaf it was left from
    /// (`"root"` when there was none), as pi writes it; `usage` is what the summary cost.
    pub fn append_branch_summary(
        &mut self,
        to: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Value>,
    ) -> Result<String> {
        let from_id = self.leaf_id().unwrap_or("root").to_string();
        self.leaf = match to {
            Some(id) => Some(self.index_of(id)?),
            None => None,
        };
        let mut extra = Map::new();
        if let Some(usage) = usage {
            extra.insert("usage".into(), usage);
        }
        self.append_entry(EntryKind::BranchSummary {
            from_id,
            summary: summary.to_string(),
            details: details.map(Box::new),
            from_hook,
            extra: extra.into(),
        })
    }

    // -----------------------------------------------------------------------------------------
    // The tree

    fn index_of(&self, id: &str) -> Result<usize> {
        self.by_id
            .get(id)
            .copied()
            .ok_or_else(|| SessionError::EntryNotFound(id.to_string()))
    }

    /// Move the leaf to an existing entry; the next append starts a branch there.
    pub fn branch(&mut self, entry_id: &str) -> Result<()> {
        self.leaf = Some(self.index_of(entry_id)?);
        Ok(())
    }

    /// Move the leaf before the first entry: the next append is a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    pub fn get_leaf_id(&self) -> Option<&str> {
        self.leaf_id()
    }

    fn leaf_id(&self) -> Option<&str> {
        self.leaf.map(|i| self.entries[i].id.as_str())
    }

    pub fn get_leaf_entry(&self) -> Option<&Entry> {
        self.leaf.map(|i| &self.entries[i])
    }

    pub fn get_entry(&self, id: &str) -> Option<&Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// Every entry in file order (the header excluded).
    pub fn get_entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The direct children of `parent_id` (`None`: the roots), in file order.
    pub fn get_children(&self, parent_id: Option<&str>) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == parent_id)
            .collect()
    }

    pub fn get_label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|l| l.label.as_str())
    }

    /// The entries from the root to `from` (default: the leaf), in order. A broken parent
    /// chain ends the walk; a parent cycle is walked once.
    pub fn get_branch(&self, from: Option<&str>) -> Vec<&Entry> {
        let start = match from {
            Some(id) => self.by_id.get(id).copied(),
            None => self.leaf,
        };
        let mut path = Vec::new();
        let mut seen = vec![false; self.entries.len()];
        let mut current = start;
        while let Some(i) = current {
            if std::mem::replace(&mut seen[i], true) {
                break;
            }
            let entry = &self.entries[i];
            path.push(entry);
            current = entry.parent_id.as_ref().and_then(|p| self.by_id.get(p).copied());
        }
        path.reverse();
        path
    }

    /// What the model sees from the current leaf (pi's `buildSessionContext`).
    pub fn build_context(&self) -> SessionContext {
        context::build_context(&self.get_branch(None))
    }

    /// Every entry as a forest with labels.
    pub fn get_tree(&self) -> SessionTree<'_> {
        tree::build(&self.entries, &self.by_id, &self.labels)
    }

    /// The latest `session_info` entry's name in file order (an empty name clears it).
    pub fn session_name(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::SessionInfo { name, .. } => Some(name.as_deref().map(str::trim).filter(|n| !n.is_empty())),
            _ => None,
        })?
    }

    // -----------------------------------------------------------------------------------------
    // Forks and exports

    /// Continue in a new session holding the path from the root to `entry_id` (pi's
    /// `createBranchedSession`): new id, header `parentSession` = this file, label entries
    /// re-created after the path for labels on it. Written at once when the path holds an
    /// assistant message, otherwise lazily. Returns the new file (None in memory).
    pub fn fork_to(&mut self, entry_id: &str) -> Result<Option<PathBuf>> {
        let forked = self.forked(entry_id)?;
        *self = forked;
        Ok(self.file.clone())
    }

    /// [`fork_to`](Self::fork_to) into a manager of its own, leaving this one as it is (it
    /// keeps its file and lock): the caller can name the new file before it lets go of this
    /// session.
    pub fn forked(&self, entry_id: &str) -> Result<SessionManager> {
        let path = self.get_branch(Some(entry_id));
        if path.is_empty() {
            return Err(SessionError::EntryNotFound(entry_id.to_string()));
        }
        let kept: Vec<Entry> = path
            .into_iter()
            .filter(|e| !matches!(e.kind, EntryKind::Label { .. }))
            .cloned()
            .collect();
        let mut taken: HashSet<String> = kept.iter().map(|e| e.id.clone()).collect();
        let mut labelled: Vec<(usize, &String, &Label)> = kept
            .iter()
            .enumerate()
            .filter_map(|(i, e)| self.labels.get(&e.id).map(|l| (i, &e.id, l)))
            .collect();
        labelled.sort_by_key(|(i, _, _)| *i);
        let mut parent = kept.last().map(|e| e.id.clone());
        let mut label_entries = Vec::new();
        for (_, target, label) in labelled {
            let id = ids::new_entry_id(|c| taken.contains(c));
            taken.insert(id.clone());
            label_entries.push(Entry {
                id: id.clone(),
                parent_id: parent.replace(id),
                timestamp: label.timestamp.clone(),
                kind: EntryKind::Label {
                    target_id: target.clone(),
                    label: Some(label.label.clone()),
                    extra: Default::default(),
                },
            });
        }
        let previous = match self.mode {
            Mode::Persistent => self.file.as_ref().map(|f| f.to_string_lossy().into_owned()),
            _ => None,
        };
        let mut forked = Self::blank(&self.cwd, self.session_dir.clone(), self.mode);
        forked.new_session(NewSessionOptions {
            id: None,
            parent_session: previous,
        });
        forked.entries = kept;
        forked.entries.extend(label_entries);
        forked.reindex();
        forked.persist()?;
        Ok(forked)
    }

    /// An in-memory copy of the current branch (same header and entry ids) to try appends on
    /// without touching this session or its file: pi 1.6 previews what extension drafts
    /// would make of the context this way before they are committed.
    pub fn branch_preview(&self) -> SessionManager {
        let mut preview = Self::blank(&self.cwd, None, Mode::InMemory);
        preview.header = self.header.clone();
        preview.entries = self.get_branch(None).into_iter().cloned().collect();
        preview.reindex();
        preview
    }

    /// Write the active branch to `path` as its own session file (pi's JSONL export): a fresh
    /// header with this session's id, the branch re-chained as a list.
    pub fn export_branch(&self, path: impl AsRef<Path>) -> Result<()> {
        let header = SessionHeader {
            timestamp: ids::now_iso(),
            ..self.header.clone()
        };
        let mut out = line(&header)?;
        let mut parent: Option<String> = None;
        for e in self.get_branch(None) {
            let mut e = e.clone();
            e.parent_id = parent.replace(e.id.clone());
            out.extend_from_slice(&line(&e)?);
        }
        file::write_atomic(path.as_ref(), &out)
    }

    // -----------------------------------------------------------------------------------------
    // About the session

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The file this session is (or will be) written to; `None` in memory.
    pub fn session_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Where new and forked sessions of this manager go.
    pub fn session_dir(&self) -> Option<&Path> {
        self.session_dir.as_deref()
    }

    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// Run this session in `cwd` instead of the folder its header names (which is gone);
    /// the header is not rewritten, so the next resume finds the same question.
    pub fn run_in(&mut self, cwd: &str) {
        self.cwd = cwd.to_string();
    }

    pub fn is_persisted(&self) -> bool {
        self.mode == Mode::Persistent
    }

    /// Whether the file exists with everything appended so far.
    pub fn is_flushed(&self) -> bool {
        self.header_written && self.written == self.entries.len()
    }

    /// What the load skipped, migrated or moved aside.
    pub fn load_report(&self) -> &LoadReport {
        &self.report
    }
}

/// One JSON line with its newline.
fn line<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut v = serde_json::to_vec(value)?;
    v.push(b'\n');
    Ok(v)
}

/// An absolute path with `.` and `..` resolved lexically, as Node's `path.resolve`.
fn resolve(path: &Path) -> Result<PathBuf> {
    use std::path::Component;
    let absolute = std::path::absolute(path).map_err(|e| SessionError::io(path, e))?;
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `<file>.corrupt`, or `.corrupt-2`, ... when taken.
fn aside_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut candidate = path.with_file_name(format!("{name}.corrupt"));
    let mut n = 2;
    while candidate.exists() {
        candidate = path.with_file_name(format!("{name}.corrupt-{n}"));
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_like_node() {
        assert_eq!(
            resolve(Path::new("/a/b/../c/./d.jsonl")).unwrap(),
            PathBuf::from("/a/c/d.jsonl")
        );
        assert!(resolve(Path::new("x.jsonl")).unwrap().is_absolute());
    }

    #[test]
    fn a_chosen_entry_id_is_used_once_and_must_be_new() {
        let mut sm = SessionManager::in_memory("/tmp");
        let first: String = sm
            .with_entry_id("abcd1234", |sm| sm.append_custom("note", None))
            .unwrap();
        assert_eq!(first, "abcd1234");
        assert_eq!(sm.get_leaf_id(), Some("abcd1234"));
        let label: String = sm
            .with_entry_id("feed0001", |sm| sm.append_label("abcd1234", Some("mark")))
            .unwrap();
        assert_eq!(label, "feed0001");
        assert_eq!(sm.get_entry("feed0001").unwrap().parent_id.as_deref(), Some("abcd1234"));
        // The chosen id is not kept for later appends.
        let next = sm.append_custom("note", None).unwrap();
        assert_ne!(next, "feed0001");
        let taken: Result<String> = sm.with_entry_id("abcd1234", |sm| sm.append_custom("note", None));
        assert!(matches!(taken, Err(SessionError::DuplicateEntryId(_))));
        let empty: Result<String> = sm.with_entry_id("", |sm| sm.append_custom("note", None));
        assert!(empty.is_err());
        assert_eq!(sm.get_entries().len(), 3);
    }
}
