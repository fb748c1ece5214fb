//! Which configured packages have something newer upstream, for the interactive mode's
//! "Package Updates Available" notice. Blocking (it asks npm and git remotes): run it off the
//! UI thread. Nothing is asked offline.

use std::path::Path;

use super::install::{installed_npm_version, latest_npm_version, NETWORK_TIMEOUT};
use super::is_offline;
use super::locations::Locations;
use super::process::capture;
use super::resolve::configured_packages;
use super::source::PackageSpec;
use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;

fn git(args: &[&str], dir: &Path) -> Option<String> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    capture(
        "git",
        &args,
        Some(dir),
        &[("GIT_TERMINAL_PROMPT", "0")],
        NETWORK_TIMEOUT,
    )
    .ok()
}

/// The commit the remote has for the clone's upstream branch (or the remote's HEAD).
fn remote_head(dir: &Path) -> Option<String> {
    let first_hash = |out: &str, wanted: Option<&str>| {
        out.lines().find_map(|line| {
            let (hash, name) = line.split_once(char::is_whitespace)?;
            let ok = hash.len() == 40 && wanted.is_none_or(|w| name.trim() == w);
            ok.then(|| hash.to_string())
        })
    };
    let upstream = git(&["rev-parse", "--abbrev-ref", "@{upstream}"], dir);
    if let Some(branch) = upstream.as_deref().and_then(|u| u.trim().strip_prefix("origin/")) {
        let reference = format!("refs/heads/{branch}");
        if let Some(hash) = git(&["ls-remote", "origin", &reference], dir).and_then(|o| first_hash(&o, None)) {
            return Some(hash);
        }
    }
    git(&["ls-remote", "origin", "HEAD"], dir).and_then(|o| first_hash(&o, Some("HEAD")))
}

/// Whether a clone is behind its remote (errors count as "no").
pub fn git_has_update(dir: &Path) -> bool {
    match (git(&["rev-parse", "HEAD"], dir), remote_head(dir)) {
        (Some(local), Some(remote)) => local.trim() != remote.trim(),
        _ => false,
    }
}

/// The display names (`<npm name>` or `<host>/<path>`) of installed, unpinned packages with
/// a newer version upstream.
pub fn available_updates(paths: &Paths, settings: &SettingsManager) -> Vec<String> {
    if is_offline() {
        return Vec::new();
    }
    let loc = Locations::new(paths.clone(), settings.npm_command());
    let packages = configured_packages(&loc, settings);
    let check = |source: &str, scope| -> Option<String> {
        match PackageSpec::parse(source) {
            PackageSpec::Npm(n) if n.version.is_none() => {
                let dir = loc.npm_installed_path_fast(&n, scope).ok().filter(|d| d.exists())?;
                let installed = installed_npm_version(&dir)?;
                let latest = latest_npm_version(&loc, &n.name).ok()?;
                (latest != installed).then_some(n.name)
            }
            PackageSpec::Git(g) if g.git_ref.is_none() => {
                let dir = loc.git_install_path(&g, scope);
                (dir.exists() && git_has_update(&dir)).then(|| format!("{}/{}", g.host, g.path))
            }
            _ => None,
        }
    };
    // A few remotes at a time: each check is mostly waiting.
    let mut found = Vec::new();
    for chunk in packages.chunks(4) {
        let results: Vec<Option<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk.iter().map(|p| s.spawn(|| check(&p.source, p.scope))).collect();
            handles.into_iter().map(|h| h.join().ok().flatten()).collect()
        });
        found.extend(results.into_iter().flatten());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn run(dir: &Path, args: &[&str]) -> bool {
        Command::new("git")
            .args([
                "-c",
                "user.email=t@example.com",
                "-c",
                "user.name=t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    fn a_clone_behind_its_remote_has_an_update() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path();
        let work = root.join("work");
        std::fs::create_dir_all(&work).expect("mk");
        if !run(&work, &["init", "-q"]) {
            return; // no git here
        }
        std::fs::write(work.join("a.md"), "a").expect("w");
        assert!(run(&work, &["add", "-A"]) && run(&work, &["commit", "-qm", "one"]));
        let clone = root.join("clone");
        assert!(run(
            root,
            &[
                "clone",
                "-q",
                work.to_str().expect("utf8"),
                clone.to_str().expect("utf8")
            ]
        ));
        assert!(!git_has_update(&clone));
        std::fs::write(work.join("b.md"), "b").expect("w");
        assert!(run(&work, &["add", "-A"]) && run(&work, &["commit", "-qm", "two"]));
        assert!(git_has_update(&clone));
    }
}
