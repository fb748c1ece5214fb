//! Edits of one `mcp.json`: add, remove and change servers inside its `mcpServers` object, keeping
//! every other key, the key order and the file's indentation.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::load::{strip_bom, SHAPE_ERROR};
use super::validate::{is_override, Exposure};
use crate::error::ConfigEditError;

/// A change of one server's settings, as `/mcp` makes them.
#[derive(Debug, Clone, Default)]
pub struct ServerPatch {
    pub enabled: Option<bool>,
    pub exposure: Option<Exposure>,
}

/// The indentation of the first indented line, else two spaces.
fn detect_indent(text: &str) -> String {
    for line in text.lines() {
        let indent: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        if !indent.is_empty() && line.len() > indent.len() {
            return indent;
        }
    }
    "  ".to_string()
}

/// Read the file (an empty object when missing), let `edit` change it, and write it back when
/// `edit` returns true.
fn edit_file(
    path: &Path,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<bool, ConfigEditError>,
) -> Result<(), ConfigEditError> {
    let io = |source| ConfigEditError::Io {
        path: path.to_path_buf(),
        source,
    };
    let text = match std::fs::read(path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };
    let mut top = match text.as_deref().map(strip_bom) {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(ConfigEditError::Shape {
                    path: path.to_path_buf(),
                    message: SHAPE_ERROR.into(),
                })
            }
            Err(e) => {
                return Err(ConfigEditError::Shape {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
            }
        },
    };
    if top.get("mcpServers").is_some_and(|s| !s.is_object()) {
        return Err(ConfigEditError::Shape {
            path: path.to_path_buf(),
            message: SHAPE_ERROR.into(),
        });
    }
    if !edit(&mut top)? {
        return Ok(());
    }
    let indent = text.as_deref().map(detect_indent).unwrap_or_else(|| "  ".into());
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    Value::Object(top)
        .serialize(&mut serializer)
        .map_err(|e| ConfigEditError::Shape {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    out.push(b'\n');
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::write(path, out).map_err(io)
}

fn servers_mut(top: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let servers = top.entry("mcpServers").or_insert_with(|| Value::Object(Map::new()));
    if !servers.is_object() {
        *servers = Value::Object(Map::new());
    }
    match servers {
        Value::Object(map) => map,
        _ => unreachable!("replaced by an object above"),
    }
}

/// Add or replace a server, creating the file when missing. Returns true when an entry was replaced.
pub fn add_server(path: &Path, name: &str, entry: Map<String, Value>) -> Result<bool, ConfigEditError> {
    let mut replaced = false;
    edit_file(path, |top| {
        let servers = servers_mut(top);
        replaced = servers.contains_key(name);
        servers.insert(name.to_string(), Value::Object(entry));
        Ok(true)
    })?;
    Ok(replaced)
}

/// Remove a server. Returns false (and leaves the file alone) when the file does not define it.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, ConfigEditError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut removed = false;
    edit_file(path, |top| {
        let Some(Value::Object(servers)) = top.get_mut("mcpServers") else {
            return Ok(false);
        };
        removed = servers.shift_remove(name).is_some();
        Ok(removed)
    })?;
    Ok(removed)
}

/// Change `enabled` / `exposure` of a server. Defaults are removed from full entries (enabling
/// deletes `enabled`, `codemode` deletes `exposure`) but kept in overrides, which replace the global
/// server's values. With `as_override`, a missing entry is added as an override.
pub fn update_server(path: &Path, name: &str, patch: &ServerPatch, as_override: bool) -> Result<(), ConfigEditError> {
    edit_file(path, |top| {
        let servers = servers_mut(top);
        if !servers.contains_key(name) && as_override {
            servers.insert(name.to_string(), Value::Object(Map::new()));
        }
        let Some(Value::Object(server)) = servers.get_mut(name) else {
            return Err(ConfigEditError::NoSuchServer {
                path: path.to_path_buf(),
                name: name.to_string(),
            });
        };
        let keep_defaults = is_override(server);
        if let Some(enabled) = patch.enabled {
            if enabled && !keep_defaults {
                server.shift_remove("enabled");
            } else {
                server.insert("enabled".into(), Value::Bool(enabled));
            }
        }
        if let Some(exposure) = patch.exposure {
            if exposure == Exposure::Codemode && !keep_defaults {
                server.shift_remove("exposure");
            } else {
                server.insert("exposure".into(), Value::String(exposure.as_str().into()));
            }
        }
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn add_creates_then_keeps_other_content_and_indentation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/mcp.json");
        assert!(!add_server(&path, "demo", obj(json!({"command": "python3", "args": ["s.py"]}))).expect("add"));
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\n  \"mcpServers\": {\n    \"demo\": {\n      \"command\": \"python3\",\n      \"args\": [\n        \"s.py\"\n      ]\n    }\n  }\n}\n"
        );
        std::fs::write(
            &path,
            "{\n\t\"other\": 1,\n\t\"mcpServers\": {\"a\": {\"url\": \"https://x\"}}\n}",
        )
        .expect("write");
        assert!(add_server(&path, "a", obj(json!({"command": "b"}))).expect("add"));
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\n\t\"other\": 1,\n\t\"mcpServers\": {\n\t\t\"a\": {\n\t\t\t\"command\": \"b\"\n\t\t}\n\t}\n}\n"
        );
    }

    #[test]
    fn remove_reports_whether_it_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mcp.json");
        assert!(!remove_server(&path, "x").expect("missing file"));
        std::fs::write(&path, "{\"mcpServers\": {\"a\": {}, \"b\": {}}, \"z\": true}").expect("write");
        let before = std::fs::read_to_string(&path).expect("read");
        assert!(!remove_server(&path, "x").expect("remove"));
        assert_eq!(std::fs::read_to_string(&path).expect("read"), before, "untouched");
        assert!(remove_server(&path, "a").expect("remove"));
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\n  \"mcpServers\": {\n    \"b\": {}\n  },\n  \"z\": true\n}\n"
        );
        std::fs::write(&path, "[]").expect("write");
        assert!(matches!(remove_server(&path, "a"), Err(ConfigEditError::Shape { .. })));
    }

    #[test]
    fn update_drops_defaults_except_in_overrides() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"enabled\": false, \"exposure\": \"direct\"}}}",
        )
        .expect("write");
        update_server(
            &path,
            "a",
            &ServerPatch {
                enabled: Some(true),
                exposure: Some(Exposure::Codemode),
            },
            false,
        )
        .expect("update");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(v["mcpServers"]["a"], json!({"command": "x"}));
        update_server(
            &path,
            "g",
            &ServerPatch {
                enabled: Some(true),
                exposure: Some(Exposure::Codemode),
            },
            true,
        )
        .expect("override");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(v["mcpServers"]["g"], json!({"enabled": true, "exposure": "codemode"}));
        assert!(matches!(
            update_server(&path, "nope", &ServerPatch::default(), false),
            Err(ConfigEditError::NoSuchServer { .. })
        ));
    }
}
