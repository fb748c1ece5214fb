//! Inside tmux, pi 1.6 checks at startup that tmux passes modified keys on (Shift+Enter and
//! the like need `extended-keys` on, and work best in the `csi-u` format) and warns in the
//! chat when not. tmux is asked with `tmux show -gv <option>`; an answer that does not come
//! within two seconds, or an error, means no warning.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The value of a global tmux option, or none when tmux could not be asked.
fn tmux_option(name: &str) -> Option<String> {
    let mut child = Command::new("tmux")
        .args(["show", "-gv", name])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    return None;
                }
                let mut out = String::new();
                std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
                return Some(out.trim().to_string());
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The warning to show, when running inside tmux with modified keys not passed on well.
pub fn warning() -> Option<String> {
    std::env::var_os("TMUX").filter(|v| !v.is_empty())?;
    verdict(
        tmux_option("extended-keys")?.as_str(),
        tmux_option("extended-keys-format").as_deref(),
    )
}

fn verdict(extended_keys: &str, format: Option<&str>) -> Option<String> {
    if extended_keys != "on" && extended_keys != "always" {
        return Some(
            "tmux extended-keys is off. Modified Enter keys may not work. Add `set -g extended-keys on` to ~/.tmux.conf and restart tmux."
                .to_string(),
        );
    }
    (format == Some("xterm")).then(|| {
        "tmux extended-keys-format is xterm. Pi works best with csi-u. Add `set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux."
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn off_and_the_xterm_format_are_warned_about() {
        assert!(verdict("off", None).is_some_and(|w| w.starts_with("tmux extended-keys is off.")));
        assert!(verdict("on", Some("xterm")).is_some_and(|w| w.contains("csi-u")));
        assert_eq!(verdict("always", Some("csi-u")), None);
        assert_eq!(verdict("on", None), None);
    }
}
