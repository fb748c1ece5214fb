//! Putting one package on disk and taking it off again: `npm install`/`uninstall` (global or
//! into `.pi/npm`), `git clone`/fetch/reset into the git folders, and the bookkeeping files
//! those folders get.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::locations::{Locations, Scope};
use super::process::{capture, run, Output};
use super::source::{GitSource, NpmSource, PackageSpec};
use super::PackageError;

/// How long a registry or remote query may take.
pub const NETWORK_TIMEOUT: Duration = Duration::from_secs(10);

fn io_err(what: &str, path: &Path, e: &std::io::Error) -> PackageError {
    PackageError::new(format!("{what} {}: {e}", path.display()))
}

/// Run the npm command with `args`.
fn npm(loc: &Locations, args: &[&str], cwd: Option<&Path>, out: Output) -> Result<(), PackageError> {
    let (command, mut full) = loc.npm_command()?;
    full.extend(args.iter().map(|a| a.to_string()));
    run(&command, &full, cwd, out)
}

fn git(args: &[&str], cwd: Option<&Path>, out: Output) -> Result<(), PackageError> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    run("git", &args, cwd, out)
}

fn git_capture(args: &[&str], cwd: &Path) -> Result<String, PackageError> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    capture(
        "git",
        &args,
        Some(cwd),
        &[("GIT_TERMINAL_PROMPT", "0")],
        NETWORK_TIMEOUT,
    )
}

/// A folder whose contents git should not track (`*` except the ignore file itself).
pub fn ensure_git_ignore(dir: &Path) -> Result<(), PackageError> {
    fs::create_dir_all(dir).map_err(|e| io_err("Cannot create", dir, &e))?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        fs::write(&ignore, "*\n!.gitignore\n").map_err(|e| io_err("Cannot write", &ignore, &e))?;
    }
    Ok(())
}

/// The project npm prefix: the folder, its `.gitignore` and a private `package.json`.
fn ensure_npm_project(root: &Path) -> Result<(), PackageError> {
    ensure_git_ignore(root)?;
    let manifest = root.join("package.json");
    if !manifest.exists() {
        fs::write(&manifest, "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}")
            .map_err(|e| io_err("Cannot write", &manifest, &e))?;
    }
    Ok(())
}

/// Install an npm or git package of `scope` (local paths need nothing).
pub fn install_spec(loc: &Locations, spec: &PackageSpec, scope: Scope, out: Output) -> Result<(), PackageError> {
    match spec {
        PackageSpec::Npm(n) => install_npm(loc, n, scope, out),
        PackageSpec::Git(g) => install_git(loc, g, scope, out),
        PackageSpec::Local(_) => Ok(()),
    }
}

pub fn install_npm(loc: &Locations, n: &NpmSource, scope: Scope, out: Output) -> Result<(), PackageError> {
    install_npm_specs(loc, std::slice::from_ref(&n.spec), scope, out)
}

/// `npm install` several specs at once into `scope`'s prefix.
pub fn install_npm_specs(loc: &Locations, specs: &[String], scope: Scope, out: Output) -> Result<(), PackageError> {
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    match scope {
        Scope::User => {
            let mut args = vec!["install", "-g"];
            args.extend(specs);
            npm(loc, &args, None, out)
        }
        Scope::Project => {
            let root = loc.npm_install_root(scope)?;
            ensure_npm_project(&root)?;
            let root_str = root.to_string_lossy().into_owned();
            let mut args = vec!["install"];
            args.extend(specs);
            args.extend(["--prefix", root_str.as_str()]);
            npm(loc, &args, None, out)
        }
    }
}

pub fn uninstall_npm(loc: &Locations, n: &NpmSource, scope: Scope, out: Output) -> Result<(), PackageError> {
    match scope {
        Scope::User => npm(loc, &["uninstall", "-g", &n.name], None, out),
        Scope::Project => {
            let root = loc.npm_install_root(scope)?;
            if !root.exists() {
                return Ok(());
            }
            let root_str = root.to_string_lossy().into_owned();
            npm(loc, &["uninstall", &n.name, "--prefix", &root_str], None, out)
        }
    }
}

/// The dependencies of a cloned package: production ones only, unless `npmCommand` is
/// customised (other package managers may not know `--omit`).
fn install_git_dependencies(loc: &Locations, dir: &Path, out: Output) -> Result<(), PackageError> {
    if !dir.join("package.json").exists() {
        return Ok(());
    }
    let args: &[&str] = if loc.has_custom_npm_command() {
        &["install"]
    } else {
        &["install", "--omit=dev"]
    };
    npm(loc, args, Some(dir), out)
}

pub fn install_git(loc: &Locations, g: &GitSource, scope: Scope, out: Output) -> Result<(), PackageError> {
    let root = loc.git_install_root(scope);
    clone_git(loc, g, &loc.git_install_path(g, scope), Some(&root), out)
}

/// Clone `g` into `target` (nothing when it is there); `ignore_root` gets a `.gitignore`.
fn clone_git(
    loc: &Locations,
    g: &GitSource,
    target: &Path,
    ignore_root: Option<&Path>,
    out: Output,
) -> Result<(), PackageError> {
    if target.exists() {
        return Ok(());
    }
    if let Some(root) = ignore_root {
        ensure_git_ignore(root)?;
    }
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|e| io_err("Cannot create", parent, &e))?;
    }
    let target_str = target.to_string_lossy().into_owned();
    git(&["clone", &g.repo, &target_str], None, out)?;
    if let Some(r) = &g.git_ref {
        git(&["checkout", r], Some(target), out)?;
    }
    install_git_dependencies(loc, target, out)
}

/// Put a `-e` source into its temporary folder for this run (local paths need nothing);
/// an unpinned git checkout that is already there is refreshed, keeping it on failure.
pub fn install_temporary(loc: &Locations, spec: &PackageSpec, out: Output) -> Result<(), PackageError> {
    match spec {
        PackageSpec::Npm(n) => {
            let root = loc.temp_npm_root();
            ensure_npm_project(&root)?;
            let root_str = root.to_string_lossy().into_owned();
            npm(loc, &["install", &n.spec, "--prefix", &root_str], None, out)
        }
        PackageSpec::Git(g) => clone_git(loc, g, &loc.temp_git_install_path(g), None, out),
        PackageSpec::Local(_) => Ok(()),
    }
}

/// Pull an unpinned temporary git checkout; failures keep the cached copy.
pub fn refresh_temporary_git(loc: &Locations, g: &GitSource, out: Output) {
    let _ = update_git_dir(loc, g, &loc.temp_git_install_path(g), None, out);
}

/// The ref to follow and the fetch that refreshes it: the branch's upstream, else the
/// remote's default branch.
fn git_update_target(dir: &Path) -> Result<(String, Vec<String>), PackageError> {
    let fetch = |branch: &str| {
        vec![
            "fetch".to_string(),
            "--prune".into(),
            "--no-tags".into(),
            "origin".into(),
            format!("+refs/heads/{branch}:refs/remotes/origin/{branch}"),
        ]
    };
    if let Ok(upstream) = git_capture(&["rev-parse", "--abbrev-ref", "@{upstream}"], dir) {
        if let Some(branch) = upstream.trim().strip_prefix("origin/").filter(|b| !b.is_empty()) {
            return Ok(("@{upstream}".into(), fetch(branch)));
        }
    }
    let _ = git_capture(&["remote", "set-head", "origin", "-a"], dir);
    git_capture(&["rev-parse", "origin/HEAD"], dir)?;
    let head_ref = git_capture(&["symbolic-ref", "refs/remotes/origin/HEAD"], dir).unwrap_or_default();
    let branch = head_ref.trim().trim_start_matches("refs/remotes/origin/").to_string();
    if branch.is_empty() {
        let args = [
            "fetch",
            "--prune",
            "--no-tags",
            "origin",
            "+HEAD:refs/remotes/origin/HEAD",
        ];
        Ok(("origin/HEAD".into(), args.map(String::from).to_vec()))
    } else {
        Ok(("origin/HEAD".into(), fetch(&branch)))
    }
}

/// Bring a clone up to date with its remote (clone it when missing).
pub fn update_git(loc: &Locations, g: &GitSource, scope: Scope, out: Output) -> Result<(), PackageError> {
    let root = loc.git_install_root(scope);
    update_git_dir(loc, g, &loc.git_install_path(g, scope), Some(&root), out)
}

fn update_git_dir(
    loc: &Locations,
    g: &GitSource,
    dir: &Path,
    ignore_root: Option<&Path>,
    out: Output,
) -> Result<(), PackageError> {
    if !dir.exists() {
        return clone_git(loc, g, dir, ignore_root, out);
    }
    let (target, fetch_args) = git_update_target(dir)?;
    run("git", &fetch_args, Some(dir), out)?;
    let local = git_capture(&["rev-parse", "HEAD"], dir)?;
    let remote = git_capture(&["rev-parse", &target], dir)?;
    if local.trim() == remote.trim() {
        return Ok(());
    }
    git(&["reset", "--hard", &target], Some(dir), out)?;
    // A package checkout stays pristine.
    git(&["clean", "-fdx"], Some(dir), out)?;
    install_git_dependencies(loc, dir, out)
}

/// Delete a clone and the folders it leaves empty (up to the git root).
pub fn remove_git(loc: &Locations, g: &GitSource, scope: Scope) -> Result<(), PackageError> {
    let dir = loc.git_install_path(g, scope);
    if !dir.exists() {
        return Ok(());
    }
    fs::remove_dir_all(&dir).map_err(|e| io_err("Cannot remove", &dir, &e))?;
    let root = loc.git_install_root(scope);
    let mut current: Option<PathBuf> = dir.parent().map(Path::to_path_buf);
    while let Some(d) = current {
        if d == root || !d.starts_with(&root) {
            break;
        }
        let empty = fs::read_dir(&d).map(|mut r| r.next().is_none()).unwrap_or(false);
        if !empty || fs::remove_dir(&d).is_err() {
            break;
        }
        current = d.parent().map(Path::to_path_buf);
    }
    Ok(())
}

/// The `version` of an installed package's `package.json`.
pub fn installed_npm_version(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join("package.json")).ok()?;
    let json: Value = serde_json::from_str(&text).ok()?;
    json.get("version")?.as_str().map(str::to_string)
}

/// The registry's latest version of `name` (`npm view <name> version --json`).
pub fn latest_npm_version(loc: &Locations, name: &str) -> Result<String, PackageError> {
    let (command, mut args) = loc.npm_command()?;
    args.extend(["view", name, "version", "--json"].map(String::from));
    let raw = capture(&command, &args, Some(&loc.paths.cwd), &[], NETWORK_TIMEOUT)?;
    if raw.trim().is_empty() {
        return Err(PackageError::new("Empty response from npm view"));
    }
    match serde_json::from_str::<Value>(raw.trim()) {
        Ok(Value::String(v)) => Ok(v),
        Ok(other) => Ok(other.to_string()),
        Err(e) => Err(PackageError::new(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::paths::Paths;

    #[test]
    fn remove_git_prunes_empty_parents() {
        let tmp = tempfile::tempdir().expect("tmp");
        let loc = Locations::new(Paths::new(tmp.path().join("agent"), tmp.path(), tmp.path()), None);
        let PackageSpec::Git(g) = PackageSpec::parse("git:example.com/u/r") else {
            panic!()
        };
        let dir = loc.git_install_path(&g, Scope::User);
        fs::create_dir_all(dir.join("sub")).expect("mk");
        fs::create_dir_all(tmp.path().join("agent/git/example.com/other/x")).expect("mk");
        remove_git(&loc, &g, Scope::User).expect("removed");
        assert!(!dir.exists());
        assert!(!tmp.path().join("agent/git/example.com/u").exists());
        assert!(tmp.path().join("agent/git/example.com/other/x").exists());
    }

    #[test]
    fn npm_project_files() {
        let tmp = tempfile::tempdir().expect("tmp");
        ensure_npm_project(tmp.path()).expect("ok");
        let manifest: Value =
            serde_json::from_str(&fs::read_to_string(tmp.path().join("package.json")).expect("read")).expect("json");
        assert_eq!(manifest["name"], "pi-extensions");
        assert_eq!(
            fs::read_to_string(tmp.path().join(".gitignore")).expect("read"),
            "*\n!.gitignore\n"
        );
    }
}
