//! `/bug`'s report bundle, as pi 1.6 lays it out: `report.json` (pi, platform and terminal,
//! the model and provider without secrets, settings with secrets redacted), `diagnostics.json`
//! (the replies that failed, without their text), the session branch when the user shares it,
//! and the zip archive holding them. Nothing here asks the user or touches the screen.

use std::io::Write;
use std::path::Path;

use pi_ai::{Message, Model, StopReason};
use pi_session::{EntryKind, SessionManager};
use serde_json::{json, Map, Value};

/// The custom entry type that records a report in the session.
pub const ENTRY_TYPE: &str = "pi.bug-report";
const SCHEMA_VERSION: u64 = 1;
const REDACTED: &str = "<redacted>";

#[derive(Debug, thiserror::Error)]
pub enum BugReportError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// What the user chose to include.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choices {
    /// What went wrong, in their words (`None` when left empty).
    pub hint: Option<String>,
    pub include_session: bool,
    /// A summary written by the session's model goes in instead of the transcript.
    pub include_summary: bool,
}

/// A report ready to be written.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub id: String,
    pub created_at: String,
    pub report: Value,
    pub diagnostics: Value,
    /// The session branch as JSONL, when included.
    pub session_jsonl: Option<String>,
    /// The model-written account of the session (`summary.md`), when asked for.
    pub summary: Option<String>,
}

impl Bundle {
    /// Attach the model-written summary; `report.json` then says it is included.
    pub fn with_summary(mut self, summary: String) -> Self {
        self.report["session"]["summaryIncluded"] = Value::Bool(true);
        self.summary = Some(summary);
        self
    }
}

/// Whether a settings or configuration key may hold a credential (`apiKey`, `api_key`,
/// `token`, `authorization`, `password`, …), camelCase split into words first.
fn is_sensitive_key(key: &str) -> bool {
    let mut words = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            words.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        words.push(c.to_ascii_lowercase());
    }
    let parts: Vec<&str> = words.split(['_', '-']).filter(|p| !p.is_empty()).collect();
    const SECRET: [&str; 7] = [
        "secret",
        "token",
        "password",
        "passwd",
        "credential",
        "authorization",
        "cookie",
    ];
    parts.iter().any(|p| SECRET.contains(p))
        || parts.windows(2).any(|w| w[0] == "api" && w[1] == "key")
        || parts.contains(&"apikey")
}

/// A URL without its user name and password (other text unchanged).
fn redact_url(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => text.to_string(),
    }
}

/// A copy of `value` with credential-looking keys' values and URL credentials removed.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if !v.is_null() && is_sensitive_key(k) {
                        Value::from(REDACTED)
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(s) => Value::from(redact_url(s)),
        other => other.clone(),
    }
}

/// Settings as the report carries them: redacted, without the installation's identifiers.
fn redact_settings(settings: &Map<String, Value>) -> Value {
    let mut settings = settings.clone();
    settings.remove("trackingId");
    settings.remove("deviceId");
    redact(&Value::Object(settings))
}

fn env(name: &str) -> Value {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .map_or(Value::Null, Value::from)
}

fn environment() -> Value {
    let has = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let mut pi_vars: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("PI_"))
        .collect();
    pi_vars.sort();
    let os_release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| Value::from(s.trim()))
        .unwrap_or(Value::Null);
    let shell = std::env::var("SHELL")
        .ok()
        .and_then(|s| s.rsplit(['/', '\\']).next().map(str::to_string))
        .filter(|s| !s.is_empty());
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "userAgent": pi_ai::http::user_agent(),
        "runtime": "rust",
        "platform": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "osRelease": os_release,
        "shell": shell,
        "terminal": {
            "term": env("TERM"),
            "program": env("TERM_PROGRAM"),
            "programVersion": env("TERM_PROGRAM_VERSION"),
            "colorterm": env("COLORTERM"),
            "tmux": has("TMUX"),
            "ssh": has("SSH_CONNECTION") || has("SSH_CLIENT") || has("SSH_TTY"),
            "ci": has("CI"),
        },
        "piEnvironmentVariables": pi_vars,
    })
}

fn describe_model(model: &Model) -> Value {
    let mut headers: Vec<&String> = model.headers.iter().flat_map(|h| h.keys()).collect();
    headers.sort();
    json!({
        "provider": model.provider,
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "baseUrl": redact_url(&model.base_url),
        "reasoning": model.reasoning,
        "input": model.input,
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
        "compat": model.compat.as_ref().map(redact),
        "thinkingLevelMap": model.thinking_level_map,
        "headerNames": headers,
    })
}

/// What the report says about pi and the session.
pub struct Facts<'a> {
    pub session_id: &'a str,
    pub cwd: &'a Path,
    pub message_count: usize,
    pub model: Option<&'a Model>,
    pub thinking_level: &'a str,
    pub global_settings: &'a Map<String, Value>,
    pub project_settings: &'a Map<String, Value>,
    /// The loaded extensions' paths (or package sources).
    pub extensions: &'a [String],
    /// The recorded crashes (`crate::crash_log`), for `diagnostics.json`.
    pub crashes: &'a [Value],
}

/// `report.json`.
fn report(id: &str, created_at: &str, choices: &Choices, facts: &Facts<'_>) -> Value {
    let mut session = json!({
        "id": facts.session_id,
        "included": choices.include_session,
        "summaryIncluded": false,
        "messageCount": facts.message_count,
    });
    if choices.include_session {
        session["cwd"] = Value::from(facts.cwd.display().to_string());
    }
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "id": id,
        "createdAt": created_at,
        "hint": choices.hint,
        "environment": environment(),
        "session": session,
        "model": facts.model.map(describe_model),
        "provider": facts.model.map(|m| json!({"id": m.provider, "baseUrl": redact_url(&m.base_url)})),
        "thinkingLevel": facts.thinking_level,
        "extensions": facts
            .extensions
            .iter()
            .map(|p| json!({"path": p, "source": redact_url(p)}))
            .collect::<Vec<_>>(),
        "extensionErrors": [],
        "settings": {
            "global": redact_settings(facts.global_settings),
            "project": redact_settings(facts.project_settings),
        },
    })
}

/// `diagnostics.json`: the replies that failed or were aborted, without their text.
fn diagnostics(store: &SessionManager, crashes: &[Value]) -> Value {
    let entries = store.get_entries();
    let mut failed = Vec::new();
    let mut assistant_count = 0;
    for entry in entries {
        let EntryKind::Message {
            message: pi_agent::AgentMessage::Llm(Message::Assistant(a)),
            ..
        } = &entry.kind
        else {
            continue;
        };
        assistant_count += 1;
        let broke = matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) || a.error_message.is_some();
        if !broke {
            continue;
        }
        let mut record = json!({
            "entryId": entry.id,
            "timestamp": entry.timestamp,
            "provider": a.provider,
            "model": a.model,
            "api": a.api,
            "stopReason": a.stop_reason,
            "diagnostics": [],
        });
        if let Some(e) = &a.error_message {
            record["errorMessage"] = Value::from(e.clone());
        }
        failed.push(record);
    }
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "sessionId": store.session_id(),
        "entryCount": entries.len(),
        "assistantMessageCount": assistant_count,
        "assistant": failed,
        "crashes": crashes,
    })
}

/// The session header and the current branch, one JSON object a line.
fn branch_jsonl(store: &SessionManager) -> Result<String, BugReportError> {
    let mut out = serde_json::to_string(store.header())?;
    out.push('\n');
    for entry in store.get_branch(None) {
        out.push_str(&entry.to_json_line()?);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// Build the report from the session's store.
pub fn build(store: &SessionManager, choices: &Choices, facts: &Facts<'_>) -> Result<Bundle, BugReportError> {
    let id = uuid::Uuid::now_v7().to_string();
    let created_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(Bundle {
        report: report(&id, &created_at, choices, facts),
        diagnostics: diagnostics(store, facts.crashes),
        session_jsonl: choices.include_session.then(|| branch_jsonl(store)).transpose()?,
        summary: None,
        id,
        created_at,
    })
}

/// `pi-bug-report-<id>.zip`.
pub fn archive_name(id: &str) -> String {
    format!("pi-bug-report-{id}.zip")
}

/// One file of a report: its name, content type and text.
pub struct ReportFile {
    pub name: &'static str,
    pub content_type: &'static str,
    pub data: String,
}

/// The files of a report, as archived and as uploaded.
pub fn files(bundle: &Bundle) -> Result<Vec<ReportFile>, BugReportError> {
    let mut files = vec![
        ReportFile {
            name: "report.json",
            content_type: "application/json",
            data: format!("{}\n", serde_json::to_string_pretty(&bundle.report)?),
        },
        ReportFile {
            name: "diagnostics.json",
            content_type: "application/json",
            data: format!("{}\n", serde_json::to_string_pretty(&bundle.diagnostics)?),
        },
    ];
    if let Some(jsonl) = &bundle.session_jsonl {
        files.push(ReportFile {
            name: "session.jsonl",
            content_type: "application/x-ndjson",
            data: jsonl.clone(),
        });
    }
    if let Some(summary) = &bundle.summary {
        let mut data = summary.clone();
        if !data.ends_with('\n') {
            data.push('\n');
        }
        files.push(ReportFile {
            name: "summary.md",
            content_type: "text/markdown",
            data,
        });
    }
    Ok(files)
}

/// Write the bundle's files into a zip archive at `path`.
pub fn write_archive(bundle: &Bundle, path: &Path) -> Result<(), BugReportError> {
    let file = std::fs::File::create(path)?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for ReportFile { name, data, .. } in files(bundle)? {
        zip.start_file(name, options)?;
        zip.write_all(data.as_bytes())?;
    }
    zip.finish()?;
    Ok(())
}

/// The `pi.bug-report` entry's data: exported to `path`, or uploaded (`None`).
pub fn entry_data(bundle: &Bundle, choices: &Choices, path: Option<&Path>) -> Value {
    let mut data = json!({
        "id": bundle.id,
        "createdAt": bundle.created_at,
        "hint": choices.hint,
        "sessionIncluded": choices.include_session,
        "summaryIncluded": bundle.summary.is_some(),
        "delivery": if path.is_some() { "zip" } else { "upload" },
    });
    if let Some(path) = path {
        data["path"] = json!(path.display().to_string());
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_by_key_and_in_urls() {
        let v = json!({
            "apiKey": "sk-1", "api_key": "sk-2", "githubToken": "t", "authorization": "Bearer x",
            "keybindings": {"x": 1}, "theme": "dark", "tokens": 5,
            "nested": [{"password": "p", "url": "https://ann:pw@example.com/v1?x=1"}],
        });
        let r = redact(&v);
        for key in ["apiKey", "api_key", "githubToken", "authorization"] {
            assert_eq!(r[key], REDACTED, "{key}");
        }
        assert_eq!(r["keybindings"]["x"], 1);
        assert_eq!(r["theme"], "dark");
        assert_eq!(r["nested"][0]["password"], REDACTED);
        assert_eq!(r["nested"][0]["url"], "https://example.com/v1?x=1");
        // `tokens` is a count, not a token.
        assert_eq!(r["tokens"], 5);
    }

    #[test]
    fn the_report_lists_the_loaded_extensions_without_credentials() {
        let (global, project) = (Map::new(), Map::new());
        let extensions = vec![
            "/home/ann/.pi/agent/extensions/todo.ts".to_string(),
            "git:https://ann:pw@example.com/ext.git".to_string(),
        ];
        let facts = Facts {
            session_id: "s",
            cwd: Path::new("/p"),
            message_count: 0,
            model: None,
            thinking_level: "off",
            global_settings: &global,
            project_settings: &project,
            extensions: &extensions,
            crashes: &[],
        };
        let choices = Choices {
            hint: None,
            include_session: false,
            include_summary: false,
        };
        let r = report("id", "now", &choices, &facts);
        assert_eq!(r["extensions"][0]["path"], "/home/ann/.pi/agent/extensions/todo.ts");
        assert_eq!(r["extensions"][1]["source"], "git:https://example.com/ext.git");
    }
}
