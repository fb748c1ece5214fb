//! `settings.json`: the global file in the agent dir and the project's `.pi/settings.json`.
//!
//! Both files are kept as JSON objects exactly as read (after the legacy-key migration), so
//! keys this version does not know survive every rewrite. The effective settings are the
//! global object with the project object merged over it one level deep. A setter changes the
//! in-memory object, remembers which key (and nested key) it touched, and writes only those
//! keys into the file's *current* content under a lock, so two pi processes changing
//! different keys never lose each other's change. A file that failed to parse is never
//! written (the user's text stays as it is) and its error is reported as a warning.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::locked_file::{self, LockOptions};
use super::paths::{home_dir, Paths};

mod deferred;
mod keys;

pub use deferred::{change, flush, update};

/// Which settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SettingsScope {
    Global,
    Project,
}

impl SettingsScope {
    pub fn as_str(self) -> &'static str {
        match self {
            SettingsScope::Global => "global",
            SettingsScope::Project => "project",
        }
    }
}

/// A problem reading or writing one settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    pub scope: SettingsScope,
    pub message: String,
}

/// `transport`: how providers that can use WebSockets connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Sse,
    Websocket,
    WebsocketCached,
    Auto,
}

impl Transport {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sse" => Some(Transport::Sse),
            "websocket" => Some(Transport::Websocket),
            "websocket-cached" => Some(Transport::WebsocketCached),
            "auto" => Some(Transport::Auto),
            _ => None,
        }
    }
    /// The same choice as pi-ai's stream option.
    pub fn to_stream(self) -> pi_ai::Transport {
        match self {
            Transport::Sse => pi_ai::Transport::Sse,
            Transport::Websocket => pi_ai::Transport::Websocket,
            Transport::WebsocketCached => pi_ai::Transport::WebsocketCached,
            Transport::Auto => pi_ai::Transport::Auto,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Sse => "sse",
            Transport::Websocket => "websocket",
            Transport::WebsocketCached => "websocket-cached",
            Transport::Auto => "auto",
        }
    }
}

/// `steeringMode` / `followUpMode`: how queued messages are drained (the agent's own type).
pub use pi_agent::QueueMode;

/// When pi keeps the prompt cache of the last request warm (`cacheWarming`): never, while the
/// agent runs, or also while it waits for the user (for up to 30 minutes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheWarmingMode {
    Off,
    Streaming,
    Idle,
}

impl CacheWarmingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheWarmingMode::Off => "off",
            CacheWarmingMode::Streaming => "streaming",
            CacheWarmingMode::Idle => "idle",
        }
    }

    pub fn parse(value: &str) -> Option<CacheWarmingMode> {
        match value {
            "off" => Some(CacheWarmingMode::Off),
            "streaming" => Some(CacheWarmingMode::Streaming),
            "idle" => Some(CacheWarmingMode::Idle),
            _ => None,
        }
    }
}

/// `compaction.*` with defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionSettings {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
}

/// `branchSummary.*` with defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchSummarySettings {
    pub reserve_tokens: u64,
    pub skip_prompt: bool,
}

/// `retry.*` (session layer) with defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
}

/// `retry.provider.*` (provider layer); unset fields mean the provider's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderRetrySettings {
    pub timeout_ms: Option<u64>,
    pub max_retries: Option<u32>,
    pub max_retry_delay_ms: u64,
}

/// One entry of `packages`: a source string or an object with filters.
#[derive(Debug, Clone, PartialEq)]
pub enum PackageSource {
    Source(String),
    Filtered(Map<String, Value>),
}

/// Where the files live (or nothing, for tests and `--no-session`-like in-memory use).
#[derive(Debug, Clone)]
enum Storage {
    Files { global: PathBuf, project: PathBuf },
    Memory,
}

#[derive(Debug, Default, Clone)]
struct Modified {
    fields: BTreeSet<String>,
    nested: BTreeMap<String, BTreeSet<String>>,
}

impl Modified {
    fn mark(&mut self, field: &str, nested: Option<&str>) {
        self.fields.insert(field.to_string());
        if let Some(n) = nested {
            self.nested.entry(field.to_string()).or_default().insert(n.to_string());
        }
    }
    fn clear(&mut self) {
        self.fields.clear();
        self.nested.clear();
    }
}

/// Settings of one agent dir and one project.
#[derive(Debug)]
pub struct SettingsManager {
    storage: Storage,
    home: PathBuf,
    global: Map<String, Value>,
    project: Map<String, Value>,
    merged: Map<String, Value>,
    global_load_error: Option<String>,
    project_load_error: Option<String>,
    modified_global: Modified,
    modified_project: Modified,
    errors: Vec<SettingsError>,
    memory_files: BTreeMap<SettingsScope, String>,
    /// Inside [`update`]: setters only mark their file in `pending_writes`.
    defer_writes: bool,
    pending_writes: BTreeSet<SettingsScope>,
    /// The project is not trusted: its file is neither read nor reloaded.
    project_ignored: bool,
    /// Told when `/settings` changes the transport, so the running session uses it at once.
    pub(crate) transport_listener: TransportListener,
}

/// The session's hook for a changed `transport` (pi 1.6 sets the agent's transport live).
#[derive(Default, Clone)]
pub(crate) struct TransportListener(Option<std::sync::Arc<dyn Fn(Transport) + Send + Sync>>);

impl std::fmt::Debug for TransportListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "TransportListener(set)"
        } else {
            "TransportListener(none)"
        })
    }
}

impl TransportListener {
    pub(crate) fn notify(&self, transport: Transport) {
        if let Some(listener) = &self.0 {
            listener(transport);
        }
    }
}

impl SettingsManager {
    /// Call `listener` whenever the transport is set (replacing an earlier listener: the
    /// current session's agent is the one to follow the setting).
    pub fn on_transport_change(&mut self, listener: impl Fn(Transport) + Send + Sync + 'static) {
        self.transport_listener = TransportListener(Some(std::sync::Arc::new(listener)));
    }

    /// Load `<agent>/settings.json` and `<cwd>/.pi/settings.json`.
    pub fn load(paths: &Paths) -> Self {
        let mut manager = Self::from_files(paths.settings_path(), paths.project_settings_path());
        manager.home = paths.home.clone();
        manager
    }

    /// Load from two explicit files.
    pub fn from_files(global: PathBuf, project: PathBuf) -> Self {
        let mut manager = SettingsManager {
            storage: Storage::Files { global, project },
            home: home_dir(),
            global: Map::new(),
            project: Map::new(),
            merged: Map::new(),
            global_load_error: None,
            project_load_error: None,
            modified_global: Modified::default(),
            modified_project: Modified::default(),
            errors: Vec::new(),
            memory_files: BTreeMap::new(),
            defer_writes: false,
            transport_listener: TransportListener::default(),
            pending_writes: BTreeSet::new(),
            project_ignored: false,
        };
        manager.load_scope(SettingsScope::Global);
        manager.load_scope(SettingsScope::Project);
        manager.remerge();
        manager
    }

    /// Settings that live only in memory (global = `settings`, no project file).
    pub fn in_memory(settings: Value) -> Self {
        let global = match settings {
            Value::Object(map) => migrate(map),
            _ => Map::new(),
        };
        let mut memory_files = BTreeMap::new();
        memory_files.insert(
            SettingsScope::Global,
            serde_json::to_string_pretty(&Value::Object(global.clone())).unwrap_or_default(),
        );
        let mut manager = SettingsManager {
            storage: Storage::Memory,
            home: home_dir(),
            global,
            project: Map::new(),
            merged: Map::new(),
            global_load_error: None,
            project_load_error: None,
            modified_global: Modified::default(),
            modified_project: Modified::default(),
            errors: Vec::new(),
            memory_files,
            defer_writes: false,
            transport_listener: TransportListener::default(),
            pending_writes: BTreeSet::new(),
            project_ignored: false,
        };
        manager.remerge();
        manager
    }

    /// A copy for reading after the lock is released (resource and theme discovery read
    /// files): the same values, kept in memory only, so nothing set on it is ever written.
    pub fn snapshot(&self) -> SettingsManager {
        SettingsManager {
            storage: Storage::Memory,
            home: self.home.clone(),
            global: self.global.clone(),
            project: self.project.clone(),
            merged: self.merged.clone(),
            global_load_error: self.global_load_error.clone(),
            project_load_error: self.project_load_error.clone(),
            modified_global: Modified::default(),
            modified_project: Modified::default(),
            errors: Vec::new(),
            memory_files: BTreeMap::new(),
            defer_writes: false,
            transport_listener: TransportListener::default(),
            pending_writes: BTreeSet::new(),
            project_ignored: self.project_ignored,
        }
    }

    fn path_of(&self, scope: SettingsScope) -> Option<&Path> {
        match &self.storage {
            Storage::Files { global, project } => Some(match scope {
                SettingsScope::Global => global,
                SettingsScope::Project => project,
            }),
            Storage::Memory => None,
        }
    }

    /// Leave the project's settings out (an untrusted project): only the global file counts,
    /// now and on every reload.
    pub fn ignore_project(&mut self) {
        self.project_ignored = true;
        self.project = Map::new();
        self.project_load_error = None;
        self.errors.retain(|e| e.scope != SettingsScope::Project);
        self.remerge();
    }

    fn load_scope(&mut self, scope: SettingsScope) {
        if scope == SettingsScope::Project && self.project_ignored {
            return;
        }
        let content = match self.path_of(scope) {
            // Locked, because the TypeScript pi rewrites the file in place.
            Some(path) => match locked_file::read_locked(path) {
                Ok(c) => c,
                Err(e) => {
                    self.set_load_result(scope, Err(e.to_string()));
                    return;
                }
            },
            None => self.memory_files.get(&scope).cloned(),
        };
        let parsed = match content.as_deref() {
            None | Some("") => Ok(Map::new()),
            Some(text) => parse_settings(text),
        };
        self.set_load_result(scope, parsed);
    }

    fn set_load_result(&mut self, scope: SettingsScope, result: Result<Map<String, Value>, String>) {
        let (settings, error) = match result {
            Ok(map) => (map, None),
            Err(message) => {
                self.errors.push(SettingsError {
                    scope,
                    message: message.clone(),
                });
                (Map::new(), Some(message))
            }
        };
        match scope {
            SettingsScope::Global => {
                self.global = settings;
                self.global_load_error = error;
            }
            SettingsScope::Project => {
                self.project = settings;
                self.project_load_error = error;
            }
        }
    }

    fn remerge(&mut self) {
        self.merged = merge_one_level(&self.global, &self.project);
    }

    /// Re-read both files. Pending changes were already written by their setters.
    pub fn reload(&mut self) {
        // A file that fails to parse now keeps its last good content in memory.
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            let before = match scope {
                SettingsScope::Global => self.global.clone(),
                SettingsScope::Project => self.project.clone(),
            };
            self.load_scope(scope);
            let failed = match scope {
                SettingsScope::Global => self.global_load_error.is_some(),
                SettingsScope::Project => self.project_load_error.is_some(),
            };
            if failed {
                match scope {
                    SettingsScope::Global => self.global = before,
                    SettingsScope::Project => self.project = before,
                }
            }
        }
        self.modified_global.clear();
        self.modified_project.clear();
        self.remerge();
    }

    /// Merge `overrides` over the effective settings (not persisted), e.g. from CLI flags.
    pub fn apply_overrides(&mut self, overrides: Map<String, Value>) {
        self.merged = merge_one_level(&self.merged, &overrides);
    }

    /// Parse and write errors collected so far (each reported once).
    pub fn drain_errors(&mut self) -> Vec<SettingsError> {
        std::mem::take(&mut self.errors)
    }

    /// The error a file had when loaded; such a file is never written.
    pub fn load_error(&self, scope: SettingsScope) -> Option<&str> {
        match scope {
            SettingsScope::Global => self.global_load_error.as_deref(),
            SettingsScope::Project => self.project_load_error.as_deref(),
        }
    }

    pub fn global_settings(&self) -> &Map<String, Value> {
        &self.global
    }
    pub fn project_settings(&self) -> &Map<String, Value> {
        &self.project
    }
    /// The effective settings (project over global, one level deep).
    pub fn effective(&self) -> &Map<String, Value> {
        &self.merged
    }

    // ----- generic access -------------------------------------------------------------

    /// The effective value of a top-level key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.merged.get(key).filter(|v| !v.is_null())
    }

    /// The effective value of `key.nested`.
    pub fn get_nested(&self, key: &str, nested: &str) -> Option<&Value> {
        self.merged.get(key)?.as_object()?.get(nested).filter(|v| !v.is_null())
    }

    fn str_of(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }
    fn bool_of(&self, key: &str) -> Option<bool> {
        self.get(key)?.as_bool()
    }
    fn nested_bool(&self, key: &str, nested: &str) -> Option<bool> {
        self.get_nested(key, nested)?.as_bool()
    }
    fn nested_u64(&self, key: &str, nested: &str) -> Option<u64> {
        as_u64(self.get_nested(key, nested)?)
    }
    fn string_list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    }

    /// Set (or with `None` remove) a top-level key of `scope` and write it.
    pub fn set(&mut self, scope: SettingsScope, key: &str, value: Option<Value>) {
        let target = self.scope_map(scope);
        match value {
            Some(v) => {
                target.insert(key.to_string(), v);
            }
            None => {
                target.remove(key);
            }
        }
        self.modified(scope).mark(key, None);
        self.save(scope);
    }

    /// Set (or remove) `key.nested` of `scope` and write it; other nested keys stay.
    pub fn set_nested(&mut self, scope: SettingsScope, key: &str, nested: &str, value: Option<Value>) {
        let target = self.scope_map(scope);
        let entry = target
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        if let Some(obj) = entry.as_object_mut() {
            match value {
                Some(v) => {
                    obj.insert(nested.to_string(), v);
                }
                None => {
                    obj.remove(nested);
                }
            }
        }
        self.modified(scope).mark(key, Some(nested));
        self.save(scope);
    }

    fn scope_map(&mut self, scope: SettingsScope) -> &mut Map<String, Value> {
        match scope {
            SettingsScope::Global => &mut self.global,
            SettingsScope::Project => &mut self.project,
        }
    }

    fn modified(&mut self, scope: SettingsScope) -> &mut Modified {
        match scope {
            SettingsScope::Global => &mut self.modified_global,
            SettingsScope::Project => &mut self.modified_project,
        }
    }

    /// Write the keys changed in `scope` into the file's current content (or, inside
    /// [`update`], remember that `scope` needs writing once the lock is released).
    fn save(&mut self, scope: SettingsScope) {
        self.remerge();
        if self.load_error(scope).is_some() {
            return;
        }
        if self.defer_writes {
            self.pending_writes.insert(scope);
            return;
        }
        if let Some(job) = self.take_write(scope) {
            let result = job.write();
            self.finish_write(job, result);
        }
    }

    /// What the in-memory "file" of `scope` holds (for in-memory settings).
    pub fn memory_file(&self, scope: SettingsScope) -> Option<&str> {
        self.memory_files.get(&scope).map(String::as_str)
    }
}

#[derive(Debug, thiserror::Error)]
pub(super) enum UpdateError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Parse(String),
}

fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

fn to_pretty(map: &Map<String, Value>) -> String {
    serde_json::to_string_pretty(map).unwrap_or_else(|_| "{}".to_string())
}

/// Parse a settings file and migrate legacy keys. A non-object top level is an error.
pub fn parse_settings(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(migrate(map)),
        Ok(_) => Err("settings must be a JSON object".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Legacy keys: `queueMode` → `steeringMode`; `websockets: bool` → `transport`;
/// `skills: {enableSkillCommands, customDirectories}` → `enableSkillCommands` + `skills`
/// array; `retry.maxDelayMs` → `retry.provider.maxRetryDelayMs`.
pub fn migrate(mut s: Map<String, Value>) -> Map<String, Value> {
    if s.contains_key("queueMode") && !s.contains_key("steeringMode") {
        if let Some(v) = s.remove("queueMode") {
            s.insert("steeringMode".into(), v);
        }
    }
    if !s.contains_key("transport") {
        if let Some(Value::Bool(ws)) = s.get("websockets").cloned() {
            s.insert("transport".into(), Value::from(if ws { "websocket" } else { "sse" }));
            s.remove("websockets");
        }
    }
    if let Some(Value::Object(skills)) = s.get("skills").cloned() {
        if let Some(enable) = skills.get("enableSkillCommands") {
            if s.get("enableSkillCommands").is_none() {
                s.insert("enableSkillCommands".into(), enable.clone());
            }
        }
        match skills.get("customDirectories") {
            Some(Value::Array(dirs)) if !dirs.is_empty() => {
                s.insert("skills".into(), Value::Array(dirs.clone()));
            }
            _ => {
                s.remove("skills");
            }
        }
    }
    if let Some(Value::Object(retry)) = s.get_mut("retry") {
        if let Some(max_delay) = retry.get("maxDelayMs").cloned() {
            if max_delay.is_number() {
                let has_provider_value = retry
                    .get("provider")
                    .and_then(Value::as_object)
                    .and_then(|p| p.get("maxRetryDelayMs"))
                    .is_some_and(|v| !v.is_null());
                if !has_provider_value {
                    let mut provider = retry
                        .get("provider")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    provider.insert("maxRetryDelayMs".into(), max_delay);
                    retry.insert("provider".into(), Value::Object(provider));
                }
            }
            retry.remove("maxDelayMs");
        }
    }
    s
}

/// `overrides` over `base`: objects merge one level deep, everything else is replaced.
pub fn merge_one_level(base: &Map<String, Value>, overrides: &Map<String, Value>) -> Map<String, Value> {
    let mut result = base.clone();
    for (key, value) in overrides {
        match (result.get(key), value) {
            (Some(Value::Object(b)), Value::Object(o)) => {
                let mut merged = b.clone();
                for (k, v) in o {
                    merged.insert(k.clone(), v.clone());
                }
                result.insert(key.clone(), Value::Object(merged));
            }
            _ => {
                result.insert(key.clone(), value.clone());
            }
        }
    }
    result
}

/// Put the modified keys of `snapshot` into `base` (the file's current content).
fn apply_modified(
    mut base: Map<String, Value>,
    snapshot: &Map<String, Value>,
    modified: &Modified,
) -> Map<String, Value> {
    for field in &modified.fields {
        let value = snapshot.get(field);
        match (modified.nested.get(field), value) {
            (Some(nested), Some(Value::Object(in_memory))) => {
                let mut merged = base.get(field).and_then(Value::as_object).cloned().unwrap_or_default();
                for key in nested {
                    match in_memory.get(key) {
                        Some(v) => {
                            merged.insert(key.clone(), v.clone());
                        }
                        None => {
                            merged.remove(key);
                        }
                    }
                }
                base.insert(field.clone(), Value::Object(merged));
            }
            (_, Some(v)) => {
                base.insert(field.clone(), v.clone());
            }
            (_, None) => {
                base.remove(field);
            }
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn merge_is_one_level_deep() {
        let g = obj(json!({"compaction": {"enabled": false, "reserveTokens": 1}, "list": [1], "x": 1}));
        let p = obj(json!({"compaction": {"reserveTokens": 2}, "list": [2]}));
        let m = merge_one_level(&g, &p);
        assert_eq!(
            Value::Object(m),
            json!({"compaction": {"enabled": false, "reserveTokens": 2}, "list": [2], "x": 1})
        );
    }

    #[test]
    fn legacy_keys_migrate() {
        let m = migrate(obj(json!({
            "queueMode": "all",
            "websockets": true,
            "skills": {"enableSkillCommands": false, "customDirectories": ["~/s"]},
            "retry": {"maxDelayMs": 5000, "enabled": true}
        })));
        assert_eq!(
            Value::Object(m),
            json!({
                "transport": "websocket",
                "skills": ["~/s"],
                "retry": {"enabled": true, "provider": {"maxRetryDelayMs": 5000}},
                "steeringMode": "all",
                "enableSkillCommands": false
            })
        );
        let m = migrate(obj(
            json!({"skills": {"customDirectories": []}, "retry": {"maxDelayMs": 1, "provider": {"maxRetryDelayMs": 7}}}),
        ));
        assert_eq!(Value::Object(m), json!({"retry": {"provider": {"maxRetryDelayMs": 7}}}));
    }

    #[test]
    fn millisecond_settings_are_read_and_refused_as_pi_1_6_does() {
        let read = |v: Value| {
            SettingsManager::in_memory(json!({ "websocketConnectTimeoutMs": v })).websocket_connect_timeout_ms()
        };
        assert_eq!(
            SettingsManager::in_memory(json!({})).websocket_connect_timeout_ms(),
            Ok(None)
        );
        assert_eq!(read(json!(2500.9)), Ok(Some(2500)));
        assert_eq!(read(json!(" 300 ")), Ok(Some(300)));
        assert_eq!(read(json!("0x10")), Ok(Some(16)));
        assert_eq!(read(json!("1e3")), Ok(Some(1000)));
        assert_eq!(read(json!("Disabled")), Ok(Some(0)));
        assert_eq!(read(json!(0)), Ok(Some(0)));
        let refused = |v: Value, shown: &str| {
            assert_eq!(
                read(v),
                Err(format!("Invalid websocketConnectTimeoutMs setting: {shown}"))
            );
        };
        refused(json!("abc"), "abc");
        refused(json!(-5), "-5");
        refused(json!(""), "");
        refused(json!("inf"), "inf");
        refused(json!("-Infinity"), "-Infinity");
        refused(json!(true), "true");
        refused(json!(null), "null");
        refused(json!([1, null, "x"]), "1,,x");
        refused(json!({"a": 1}), "[object Object]");
        refused(json!(-0.5), "-0.5");

        let bad_idle = SettingsManager::in_memory(json!({"httpIdleTimeoutMs": "soon"}));
        assert_eq!(
            bad_idle.http_idle_timeout_setting(),
            Err("Invalid httpIdleTimeoutMs setting: soon".to_string())
        );
        assert_eq!(bad_idle.http_idle_timeout_ms(), pi_ai::http::DEFAULT_IDLE_TIMEOUT_MS);
        let idle = SettingsManager::in_memory(json!({"httpIdleTimeoutMs": "disabled"}));
        assert_eq!(idle.http_idle_timeout_setting(), Ok(0));
    }

    #[test]
    fn a_transport_change_reaches_the_listener() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut s = SettingsManager::in_memory(json!({}));
        s.set_transport(Transport::Sse);
        let sink = std::sync::Arc::clone(&seen);
        s.on_transport_change(move |t| sink.lock().unwrap().push(t));
        s.set_transport(Transport::Websocket);
        s.set_transport(Transport::Auto);
        assert_eq!(*seen.lock().unwrap(), vec![Transport::Websocket, Transport::Auto]);
        assert_eq!(s.transport(), Transport::Auto);
    }

    #[test]
    fn defaults_match_pi() {
        let s = SettingsManager::in_memory(json!({}));
        assert_eq!(s.transport(), Transport::Auto);
        assert_eq!(s.steering_mode(), QueueMode::OneAtATime);
        assert_eq!(
            s.compaction(),
            CompactionSettings {
                enabled: true,
                reserve_tokens: 16384,
                keep_recent_tokens: 20000
            }
        );
        assert_eq!(
            s.retry(),
            RetrySettings {
                enabled: true,
                max_retries: 3,
                base_delay_ms: 2000
            }
        );
        assert_eq!(s.provider_retry().max_retry_delay_ms, 60000);
        assert_eq!(s.provider_retry().max_retries, None);
        assert_eq!(s.branch_summary().reserve_tokens, 16384);
        assert!(s.enable_skill_commands());
        assert!(s.enable_install_telemetry());
        assert!(s.show_images());
        assert!(!s.show_terminal_progress());
        assert_eq!(s.image_width_cells(), 60);
        assert!(s.image_auto_resize());
        assert!(!s.block_images());
        assert_eq!(s.double_escape_action(), "tree");
        assert_eq!(s.tree_filter_mode(), "default");
        assert_eq!(s.editor_padding_x(), 0);
        assert_eq!(s.autocomplete_max_visible(), 5);
        assert_eq!(s.code_block_indent(), "  ");
        assert!(s.warning_enabled("anthropicExtraUsage"));
        assert_eq!(s.default_thinking_level(), None);
        assert_eq!(s.npm_command(), None);
        assert_eq!(s.enabled_models(), None);
    }

    #[test]
    fn clamping_setters() {
        let mut s = SettingsManager::in_memory(json!({}));
        s.set_editor_padding_x(9);
        s.set_autocomplete_max_visible(1);
        s.set_image_width_cells(0);
        assert_eq!(s.editor_padding_x(), 3);
        assert_eq!(s.autocomplete_max_visible(), 3);
        assert_eq!(s.image_width_cells(), 1);
        let file: Value = serde_json::from_str(s.memory_file(SettingsScope::Global).expect("file")).expect("json");
        assert_eq!(file["terminal"]["imageWidthCells"], json!(1));
    }

    #[test]
    fn terminal_capability_overrides() {
        use pi_tui::components::ImageProtocol;
        let of = |v: Value| SettingsManager::in_memory(json!({ "terminal": v })).terminal_capability_overrides();
        let forced = of(json!({"images": "iterm2", "hyperlinks": false, "trueColor": true}));
        assert_eq!(forced.images, Some(Some(ImageProtocol::ITerm2)));
        assert_eq!((forced.hyperlinks, forced.true_color), (Some(false), Some(true)));
        assert_eq!(of(json!({"images": false})).images, Some(None));
        assert_eq!(of(json!({"images": "kitty"})).images, Some(Some(ImageProtocol::Kitty)));
        let auto = of(json!({"images": "auto", "hyperlinks": "auto", "trueColor": "auto"}));
        assert_eq!(auto, Default::default());
        assert_eq!(of(json!({"images": true})).images, None, "only false turns images off");
    }
}
