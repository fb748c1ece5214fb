//! Resolution of configured values: `$VAR` / `${VAR}` interpolation, `!command` values, and `~` paths.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where environment variables are looked up: the process environment, or a fixed map in tests.
#[derive(Debug, Clone, Default)]
pub enum EnvSource {
    #[default]
    Process,
    Fixed(HashMap<String, String>),
}

impl EnvSource {
    /// A variable's value; unset and empty are the same (an empty value cannot be a credential).
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match self {
            EnvSource::Process => std::env::var(name).ok(),
            EnvSource::Fixed(map) => map.get(name).cloned(),
        };
        value.filter(|v| !v.is_empty())
    }
}

enum Part {
    Literal(String),
    Env(String),
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn push_literal(parts: &mut Vec<Part>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Part::Literal(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(Part::Literal(text.to_string()));
    }
}

/// Split a template into literal text and variable references. `$$` and `$!` escape to `$` and `!`;
/// a `$` that starts no valid reference stays literal.
fn parse_template(text: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        push_literal(&mut parts, &rest[..dollar]);
        let after = &rest[dollar + 1..];
        match after.chars().next() {
            Some(c @ ('$' | '!')) => {
                push_literal(&mut parts, &c.to_string());
                rest = &after[1..];
            }
            Some('{') => match after.find('}') {
                Some(end) => {
                    let name = &after[1..end];
                    let valid = name.chars().next().is_some_and(is_name_start) && name.chars().all(is_name_char);
                    if valid {
                        parts.push(Part::Env(name.to_string()));
                    } else {
                        push_literal(&mut parts, &rest[dollar..dollar + 1 + end + 1]);
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    push_literal(&mut parts, "$");
                    rest = after;
                }
            },
            Some(c) if is_name_start(c) => {
                let len = after.find(|c: char| !is_name_char(c)).unwrap_or(after.len());
                parts.push(Part::Env(after[..len].to_string()));
                rest = &after[len..];
            }
            _ => {
                push_literal(&mut parts, "$");
                rest = after;
            }
        }
    }
    push_literal(&mut parts, rest);
    parts
}

/// Run a `!command` value through `sh -c`; its trimmed stdout, or None when it fails or prints nothing.
fn run_command(command: &str) -> Option<String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// Resolve one configured value. `what` names it in the error, e.g. `MCP server "web" header "Authorization"`.
pub fn resolve_value(value: &str, what: &str, env: &EnvSource) -> Result<String, String> {
    if let Some(command) = value.strip_prefix('!') {
        return run_command(command).ok_or_else(|| format!("Failed to resolve {what} from shell command: {command}"));
    }
    let mut resolved = String::new();
    let mut missing: Vec<String> = Vec::new();
    for part in parse_template(value) {
        match part {
            Part::Literal(text) => resolved.push_str(&text),
            Part::Env(name) => match env.get(&name) {
                Some(v) => resolved.push_str(&v),
                None => {
                    if !missing.contains(&name) {
                        missing.push(name);
                    }
                }
            },
        }
    }
    match missing.len() {
        0 => Ok(resolved),
        1 => Err(format!(
            "Failed to resolve {what} from environment variable: {}",
            missing[0]
        )),
        _ => Err(format!(
            "Failed to resolve {what} from environment variables: {}",
            missing.join(", ")
        )),
    }
}

/// The user's home directory, from `HOME`.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// `~` and `~/…` become paths in the home directory; anything else is returned unchanged.
pub fn expand_home(value: &str) -> String {
    let Some(home) = home_dir() else {
        return value.to_string();
    };
    if value == "~" {
        return home.to_string_lossy().into_owned();
    }
    match value.strip_prefix("~/") {
        Some(rest) => home.join(rest).to_string_lossy().into_owned(),
        None => value.to_string(),
    }
}

/// A stdio server's working directory: `cwd` (with `~` expanded) against the session cwd.
pub fn resolve_cwd(session_cwd: &Path, configured: Option<&str>) -> PathBuf {
    match configured {
        None => session_cwd.to_path_buf(),
        Some(dir) => {
            let expanded = PathBuf::from(expand_home(dir));
            if expanded.is_absolute() {
                expanded
            } else {
                session_cwd.join(expanded)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> EnvSource {
        EnvSource::Fixed(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn interpolates_both_forms_anywhere() {
        let e = env(&[("TOKEN", "abc"), ("HOST", "h")]);
        assert_eq!(resolve_value("Bearer ${TOKEN}", "x", &e).as_deref(), Ok("Bearer abc"));
        assert_eq!(resolve_value("$HOST:$TOKEN!", "x", &e).as_deref(), Ok("h:abc!"));
        assert_eq!(resolve_value("cost $$5 $!x", "x", &e).as_deref(), Ok("cost $5 !x"));
        assert_eq!(
            resolve_value("${not valid} $ 1", "x", &e).as_deref(),
            Ok("${not valid} $ 1")
        );
        assert_eq!(resolve_value("${OPEN", "x", &e).as_deref(), Ok("${OPEN"));
    }

    #[test]
    fn missing_and_empty_variables_fail_with_their_names() {
        let e = env(&[("EMPTY", "")]);
        assert_eq!(
            resolve_value(
                "Bearer ${DEMO_TOKEN}",
                "MCP server \"web\" header \"Authorization\"",
                &e
            ),
            Err(
                "Failed to resolve MCP server \"web\" header \"Authorization\" from environment variable: DEMO_TOKEN"
                    .into()
            )
        );
        assert_eq!(
            resolve_value("$EMPTY$B$EMPTY", "v", &e),
            Err("Failed to resolve v from environment variables: EMPTY, B".into())
        );
    }

    #[test]
    fn command_values_run_in_a_shell() {
        let e = env(&[]);
        assert_eq!(resolve_value("!printf ' hi \\n'", "v", &e).as_deref(), Ok("hi"));
        assert_eq!(
            resolve_value("!exit 3", "v", &e),
            Err("Failed to resolve v from shell command: exit 3".into())
        );
    }

    #[test]
    fn cwd_is_resolved_against_the_session() {
        let session = Path::new("/work/proj");
        assert_eq!(resolve_cwd(session, None), PathBuf::from("/work/proj"));
        assert_eq!(resolve_cwd(session, Some("sub")), PathBuf::from("/work/proj/sub"));
        assert_eq!(resolve_cwd(session, Some("/abs")), PathBuf::from("/abs"));
    }
}
