//! Where packages live: the settings scope's base folder, npm's global root or the project's
//! `.pi/npm`, the git clones under `<agent>/git` or `.pi/git`, and the npm command to use.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::process::capture;
use super::source::{GitSource, NpmSource, PackageSpec};
use super::PackageError;
use crate::config::paths::{Paths, CONFIG_DIR_NAME};
use crate::resources::discovery::resolve_resource_path;

/// Which settings file a package belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The agent dir's `settings.json`.
    User,
    /// The project's `.pi/settings.json`.
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// The folders of one agent dir and project, and the npm command (`npmCommand`).
#[derive(Debug)]
pub struct Locations {
    pub paths: Paths,
    npm_command: Option<Vec<String>>,
}

/// npm's global root per npm command: asking costs a Node start, and startup resolves
/// packages more than once (resources, then themes).
fn npm_root_cache() -> &'static Mutex<HashMap<Vec<String>, PathBuf>> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<String>, PathBuf>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Locations {
    pub fn new(paths: Paths, npm_command: Option<Vec<String>>) -> Self {
        Locations {
            paths,
            npm_command: npm_command.filter(|c| !c.is_empty()),
        }
    }

    /// Whether `npmCommand` is set (git installs then run a plain `install`).
    pub fn has_custom_npm_command(&self) -> bool {
        self.npm_command.is_some()
    }

    /// The npm program and the arguments that precede every npm command.
    pub fn npm_command(&self) -> Result<(String, Vec<String>), PackageError> {
        match &self.npm_command {
            None => Ok(("npm".to_string(), Vec::new())),
            Some(c) => match c.split_first() {
                Some((first, rest)) if !first.is_empty() => Ok((first.clone(), rest.to_vec())),
                _ => Err(PackageError::new(
                    "Invalid npmCommand: first array entry must be a non-empty command",
                )),
            },
        }
    }

    /// The folder relative package paths of `scope` are resolved against.
    pub fn base_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.paths.agent_dir.clone(),
            Scope::Project => self.paths.cwd.join(CONFIG_DIR_NAME),
        }
    }

    /// A local source path of `scope`'s settings, made absolute.
    pub fn resolve_local(&self, path: &str, scope: Scope) -> PathBuf {
        resolve_resource_path(path, &self.base_dir(scope), &self.paths.home)
    }

    /// A local source path typed on the command line, made absolute against the cwd.
    pub fn resolve_input(&self, path: &str) -> PathBuf {
        resolve_resource_path(path, &self.paths.cwd, &self.paths.home)
    }

    /// The identity of a source of `scope`'s settings.
    pub fn identity(&self, source: &str, scope: Scope) -> String {
        PackageSpec::parse(source).identity(&self.base_dir(scope), &self.paths.home)
    }

    /// The identity of a source typed on the command line.
    pub fn input_identity(&self, source: &str) -> String {
        PackageSpec::parse(source).identity(&self.paths.cwd, &self.paths.home)
    }

    /// npm's global `node_modules` (asked once per process: `npm root -g`, or bun's equivalent).
    pub fn global_npm_root(&self) -> Result<PathBuf, PackageError> {
        let (command, mut args) = self.npm_command()?;
        let key: Vec<String> = std::iter::once(command.clone()).chain(args.iter().cloned()).collect();
        if let Some(root) = npm_root_cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(root);
        }
        let bun = command == "bun";
        args.extend(if bun {
            ["pm", "bin", "-g"].map(String::from).to_vec()
        } else {
            ["root", "-g"].map(String::from).to_vec()
        });
        let out = capture(&command, &args, None, &[], Duration::from_secs(60))
            .map_err(|e| PackageError::new(format!("Failed to run {command} {}: {e}", args.join(" "))))?;
        let out = PathBuf::from(out.trim());
        let root = if bun {
            out.parent()
                .unwrap_or(Path::new("/"))
                .join("install/global/node_modules")
        } else {
            out
        };
        if let Ok(mut cache) = npm_root_cache().lock() {
            cache.insert(key, root.clone());
        }
        Ok(root)
    }

    /// Where npm's global `node_modules` probably is, without running npm: the
    /// `npm_config_prefix` variable, the `prefix` of `~/.npmrc`, or the folder holding the
    /// `node` on `PATH`. Only for finding packages already installed.
    fn guessed_global_roots(&self) -> Vec<PathBuf> {
        if self.npm_command.is_some() {
            return Vec::new();
        }
        let mut prefixes = Vec::new();
        for var in ["npm_config_prefix", "NPM_CONFIG_PREFIX"] {
            if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                prefixes.push(PathBuf::from(v));
            }
        }
        if let Ok(rc) = std::fs::read_to_string(self.paths.home.join(".npmrc")) {
            for line in rc.lines() {
                if let Some((key, value)) = line.split_once('=') {
                    if key.trim() == "prefix" {
                        let v = value.trim().trim_matches('"');
                        prefixes.push(crate::config::paths::expand_tilde_with(v, &self.paths.home));
                    }
                }
            }
        }
        if let Some(path) = std::env::var_os("PATH") {
            let node = std::env::split_paths(&path)
                .map(|d| d.join("node"))
                .find(|p| p.is_file())
                .and_then(|p| p.canonicalize().ok());
            if let Some(prefix) = node.as_deref().and_then(Path::parent).and_then(Path::parent) {
                prefixes.push(prefix.to_path_buf());
            }
        }
        prefixes.into_iter().map(|p| p.join("lib/node_modules")).collect()
    }

    /// Where an installed npm package of `scope` is, asking npm only when a guess of its
    /// global root does not find it (startup stays free of npm calls).
    pub fn npm_installed_path_fast(&self, npm: &NpmSource, scope: Scope) -> Result<PathBuf, PackageError> {
        if scope == Scope::User {
            if let Some(found) = self
                .guessed_global_roots()
                .into_iter()
                .map(|root| root.join(&npm.name))
                .find(|p| p.join("package.json").is_file())
            {
                return Ok(found);
            }
        }
        self.npm_install_path(npm, scope)
    }

    /// The npm prefix packages of `scope` are installed into.
    pub fn npm_install_root(&self, scope: Scope) -> Result<PathBuf, PackageError> {
        match scope {
            Scope::Project => Ok(self.paths.cwd.join(CONFIG_DIR_NAME).join("npm")),
            Scope::User => Ok(self.global_npm_root()?.join("..")),
        }
    }

    /// Where an npm package of `scope` is installed.
    pub fn npm_install_path(&self, npm: &NpmSource, scope: Scope) -> Result<PathBuf, PackageError> {
        match scope {
            Scope::Project => Ok(self
                .paths
                .cwd
                .join(CONFIG_DIR_NAME)
                .join("npm/node_modules")
                .join(&npm.name)),
            Scope::User => Ok(self.global_npm_root()?.join(&npm.name)),
        }
    }

    /// The folder all git clones of `scope` live under.
    pub fn git_install_root(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Project => self.paths.cwd.join(CONFIG_DIR_NAME).join("git"),
            Scope::User => self.paths.agent_dir.join("git"),
        }
    }

    /// Where a git package of `scope` is cloned.
    pub fn git_install_path(&self, git: &GitSource, scope: Scope) -> PathBuf {
        self.git_install_root(scope).join(&git.host).join(&git.path)
    }

    /// `<agent>/tmp/extensions/<prefix>/<hash>/<suffix>`: the folder of a `-e` source, stable
    /// across runs so a second run (of this pi or of pi 1.6, which uses the same folders) finds
    /// it installed. The hash covers the git ref, so each ref has its own clone.
    fn temp_dir(&self, prefix: &str, suffix: &str, git_ref: Option<&str>) -> PathBuf {
        use sha2::{Digest, Sha256};
        let at = git_ref.map(|r| format!("@{r}")).unwrap_or_default();
        let digest = Sha256::digest(format!("{prefix}-{suffix}{at}").as_bytes());
        let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let dir = self.temp_root().join(prefix).join(hash);
        if suffix.is_empty() {
            dir
        } else {
            dir.join(suffix)
        }
    }

    /// `<agent>/tmp/extensions`, made private to the user (mode 0700) as pi 1.6 keeps it.
    fn temp_root(&self) -> PathBuf {
        let root = self.paths.agent_dir.join("tmp").join("extensions");
        if std::fs::create_dir_all(&root).is_ok() {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700));
            }
        }
        root
    }

    /// The npm prefix of `-e` npm sources.
    pub fn temp_npm_root(&self) -> PathBuf {
        self.temp_dir("npm", "", None)
    }

    /// Where a `-e` npm source is installed.
    pub fn temp_npm_install_path(&self, npm: &NpmSource) -> PathBuf {
        self.temp_npm_root().join("node_modules").join(&npm.name)
    }

    /// Where a `-e` git source is cloned.
    pub fn temp_git_install_path(&self, git: &GitSource) -> PathBuf {
        self.temp_dir(&format!("git-{}", git.host), &git.path, git.git_ref.as_deref())
    }

    /// Where a configured package is on disk, if it is there.
    pub fn installed_path(&self, source: &str, scope: Scope) -> Option<PathBuf> {
        let path = match PackageSpec::parse(source) {
            PackageSpec::Npm(n) => self.npm_install_path(&n, scope).ok()?,
            PackageSpec::Git(g) => self.git_install_path(&g, scope),
            PackageSpec::Local(p) => self.resolve_local(&p, scope),
        };
        path.exists().then_some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_paths() {
        let loc = Locations::new(Paths::new("/a/agent", "/w/proj", "/h"), None);
        let PackageSpec::Git(g) = PackageSpec::parse("git:github.com/u/r@v1") else {
            panic!()
        };
        assert_eq!(
            loc.git_install_path(&g, Scope::User),
            Path::new("/a/agent/git/github.com/u/r")
        );
        assert_eq!(
            loc.git_install_path(&g, Scope::Project),
            Path::new("/w/proj/.pi/git/github.com/u/r")
        );
        let PackageSpec::Npm(n) = PackageSpec::parse("npm:@s/p") else {
            panic!()
        };
        assert_eq!(
            loc.npm_install_path(&n, Scope::Project).expect("path"),
            Path::new("/w/proj/.pi/npm/node_modules/@s/p")
        );
        assert_eq!(loc.resolve_local("../pkg", Scope::User), Path::new("/a/pkg"));
        assert_eq!(loc.resolve_local("../pkg", Scope::Project), Path::new("/w/proj/pkg"));
        assert_eq!(loc.resolve_input("../pkg"), Path::new("/w/pkg"));
        let bad = Locations::new(Paths::new("/a", "/w", "/h"), Some(vec![String::new()]));
        assert!(bad.npm_command().is_err());
    }

    #[test]
    fn npm_root_guess_reads_npmrc_and_finds_installed_packages() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).expect("mk");
        std::fs::write(home.join(".npmrc"), "registry=x\nprefix = ~/.npm-global\n").expect("w");
        let loc = Locations::new(Paths::new(tmp.path().join("a"), tmp.path(), &home), None);
        let root = home.join(".npm-global/lib/node_modules");
        assert!(loc.guessed_global_roots().contains(&root));
        std::fs::create_dir_all(root.join("@s/p")).expect("mk");
        std::fs::write(root.join("@s/p/package.json"), "{}").expect("w");
        let PackageSpec::Npm(n) = PackageSpec::parse("npm:@s/p") else {
            panic!()
        };
        assert_eq!(
            loc.npm_installed_path_fast(&n, Scope::User).expect("found"),
            root.join("@s/p")
        );
        // A custom npm command is never second-guessed.
        let custom = Locations::new(loc.paths.clone(), Some(vec!["mise".into()]));
        assert!(custom.guessed_global_roots().is_empty());
    }

    #[test]
    fn command_line_packages_live_under_the_agent_folder_one_clone_per_ref() {
        let tmp = tempfile::tempdir().expect("tmp");
        let agent = tmp.path().join("agent");
        let loc = Locations::new(Paths::new(&agent, tmp.path(), tmp.path()), None);
        let git = |source: &str| match PackageSpec::parse(source) {
            PackageSpec::Git(g) => loc.temp_git_install_path(&g),
            _ => panic!("a git source"),
        };
        let plain = git("git:example.com/u/r");
        let tagged = git("git:example.com/u/r@v1");
        let root = agent.join("tmp/extensions/git-example.com");
        assert!(
            plain.starts_with(&root) && plain.ends_with("u/r"),
            "{}",
            plain.display()
        );
        assert!(tagged.starts_with(&root) && tagged.ends_with("u/r"));
        assert_ne!(plain, tagged);
        // sha256("npm-"), first 8 hex digits, as pi 1.6 names the folder.
        assert_eq!(loc.temp_npm_root(), agent.join("tmp/extensions/npm/f35b2129"));
    }
}
