//! Project trust: whether a project's own pi files (`.pi/settings.json`, `.pi/skills`,
//! `.pi/SYSTEM.md`, `.agents/skills`, …) may be used. The decision comes from `--approve` /
//! `--no-approve`, else the nearest saved decision in `<agent>/trust.json`
//! (`{"<dir>": true|false}`, a parent's entry covering its children), else the
//! `defaultProjectTrust` setting. A project without such files is trusted.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The files and folders of `.pi/` that need trust.
const TRUST_REQUIRING: &[&str] = &[
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
];

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `cwd` has files that need trust: one of [`TRUST_REQUIRING`] in its `.pi/`, or an
/// `.agents/skills` folder in it or an ancestor (except the user's own `~/.agents/skills`).
pub fn has_trust_requiring_resources(cwd: &Path, home: &Path) -> bool {
    let cwd = canonical(cwd);
    let config = cwd.join(super::paths::CONFIG_DIR_NAME);
    if TRUST_REQUIRING.iter().any(|entry| config.join(entry).exists()) {
        return true;
    }
    let user_skills = canonical(home).join(".agents").join("skills");
    cwd.ancestors().any(|dir| {
        let skills = dir.join(".agents").join("skills");
        skills != user_skills && skills.exists()
    })
}

/// The saved decision nearest to `cwd` in the trust file at `path`: `Ok(None)` when there is
/// none (or no file), `Err` when the file cannot be used.
pub fn saved_decision(path: &Path, cwd: &Path) -> Result<Option<bool>, String> {
    Ok(saved_entry(path, cwd)?.map(|(decision, _)| decision))
}

/// [`saved_decision`] with the folder whose entry decides it (`cwd` or an ancestor).
pub fn saved_entry(path: &Path, cwd: &Path) -> Result<Option<(bool, PathBuf)>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("Failed to read trust store {}: {e}", path.display())),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let data: Value =
        serde_json::from_str(text).map_err(|e| format!("Failed to read trust store {}: {e}", path.display()))?;
    let Value::Object(entries) = data else {
        return Err(format!("Invalid trust store {}: expected an object", path.display()));
    };
    let cwd = canonical(cwd);
    for dir in cwd.ancestors() {
        let decision = entries
            .iter()
            .filter(|(key, _)| canonical(Path::new(key.as_str())) == dir)
            .find_map(|(_, v)| v.as_bool());
        if let Some(d) = decision {
            return Ok(Some((d, dir.to_path_buf())));
        }
    }
    Ok(None)
}

/// `defaultProjectTrust`: what to do without a saved decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultTrust {
    /// Ask on the terminal; where nobody can be asked the project is not trusted.
    Ask,
    Always,
    Never,
}

impl DefaultTrust {
    pub fn from_setting(value: Option<&Value>) -> DefaultTrust {
        match value.and_then(Value::as_str) {
            Some("always") => DefaultTrust::Always,
            Some("never") => DefaultTrust::Never,
            _ => DefaultTrust::Ask,
        }
    }
}

/// What decides one project's trust.
#[derive(Debug, Clone)]
pub struct TrustQuery<'a> {
    pub cwd: &'a Path,
    pub home: &'a Path,
    pub trust_file: &'a Path,
    /// `--approve` / `--no-approve`.
    pub cli_override: Option<bool>,
    pub default: DefaultTrust,
    /// The terminal UI asks the user itself; print, JSON and RPC mode cannot ask.
    pub can_ask: bool,
}

/// Whether the terminal UI must ask before loading: the project has files that need
/// trust, nothing decides it (no flag, no saved decision, `defaultProjectTrust` is `ask`)
/// and someone can answer.
pub fn must_ask(q: &TrustQuery<'_>) -> bool {
    q.can_ask
        && q.cli_override.is_none()
        && q.default == DefaultTrust::Ask
        && has_trust_requiring_resources(q.cwd, q.home)
        && matches!(saved_decision(q.trust_file, q.cwd), Ok(None))
}

/// Record `trusted` for `dir` in the trust file at `path`, keeping its other entries.
pub fn save_decision(path: &Path, dir: &Path, trusted: bool) -> Result<(), String> {
    save_decisions(path, &[(dir.to_path_buf(), Some(trusted))])
}

/// Record several decisions at once; `None` removes a folder's entry (trusting a parent
/// drops the project's own entry, so the parent's decides).
pub fn save_decisions(path: &Path, decisions: &[(PathBuf, Option<bool>)]) -> Result<(), String> {
    let mut entries = match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(text.strip_prefix('\u{feff}').unwrap_or(&text)) {
            Ok(Value::Object(m)) => m,
            _ => return Err(format!("Invalid trust store {}: not saved", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::Map::new(),
        Err(e) => return Err(format!("Failed to read trust store {}: {e}", path.display())),
    };
    for (dir, decision) in decisions {
        let key = canonical(dir);
        entries.retain(|k, _| canonical(Path::new(k.as_str())) != key);
        if let Some(d) = decision {
            entries.insert(key.to_string_lossy().into_owned(), Value::Bool(*d));
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(entries)).unwrap_or_default();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("Failed to save {}: {e}", path.display()))?;
    }
    std::fs::write(path, format!("{text}\n")).map_err(|e| format!("Failed to save {}: {e}", path.display()))
}

/// The decision, and a warning when the trust file could not be read.
pub fn resolve_project_trust(q: &TrustQuery<'_>) -> (bool, Option<String>) {
    if let Some(decision) = q.cli_override {
        return (decision, None);
    }
    let requiring = has_trust_requiring_resources(q.cwd, q.home);
    let (saved, warning) = match saved_decision(q.trust_file, q.cwd) {
        Ok(d) => (d, None),
        Err(e) => (None, Some(e)),
    };
    if !requiring {
        return (saved.unwrap_or(true), warning);
    }
    if let Some(decision) = saved {
        return (decision, warning);
    }
    let trusted = match q.default {
        DefaultTrust::Always => true,
        DefaultTrust::Never => false,
        // The terminal UI asks before this (`must_ask`) and passes the answer as the
        // override; an embedder that can ask but did not keeps the project loaded.
        DefaultTrust::Ask => q.can_ask,
    };
    (trusted, warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Setup {
        _tmp: tempfile::TempDir,
        home: PathBuf,
        proj: PathBuf,
        trust: PathBuf,
    }

    fn setup() -> Setup {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().canonicalize().expect("canon");
        let home = root.join("home");
        let proj = root.join("work/proj");
        std::fs::create_dir_all(&home).expect("mk");
        std::fs::create_dir_all(proj.join("src")).expect("mk");
        let trust = root.join("agent/trust.json");
        std::fs::create_dir_all(root.join("agent")).expect("mk");
        Setup {
            _tmp: tmp,
            home,
            proj,
            trust,
        }
    }

    fn query<'a>(s: &'a Setup, cli: Option<bool>, default: DefaultTrust, can_ask: bool) -> TrustQuery<'a> {
        TrustQuery {
            cwd: &s.proj,
            home: &s.home,
            trust_file: &s.trust,
            cli_override: cli,
            default,
            can_ask,
        }
    }

    #[test]
    fn asks_only_when_undecided_and_saving_keeps_other_entries() {
        let s = setup();
        assert!(
            !must_ask(&query(&s, None, DefaultTrust::Ask, true)),
            "nothing needs trust"
        );
        std::fs::create_dir_all(s.proj.join(".pi/skills")).expect("mk");
        assert!(must_ask(&query(&s, None, DefaultTrust::Ask, true)));
        assert!(!must_ask(&query(&s, None, DefaultTrust::Ask, false)));
        assert!(!must_ask(&query(&s, Some(true), DefaultTrust::Ask, true)));
        assert!(!must_ask(&query(&s, None, DefaultTrust::Never, true)));
        std::fs::write(&s.trust, r#"{"/elsewhere": false}"#).expect("write");
        let parent = s.proj.parent().expect("parent");
        save_decision(&s.trust, parent, true).expect("save");
        assert!(
            !must_ask(&query(&s, None, DefaultTrust::Ask, true)),
            "the parent covers it"
        );
        assert_eq!(saved_decision(&s.trust, &s.proj), Ok(Some(true)));
        let text = std::fs::read_to_string(&s.trust).expect("read");
        assert!(text.contains("/elsewhere"), "{text}");
        std::fs::write(&s.trust, "not json").expect("write");
        assert!(
            save_decision(&s.trust, &s.proj, true).is_err(),
            "a broken file is not overwritten"
        );
        assert_eq!(std::fs::read_to_string(&s.trust).expect("read"), "not json");
    }

    #[test]
    fn which_files_need_trust() {
        let s = setup();
        assert!(!has_trust_requiring_resources(&s.proj, &s.home));
        std::fs::create_dir_all(s.proj.join(".pi")).expect("mk");
        assert!(
            !has_trust_requiring_resources(&s.proj, &s.home),
            "a bare .pi does not count"
        );
        std::fs::write(s.proj.join(".pi/settings.json"), "{}").expect("w");
        assert!(has_trust_requiring_resources(&s.proj, &s.home));
        std::fs::remove_file(s.proj.join(".pi/settings.json")).expect("rm");
        std::fs::create_dir_all(s.proj.parent().expect("parent").join(".agents/skills")).expect("mk");
        assert!(
            has_trust_requiring_resources(&s.proj, &s.home),
            "an ancestor's .agents/skills"
        );
        std::fs::create_dir_all(s.home.join(".agents/skills")).expect("mk");
        assert!(
            !has_trust_requiring_resources(&s.home, &s.home),
            "the user's own skills"
        );
    }

    #[test]
    fn decision_order() {
        let s = setup();
        std::fs::create_dir_all(s.proj.join(".pi")).expect("mk");
        std::fs::write(s.proj.join(".pi/SYSTEM.md"), "x").expect("w");
        assert!(!resolve_project_trust(&query(&s, None, DefaultTrust::Ask, false)).0);
        assert!(resolve_project_trust(&query(&s, None, DefaultTrust::Ask, true)).0);
        assert!(resolve_project_trust(&query(&s, None, DefaultTrust::Always, false)).0);
        assert!(resolve_project_trust(&query(&s, Some(true), DefaultTrust::Never, false)).0);
        // A saved parent decision covers the project and beats the default.
        let parent = s.proj.parent().expect("parent").display().to_string();
        std::fs::write(&s.trust, serde_json::json!({ parent.clone(): true }).to_string()).expect("w");
        assert!(resolve_project_trust(&query(&s, None, DefaultTrust::Never, false)).0);
        std::fs::write(
            &s.trust,
            serde_json::json!({ parent: true, s.proj.display().to_string(): false }).to_string(),
        )
        .expect("w");
        assert!(!resolve_project_trust(&query(&s, None, DefaultTrust::Always, true)).0);
        assert!(resolve_project_trust(&query(&s, Some(true), DefaultTrust::Ask, false)).0);
        // A broken file is a warning and no decision.
        std::fs::write(&s.trust, "[1]").expect("w");
        let (trusted, warning) = resolve_project_trust(&query(&s, None, DefaultTrust::Ask, false));
        assert!(!trusted);
        assert!(warning.expect("warning").starts_with("Invalid trust store "));
    }

    #[test]
    fn a_project_without_such_files_is_trusted_unless_saved_otherwise() {
        let s = setup();
        assert!(resolve_project_trust(&query(&s, None, DefaultTrust::Never, false)).0);
        std::fs::write(
            &s.trust,
            serde_json::json!({ s.proj.display().to_string(): false }).to_string(),
        )
        .expect("w");
        assert!(!resolve_project_trust(&query(&s, None, DefaultTrust::Always, false)).0);
    }
}
