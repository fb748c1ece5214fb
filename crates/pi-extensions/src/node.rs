//! Finding the Node.js binary that runs the host: `PI_NODE`, else `node` on `PATH`. The version
//! check is the host's own first act (it exits with a clear message), which saves a process spawn.

use std::env;
use std::path::{Path, PathBuf};

use crate::error::StartError;

/// The node binary to use: an explicit path, else `PI_NODE`, else the first `node` on `PATH`.
pub fn find_node(explicit: Option<&Path>) -> Result<PathBuf, StartError> {
    if let Some(path) = explicit {
        return executable(path).ok_or(StartError::NodeNotFound);
    }
    if let Some(value) = env::var_os("PI_NODE").filter(|v| !v.is_empty()) {
        return executable(Path::new(&value)).ok_or(StartError::NodeNotFound);
    }
    let path = env::var_os("PATH").ok_or(StartError::NodeNotFound)?;
    env::split_paths(&path)
        .find_map(|dir| executable(&dir.join("node")))
        .ok_or(StartError::NodeNotFound)
}

fn executable(path: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
            return Some(path.to_path_buf());
        }
        None
    }
    #[cfg(not(unix))]
    {
        meta.is_file().then(|| path.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_path_must_be_an_executable_file() {
        assert!(matches!(
            find_node(Some(Path::new("/nonexistent/node"))),
            Err(StartError::NodeNotFound)
        ));
        assert!(find_node(Some(Path::new("/"))).is_err());
    }
}
