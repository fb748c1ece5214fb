//! The real stdout of non-interactive modes: one writer thread fed through a bounded channel,
//! so producers wait when the reader of the pipe is slow (backpressure) and memory stays flat,
//! while lines written in a burst leave in few system calls.

use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// How many lines may wait for the writer thread.
const QUEUE_DEPTH: usize = 256;

/// Lines to stdout, in order. Shared by reference; [`StdoutLines::finish`] closes it.
pub struct StdoutLines {
    tx: Mutex<Option<SyncSender<Vec<u8>>>>,
    thread: Mutex<Option<JoinHandle<std::io::Result<()>>>>,
}

fn write_loop(rx: Receiver<Vec<u8>>) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    while let Ok(line) = rx.recv() {
        out.write_all(&line)?;
        // Take whatever else is waiting, then flush once: a reader sees each burst at once.
        while let Ok(more) = rx.try_recv() {
            out.write_all(&more)?;
        }
        out.flush()?;
    }
    out.flush()
}

impl StdoutLines {
    pub fn new() -> Self {
        let (tx, rx) = sync_channel::<Vec<u8>>(QUEUE_DEPTH);
        let thread = std::thread::Builder::new()
            .name("stdout".into())
            .spawn(move || write_loop(rx))
            .ok();
        StdoutLines {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(thread),
        }
    }

    fn sender(&self) -> Option<SyncSender<Vec<u8>>> {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Queue `line` plus a newline; waits (without blocking the async runtime) while the
    /// queue is full. Returns false once stdout is gone (e.g. the reader closed the pipe).
    pub async fn write_line(&self, line: String) -> bool {
        let Some(tx) = self.sender() else { return false };
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        match tx.try_send(bytes) {
            Ok(()) => true,
            Err(TrySendError::Disconnected(_)) => false,
            Err(TrySendError::Full(bytes)) => tokio::task::spawn_blocking(move || tx.send(bytes).is_ok())
                .await
                .unwrap_or(false),
        }
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
