//! Reading project trust decisions from `<agentDir>/trust.json`: the nearest folder from the cwd up
//! with a `true` or `false` decides.

use std::path::{Path, PathBuf};

/// Whether `cwd` is trusted according to `<agent_dir>/trust.json`. A missing or unreadable file, or
/// no decision for the cwd or its parents, means not trusted.
pub fn is_project_trusted(agent_dir: &Path, cwd: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(agent_dir.join("trust.json")) else {
        return false;
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    let start: PathBuf = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut dir = Some(start.as_path());
    while let Some(current) = dir {
        let key = current.to_string_lossy();
        if let Some(decision) = map.get(key.as_ref()).and_then(serde_json::Value::as_bool) {
            return decision;
        }
        dir = current.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_decision_wins() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let project = root.join("a/b");
        std::fs::create_dir_all(&project).expect("mkdir");
        assert!(!is_project_trusted(&root, &project));
        let trust = serde_json::json!({ root.join("a").display().to_string(): true });
        std::fs::write(root.join("trust.json"), trust.to_string()).expect("write");
        assert!(is_project_trusted(&root, &project));
        let trust =
            serde_json::json!({ root.join("a").display().to_string(): true, project.display().to_string(): false });
        std::fs::write(root.join("trust.json"), trust.to_string()).expect("write");
        assert!(!is_project_trusted(&root, &project));
    }
}
