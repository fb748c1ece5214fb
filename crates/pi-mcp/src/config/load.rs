//! Loading `mcp.json` files: the global `<agentDir>/mcp.json` and, for trusted projects,
//! `<cwd>/.pi/mcp.json`, whose entries replace global ones or override a few of their fields.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::validate::{is_override, validate_server_config, ServerConfig};
use crate::naming::mcp_namespace;

/// Fields a project entry may set on a global server of the same name.
const OVERRIDE_KEYS: [&str; 3] = ["enabled", "exposure", "toolExposure"];

/// Which file defined a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Project => "project",
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    pub name: String,
    pub config: ServerConfig,
    /// The file that defines the server.
    pub source: PathBuf,
    pub scope: Scope,
    /// The project file that overrides some of its fields, if any.
    pub override_path: Option<PathBuf>,
}

/// The configuration of all servers, with the problems found in the files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    /// In file order; disabled servers are included.
    pub servers: Vec<ServerEntry>,
    pub auto_enable_codemode: Option<bool>,
    /// `<path>: <problem>` lines; the entries they name are skipped.
    pub errors: Vec<String>,
    /// The project file that was read (when the project is trusted).
    pub project_config: Option<PathBuf>,
}

impl McpConfig {
    pub fn server(&self, name: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// Where and how to load the configuration.
#[derive(Debug, Clone)]
pub struct LoadOptions<'a> {
    pub agent_dir: &'a Path,
    pub cwd: &'a Path,
    /// Untrusted projects' files are not read at all.
    pub project_trusted: bool,
}

/// The global file's path.
pub fn global_config_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("mcp.json")
}

/// The project file's path (read only when trusted).
pub fn project_config_path(cwd: &Path) -> PathBuf {
    cwd.join(".pi").join("mcp.json")
}

/// Strip a UTF-8 byte-order mark.
pub(crate) fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The top-level shape check shared by reading and editing.
pub(crate) const SHAPE_ERROR: &str = "expected an object with an \"mcpServers\" object";

/// Load the global and (when trusted) project configuration.
pub fn load_mcp_config(options: &LoadOptions<'_>) -> McpConfig {
    let mut config = McpConfig::default();
    read_config_file(&global_config_path(options.agent_dir), Scope::Global, &mut config);
    if options.project_trusted {
        let path = project_config_path(options.cwd);
        read_config_file(&path, Scope::Project, &mut config);
        config.project_config = Some(path);
    }
    config
}

fn read_config_file(path: &Path, scope: Scope, config: &mut McpConfig) {
    let shown = path.display().to_string();
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            config.errors.push(format!("{shown}: {e}"));
            return;
        }
    };
    let parsed: Value = match serde_json::from_str(strip_bom(&text)) {
        Ok(v) => v,
        Err(e) => {
            config.errors.push(format!("{shown}: {e}"));
            return;
        }
    };
    let Some(top) = parsed.as_object() else {
        config.errors.push(format!("{shown}: {SHAPE_ERROR}"));
        return;
    };
    let servers = match top.get("mcpServers") {
        None => Map::new(),
        Some(Value::Object(servers)) => servers.clone(),
        Some(_) => {
            config.errors.push(format!("{shown}: {SHAPE_ERROR}"));
            return;
        }
    };
    match top.get("autoEnableCodemode") {
        None => {}
        Some(Value::Bool(b)) => config.auto_enable_codemode = Some(*b),
        Some(_) => config
            .errors
            .push(format!("{shown}: autoEnableCodemode must be a boolean")),
    }
    for (name, value) in &servers {
        if scope == Scope::Project {
            if let Some(entry) = value.as_object().filter(|e| is_override(e)) {
                apply_override(path, name, entry, config);
                continue;
            }
        }
        let server = match validate_server_config(name, value) {
            Ok(server) => server,
            Err(e) => {
                config.errors.push(format!("{shown}: {e}"));
                continue;
            }
        };
        let namespace = mcp_namespace(name);
        let clash = config
            .servers
            .iter()
            .find(|s| s.name != *name && mcp_namespace(&s.name) == namespace);
        if let Some(clash) = clash {
            config
                .errors
                .push(format!("{shown}: server \"{name}\" conflicts with \"{}\"", clash.name));
            continue;
        }
        if scope == Scope::Project && server.auth_provider().is_some() {
            config.errors.push(format!(
                "{shown}: server \"{name}\": auth is only allowed in the global mcp.json"
            ));
            continue;
        }
        let entry = ServerEntry {
            name: name.clone(),
            config: server,
            source: path.to_path_buf(),
            scope,
            override_path: None,
        };
        // A project entry replaces the global one in its place, as a map keeps its insertion order.
        match config.servers.iter_mut().find(|s| s.name == *name) {
            Some(existing) => *existing = entry,
            None => config.servers.push(entry),
        }
    }
}

fn apply_override(path: &Path, name: &str, entry: &Map<String, Value>, config: &mut McpConfig) {
    let shown = path.display();
    let Some(base) = config.servers.iter_mut().find(|s| s.name == name) else {
        config.errors.push(format!(
            "{shown}: server \"{name}\" needs \"command\" or \"url\", or a global server to override"
        ));
        return;
    };
    if entry.keys().any(|k| !OVERRIDE_KEYS.contains(&k.as_str())) {
        config.errors.push(format!(
            "{shown}: server \"{name}\": an override can only set {}",
            OVERRIDE_KEYS.join(", ")
        ));
        return;
    }
    let mut merged = base.config.raw.clone();
    for (k, v) in entry {
        merged.insert(k.clone(), v.clone());
    }
    match validate_server_config(name, &Value::Object(merged)) {
        Ok(server) => {
            base.config = server;
            base.override_path = Some(path.to_path_buf());
        }
        Err(e) => config.errors.push(format!("{shown}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::validate::Exposure;

    fn setup(global: &str, project: Option<&str>) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let agent = dir.path().join("agent");
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(&agent).expect("mkdir");
        std::fs::create_dir_all(cwd.join(".pi")).expect("mkdir");
        std::fs::write(agent.join("mcp.json"), global).expect("write");
        if let Some(project) = project {
            std::fs::write(cwd.join(".pi/mcp.json"), project).expect("write");
        }
        (dir, agent, cwd)
    }

    fn load(agent: &Path, cwd: &Path, trusted: bool) -> McpConfig {
        load_mcp_config(&LoadOptions {
            agent_dir: agent,
            cwd,
            project_trusted: trusted,
        })
    }

    #[test]
    fn reports_bad_entries_and_keeps_the_rest() {
        let global = r#"{"mcpServers": {
            "ok": {"command": "x"},
            "sse": {"type": "sse", "url": "http://x"},
            "bad name": {"command": "x"},
            "a-b": {"command": "x"},
            "a_b": {"command": "x"},
            "badtimeout": {"command": "x", "timeout": 0},
            "off": {"command": "x", "enabled": false}
        }, "autoEnableCodemode": false}"#;
        let (_d, agent, cwd) = setup(&format!("\u{feff}{global}"), None);
        let c = load(&agent, &cwd, false);
        let p = agent.join("mcp.json").display().to_string();
        assert_eq!(
            c.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["ok", "a-b", "off"]
        );
        assert!(!c.servers[2].config.enabled);
        assert_eq!(c.auto_enable_codemode, Some(false));
        assert_eq!(
            c.errors,
            [
                format!("{p}: server \"sse\": legacy SSE transport is not supported; use the streamable HTTP URL"),
                format!("{p}: invalid server name \"bad name\" (use letters, digits, \"_\" and \"-\")"),
                format!("{p}: server \"a_b\" conflicts with \"a-b\""),
                format!("{p}: server \"badtimeout\": timeout must be a positive number of seconds"),
            ]
        );
    }

    #[test]
    fn bad_files_are_reported_not_fatal() {
        for (text, expected) in [
            ("[1]", "expected an object with an \"mcpServers\" object"),
            (
                "{\"mcpServers\": []}",
                "expected an object with an \"mcpServers\" object",
            ),
            ("{\"autoEnableCodemode\": 1}", "autoEnableCodemode must be a boolean"),
        ] {
            let (_d, agent, cwd) = setup(text, None);
            let c = load(&agent, &cwd, false);
            assert_eq!(c.errors, [format!("{}: {expected}", agent.join("mcp.json").display())]);
        }
        let (_d, agent, cwd) = setup("{not json", None);
        let c = load(&agent, &cwd, false);
        assert!(c.errors[0].starts_with(&format!("{}: ", agent.join("mcp.json").display())));
        let (_d, agent, cwd) = setup("{\"servers\": {\"vscode\": {}}}", None);
        assert_eq!(load(&agent, &cwd, false), McpConfig::default());
    }

    #[test]
    fn project_files_replace_override_or_are_ignored() {
        let global = r#"{"mcpServers": {
            "shared": {"command": "g", "env": {"SECRET": "x"}},
            "web": {"url": "https://example.com/mcp", "auth": {"provider": "radius"}}
        }}"#;
        let project = r#"{"mcpServers": {
            "shared": {"enabled": false, "exposure": "direct"},
            "web": {"url": "https://other.example/mcp"},
            "ghost": {"enabled": false},
            "leaky": {"headers": {"A": "b"}},
            "authy": {"url": "https://example.com/mcp", "auth": {"provider": "p"}},
            "local": {"command": "l"}
        }, "autoEnableCodemode": true}"#;
        let (_d, agent, cwd) = setup(global, Some(project));
        let untrusted = load(&agent, &cwd, false);
        assert_eq!(untrusted.servers.len(), 2);
        assert_eq!(untrusted.project_config, None);

        let c = load(&agent, &cwd, true);
        let pp = cwd.join(".pi/mcp.json");
        let p = pp.display().to_string();
        let shared = c.server("shared").expect("shared");
        assert!(!shared.config.enabled);
        assert_eq!(shared.config.exposure, Exposure::Direct);
        assert_eq!(shared.scope, Scope::Global);
        assert_eq!(shared.override_path.as_deref(), Some(pp.as_path()));
        assert_eq!(shared.config.raw["env"]["SECRET"], "x");
        let web = c.server("web").expect("web");
        assert_eq!(web.scope, Scope::Project);
        assert_eq!(web.config.describe_transport(), "https://other.example/mcp");
        assert_eq!(
            c.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["shared", "web", "local"]
        );
        assert_eq!(c.auto_enable_codemode, Some(true));
        assert_eq!(
            c.errors,
            [
                format!("{p}: server \"ghost\" needs \"command\" or \"url\", or a global server to override"),
                format!("{p}: server \"leaky\" needs \"command\" or \"url\", or a global server to override"),
                format!("{p}: server \"authy\": auth is only allowed in the global mcp.json"),
            ]
        );
    }

    #[test]
    fn overrides_may_set_only_three_fields() {
        let (_d, agent, cwd) = setup(
            r#"{"mcpServers": {"s": {"command": "g"}}}"#,
            Some(r#"{"mcpServers": {"s": {"enabled": false, "env": {"A": "b"}}}}"#),
        );
        let c = load(&agent, &cwd, true);
        assert_eq!(
            c.errors,
            [format!(
                "{}: server \"s\": an override can only set enabled, exposure, toolExposure",
                cwd.join(".pi/mcp.json").display()
            )]
        );
        assert!(c.server("s").expect("s").config.enabled);
    }
}
