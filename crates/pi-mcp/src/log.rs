//! `<agentDir>/mcp.log`: servers' `notifications/message`, one entry per message
//! (`<ISO time> [<server>] <level> <logger>: <data>`, continuation lines indented), rotated to
//! `mcp.log.1` past 5 MB. Best effort: a log that cannot be written loses the line, nothing else.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::client::{LogMessage, LogSink};

const MAX_LOG_BYTES: u64 = 5 * 1024 * 1024;

/// One entry as it is written.
pub fn format_log_message(server: &str, message: &LogMessage, now: chrono::DateTime<chrono::Utc>) -> String {
    let level = if message.level.is_empty() {
        "info"
    } else {
        message.level.as_str()
    };
    let logger = message
        .logger
        .as_deref()
        .filter(|l| !l.is_empty())
        .map(|l| format!(" {l}:"))
        .unwrap_or_default();
    let data = match &message.data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let text = data.replace("\r\n", "\n").replace('\n', "\n    ");
    let time = now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    format!("{time} [{server}] {level}{logger} {text}\n")
}

/// The shared log file of all servers.
#[derive(Debug, Clone)]
pub struct McpServerLog {
    path: PathBuf,
    lock: Arc<Mutex<()>>,
}

impl McpServerLog {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock: Arc::default(),
        }
    }

    /// The log in an agent directory.
    pub fn in_agent_dir(agent_dir: &Path) -> Self {
        Self::new(agent_dir.join("mcp.log"))
    }

    fn size(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }

    pub fn write(&self, server: &str, message: &LogMessage) {
        let line = format_log_message(server, message, chrono::Utc::now());
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(parent) = self.path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if self.size() > MAX_LOG_BYTES {
            let mut rotated = self.path.clone().into_os_string();
            rotated.push(".1");
            let _ = std::fs::rename(&self.path, rotated);
        }
        if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&self.path) {
            let _ = file.write_all(line.as_bytes());
        }
    }

    /// A sink for one server's connection.
    pub fn sink(&self, server: &str) -> LogSink {
        let log = self.clone();
        let server = server.to_string();
        Arc::new(move |message: LogMessage| log.write(&server, &message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formats_like_pi() {
        let time = chrono::DateTime::parse_from_rfc3339("2026-12-01T08:40:24.123Z")
            .map(|t| t.with_timezone(&chrono::Utc))
            .expect("time");
        let message = LogMessage {
            level: "info".into(),
            logger: Some("demo".into()),
            data: json!("server initialized\r\nnext"),
        };
        assert_eq!(
            format_log_message("demo", &message, time),
            "2026-12-01T08:40:24.123Z [demo] info demo: server initialized\n    next\n"
        );
        let message = LogMessage {
            level: "error".into(),
            logger: None,
            data: json!({"a": 1}),
        };
        assert_eq!(
            format_log_message("s", &message, time),
            "2026-12-01T08:40:24.123Z [s] error {\"a\":1}\n"
        );
    }

    #[test]
    fn rotates_past_five_megabytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = McpServerLog::in_agent_dir(dir.path());
        std::fs::write(dir.path().join("mcp.log"), vec![b'x'; 5 * 1024 * 1024 + 1]).expect("write");
        log.write(
            "s",
            &LogMessage {
                level: "info".into(),
                logger: None,
                data: json!("fresh"),
            },
        );
        assert!(dir.path().join("mcp.log.1").exists());
        assert!(std::fs::read_to_string(dir.path().join("mcp.log"))
            .expect("read")
            .ends_with("[s] info fresh\n"));
    }
}
