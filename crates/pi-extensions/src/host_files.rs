//! The host program (our own JS, built into the binary) and writing it to a cache folder under
//! the agent dir on first use. Each build's files go to a folder named after their content, so
//! an upgraded pi never runs an older host and two pi processes never write the same file.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::StartError;

/// The host's files: name and content.
pub const HOST_FILES: &[(&str, &str)] = &[
    ("start.mjs", include_str!("../host/start.mjs")),
    ("optimizer.mjs", include_str!("../host/optimizer.mjs")),
    ("main.mjs", include_str!("../host/main.mjs")),
    ("wire.mjs", include_str!("../host/wire.mjs")),
    ("modules.mjs", include_str!("../host/modules.mjs")),
    ("fast_resolve.mjs", include_str!("../host/fast_resolve.mjs")),
    ("facade.mjs", include_str!("../host/facade.mjs")),
    ("truncate.mjs", include_str!("../host/truncate.mjs")),
    ("extensions.mjs", include_str!("../host/extensions.mjs")),
    ("events.mjs", include_str!("../host/events.mjs")),
    ("providers.mjs", include_str!("../host/providers.mjs")),
    ("state.mjs", include_str!("../host/state.mjs")),
    ("ui.mjs", include_str!("../host/ui.mjs")),
    ("editor.mjs", include_str!("../host/editor.mjs")),
    ("replace.mjs", include_str!("../host/replace.mjs")),
    ("autocomplete.mjs", include_str!("../host/autocomplete.mjs")),
    ("model_stream.mjs", include_str!("../host/model_stream.mjs")),
];

/// The folder everything of the extension host lives in: `<agentDir>/extension-host`.
pub fn host_root(agent_dir: &Path) -> PathBuf {
    agent_dir.join("extension-host")
}

/// FNV-1a over every file name and content: stable across builds, no crate needed.
fn content_hash() -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, content) in HOST_FILES {
        for byte in name.bytes().chain([0]).chain(content.bytes()).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// Make sure this build's host files exist and return the path of the entry, `start.mjs`.
pub fn ensure_host_files(agent_dir: &Path) -> Result<PathBuf, StartError> {
    let root = host_root(agent_dir);
    let dir = root.join(format!("host-{:016x}", content_hash()));
    let main = dir.join("start.mjs");
    if main.is_file() {
        return Ok(main);
    }
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StartError::HostFiles { path, source }
    };
    fs::create_dir_all(&root).map_err(failed(&root))?;
    // Write into a private folder, then rename it into place: a reader sees all files or none.
    let staging = tempfile::Builder::new()
        .prefix(".host-")
        .tempdir_in(&root)
        .map_err(failed(&root))?;
    for (name, content) in HOST_FILES {
        let path = staging.path().join(name);
        fs::write(&path, content).map_err(failed(&path))?;
    }
    let staged = staging.keep();
    if let Err(source) = fs::rename(&staged, &dir) {
        let _ = fs::remove_dir_all(&staged);
        // Another pi process may have won the race; its files are the same.
        if !main.is_file() {
            return Err(StartError::HostFiles { path: dir, source });
        }
    }
    Ok(main)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_files_are_written_once_per_build() -> Result<(), Box<dyn std::error::Error>> {
        let agent = tempfile::tempdir()?;
        let main = ensure_host_files(agent.path())?;
        assert!(main.is_file());
        assert_eq!(fs::read_to_string(&main)?, HOST_FILES[0].1);
        let again = ensure_host_files(agent.path())?;
        assert_eq!(main, again);
        let folders = fs::read_dir(host_root(agent.path()))?.count();
        assert_eq!(folders, 1, "no staging folder is left behind");
        Ok(())
    }
}
