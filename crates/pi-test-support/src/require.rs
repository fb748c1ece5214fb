//! What a test needs from the machine: found, or else a skip outside CI and a failure under CI,
//! so that a CI run never passes by skipping.
//!
//! `.ci/run` installs everything with `scripts/test-deps` and points the tests at it. Outside
//! CI a missing tool skips the test with one `skipped: <test>: <why>` line on stderr, written
//! past the test harness's capture so it shows in a plain `cargo test`.

use std::io::Write;
use std::path::{Path, PathBuf};

/// True when the `CI` variable is set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// How `scripts/test-deps` provides `what`, for the message under CI.
fn how_installed(what: &str) -> &'static str {
    match what {
        "chromium" | "tmux" | "git" | "python3" => "scripts/test-deps installs it with apt-get",
        "node" | "npm" => "scripts/test-deps installs Node 22 from npm into its cache and .ci/run puts it on PATH",
        w if w.starts_with("reference pi") => {
            "scripts/test-deps installs @earendil-works/pi-coding-agent@1.6.0 from npm into its cache \
             and .ci/run exports PI_REFERENCE and PI_REFERENCE_DIR"
        }
        _ => "scripts/test-deps installs what the tests need",
    }
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_owned(),
        _ => "test".to_owned(),
    }
}

/// `what` is missing: under CI this panics with a message naming it and how `.ci/run`
/// installs it; otherwise it prints one `skipped:` line and returns `None`.
#[track_caller]
pub fn missing<T>(what: &str, why: &str) -> Option<T> {
    report(in_ci(), what, why)
}

#[track_caller]
fn report<T>(ci: bool, what: &str, why: &str) -> Option<T> {
    let test = test_name();
    if ci {
        panic!("{test}: {what} is missing ({why}); {}", how_installed(what));
    }
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}: {what} is missing");
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where `name` is found: itself when it is a path, otherwise the first match on `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return is_executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// The program `name` (on `PATH`, or a path), or [`missing`] with `why` (what the test checks).
#[track_caller]
pub fn tool(name: &str, why: &str) -> Option<PathBuf> {
    match find_program(name) {
        Some(path) => Some(path),
        None => missing(name, why),
    }
}

/// The first of `names` that is found; reported missing under the first name.
#[track_caller]
pub fn any_tool(names: &[&str], why: &str) -> Option<PathBuf> {
    match names.iter().find_map(|n| find_program(n)) {
        Some(path) => Some(path),
        None => missing(names.first().copied().unwrap_or("a program"), why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_on_path_is_found_and_a_path_is_checked() {
        let sh = find_program("sh").expect("sh on PATH");
        assert!(sh.is_absolute());
        assert_eq!(find_program(sh.to_str().unwrap_or_default()), Some(sh));
        assert_eq!(find_program("/nonexistent/program"), None);
        assert_eq!(find_program("pi-test-support-no-such-program"), None);
    }

    #[test]
    fn the_message_under_ci_names_the_tool_and_its_install() {
        assert!(how_installed("chromium").contains("apt-get"));
        assert!(how_installed("reference pi 1.6").contains("PI_REFERENCE"));
        assert!(how_installed("node").contains("Node 22"));
    }

    #[test]
    #[should_panic(expected = "chromium is missing (renders the page); scripts/test-deps installs it with apt-get")]
    fn under_ci_a_missing_tool_fails_the_test() {
        let _: Option<()> = report(true, "chromium", "renders the page");
    }

    #[test]
    fn outside_ci_a_missing_tool_is_a_skip() {
        assert_eq!(
            report::<()>(false, "a-program-no-test-needs", "shows what a skip prints"),
            None
        );
    }
}
