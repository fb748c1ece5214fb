//! `pi auth login <provider>` for an account sign-in: the terminal side of a `pi-oauth` flow.
//! URLs and device codes are printed (and opened in a browser unless `--no-browser`);
//! questions are read a line at a time. As in pi 1.6, the browser sign-in is chosen without
//! asking, and `--no-browser` picks the provider's other method.

use std::io::{BufRead, Write};
use std::sync::Mutex;

use async_trait::async_trait;
use pi_oauth::{LoginEvent, LoginUi, OAuthError, Prompt};

use crate::cli::console::Console;
use crate::config::oauth::{login_and_save, LoginError};
use crate::config::paths::Paths;

struct TerminalLogin {
    provider: String,
    browser: bool,
    /// Labels of the methods not taken, for the hint after the URL.
    skipped: Mutex<Vec<String>>,
}

fn say(text: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Open `url` with `$BROWSER` (its first entry) or the platform's opener; failures are quiet,
/// since the URL is printed too.
pub fn open_url(url: &str) {
    // Only web URLs: the opener would also launch files and custom protocol handlers.
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) || url.chars().any(char::is_control) {
        return;
    }
    let browser = std::env::var("BROWSER")
        .ok()
        .and_then(|b| b.split(':').next().map(str::to_string));
    let program = browser.filter(|b| !b.trim().is_empty()).unwrap_or_else(|| {
        if cfg!(target_os = "macos") {
            "open".into()
        } else {
            "xdg-open".into()
        }
    });
    let _ = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// One line from the terminal, off the async runtime; end of input cancels.
async fn read_line(prompt: String) -> Result<String, OAuthError> {
    tokio::task::spawn_blocking(move || {
        let mut out = std::io::stdout();
        let _ = write!(out, "{prompt}");
        let _ = out.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => Err(OAuthError::Cancelled),
            Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_string()),
        }
    })
    .await
    .map_err(|_| OAuthError::Cancelled)?
}

#[async_trait]
impl LoginUi for TerminalLogin {
    fn notify(&self, event: LoginEvent) {
        match event {
            LoginEvent::AuthUrl { url, instructions } => {
                say(&format!("Open this URL to sign in:\n  {url}"));
                if !instructions.is_empty() {
                    say(&instructions);
                }
                if self.browser {
                    open_url(&url);
                }
                let skipped = self.skipped.lock().map(|s| s.clone()).unwrap_or_default();
                let rerun = format!("\"pi auth login {} --no-browser\"", self.provider);
                match skipped.as_slice() {
                    [] => {}
                    [one] => say(&format!("To use \"{one}\" instead, run {rerun}")),
                    many => {
                        let labels: Vec<String> = many.iter().map(|l| format!("\"{l}\"")).collect();
                        say(&format!(
                            "Other sign-in methods: {}. Run {rerun} to choose one.",
                            labels.join(", ")
                        ));
                    }
                }
            }
            LoginEvent::DeviceCode {
                user_code,
                verification_uri,
                ..
            } => {
                say(&format!("Open {verification_uri} and enter code: {user_code}"));
                if self.browser {
                    open_url(&verification_uri);
                }
                say("Waiting for authentication...");
            }
            LoginEvent::Progress(message) => say(&message),
        }
    }

    async fn prompt(&self, prompt: Prompt) -> Result<String, OAuthError> {
        match prompt {
            Prompt::Select { message, options } => {
                let Some((first, others)) = options.split_first() else {
                    return Err(OAuthError::Invalid("no sign-in method to choose".into()));
                };
                if self.browser {
                    if let Ok(mut skipped) = self.skipped.lock() {
                        *skipped = others.iter().map(|o| o.label.clone()).collect();
                    }
                    return Ok(first.id.to_string());
                }
                match others {
                    [] => Ok(first.id.to_string()),
                    [only] => {
                        say(&format!("{message} {}", only.label));
                        Ok(only.id.to_string())
                    }
                    many => {
                        say(&message);
                        for (i, option) in many.iter().enumerate() {
                            say(&format!("  {}. {}", i + 1, option.label));
                        }
                        loop {
                            let answer = read_line(format!("Select 1-{}: ", many.len())).await?;
                            if let Some(option) = answer
                                .trim()
                                .parse::<usize>()
                                .ok()
                                .and_then(|n| many.get(n.wrapping_sub(1)))
                            {
                                return Ok(option.id.to_string());
                            }
                            say(&format!("Enter a number from 1 to {}.", many.len()));
                        }
                    }
                }
            }
            Prompt::Text { message, placeholder } => read_line(format!("{message} ({placeholder}): ")).await,
            Prompt::ManualCode { message, placeholder } => {
                let hint = if placeholder.is_empty() {
                    String::new()
                } else {
                    format!(" ({placeholder})")
                };
                read_line(format!("{message}{hint}: ")).await
            }
        }
    }
}

/// As 1.6 after a login is saved: the provider's catalogue now (a Radius gateway lists its
/// models only to an account or key it knows), saying through `say` when it could not be
/// fetched; the login stays in place either way.
pub fn refresh_catalog_after_login(paths: &Paths, provider: &str, name: &str, say: impl Fn(&str)) {
    use crate::config::models_store_refresh::{refresh_after_login, PickerRefresh};
    match refresh_after_login(paths, provider) {
        PickerRefresh::Done => {}
        PickerRefresh::TimedOut => say(&format!(
            "The {name} model catalog refresh timed out; pi refreshes it on next start."
        )),
        PickerRefresh::Failed(_) => say(&format!(
            "The {name} model catalog could not be refreshed; pi retries on next start."
        )),
    }
}

/// Sign in to `provider` (a `pi-oauth` provider) and save the credential; the exit code.
pub fn login(provider: &str, name: &str, browser: bool, paths: &Paths, console: &Console) -> i32 {
    let ui = TerminalLogin {
        provider: provider.to_string(),
        browser,
        skipped: Mutex::new(Vec::new()),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            console.bare_error(&format!("Failed to log in to {name}: {e}"));
            return 1;
        }
    };
    let result = runtime.block_on(async {
        tokio::select! {
            r = login_and_save(paths, provider, &ui) => r,
            _ = tokio::signal::ctrl_c() => Err(LoginError::Cancelled),
        }
    });
    // A prompt still waiting for a line must not keep the process alive.
    runtime.shutdown_background();
    match result {
        Ok(()) => {
            say(&format!(
                "Logged in to {name}. Credentials saved to {}",
                paths.auth_path().display()
            ));
            refresh_catalog_after_login(paths, provider, name, say);
            0
        }
        Err(LoginError::Cancelled) => {
            console.bare_error("Login cancelled.");
            1
        }
        Err(e) => {
            console.bare_error(&format!("Failed to log in to {name}: {e}"));
            1
        }
    }
}
