//! pi 1.6 looks for fd and ripgrep when its terminal UI starts and, offline, warns in the
//! chat for each one it cannot find (online it would download them). Our own search needs
//! neither, but shell commands may call them, so the same warnings are shown offline.
//!
//! A tool counts as present when `<agent dir>/bin/<name>` exists or one of its names is an
//! executable file on PATH (fd is also packaged as `fdfind`).

use std::ffi::OsStr;
use std::path::Path;

/// The tools pi checks, in its order: the name shown and the commands that stand for it.
const TOOLS: [(&str, &str, &[&str]); 2] = [("fd", "fd", &["fd", "fdfind"]), ("ripgrep", "rg", &["rg"])];

/// The warnings to show at startup (without the `Warning: ` prefix the chat adds).
pub fn startup_warnings(bin_dir: &Path, offline: bool, path: Option<&OsStr>) -> Vec<String> {
    if !offline {
        return Vec::new();
    }
    TOOLS
        .iter()
        .filter(|(_, binary, names)| !bin_dir.join(binary).exists() && !names.iter().any(|n| on_path(n, path)))
        .map(|(shown, _, _)| format!("{shown} not found. Offline mode enabled, skipping download."))
        .collect()
}

fn on_path(name: &str, path: Option<&OsStr>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = path else { return false };
    std::env::split_paths(path)
        .any(|dir| std::fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn executable(dir: &Path, name: &str) {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn offline_without_either_tool_warns_for_fd_then_ripgrep() {
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let w = startup_warnings(&tmp.path().join("bin"), true, Some(empty.as_os_str()));
        assert_eq!(
            w,
            [
                "fd not found. Offline mode enabled, skipping download.",
                "ripgrep not found. Offline mode enabled, skipping download.",
            ]
        );
    }

    #[test]
    fn fdfind_on_path_or_rg_in_the_bin_dir_counts_as_present() {
        let tmp = tempfile::tempdir().unwrap();
        let path_dir = tmp.path().join("path");
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&path_dir).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        executable(&path_dir, "fdfind");
        executable(&bin, "rg");
        assert!(startup_warnings(&bin, true, Some(path_dir.as_os_str())).is_empty());
    }

    #[test]
    fn a_non_executable_file_does_not_count_and_online_never_warns() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("rg"), "").unwrap();
        executable(tmp.path(), "fd");
        let bin = tmp.path().join("bin");
        assert_eq!(
            startup_warnings(&bin, true, Some(tmp.path().as_os_str())),
            ["ripgrep not found. Offline mode enabled, skipping download."]
        );
        assert!(startup_warnings(&bin, false, Some(tmp.path().as_os_str())).is_empty());
    }
}
