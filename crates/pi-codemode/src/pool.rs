//! The process's codemode workers: at most `PI_CODEMODE_MAX_WORKERS` (default 2) scripts run at
//! once across every session; the others wait in arrival order. A slot is held until the VM's
//! thread has exited, so a stopped script that is still unwinding keeps its slot.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

pub const DEFAULT_MAX_WORKERS: usize = 2;
/// How long a script waits for a free worker.
pub const WORKER_WAIT: Duration = Duration::from_secs(60);

/// `PI_CODEMODE_MAX_WORKERS` when it is a positive integer.
pub fn max_workers() -> usize {
    std::env::var("PI_CODEMODE_MAX_WORKERS")
        .ok()
        .and_then(|v| parse_workers(&v))
        .unwrap_or(DEFAULT_MAX_WORKERS)
}

/// A worker count as pi 1.6 reads it (a JavaScript number that is a positive integer, so
/// ` 3 `, `3.0` and `1e1` count too).
fn parse_workers(text: &str) -> Option<usize> {
    let n: f64 = text.trim().parse().ok()?;
    (n.is_finite() && n >= 1.0 && n.fract() == 0.0 && n <= usize::MAX as f64).then_some(n as usize)
}

fn slots() -> &'static Arc<Semaphore> {
    static SLOTS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    // Tokio's semaphore hands permits out in the order they were asked for.
    SLOTS.get_or_init(|| Arc::new(Semaphore::new(max_workers())))
}

/// Why no worker was reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoWorker {
    Aborted,
    TimedOut,
}

/// Reserve a worker slot, waiting at most `wait`.
pub async fn reserve(cancel: &CancellationToken, wait: Duration) -> Result<OwnedSemaphorePermit, NoWorker> {
    if cancel.is_cancelled() {
        return Err(NoWorker::Aborted);
    }
    tokio::select! {
        permit = Arc::clone(slots()).acquire_owned() => permit.map_err(|_| NoWorker::TimedOut),
        _ = cancel.cancelled() => Err(NoWorker::Aborted),
        _ = tokio::time::sleep(wait) => Err(NoWorker::TimedOut),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_workers;

    #[test]
    fn worker_counts_are_read_as_pi_16_reads_them() {
        for (text, count) in [
            ("3", Some(3)),
            (" 4 ", Some(4)),
            ("3.0", Some(3)),
            ("1e1", Some(10)),
            ("0", None),
            ("-2", None),
            ("2.5", None),
            ("", None),
            ("many", None),
            ("inf", None),
        ] {
            assert_eq!(parse_workers(text), count, "{text:?}");
        }
    }
}
