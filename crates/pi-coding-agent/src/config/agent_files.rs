//! The empty `auth.json` and `models-store.json` (`{}`, mode 0600) that pi 1.6 leaves in the
//! agent dir whenever it opens its credential store and model catalogue store, so a user finds
//! the files to edit and their permissions are private from the first run.
//!
//! When 1.6 does it: every start that builds the model runtime (all modes, `--help`,
//! `--list-models`, `pi auth login|logout|print-api-key|print-bearer-token`), online or with
//! `PI_OFFLINE`; `pi auth check` opens only the credential store (after its target is given).
//! `--version`, `--export`, the package and MCP commands and `pi config` create nothing. An
//! existing file is left as it is (content and mode); a folder that cannot be written is
//! silently skipped, as the credential store's own reload ignores the failure.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::models_store;
use super::paths::Paths;

/// Create `auth.json` when it is missing.
pub fn ensure_auth_file(paths: &Paths) {
    ensure_empty_object(&paths.auth_path());
}

/// Create `auth.json`, then `models-store.json` beside models.json, when they are missing.
pub fn ensure_runtime_files(paths: &Paths) {
    ensure_auth_file(paths);
    ensure_empty_object(&models_store::path_beside(&paths.models_path()));
}

fn ensure_empty_object(path: &Path) {
    if path.exists() {
        return;
    }
    if let Some(dir) = path.parent() {
        if !dir.exists() && create_private_dir(dir).is_err() {
            return;
        }
    }
    let mut options = OpenOptions::new();
    // `create_new`: a file made meanwhile by another pi is not truncated.
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    if let Ok(mut file) = options.open(path) {
        let _ = file.write_all(b"{}");
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
    }
    #[cfg(not(unix))]
    {
        fs::create_dir_all(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(dir: &Path) -> Paths {
        Paths::new(dir.to_path_buf(), dir.to_path_buf(), dir.to_path_buf())
    }

    #[test]
    fn missing_files_are_created_empty_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("a/b");
        ensure_runtime_files(&paths(&agent));
        for name in ["auth.json", "models-store.json"] {
            assert_eq!(fs::read_to_string(agent.join(name)).unwrap(), "{}");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = fs::metadata(agent.join(name)).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{name}");
            }
        }
    }

    #[test]
    fn existing_files_are_kept_and_auth_alone_skips_the_store() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("auth.json"), "{\"x\":1}").unwrap();
        ensure_auth_file(&paths(dir.path()));
        assert_eq!(fs::read_to_string(dir.path().join("auth.json")).unwrap(), "{\"x\":1}");
        assert!(!dir.path().join("models-store.json").exists());
    }

    #[test]
    fn an_unwritable_place_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        fs::write(&file, "x").unwrap();
        ensure_runtime_files(&paths(&file.join("agent")));
        assert!(!file.join("agent").exists());
    }
}
