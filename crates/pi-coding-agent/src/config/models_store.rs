//! `models-store.json` beside models.json: pi 1.6's cache of the model catalogues fetched at
//! run time, one entry per provider (`{models, checkedAt, lastModified?, etag?}`), read at
//! every start and merged over the built-in catalogue, offline too.
//!
//! How an entry joins the registry follows the provider, as in 1.6:
//! - most built-in providers: the pi.dev catalogue overlays the built-ins (same id replaced,
//!   new ids added), but only when it is newer than the catalogue this binary ships;
//! - `openrouter`: the entry is the list the user's key may use, and replaces the built-ins;
//! - `radius`: the gateway's list for the account replaces the shipped baseline.
//!
//! The file is written under the same locks as auth.json (mode 0600), two-space indented.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pi_ai::Model;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::locked_file::{self, LockOptions};

pub const FILE_NAME: &str = "models-store.json";
/// A catalogue checked less than this long ago is not fetched again (unless forced).
pub const REFRESH_INTERVAL_MS: i64 = 4 * 60 * 60 * 1000;
/// When the built-in catalogue was generated (pi-ai 1.6.0's model data manifest,
/// `2026-11-20T10:48:49.496Z`): a fetched catalogue must be newer to be used.
pub const BUILTIN_GENERATED_AT_MS: i64 = 1_795_171_729_496;

/// One provider's cached catalogue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreEntry {
    #[serde(default)]
    pub models: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Fields a newer pi writes, kept when the entry is rewritten.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl StoreEntry {
    /// Whether the catalogue was checked within [`REFRESH_INTERVAL_MS`] of `now_ms`. An
    /// entry without `lastModified` (a failed first request, an older pi) is never fresh.
    pub fn is_fresh(&self, now_ms: i64) -> bool {
        match (self.checked_at, self.last_modified) {
            (Some(checked), Some(_)) => now_ms.saturating_sub(checked) < REFRESH_INTERVAL_MS,
            _ => false,
        }
    }
}

/// The whole file: provider id to entry.
pub type Store = HashMap<String, StoreEntry>;

/// Where the store of a models.json lives.
pub fn path_beside(models_json: &Path) -> PathBuf {
    models_json.with_file_name(FILE_NAME)
}

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {source}")]
    Json { path: String, source: serde_json::Error },
}

impl From<std::io::Error> for StoreError {
    fn from(source: std::io::Error) -> Self {
        StoreError::Io {
            path: FILE_NAME.into(),
            source,
        }
    }
}

fn parse(path: &Path, text: &str) -> Result<Store, StoreError> {
    let text = text.trim_start_matches('\u{feff}');
    if text.trim().is_empty() {
        return Ok(Store::new());
    }
    serde_json::from_str(text).map_err(|source| StoreError::Json {
        path: path.display().to_string(),
        source,
    })
}

/// The store at `path`; a missing file is empty.
pub fn read(path: &Path) -> Result<Store, StoreError> {
    match locked_file::read_optional(path) {
        Ok(Some(text)) => parse(path, &text),
        Ok(None) => Ok(Store::new()),
        Err(source) => Err(StoreError::Io {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Replace (or with `None` remove) the entry of `provider`, merged into the file as it is
/// now, under its lock; other providers' entries are kept.
pub fn write(path: &Path, provider: &str, entry: Option<&StoreEntry>) -> Result<(), StoreError> {
    let options = LockOptions {
        file_mode: Some(0o600),
        dir_mode: Some(0o700),
    };
    locked_file::update(path, options, |current| {
        let mut file: Map<String, Value> = match current {
            Some(text) if !text.trim_start_matches('\u{feff}').trim().is_empty() => {
                serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|source| StoreError::Json {
                    path: path.display().to_string(),
                    source,
                })?
            }
            _ => Map::new(),
        };
        match entry {
            Some(e) => {
                let value = serde_json::to_value(e).map_err(|source| StoreError::Json {
                    path: path.display().to_string(),
                    source,
                })?;
                file.insert(provider.to_string(), value);
            }
            None => {
                file.shift_remove(provider);
            }
        }
        let text = serde_json::to_string_pretty(&Value::Object(file)).map_err(|source| StoreError::Json {
            path: path.display().to_string(),
            source,
        })?;
        Ok((Some(text), ()))
    })
}

/// The chat models of an entry that belong to `provider` (image and classifier models, and
/// entries this build cannot read, are left out).
pub fn chat_models(entry: &StoreEntry, provider: &str) -> Vec<Model> {
    entry
        .models
        .iter()
        .filter(|m| m.get("provider").and_then(Value::as_str) == Some(provider))
        .filter(|m| m.get("type").and_then(Value::as_str).is_none_or(|t| t == "chat"))
        .filter_map(|m| serde_json::from_value::<Model>(m.clone()).ok())
        .collect()
}

/// How a provider's entry joins its built-in models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// Newer pi.dev catalogues overlay the built-ins.
    Remote,
    /// The entry replaces the built-ins when it has models (OpenRouter's per-key list,
    /// Radius's gateway list).
    Replace,
}

pub fn overlay_kind(provider: &str) -> Overlay {
    match provider {
        "openrouter" | "radius" => Overlay::Replace,
        _ => Overlay::Remote,
    }
}

/// The built-in models with the store merged in, or `None` when the store changes nothing.
pub fn overlay(builtins: &[Model], store: &Store) -> Option<Vec<Model>> {
    let mut changes: HashMap<&str, Vec<Model>> = HashMap::new();
    for (provider, entry) in store {
        let models = match overlay_kind(provider) {
            Overlay::Remote => {
                let newer = entry.last_modified.is_some_and(|m| m > BUILTIN_GENERATED_AT_MS);
                if !newer {
                    continue;
                }
                chat_models(entry, provider)
            }
            Overlay::Replace => chat_models(entry, provider),
        };
        // Radius's list replaces the baseline even when empty (an organisation may turn every
        // model off); OpenRouter's empty list falls back to the built-ins, as in 1.6.
        if !models.is_empty() || provider == "radius" {
            changes.insert(provider.as_str(), models);
        }
    }
    if changes.is_empty() {
        return None;
    }
    let mut out: Vec<Model> = Vec::with_capacity(builtins.len());
    let mut done: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for model in builtins {
        let provider = model.provider.as_str();
        let Some(dynamic) = changes.get(provider) else {
            out.push(model.clone());
            continue;
        };
        if !done.insert(provider) {
            continue;
        }
        // The provider's run of models, merged once where it starts.
        match overlay_kind(provider) {
            Overlay::Replace => out.extend(dynamic.iter().cloned()),
            Overlay::Remote => {
                let mut merged: Vec<Model> = builtins.iter().filter(|m| m.provider == provider).cloned().collect();
                for m in dynamic {
                    match merged.iter_mut().find(|b| b.id == m.id) {
                        Some(b) => *b = m.clone(),
                        None => merged.push(m.clone()),
                    }
                }
                out.extend(merged);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(provider: &str, id: &str, name: &str) -> Value {
        json!({"id": id, "name": name, "api": "openai-completions", "provider": provider,
               "baseUrl": "https://x", "reasoning": false, "input": ["text"],
               "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
               "contextWindow": 1000, "maxTokens": 100})
    }

    fn builtin(provider: &str, id: &str) -> Model {
        serde_json::from_value(model(provider, id, "built-in")).unwrap()
    }

    #[test]
    fn entries_overlay_or_replace_as_pi_does() {
        let builtins = vec![
            builtin("a", "m1"),
            builtin("a", "m2"),
            builtin("openrouter", "o1"),
            builtin("radius", "balanced"),
            builtin("z", "z1"),
        ];
        let mut store = Store::new();
        // Older than the shipped catalogue: ignored.
        store.insert(
            "z".into(),
            StoreEntry {
                models: vec![model("z", "z2", "new")],
                last_modified: Some(BUILTIN_GENERATED_AT_MS - 1),
                ..StoreEntry::default()
            },
        );
        assert!(overlay(&builtins, &store).is_none());
        store.insert(
            "a".into(),
            StoreEntry {
                models: vec![
                    model("a", "m2", "remote"),
                    model("a", "m3", "remote"),
                    json!({"id": "img", "type": "image", "provider": "a"}),
                    model("b", "foreign", "x"),
                ],
                last_modified: Some(BUILTIN_GENERATED_AT_MS + 1),
                checked_at: Some(5),
                ..StoreEntry::default()
            },
        );
        store.insert(
            "openrouter".into(),
            StoreEntry {
                models: vec![model("openrouter", "o9", "mine")],
                ..StoreEntry::default()
            },
        );
        store.insert(
            "radius".into(),
            StoreEntry {
                models: Vec::new(),
                ..StoreEntry::default()
            },
        );
        let merged = overlay(&builtins, &store).unwrap();
        let ids: Vec<(&str, &str, &str)> = merged
            .iter()
            .map(|m| (m.provider.as_str(), m.id.as_str(), m.name.as_str()))
            .collect();
        assert_eq!(
            ids,
            vec![
                ("a", "m1", "built-in"),
                ("a", "m2", "remote"),
                ("a", "m3", "remote"),
                ("openrouter", "o9", "mine"),
                ("z", "z1", "built-in"),
            ]
        );
    }

    #[test]
    fn the_file_round_trips_and_keeps_other_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_beside(&dir.path().join("models.json"));
        assert_eq!(read(&path).unwrap(), Store::new());
        std::fs::write(
            &path,
            "{\"other\": {\"models\": [], \"checkedAt\": 1, \"future\": true}}",
        )
        .unwrap();
        let entry = StoreEntry {
            models: vec![model("a", "m", "n")],
            checked_at: Some(10),
            last_modified: Some(0),
            etag: Some("\"e1\"".into()),
            ..StoreEntry::default()
        };
        write(&path, "a", Some(&entry)).unwrap();
        let store = read(&path).unwrap();
        assert_eq!(store["a"], entry);
        assert_eq!(store["other"].extra["future"], json!(true));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\n  \"a\": {\n    \"models\""), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert!(!store["a"].is_fresh(10 + REFRESH_INTERVAL_MS));
        assert!(store["a"].is_fresh(11));
        assert!(!store["other"].is_fresh(2), "no lastModified: always refetched");
        std::fs::write(&path, "{not json").unwrap();
        assert!(read(&path).is_err());
    }
}
