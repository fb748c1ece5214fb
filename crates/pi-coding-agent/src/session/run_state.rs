//! Whether a run is between its start and `agent_settled`, and whether an abort asked it to
//! stop meanwhile. A manual compaction waits for the run it stopped to settle, and a run
//! stopped after its last reply (while extensions settle it) still settles as aborted and
//! skips `agent_before_settle`, as pi 1.6 orders them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

#[derive(Default)]
pub(crate) struct RunState {
    /// Runs started and not yet settled (a prompt may start one while the last settles).
    active: AtomicUsize,
    abort_requested: AtomicBool,
    settled: Notify,
}

/// Marks the run settled when dropped, whichever way the run ends.
pub(crate) struct ActiveRun<'a>(&'a RunState);

impl Drop for ActiveRun<'_> {
    fn drop(&mut self) {
        if self.0.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.abort_requested.store(false, Ordering::SeqCst);
        }
        self.0.settled.notify_waiters();
    }
}

impl RunState {
    /// A run starts; it counts as active until the returned guard is dropped.
    pub(crate) fn begin(&self) -> ActiveRun<'_> {
        if self.active.fetch_add(1, Ordering::SeqCst) == 0 {
            self.abort_requested.store(false, Ordering::SeqCst);
        }
        ActiveRun(self)
    }

    /// An abort: the active run, if any, ends as aborted.
    pub(crate) fn request_abort(&self) {
        if self.active.load(Ordering::SeqCst) > 0 {
            self.abort_requested.store(true, Ordering::SeqCst);
        }
    }

    /// Whether an abort came while the current run was active.
    pub(crate) fn abort_requested(&self) -> bool {
        self.abort_requested.load(Ordering::SeqCst)
    }

    /// Wait until no run is active.
    pub(crate) async fn wait_settled(&self) {
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            // Registered before the check, so a run settling in between still wakes us.
            notified.as_mut().enable();
            if self.active.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn waiting_ends_when_the_run_settles_and_an_abort_lasts_until_then() {
        let state = Arc::new(RunState::default());
        // Nothing running: no wait, and an abort marks nothing.
        state.wait_settled().await;
        state.request_abort();
        assert!(!state.abort_requested());

        let run = state.begin();
        state.request_abort();
        assert!(state.abort_requested());
        let waiter = tokio::spawn({
            let state = Arc::clone(&state);
            async move { state.wait_settled().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "returned while the run was active");
        drop(run);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
        // The next run starts without the last one's abort.
        let _next = state.begin();
        assert!(!state.abort_requested());
    }
}
