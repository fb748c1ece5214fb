//! OS errors worded the way Node reports them (`ENOENT: no such file or directory, access '<path>'`).

use std::io;
use std::path::Path;

/// The errno code name and libuv message of an error.
pub fn code_and_message(err: &io::Error) -> (&'static str, String) {
    let known = match err.raw_os_error() {
        Some(libc::ENOENT) => Some(("ENOENT", "no such file or directory")),
        Some(libc::EACCES) => Some(("EACCES", "permission denied")),
        Some(libc::EPERM) => Some(("EPERM", "operation not permitted")),
        Some(libc::EISDIR) => Some(("EISDIR", "illegal operation on a directory")),
        Some(libc::ENOTDIR) => Some(("ENOTDIR", "not a directory")),
        Some(libc::ELOOP) => Some(("ELOOP", "too many symbolic links encountered")),
        Some(libc::ENAMETOOLONG) => Some(("ENAMETOOLONG", "name too long")),
        Some(libc::EROFS) => Some(("EROFS", "read-only file system")),
        Some(libc::ENOSPC) => Some(("ENOSPC", "no space left on device")),
        Some(libc::EMFILE) => Some(("EMFILE", "too many open files")),
        Some(libc::EIO) => Some(("EIO", "i/o error")),
        _ => None,
    };
    match known {
        Some((code, msg)) => (code, msg.to_string()),
        None => match err.kind() {
            io::ErrorKind::NotFound => ("ENOENT", "no such file or directory".to_string()),
            io::ErrorKind::PermissionDenied => ("EACCES", "permission denied".to_string()),
            _ => ("EIO", err.to_string()),
        },
    }
}

/// `CODE: message, syscall 'path'`.
pub fn with_path(err: &io::Error, syscall: &str, path: &Path) -> String {
    let (code, msg) = code_and_message(err);
    format!("{code}: {msg}, {syscall} '{}'", path.display())
}

/// `CODE: message, syscall` (Node omits the path for reads from an open handle).
pub fn without_path(err: &io::Error, syscall: &str) -> String {
    let (code, msg) = code_and_message(err);
    format!("{code}: {msg}, {syscall}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_read_like_node() {
        let err = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            with_path(&err, "access", Path::new("/tmp/x")),
            "ENOENT: no such file or directory, access '/tmp/x'"
        );
        let err = io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(
            without_path(&err, "read"),
            "EISDIR: illegal operation on a directory, read"
        );
    }
}
