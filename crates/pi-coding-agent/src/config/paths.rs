//! Where pi keeps its files: the agent dir, the project's `.pi/`, the session dir and the docs.
//!
//! Nothing here touches the disk except [`ensure_dir`] and [`DocsPaths::installed`] (which
//! writes the built-in docs out once per version); every other function is a cheap path
//! computation so startup pays only for what it uses.

use std::path::{Path, PathBuf};

/// Name of the per-project configuration folder and of the folder under `$HOME`.
pub const CONFIG_DIR_NAME: &str = ".pi";
/// Overrides the agent dir.
pub const ENV_AGENT_DIR: &str = "PI_CODING_AGENT_DIR";
/// Overrides the session dir (below `--session-dir`, above settings `sessionDir`).
pub const ENV_SESSION_DIR: &str = "PI_CODING_AGENT_SESSION_DIR";
/// Points at an unpacked pi package whose docs replace the built-in ones.
pub const ENV_PACKAGE_DIR: &str = "PI_PACKAGE_DIR";

/// The user's home folder (`$HOME`, else `/`).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Expand a leading `~` or `~/` against `home`. `~name` is left alone.
pub fn expand_tilde_with(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    }
}

/// Expand a leading `~` or `~/` against the real home folder.
pub fn expand_tilde(path: &str) -> PathBuf {
    expand_tilde_with(path, &home_dir())
}

/// Like [`expand_tilde_with`] but also `~x` → `<home>/x`, as resource paths in settings allow.
pub fn expand_resource_path(path: &str, home: &Path) -> PathBuf {
    let trimmed = path.trim();
    if trimmed == "~" {
        return home.to_path_buf();
    }
    if let Some(rest) = trimmed.strip_prefix("~/") {
        return home.join(rest);
    }
    if let Some(rest) = trimmed.strip_prefix('~') {
        return home.join(rest);
    }
    PathBuf::from(trimmed)
}

/// Make `path` absolute against `cwd` and drop `.` and `..` parts without touching the disk.
pub fn resolve_against(cwd: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    normalize(&joined)
}

/// Remove `.` and `..` components lexically (like Node's `path.resolve`).
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(comp.as_os_str());
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// The agent dir from the value of `PI_CODING_AGENT_DIR` (if set and not empty) or the
/// default `~/.pi/agent`.
pub fn agent_dir_from(env_value: Option<&str>, home: &Path) -> PathBuf {
    match env_value {
        Some(v) if !v.is_empty() => expand_tilde_with(v, home),
        _ => home.join(CONFIG_DIR_NAME).join("agent"),
    }
}

/// The agent dir for this process.
pub fn agent_dir() -> PathBuf {
    let env = std::env::var(ENV_AGENT_DIR).ok();
    agent_dir_from(env.as_deref(), &home_dir())
}

/// Every well-known file of one agent dir and one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `~/.pi/agent` or `PI_CODING_AGENT_DIR`.
    pub agent_dir: PathBuf,
    /// The working directory the session runs in.
    pub cwd: PathBuf,
    /// The user's home folder (for `~/.agents/skills` and `~` expansion).
    pub home: PathBuf,
}

impl Paths {
    pub fn new(agent_dir: impl Into<PathBuf>, cwd: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        Paths {
            agent_dir: agent_dir.into(),
            cwd: cwd.into(),
            home: home.into(),
        }
    }

    /// The agent dir and home of this process, for `cwd`.
    pub fn for_cwd(cwd: impl Into<PathBuf>) -> Self {
        Paths::new(agent_dir(), cwd, home_dir())
    }

    /// `<cwd>/.pi`.
    pub fn project_dir(&self) -> PathBuf {
        self.cwd.join(CONFIG_DIR_NAME)
    }
    pub fn settings_path(&self) -> PathBuf {
        self.agent_dir.join("settings.json")
    }
    pub fn project_settings_path(&self) -> PathBuf {
        self.project_dir().join("settings.json")
    }
    pub fn auth_path(&self) -> PathBuf {
        self.agent_dir.join("auth.json")
    }
    pub fn models_path(&self) -> PathBuf {
        self.agent_dir.join("models.json")
    }
    pub fn keybindings_path(&self) -> PathBuf {
        self.agent_dir.join("keybindings.json")
    }
    pub fn sessions_dir(&self) -> PathBuf {
        self.agent_dir.join("sessions")
    }
    pub fn themes_dir(&self) -> PathBuf {
        self.agent_dir.join("themes")
    }
    pub fn prompts_dir(&self) -> PathBuf {
        self.agent_dir.join("prompts")
    }
    pub fn skills_dir(&self) -> PathBuf {
        self.agent_dir.join("skills")
    }
    pub fn extensions_dir(&self) -> PathBuf {
        self.agent_dir.join("extensions")
    }
    pub fn bin_dir(&self) -> PathBuf {
        self.agent_dir.join("bin")
    }
    pub fn debug_log_path(&self) -> PathBuf {
        self.agent_dir.join("pi-debug.log")
    }

    /// The default session folder of this cwd: `<agent>/sessions/--<cwd, separators as ->--`.
    pub fn default_session_dir(&self) -> PathBuf {
        default_session_dir(&self.agent_dir, &self.cwd)
    }
}

/// `<agent>/sessions/--<cwd without its leading separator, `/`, `\` and `:` replaced by `-`>--`.
pub fn default_session_dir(agent_dir: &Path, cwd: &Path) -> PathBuf {
    let cwd = cwd.to_string_lossy();
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(&cwd);
    let safe: String = trimmed
        .chars()
        .map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c })
        .collect();
    agent_dir.join("sessions").join(format!("--{safe}--"))
}

/// The session dir chosen by priority: `--session-dir`, then `PI_CODING_AGENT_SESSION_DIR`
/// (`~` expanded), then settings `sessionDir` (already `~`-expanded by the settings), then
/// `None` meaning the per-cwd default ([`default_session_dir`]).
pub fn choose_session_dir(
    cli: Option<&str>,
    env_value: Option<&str>,
    settings_value: Option<PathBuf>,
    home: &Path,
) -> Option<PathBuf> {
    if let Some(cli) = cli {
        return Some(PathBuf::from(cli));
    }
    if let Some(env) = env_value.filter(|v| !v.is_empty()) {
        return Some(expand_tilde_with(env, home));
    }
    settings_value
}

/// The session folder to use: [`choose_session_dir`] with this process's
/// `PI_CODING_AGENT_SESSION_DIR`, falling back to the per-cwd default. Not created here.
pub fn resolve_session_dir(cli: Option<&str>, settings_value: Option<PathBuf>, paths: &Paths) -> PathBuf {
    let env = std::env::var(ENV_SESSION_DIR).ok();
    choose_session_dir(cli, env.as_deref(), settings_value, &paths.home).unwrap_or_else(|| paths.default_session_dir())
}

/// Create a folder and its parents if missing.
pub fn ensure_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)
}

/// The folder of an unpacked pi package named by `PI_PACKAGE_DIR`, if set. Its `README.md`,
/// `docs/` and `examples/` then stand in for the documentation built into the binary.
pub fn package_dir() -> Option<PathBuf> {
    std::env::var(ENV_PACKAGE_DIR)
        .ok()
        .filter(|dir| !dir.is_empty())
        .map(|dir| expand_tilde(&dir))
}

/// The documentation locations named in the system prompt and in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocsPaths {
    pub readme: PathBuf,
    pub docs: PathBuf,
    pub examples: PathBuf,
}

impl DocsPaths {
    /// A package layout: `README.md`, `docs/` and `examples/` under `base`.
    pub fn under(base: &Path) -> Self {
        DocsPaths {
            readme: base.join("README.md"),
            docs: base.join("docs"),
            examples: base.join("examples"),
        }
    }

    /// The layout of the docs built into the binary, written out to `dir`: the index
    /// `README.md`, the topic files and `examples/` all inside `dir`.
    pub fn embedded(dir: &Path) -> Self {
        DocsPaths {
            readme: dir.join("README.md"),
            docs: dir.to_path_buf(),
            examples: dir.join("examples"),
        }
    }

    /// The docs of this installation: `PI_PACKAGE_DIR` when set, otherwise the built-in docs
    /// in `<agentDir>/docs/`, written there on the first call of a run whose copy is missing
    /// or from another version (see [`crate::docs`]). This is the one call here that may
    /// touch the disk, and it never fails.
    pub fn installed() -> Self {
        match package_dir() {
            Some(base) => DocsPaths::under(&base),
            None => DocsPaths::embedded(&crate::docs::installed_dir()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_dir_defaults_and_env() {
        let home = Path::new("/home/u");
        assert_eq!(agent_dir_from(None, home), PathBuf::from("/home/u/.pi/agent"));
        assert_eq!(agent_dir_from(Some(""), home), PathBuf::from("/home/u/.pi/agent"));
        assert_eq!(agent_dir_from(Some("~/x"), home), PathBuf::from("/home/u/x"));
        assert_eq!(agent_dir_from(Some("~"), home), PathBuf::from("/home/u"));
        assert_eq!(agent_dir_from(Some("/abs/dir"), home), PathBuf::from("/abs/dir"));
    }

    #[test]
    fn session_dir_name_matches_pi() {
        let dir = default_session_dir(Path::new("/a/agent"), Path::new("/home/u/my proj"));
        assert_eq!(dir, PathBuf::from("/a/agent/sessions/--home-u-my proj--"));
    }

    #[test]
    fn session_dir_priority() {
        let home = Path::new("/h");
        let settings = Some(PathBuf::from("/from/settings"));
        assert_eq!(
            choose_session_dir(Some("/cli"), Some("~/env"), settings.clone(), home),
            Some(PathBuf::from("/cli"))
        );
        assert_eq!(
            choose_session_dir(None, Some("~/env"), settings.clone(), home),
            Some(PathBuf::from("/h/env"))
        );
        assert_eq!(choose_session_dir(None, Some(""), settings.clone(), home), settings);
        assert_eq!(choose_session_dir(None, None, None, home), None);
    }

    #[test]
    fn normalize_resolves_dots() {
        assert_eq!(
            resolve_against(Path::new("/a/b"), Path::new("../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(
            resolve_against(Path::new("/a"), Path::new("/x/../y")),
            PathBuf::from("/y")
        );
    }
}
