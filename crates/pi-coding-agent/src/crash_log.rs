//! `crashes.json` in the agent folder, as pi 1.6 keeps it: the last few crashes (newest last),
//! each marked once the next start has pointed at `/bug`; `/bug` attaches them to its
//! diagnostics and clears the file once the report is delivered. Everything here is best
//! effort: a crash being recorded must never fail in turn.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// At most this many records are kept.
const MAX_RECORDS: usize = 5;
/// Older crashes are not announced at start any more.
const MAX_AGE: chrono::TimeDelta = chrono::TimeDelta::days(7);

/// `<agentDir>/crashes.json`.
pub fn path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("crashes.json")
}

/// The records in `path`: objects with a string `timestamp` and `message` (anything else in
/// the file is skipped; a missing or broken file reads as none).
pub fn read(path: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(records)) => records
            .into_iter()
            .filter(|r| r["timestamp"].is_string() && r["message"].is_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn write(path: &Path, records: &[Value]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(records).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}

/// What is known about a crash when it happens.
#[derive(Debug, Clone)]
pub struct Crash {
    /// `uncaught_exception` (a panic) or `fatal_error`: 1.6's kinds, so a report built by
    /// either pi from a shared agent folder reads the same.
    pub kind: &'static str,
    pub message: String,
    pub stack: Option<String>,
    pub session_file: Option<PathBuf>,
    pub cwd: PathBuf,
}

/// Append `crash` (keeping the newest [`MAX_RECORDS`]); false when it could not be written.
pub fn record(path: &Path, crash: &Crash) -> bool {
    let entry = json!({
        "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "version": env!("CARGO_PKG_VERSION"),
        "kind": crash.kind,
        "message": crash.message,
        "stack": crash.stack,
        "sessionFile": crash.session_file.as_ref().map(|p| p.display().to_string()),
        "cwd": crash.cwd.display().to_string(),
    });
    let mut records = read(path);
    records.push(entry);
    let skip = records.len().saturating_sub(MAX_RECORDS);
    write(path, &records[skip..]).is_ok()
}

/// The newest crash of the last seven days not announced yet; every record is then marked
/// announced (should that write fail, the notice simply comes again).
pub fn take_unnotified(path: &Path, now: chrono::DateTime<chrono::Utc>) -> Option<Value> {
    let records = read(path);
    let recent = |r: &Value| {
        r["timestamp"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .is_some_and(|t| now.signed_duration_since(t) <= MAX_AGE)
    };
    let crash = records
        .iter()
        .rev()
        .find(|r| r["notified"] != Value::Bool(true) && recent(r))?
        .clone();
    let marked: Vec<Value> = records
        .into_iter()
        .map(|mut r| {
            r["notified"] = Value::Bool(true);
            r
        })
        .collect();
    let _ = write(path, &marked);
    Some(crash)
}

/// The records as a report carries them (without the announcement mark).
pub fn for_report(path: &Path) -> Vec<Value> {
    read(path)
        .into_iter()
        .map(|mut r| {
            if let Some(o) = r.as_object_mut() {
                o.remove("notified");
            }
            r
        })
        .collect()
}

/// Forget every record (after a report carried them).
pub fn clear(path: &Path) {
    let _ = std::fs::remove_file(path);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crash(message: &str) -> Crash {
        Crash {
            kind: "uncaught_exception",
            message: message.into(),
            stack: None,
            session_file: None,
            cwd: PathBuf::from("/w"),
        }
    }

    #[test]
    fn keeps_the_newest_five_and_announces_the_newest_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        for n in 0..7 {
            assert!(record(&file, &crash(&format!("boom {n}"))));
        }
        let records = read(&file);
        assert_eq!(records.len(), 5);
        assert_eq!(records[0]["message"], "boom 2");
        let now = chrono::Utc::now();
        let taken = take_unnotified(&file, now).expect("a crash");
        assert_eq!(taken["message"], "boom 6");
        assert!(take_unnotified(&file, now).is_none(), "announced once");
        assert!(for_report(&file).iter().all(|r| r.get("notified").is_none()));
        // A week later nothing new is announced either.
        record(&file, &crash("late"));
        assert!(take_unnotified(&file, now + chrono::TimeDelta::days(8)).is_none());
        clear(&file);
        assert!(read(&file).is_empty());
    }

    #[test]
    fn a_broken_file_reads_as_no_records() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        std::fs::write(&file, "{not json").unwrap();
        assert!(read(&file).is_empty());
        std::fs::write(
            &file,
            r#"[{"timestamp": 1, "message": "x"}, {"timestamp": "t", "message": "ok"}]"#,
        )
        .unwrap();
        assert_eq!(read(&file).len(), 1);
    }
}
