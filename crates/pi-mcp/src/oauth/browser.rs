//! Opening the authorization URL: `$BROWSER` when set (the command, with `%s` replaced by the URL
//! or the URL appended), else the platform's opener. Never through a shell, and best effort: the
//! URL is always shown to the user as well.

use std::process::{Command, Stdio};

/// The program and arguments that open `url`.
pub fn opener(url: &str, browser: Option<&str>) -> (String, Vec<String>) {
    if let Some(browser) = browser.map(str::trim).filter(|b| !b.is_empty()) {
        // `BROWSER` may list several commands separated by ':'; the first is used.
        let first = browser.split(':').next().unwrap_or(browser);
        let mut words = first.split_whitespace().map(str::to_string);
        let program = words.next().unwrap_or_default();
        let mut args: Vec<String> = words.collect();
        if args.iter().any(|a| a.contains("%s")) {
            for arg in &mut args {
                *arg = arg.replace("%s", url);
            }
        } else {
            args.push(url.to_string());
        }
        return (program, args);
    }
    let program = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    (program.to_string(), vec![url.to_string()])
}

/// Start the browser on `url` and do not wait for it.
pub fn open(url: &str) {
    let browser = std::env::var("BROWSER").ok();
    let (program, args) = opener(url, browser.as_deref());
    let child = Command::new(program)
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    // Reap it in the background so it leaves no zombie.
    if let Ok(mut child) = child {
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_commands_take_the_url() {
        assert_eq!(opener("u", Some("firefox")), ("firefox".into(), vec!["u".into()]));
        assert_eq!(
            opener("u", Some("w3m -o x=%s:lynx")),
            ("w3m".into(), vec!["-o".into(), "x=u".into()])
        );
        assert_eq!(opener("u", None).1, vec!["u".to_string()]);
    }
}
