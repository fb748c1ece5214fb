//! The real stdout of non-interactive modes: one writer thread fed through a queue bounded in
//! bytes, so producers wait when the reader of the pipe is slow (backpressure) and memory stays
//! flat however long the lines get, while lines written in a burst leave in few system calls.

use std::io::Write;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// How many bytes may wait for the writer thread. A line longer than this still goes through,
/// alone. JSON mode's `message_update` lines carry the whole message so far, so a count of
/// lines would let memory grow with the length of the reply.
const QUEUE_BYTES: usize = 1024 * 1024;

/// Bytes queued and not yet written, with a signal for producers waiting for room.
#[derive(Default)]
struct Budget {
    state: Mutex<Queued>,
    room: Condvar,
}

#[derive(Default)]
struct Queued {
    bytes: usize,
    /// The writer stopped (stdout is gone): nobody waits any more; sends fail instead.
    closed: bool,
}

impl Queued {
    fn fits(&self, n: usize) -> bool {
        self.closed || self.bytes == 0 || self.bytes + n <= QUEUE_BYTES
    }
}

impl Budget {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queued> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take `n` bytes if they fit (a line alone always fits); false otherwise.
    fn try_take(&self, n: usize) -> bool {
        let mut state = self.lock();
        let fits = state.fits(n);
        if fits {
            state.bytes += n;
        }
        fits
    }

    /// Wait until `n` bytes fit, then take them.
    fn take(&self, n: usize) {
        let mut state = self.lock();
        while !state.fits(n) {
            state = self.room.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.bytes += n;
    }

    fn give_back(&self, n: usize) {
        let mut state = self.lock();
        state.bytes = state.bytes.saturating_sub(n);
        drop(state);
        self.room.notify_all();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.room.notify_all();
    }
}

/// Lines to stdout, in order. Shared by reference; [`StdoutLines::finish`] closes it.
pub struct StdoutLines {
    tx: Mutex<Option<Sender<Vec<u8>>>>,
    budget: Arc<Budget>,
    thread: Mutex<Option<JoinHandle<std::io::Result<()>>>>,
}

fn write_loop(rx: Receiver<Vec<u8>>, budget: &Budget) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let result = (|| {
        while let Ok(line) = rx.recv() {
            out.write_all(&line)?;
            budget.give_back(line.len());
            // Take whatever else is waiting, then flush once: a reader sees each burst at once.
            while let Ok(more) = rx.try_recv() {
                out.write_all(&more)?;
                budget.give_back(more.len());
            }
            out.flush()?;
        }
        out.flush()
    })();
    // Stdout is gone: let any waiting producer go (its send then fails).
    budget.close();
    result
}

impl StdoutLines {
    pub fn new() -> Self {
        let (tx, rx) = channel::<Vec<u8>>();
        let budget = Arc::new(Budget::default());
        let for_writer = Arc::clone(&budget);
        let thread = std::thread::Builder::new()
            .name("stdout".into())
            .spawn(move || write_loop(rx, &for_writer))
            .ok();
        StdoutLines {
            tx: Mutex::new(Some(tx)),
            budget,
            thread: Mutex::new(thread),
        }
    }

    fn sender(&self) -> Option<Sender<Vec<u8>>> {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Queue `line` plus a newline; waits (without blocking the async runtime) while the
    /// queue is full. Returns false once stdout is gone (e.g. the reader closed the pipe).
    pub async fn write_line(&self, line: String) -> bool {
        let Some(tx) = self.sender() else { return false };
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        let n = bytes.len();
        if !self.budget.try_take(n) {
            let budget = Arc::clone(&self.budget);
            if tokio::task::spawn_blocking(move || budget.take(n)).await.is_err() {
                return false;
            }
        }
        tx.send(bytes).is_ok()
    }

    /// Close the stream: everything queued is written before this returns.
    pub fn finish(&self) -> std::io::Result<()> {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        match thread {
            Some(t) => t.join().unwrap_or(Ok(())),
            None => Ok(()),
        }
    }
}

impl Default for StdoutLines {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_admits_one_oversized_line_and_waits_for_room() {
        let budget = Arc::new(Budget::default());
        assert!(budget.try_take(QUEUE_BYTES * 3), "a long line alone always fits");
        assert!(!budget.try_take(1), "nothing more while it waits");
        let waiter = {
            let budget = Arc::clone(&budget);
            std::thread::spawn(move || budget.take(10))
        };
        budget.give_back(QUEUE_BYTES * 3);
        waiter
            .join()
            .expect("the waiting producer goes once the line is written");
        assert_eq!(budget.lock().bytes, 10);
        assert!(budget.try_take(QUEUE_BYTES - 10));
        assert!(!budget.try_take(1));
    }

    #[test]
    fn a_closed_writer_releases_waiting_producers() {
        let budget = Arc::new(Budget::default());
        assert!(budget.try_take(QUEUE_BYTES));
        let waiter = {
            let budget = Arc::clone(&budget);
            std::thread::spawn(move || budget.take(QUEUE_BYTES))
        };
        budget.close();
        waiter.join().expect("released");
        assert!(budget.try_take(QUEUE_BYTES), "nobody waits once closed");
    }
}
