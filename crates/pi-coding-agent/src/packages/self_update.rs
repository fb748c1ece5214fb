//! The self part of `pi update`: ask pi.dev for the latest version (never offline, with a
//! short time limit) and say whether this binary is current. This build is a standalone
//! executable that no package manager owns, so it never replaces itself.

use std::time::Duration;

use serde_json::Value;

use super::cli::Style;

const LATEST_VERSION_URL: &str = "https://pi.dev/api/latest-version";
const PACKAGE_NAME: &str = "@mariozechner/pi-coding-agent";
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Short, so that an unreachable network fails fast.
const TIMEOUT: Duration = Duration::from_secs(5);

/// `major.minor.patch[-pre]` as numbers plus the prerelease text.
fn parse_version(v: &str) -> Option<(u64, u64, u64, Option<String>)> {
    let v = v.trim().trim_start_matches('v');
    let v = v.split('+').next().unwrap_or(v);
    let (core, pre) = match v.split_once('-') {
        Some((c, p)) => (c, Some(p.to_string())),
        None => (v, None),
    };
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let (a, b, c) = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some((a, b, c, pre))
}

/// Whether `candidate` is newer than `current` (a release beats its prereleases; unparsable
/// versions count as newer when they differ).
pub fn is_newer(candidate: &str, current: &str) -> bool {
    match (parse_version(candidate), parse_version(current)) {
        (Some(l), Some(r)) => {
            let core = (l.0, l.1, l.2).cmp(&(r.0, r.1, r.2));
            if core != std::cmp::Ordering::Equal {
                return core.is_gt();
            }
            match (l.3, r.3) {
                (None, None) => false,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (Some(a), Some(b)) => a > b,
            }
        }
        _ => candidate.trim() != current.trim(),
    }
}

/// The latest release as `(version, packageName)`; `None` offline, when the version check is
/// switched off, or when pi.dev cannot be reached in time.
fn latest_release() -> Option<(String, Option<String>)> {
    if std::env::var_os("PI_SKIP_VERSION_CHECK").is_some()
        || crate::config::offline::offline(crate::config::offline::NetworkUse::Checks)
    {
        return None;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    rt.block_on(async {
        let client = reqwest::Client::builder().timeout(TIMEOUT).build().ok()?;
        let response = client
            .get(LATEST_VERSION_URL)
            .header(
                "User-Agent",
                format!(
                    "pi/{VERSION} ({}; rust; {})",
                    std::env::consts::OS,
                    std::env::consts::ARCH
                ),
            )
            .header("accept", "application/json")
            .send()
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        let text = response.text().await.ok()?;
        let body: Value = serde_json::from_str(&text).ok()?;
        let version = body.get("version")?.as_str()?.trim().to_string();
        if version.is_empty() {
            return None;
        }
        let package = body
            .get("packageName")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        Some((version, package))
    })
}

/// Update pi itself; returns the exit code.
pub fn run(force: bool, style: Style) -> i32 {
    let Some((latest, package)) = latest_release() else {
        // Offline, switched off or unreachable: pi 1.6 updates to the exact version the check
        // returns, so without one there is nothing to do.
        eprintln!("{}", style.red("Error: Could not determine latest pi version."));
        return 1;
    };
    if !force {
        let same_package = package.as_deref().is_none_or(|p| p == PACKAGE_NAME);
        if same_package && !is_newer(&latest, VERSION) {
            println!("{}", style.green(&format!("pi is already up to date (v{VERSION})")));
            return 0;
        }
    }
    eprintln!("error: pi cannot self-update this installation.");
    eprintln!("This pi is a standalone executable: replace it with a newer build the way it was installed.");
    if let Ok(exe) = std::env::current_exe() {
        eprintln!();
        eprintln!("Location of pi executable: {}", exe.display());
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_order() {
        assert!(is_newer("0.74.0", "0.73.1"));
        assert!(!is_newer("0.73.1", "0.73.1"));
        assert!(!is_newer("v0.73.0", "0.73.1"));
        assert!(is_newer("1.0.0", "1.0.0-rc.1"));
        assert!(!is_newer("1.0.0-rc.1", "1.0.0"));
        assert!(is_newer("weird", "0.73.1"));
    }
}
