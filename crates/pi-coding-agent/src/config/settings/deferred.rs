//! Settings writes taken out of the settings lock: [`update`] and [`change`] make setters
//! only mark their file, and [`flush`] snapshots the marked files under the lock and writes
//! them after releasing it, so a thread waiting for the settings never waits for a file lock
//! or an fsync.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value};

use super::{apply_modified, locked_file, parse_settings, to_pretty, LockOptions, Modified, SettingsError};
use super::{SettingsManager, SettingsScope, UpdateError};

impl SettingsManager {
    /// The write of `scope`'s changed keys, its snapshot taken now; `None` when nothing is
    /// left to write. In-memory settings are "written" here (no I/O).
    pub(super) fn take_write(&mut self, scope: SettingsScope) -> Option<WriteJob> {
        let modified = std::mem::take(self.modified(scope));
        if modified.fields.is_empty() {
            return None;
        }
        let snapshot = match scope {
            SettingsScope::Global => self.global.clone(),
            SettingsScope::Project => self.project.clone(),
        };
        match self.path_of(scope).map(Path::to_path_buf) {
            Some(path) => Some(WriteJob {
                scope,
                path,
                snapshot,
                modified,
            }),
            None => {
                let base = self
                    .memory_files
                    .get(&scope)
                    .and_then(|t| parse_settings(t).ok())
                    .unwrap_or_default();
                let merged = apply_modified(base, &snapshot, &modified);
                self.memory_files.insert(scope, to_pretty(&merged));
                None
            }
        }
    }

    /// Record how a write went: a failed one keeps its keys marked, so the next write of
    /// that file retries them, and its error is reported.
    pub(super) fn finish_write(&mut self, job: WriteJob, result: Result<(), String>) {
        if let Err(message) = result {
            let modified = self.modified(job.scope);
            for field in job.modified.fields {
                modified.fields.insert(field);
            }
            for (field, nested) in job.modified.nested {
                modified.nested.entry(field).or_default().extend(nested);
            }
            self.errors.push(SettingsError {
                scope: job.scope,
                message,
            });
        }
    }
}

/// One file's changed keys with the content they had when the write was taken: written
/// into the file's current content under the file lock, after the settings lock is released.
pub(super) struct WriteJob {
    scope: SettingsScope,
    path: PathBuf,
    snapshot: Map<String, Value>,
    modified: Modified,
}

impl WriteJob {
    pub(super) fn write(&self) -> Result<(), String> {
        locked_file::update::<_, UpdateError>(&self.path, LockOptions::default(), |current| {
            let base = match current {
                Some(text) => parse_settings(text).map_err(UpdateError::Parse)?,
                None => Map::new(),
            };
            let merged = apply_modified(base, &self.snapshot, &self.modified);
            Ok((Some(to_pretty(&merged)), ()))
        })
        .map_err(|e| e.to_string())
    }
}

fn lock_settings(shared: &Mutex<SettingsManager>) -> MutexGuard<'_, SettingsManager> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Change shared settings with `f` under their lock and write the changed files after the
/// lock is released: the lock is held for the in-memory change only, never for the file
/// lock and the write. Blocking (file I/O): call it off the async threads.
///
/// Writes go one at a time and each takes its snapshot when it starts, so a write that
/// started later never loses to an older snapshot landing after it.
pub fn update<R>(shared: &Mutex<SettingsManager>, f: impl FnOnce(&mut SettingsManager) -> R) -> R {
    let result = change(shared, f);
    flush(shared);
    result
}

/// The in-memory half of [`update`]: `f`'s changes are visible at once, their files are
/// written by the next [`flush`]. No I/O: fine on any thread.
pub fn change<R>(shared: &Mutex<SettingsManager>, f: impl FnOnce(&mut SettingsManager) -> R) -> R {
    let mut s = lock_settings(shared);
    s.defer_writes = true;
    let result = f(&mut s);
    s.defer_writes = false;
    result
}

/// Write what [`update`] left pending (see there).
pub fn flush(shared: &Mutex<SettingsManager>) {
    // Held across the writes on purpose: it orders writers; nothing else waits on it.
    static WRITER: Mutex<()> = Mutex::new(());
    let _writer = WRITER.lock().unwrap_or_else(PoisonError::into_inner);
    let jobs: Vec<WriteJob> = {
        let mut s = lock_settings(shared);
        let scopes = std::mem::take(&mut s.pending_writes);
        scopes.into_iter().filter_map(|scope| s.take_write(scope)).collect()
    };
    for job in jobs {
        let result = job.write();
        lock_settings(shared).finish_write(job, result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn update_writes_after_releasing_the_lock() {
        let dir = tempfile::tempdir().expect("dir");
        let global = dir.path().join("settings.json");
        std::fs::write(&global, r#"{"theme": "dark", "unknown": 1}"#).expect("write");
        let shared = Mutex::new(SettingsManager::from_files(global.clone(), dir.path().join("p.json")));
        update(&shared, |s| {
            s.set_hide_thinking_block(true);
            s.set_theme("light");
            // Inside the lock nothing has been written yet.
            let text = std::fs::read_to_string(&global).expect("read");
            assert!(!text.contains("light"), "{text}");
        });
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&global).expect("read")).expect("json");
        assert_eq!(file["theme"], json!("light"));
        assert_eq!(file["hideThinkingBlock"], json!(true));
        assert_eq!(file["unknown"], json!(1));
        // Nothing is left pending or marked: a second flush writes nothing.
        std::fs::write(&global, "{}").expect("write");
        flush(&shared);
        assert_eq!(std::fs::read_to_string(&global).expect("read"), "{}");
        assert!(lock_settings(&shared).drain_errors().is_empty());
    }

    #[test]
    fn a_failed_deferred_write_is_reported_and_retried_by_the_next() {
        let dir = tempfile::tempdir().expect("dir");
        // The settings "file" is a folder for now: the write fails.
        let global = dir.path().join("settings.json");
        let shared = Mutex::new(SettingsManager::from_files(global.clone(), dir.path().join("p.json")));
        std::fs::create_dir(&global).expect("dir");
        update(&shared, |s| s.set_theme("light"));
        assert_eq!(lock_settings(&shared).drain_errors().len(), 1);
        std::fs::remove_dir(&global).expect("rmdir");
        update(&shared, |s| s.set_quiet_startup(true));
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&global).expect("read")).expect("json");
        assert_eq!(
            file["theme"],
            json!("light"),
            "the failed key is written with the next change"
        );
        assert_eq!(file["quietStartup"], json!(true));
    }

    #[test]
    fn direct_setters_still_write_at_once() {
        let dir = tempfile::tempdir().expect("dir");
        let global = dir.path().join("settings.json");
        let mut s = SettingsManager::from_files(global.clone(), dir.path().join("p.json"));
        s.set_theme("light");
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&global).expect("read")).expect("json");
        assert_eq!(file["theme"], json!("light"));
    }

    #[test]
    fn a_snapshot_reads_the_same_and_never_writes() {
        let dir = tempfile::tempdir().expect("dir");
        let global = dir.path().join("settings.json");
        std::fs::write(&global, r#"{"theme": "light", "project-less": true}"#).expect("write");
        let s = SettingsManager::from_files(global.clone(), dir.path().join("p.json"));
        let mut copy = s.snapshot();
        assert_eq!(copy.theme(), Some("light"));
        assert_eq!(copy.effective(), s.effective());
        copy.set_theme("dark");
        let text = std::fs::read_to_string(&global).expect("read");
        assert!(text.contains("light") && !text.contains("dark"), "{text}");
    }
}
