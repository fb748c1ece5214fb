//! Where session files live and what is in them: the per-cwd directory, file names, listing
//! the sessions of a directory or of every project, and finding one by id prefix.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Deserialize;
use serde_json::Value;

use crate::entry::SessionHeader;
use crate::ids;

/// The directory name pi uses for a cwd: strip one leading `/` or `\`, turn every `/`, `\`
/// and `:` into `-`, wrap in `--`. `/home/u/proj` -> `--home-u-proj--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix('/').or_else(|| cwd.strip_prefix('\\')).unwrap_or(cwd);
    let body: String = trimmed
        .chars()
        .map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c })
        .collect();
    format!("--{body}--")
}

/// `<sessions_root>/--<encoded cwd>--` (`sessions_root` is normally `~/.pi/agent/sessions`).
/// Not created here: the first write creates it.
pub fn session_dir_for_cwd(sessions_root: &Path, cwd: &str) -> PathBuf {
    sessions_root.join(encode_cwd(cwd))
}

/// `<ISO timestamp with ':' and '.' as '-'>_<session id>.jsonl`.
pub fn session_file_name(timestamp_iso: &str, session_id: &str) -> String {
    let stamp: String = timestamp_iso
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{stamp}_{session_id}.jsonl")
}

/// Whether a `--session`/`--fork` argument names a file rather than an id prefix (as pi
/// decides: it contains a path separator or ends in `.jsonl`).
pub fn looks_like_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl")
}

/// A summary of one session file, for pickers and `--session <id>`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub path: PathBuf,
    pub id: String,
    pub cwd: String,
    /// The latest `session_info` entry's trimmed name (an empty one clears it).
    pub name: Option<String>,
    pub parent_session_path: Option<String>,
    /// The header timestamp as stored.
    pub created: String,
    /// Epoch ms of the newest user/assistant message, else the header time, else the file's
    /// modification time.
    pub modified_ms: i64,
    /// Number of `message` entries.
    pub message_count: usize,
    /// The first user message's text, or `(no messages)`.
    pub first_message: String,
    /// The text of every user and assistant message, joined with spaces (for search).
    pub all_messages_text: String,
}

#[derive(Deserialize)]
struct LightEntry {
    #[serde(rename = "type")]
    kind: Option<String>,
    timestamp: Option<Value>,
    name: Option<Value>,
    message: Option<LightMessage>,
}

#[derive(Deserialize)]
struct LightMessage {
    role: Option<Value>,
    content: Option<Value>,
    timestamp: Option<Value>,
}

/// Read the summary of one file; `None` if it is unreadable or has no session header.
pub fn read_session_info(path: &Path) -> Option<SessionInfo> {
    let bytes = std::fs::read(path).ok()?;
    let mut lines = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let header = loop {
        match serde_json::from_slice::<Value>(lines.next()?) {
            Ok(Value::Object(map)) => break SessionHeader::from_map(map)?,
            Ok(_) => return None,
            Err(_) => continue,
        }
    };
    let mut name = None;
    let mut message_count = 0;
    let mut first_message = String::new();
    let mut texts: Vec<String> = Vec::new();
    let mut last_activity: Option<i64> = None;
    for line in lines {
        let Ok(entry) = serde_json::from_slice::<LightEntry>(line) else {
            continue;
        };
        match entry.kind.as_deref() {
            Some("session_info") => {
                name = entry
                    .name
                    .as_ref()
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string);
            }
            Some("message") => {
                message_count += 1;
                let Some(msg) = entry.message else { continue };
                let role = msg.role.as_ref().and_then(Value::as_str).unwrap_or("");
                if role != "user" && role != "assistant" {
                    continue;
                }
                let Some(content) = msg.content else { continue };
                let at = match msg.timestamp.as_ref().and_then(Value::as_f64) {
                    #[allow(clippy::cast_possible_truncation)]
                    Some(ms) => Some(ms as i64),
                    None => entry
                        .timestamp
                        .as_ref()
                        .and_then(Value::as_str)
                        .and_then(ids::iso_to_ms),
                };
                if let Some(at) = at {
                    last_activity = Some(last_activity.map_or(at, |l| l.max(at)));
                }
                let text = content_text(&content);
                if text.is_empty() {
                    continue;
                }
                if first_message.is_empty() && role == "user" {
                    first_message = text.clone();
                }
                texts.push(text);
            }
            _ => {}
        }
    }
    let modified_ms = last_activity
        .filter(|&t| t > 0)
        .or_else(|| ids::iso_to_ms(&header.timestamp))
        .unwrap_or_else(|| file_mtime_ms(path).unwrap_or(0));
    Some(SessionInfo {
        path: path.to_path_buf(),
        id: header.id,
        cwd: header.cwd,
        name,
        parent_session_path: header.parent_session,
        created: header.timestamp,
        modified_ms,
        message_count,
        first_message: if first_message.is_empty() {
            "(no messages)".to_string()
        } else {
            first_message
        },
        all_messages_text: texts.join(" "),
    })
}

/// A message's text: a string content, or its text blocks joined with spaces.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .map(|b| b.get("text").and_then(Value::as_str).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn file_mtime_ms(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let ms = modified.duration_since(UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect()
}

fn newest_first(mut sessions: Vec<SessionInfo>) -> Vec<SessionInfo> {
    sessions.sort_by_key(|s| std::cmp::Reverse(s.modified_ms));
    sessions
}

/// The sessions in one directory, newest first. A missing directory lists nothing.
pub fn list_sessions(dir: &Path) -> Vec<SessionInfo> {
    newest_first(jsonl_files(dir).iter().filter_map(|p| read_session_info(p)).collect())
}

/// The sessions of every project under `sessions_root` (one directory per cwd), newest first.
pub fn list_all(sessions_root: &Path) -> Vec<SessionInfo> {
    let Ok(read) = std::fs::read_dir(sessions_root) else {
        return Vec::new();
    };
    let sessions = read
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .flat_map(|d| jsonl_files(&d))
        .filter_map(|p| read_session_info(&p))
        .collect();
    newest_first(sessions)
}

/// A session found by id prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundSession {
    pub info: SessionInfo,
    /// Found in the current project's directory (otherwise in another project).
    pub local: bool,
}

/// Find a session whose id starts with `id_prefix`: first among `local_dir`'s sessions, then
/// across every project under `sessions_root`; the newest match wins.
pub fn find_session(local_dir: &Path, sessions_root: &Path, id_prefix: &str) -> Option<FoundSession> {
    let find = |list: Vec<SessionInfo>| list.into_iter().find(|s| s.id.starts_with(id_prefix));
    if let Some(info) = find(list_sessions(local_dir)) {
        return Some(FoundSession { info, local: true });
    }
    find(list_all(sessions_root)).map(|info| FoundSession { info, local: false })
}

/// The most recently modified (by file mtime) `.jsonl` in `dir` whose first line is a session
/// header, for `--continue`.
pub fn find_most_recent(dir: &Path) -> Option<PathBuf> {
    jsonl_files(dir)
        .into_iter()
        .filter(|p| has_valid_header(p))
        .filter_map(|p| {
            let mtime = std::fs::metadata(&p).ok()?.modified().ok()?;
            Some((mtime, p))
        })
        .max_by_key(|(mtime, _)| *mtime)
        .map(|(_, p)| p)
}

/// Whether the first line, within the first 512 bytes, is a session header (as pi checks).
fn has_valid_header(path: &Path) -> bool {
    let mut buf = [0u8; 512];
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(_) => return false,
        }
    }
    let first = buf[..len].split(|&b| b == b'\n').next().unwrap_or(&[]);
    match serde_json::from_slice::<Value>(first) {
        Ok(Value::Object(map)) => SessionHeader::from_map(map).is_some(),
        _ => false,
    }
}

/// Move session files left directly in `agent_dir` (very old pi versions) into their cwd's
/// directory under `sessions_root`, as pi does at startup. Files without a header naming a
/// cwd, and files whose target exists, stay where they are. Returns the moves made.
pub fn migrate_legacy_sessions(agent_dir: &Path, sessions_root: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut moved = Vec::new();
    for file in jsonl_files(agent_dir) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let first = text.split('\n').next().unwrap_or("");
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(first) else {
            continue;
        };
        if map.get("type").and_then(Value::as_str) != Some("session") {
            continue;
        }
        let Some(cwd) = map.get("cwd").and_then(Value::as_str).filter(|c| !c.is_empty()) else {
            continue;
        };
        let (Some(name), dir) = (file.file_name(), session_dir_for_cwd(sessions_root, cwd)) else {
            continue;
        };
        let target = dir.join(name);
        if target.exists() || std::fs::create_dir_all(&dir).is_err() {
            continue;
        }
        if std::fs::rename(&file, &target).is_ok() {
            moved.push((file, target));
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_pi() {
        assert_eq!(encode_cwd("/home/u/proj"), "--home-u-proj--");
        assert_eq!(encode_cwd("C:\\Users\\me"), "--C--Users-me--");
        assert_eq!(encode_cwd("//srv/x"), "---srv-x--");
    }

    #[test]
    fn file_names_match_pi() {
        assert_eq!(
            session_file_name("2026-03-15T10:20:30.123Z", "abc"),
            "2026-03-15T10-20-30-123Z_abc.jsonl"
        );
    }

    #[test]
    fn legacy_root_sessions_move_into_their_cwd_directory() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path();
        let root = agent.join("sessions");
        std::fs::write(
            agent.join("old.jsonl"),
            "{\"type\":\"session\",\"id\":\"x\",\"timestamp\":\"t\",\"cwd\":\"/w/p\"}\n",
        )
        .unwrap();
        std::fs::write(agent.join("junk.jsonl"), "nope\n").unwrap();
        let moved = migrate_legacy_sessions(agent, &root);
        assert_eq!(moved.len(), 1);
        assert!(root.join("--w-p--").join("old.jsonl").exists());
        assert!(agent.join("junk.jsonl").exists());
    }

    #[test]
    fn path_or_id() {
        assert!(looks_like_path("./x"));
        assert!(looks_like_path("x.jsonl"));
        assert!(!looks_like_path("01a22aaf"));
    }
}
