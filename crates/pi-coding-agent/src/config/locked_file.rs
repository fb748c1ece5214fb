//! Read-modify-write of a small JSON file under a lock shared with other pi processes.
//!
//! Two locks are taken, because two kinds of process may share the files:
//! - an OS lock (`flock` through `File::lock`) on the file itself, which a crash releases;
//! - the `<file>.lock` folder that the TypeScript pi (proper-lockfile) uses, so a TypeScript
//!   and a Rust pi running side by side do not overwrite each other. A folder older than
//!   [`STALE_AFTER`] is a leftover of a crash and is taken over.
//!
//! Writes go to a temporary file in the same folder that is then renamed over the target,
//! so a reader never sees half a file. Because the rename replaces the inode, a waiter that
//! obtains the OS lock re-checks that it holds the lock of the file now at the path.
//!
//! Locking uses std's `File::lock` (stable since Rust 1.89) rather than a locking crate.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long a proper-lockfile lock folder may be left before it counts as stale.
pub const STALE_AFTER: Duration = Duration::from_secs(10);
/// How long we wait for a TypeScript pi's lock folder before going ahead with the OS lock only.
const FOLDER_LOCK_WAIT: Duration = Duration::from_millis(1000);

/// Options for a locked update.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockOptions {
    /// Unix mode of the file when it is created or rewritten (e.g. `0o600` for auth.json).
    pub file_mode: Option<u32>,
    /// Unix mode of the parent folder when it is created.
    pub dir_mode: Option<u32>,
}

/// Read the file without a lock. A missing file is `None`.
pub fn read_optional(path: &Path) -> io::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Read the file under the shared lock (so a concurrent writer is not seen mid-way; with
/// rename-based writes this only matters against writers that write in place).
/// A missing file is `None` and is not created.
pub fn read_locked(path: &Path) -> io::Result<Option<String>> {
    if !path.exists() {
        return Ok(None);
    }
    let guard = match LockGuard::acquire(path, LockOptions::default(), false) {
        Ok(g) => g,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut content = String::new();
    let mut file = &guard.file;
    file.read_to_string(&mut content)?;
    drop(guard);
    Ok(Some(content))
}

/// Run `update` on the current content (`None` when the file does not exist or is empty)
/// under the lock. If it returns `Some(text)`, the file is replaced with `text`.
/// The folder is created if needed. Returns whatever `update` produced besides the text.
pub fn update<T, E>(
    path: &Path,
    options: LockOptions,
    update: impl FnOnce(Option<&str>) -> Result<(Option<String>, T), E>,
) -> Result<T, E>
where
    E: From<io::Error>,
{
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            create_dir_with_mode(dir, options.dir_mode)?;
        }
    }
    // A symlinked file (dotfiles) is updated where it points, and stays a symlink.
    let target = symlink_target(path);
    let guard = LockGuard::acquire_at(path, &target, options, true)?;
    let mut content = String::new();
    (&guard.file).read_to_string(&mut content)?;
    let current = if content.is_empty() {
        None
    } else {
        Some(content.as_str())
    };
    let (next, result) = update(current)?;
    if let Some(next) = next {
        write_atomic(&target, next.as_bytes(), options.file_mode)?;
    }
    drop(guard);
    Ok(result)
}

/// The file a path finally names: itself, or the end of its symlink chain.
fn symlink_target(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).unwrap_or_else(|_| {
            // A dangling link: write where it points.
            match fs::read_link(path) {
                Ok(link) if link.is_absolute() => link,
                Ok(link) => path.parent().map(|d| d.join(&link)).unwrap_or(link),
                Err(_) => path.to_path_buf(),
            }
        }),
        _ => path.to_path_buf(),
    }
}

#[cfg(unix)]
fn existing_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
}
#[cfg(not(unix))]
fn existing_mode(_path: &Path) -> Option<u32> {
    None
}

/// Replace `path` with `bytes` through a temporary file and a rename. Without an explicit
/// `mode` the file keeps the permissions it had.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    let mode = mode.or_else(|| existing_mode(path));
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut opts = OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        set_create_mode(&mut opts, mode);
        let mut file = opts.open(&tmp)?;
        apply_mode(&file, mode)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn create_dir_with_mode(dir: &Path, mode: Option<u32>) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        if let Some(mode) = mode {
            builder.mode(mode);
        }
        builder.create(dir)
    }
    #[cfg(not(unix))]
    {
        let _ = mode;
        fs::create_dir_all(dir)
    }
}

#[cfg(unix)]
fn set_create_mode(opts: &mut OpenOptions, mode: Option<u32>) {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(mode) = mode {
        opts.mode(mode);
    }
}
#[cfg(not(unix))]
fn set_create_mode(_opts: &mut OpenOptions, _mode: Option<u32>) {}

#[cfg(unix)]
fn apply_mode(file: &File, mode: Option<u32>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(mode) = mode {
        file.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}
#[cfg(not(unix))]
fn apply_mode(_file: &File, _mode: Option<u32>) -> io::Result<()> {
    Ok(())
}

/// Both locks on one file; released on drop.
struct LockGuard {
    file: File,
    folder_lock: Option<PathBuf>,
}

impl LockGuard {
    fn acquire(path: &Path, options: LockOptions, create: bool) -> io::Result<LockGuard> {
        Self::acquire_at(path, &symlink_target(path), options, create)
    }

    /// The folder lock sits next to `path` (where the TypeScript pi puts it); the OS lock is
    /// on `target`, the real file.
    fn acquire_at(path: &Path, target: &Path, options: LockOptions, create: bool) -> io::Result<LockGuard> {
        let folder_lock = take_folder_lock(path);
        let file = match lock_current_inode(target, options, create) {
            Ok(f) => f,
            Err(e) => {
                if let Some(dir) = &folder_lock {
                    let _ = fs::remove_dir(dir);
                }
                return Err(e);
            }
        };
        Ok(LockGuard { file, folder_lock })
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = self.file.unlock();
        if let Some(dir) = &self.folder_lock {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// Open the file at `path` and lock it, retrying until the locked file is still the one at
/// the path (a writer may have renamed a new file over it while we waited).
fn lock_current_inode(path: &Path, options: LockOptions, create: bool) -> io::Result<File> {
    loop {
        let mut opts = OpenOptions::new();
        opts.read(true);
        if create {
            opts.write(true).create(true);
            set_create_mode(&mut opts, options.file_mode);
        }
        let file = opts.open(path)?;
        // Readers share the lock; a writer (who may create the file) holds it alone.
        if create {
            file.lock()?;
        } else {
            file.lock_shared()?;
        }
        if same_file(&file, path)? {
            return Ok(file);
        }
        let _ = file.unlock();
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let held = file.metadata()?;
    match fs::metadata(path) {
        Ok(now) => Ok(held.dev() == now.dev() && held.ino() == now.ino()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}
#[cfg(not(unix))]
fn same_file(_file: &File, _path: &Path) -> io::Result<bool> {
    Ok(true)
}

/// Take the proper-lockfile folder `<path>.lock`. Gives up (returning `None`) after a short
/// wait, in which case only the OS lock protects the update.
fn take_folder_lock(path: &Path) -> Option<PathBuf> {
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    let lock = PathBuf::from(lock);
    let start = std::time::Instant::now();
    loop {
        match fs::create_dir(&lock) {
            Ok(()) => return Some(lock),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let stale = fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .is_some_and(|age| age > STALE_AFTER);
                if stale {
                    let _ = fs::remove_dir(&lock);
                    continue;
                }
                if start.elapsed() > FOLDER_LOCK_WAIT {
                    return None;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_creates_and_rewrites() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/x.json");
        update::<_, io::Error>(&path, LockOptions::default(), |cur| {
            assert!(cur.is_none());
            Ok((Some("{\"a\":1}".to_string()), ()))
        })
        .expect("first");
        update::<_, io::Error>(&path, LockOptions::default(), |cur| {
            assert_eq!(cur, Some("{\"a\":1}"));
            Ok((None, ()))
        })
        .expect("second");
        assert_eq!(fs::read_to_string(&path).expect("read"), "{\"a\":1}");
        assert!(!dir.path().join("sub/x.json.lock").exists());
    }

    #[cfg(unix)]
    #[test]
    fn modes_are_applied() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("agent/auth.json");
        let opts = LockOptions {
            file_mode: Some(0o600),
            dir_mode: Some(0o700),
        };
        update::<_, io::Error>(&path, opts, |_| Ok((Some("{}".into()), ()))).expect("write");
        let fmode = fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        let dmode = fs::metadata(path.parent().expect("parent"))
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(fmode, 0o600);
        assert_eq!(dmode, 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_survive_and_modes_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().expect("parent")).expect("mkdir");
        fs::write(&real, "{}").expect("write");
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).expect("chmod");
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        update::<_, io::Error>(&link, LockOptions::default(), |_| Ok((Some("{\"a\":1}".into()), ()))).expect("write");
        assert!(fs::symlink_metadata(&link).expect("meta").file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).expect("read"), "{\"a\":1}");
        assert_eq!(fs::metadata(&real).expect("meta").permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn stale_folder_lock_is_taken_over() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.json");
        let lock = dir.path().join("s.json.lock");
        fs::create_dir(&lock).expect("mkdir");
        let old = SystemTime::now() - Duration::from_secs(60);
        File::open(&lock)
            .and_then(|f| f.set_modified(old))
            .expect("age the lock");
        update::<_, io::Error>(&path, LockOptions::default(), |_| Ok((Some("1".into()), ()))).expect("write");
        assert_eq!(fs::read_to_string(&path).expect("read"), "1");
        assert!(!lock.exists());
    }
}
