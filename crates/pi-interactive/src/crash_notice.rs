//! When the terminal UI itself panics, pi 1.6's crash handling: the terminal is restored
//! (pi-tui's panic hook), the panic is recorded in `crashes.json` (`pi_coding_agent::crash_log`) and
//! stderr says how to report it with `/bug`; the next start shows a warning about it once,
//! and `/bug` attaches the recorded crashes. Only a panic that ends the UI loop counts:
//! panics that are caught elsewhere (a tool's, which becomes its error result) are not
//! crashes.

use std::any::Any;
use std::path::Path;
use std::sync::{Mutex, Once, OnceLock};
use std::thread::ThreadId;

use pi_coding_agent::crash_log::{self, Crash};
use pi_coding_agent::session_host::SessionHost;

/// The thread running the UI loop: only its panics are looked at.
static UI_THREAD: OnceLock<ThreadId> = OnceLock::new();
/// Where and how the UI thread's last panic happened (location, backtrace).
static LAST_PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Remember the UI thread's panics' location and backtrace; installed after pi-tui's hook,
/// which restores the terminal and prints the panic first.
pub fn install() {
    let _ = UI_THREAD.set(std::thread::current().id());
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if UI_THREAD.get() != Some(&std::thread::current().id()) {
                return;
            }
            let location = info.location().map(ToString::to_string).unwrap_or_default();
            let backtrace = std::backtrace::Backtrace::force_capture().to_string();
            if let Ok(mut last) = LAST_PANIC.try_lock() {
                *last = Some((location, backtrace));
            }
        }));
    });
}

/// The panic's message, as `panic!` was given it.
fn payload_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// The UI loop ended in a panic: record it and tell the user (the terminal is already
/// restored) how to report it.
pub fn crashed(host: &SessionHost, agent_dir: &Path, payload: &(dyn Any + Send)) {
    let (location, stack) = LAST_PANIC.try_lock().ok().and_then(|mut last| last.take()).unzip();
    let mut message = payload_text(payload);
    if let Some(at) = location.filter(|l| !l.is_empty()) {
        message.push_str(&format!(" (at {at})"));
    }
    let session = host.session();
    let session_file = session.with_store(|s| {
        s.is_persisted()
            .then(|| s.session_file().map(Path::to_path_buf))
            .flatten()
    });
    let resumable = session_file.as_ref().is_some_and(|f| f.exists());
    let crash = Crash {
        kind: "uncaught_exception",
        message,
        stack,
        session_file,
        cwd: session.cwd().to_path_buf(),
    };
    if crash_log::record(&crash_log::path(agent_dir), &crash) {
        eprintln!("\n{}", instructions(resumable));
    }
}

/// What to do about the crash: `/bug` from the resumed session (`pi -r`), or from a new one.
fn instructions(resumable: bool) -> String {
    if resumable {
        "To report this crash, resume the session with `pi -r` and run /bug there; the crash \
         details go with the report."
            .to_string()
    } else {
        "To report this crash, start pi and run /bug; the crash details go with the report.".to_string()
    }
}

/// At start: the newest crash not announced yet, as a warning pointing to `/bug` (once).
pub fn startup_warning(agent_dir: &Path) -> Option<String> {
    let crash = crash_log::take_unnotified(&crash_log::path(agent_dir), chrono::Utc::now())?;
    let when = crash["timestamp"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%-m/%-d/%Y, %-I:%M:%S %p")
                .to_string()
        })
        .unwrap_or_default();
    let message = crash["message"].as_str().unwrap_or_default();
    Some(format!(
        "pi crashed on {when} ({message}). /bug sends a report with the crash details included."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_comes_from_either_kind_of_payload() {
        assert_eq!(payload_text(&"boom"), "boom");
        assert_eq!(payload_text(&String::from("bang")), "bang");
        assert_eq!(payload_text(&42u8), "panic");
    }

    #[test]
    fn the_instructions_point_to_bug_and_to_resuming_when_there_is_a_file() {
        assert!(instructions(true).contains("`pi -r`"));
        assert!(instructions(true).contains("/bug"));
        assert!(!instructions(false).contains("pi -r"));
        assert!(instructions(false).contains("/bug"));
    }
}
