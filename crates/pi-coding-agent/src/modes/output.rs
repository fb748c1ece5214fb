//! The one line writer of the non-interactive modes (print, JSON and RPC): whole lines queued
//! in order to one task that owns the sink, so records never interleave within a line. The
//! queue is bounded in bytes: producers wait when the reader of the pipe is slow
//! (backpressure) and memory stays flat however long the lines get, while lines queued in a
//! burst leave in one flush.

use std::io;
use std::sync::Arc;

use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// How many bytes may wait for the writer. A longer line still goes through, alone: it takes
/// the whole budget.
const QUEUE_BYTES: usize = 1024 * 1024;

enum Item {
    /// A record without its newline, and the share of the byte budget it holds until written.
    Line(String, Option<OwnedSemaphorePermit>),
    /// Everything queued before this is written and flushed, then the writer ends.
    Close,
}

/// A handle that queues whole lines for output. Cloneable; every clone feeds the same ordered
/// queue, so a line sent before another is written before it.
#[derive(Clone)]
pub struct LineOutput {
    tx: mpsc::UnboundedSender<Item>,
    budget: Arc<Semaphore>,
}

/// The budget share of a line of `len` bytes (plus its newline).
fn permits_for(len: usize) -> u32 {
    // QUEUE_BYTES fits in a u32; a longer line takes all of it.
    (len + 1).min(QUEUE_BYTES) as u32
}

impl LineOutput {
    /// Queue `line`, written with a newline after it (print mode's text may hold newlines of
    /// its own; JSON records never do). Waits while the queue holds its budget. Returns false
    /// once the output is closed or its sink is gone.
    pub async fn send_line(&self, line: String) -> bool {
        let permit = match Arc::clone(&self.budget)
            .acquire_many_owned(permits_for(line.len()))
            .await
        {
            Ok(permit) => permit,
            Err(_) => return false,
        };
        self.tx.send(Item::Line(line, Some(permit))).is_ok()
    }

    /// Serialize and queue one record.
    pub async fn send<T: Serialize + ?Sized>(&self, value: &T) -> bool {
        match serde_json::to_string(value) {
            Ok(line) => self.send_line(line).await,
            Err(_) => false,
        }
    }

    /// Queue one line without waiting; false if the budget is used up or the output closed.
    /// For callers that cannot await (synchronous listeners).
    pub fn try_send_line(&self, line: String) -> bool {
        match Arc::clone(&self.budget).try_acquire_many_owned(permits_for(line.len())) {
            Ok(permit) => self.tx.send(Item::Line(line, Some(permit))).is_ok(),
            Err(_) => false,
        }
    }
}

/// The task writing queued lines; [`close`](Self::close) ends it after the queue drains.
pub struct LineWriter {
    output: LineOutput,
    task: JoinHandle<io::Result<()>>,
}

impl LineWriter {
    /// Spawn the writer task over `sink`.
    pub fn spawn<W: AsyncWrite + Unpin + Send + 'static>(sink: W) -> (LineOutput, LineWriter) {
        let (tx, rx) = mpsc::unbounded_channel();
        let budget = Arc::new(Semaphore::new(QUEUE_BYTES));
        let output = LineOutput { tx, budget };
        let task = tokio::spawn(write_loop(sink, rx, Arc::clone(&output.budget)));
        (output.clone(), LineWriter { output, task })
    }

    /// The writer over the process's stdout.
    pub fn stdout() -> (LineOutput, LineWriter) {
        Self::spawn(tokio::io::stdout())
    }

    /// Write everything queued so far, flush, and stop. Returns the first write error.
    pub async fn close(self) -> io::Result<()> {
        // A send failure means the task already ended; its result says why.
        let _ = self.output.tx.send(Item::Close);
        match self.task.await {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join)),
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    sink: W,
    mut rx: mpsc::UnboundedReceiver<Item>,
    budget: Arc<Semaphore>,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, sink);
    let mut failed: Option<io::Error> = None;
    while let Some(item) = rx.recv().await {
        let mut next = Some(item);
        // Write everything already queued, then flush once.
        while let Some(item) = next.take() {
            match item {
                Item::Close => {
                    if failed.is_none() {
                        if let Err(e) = out.flush().await {
                            failed = Some(e);
                        }
                    }
                    budget.close();
                    return failed.map_or(Ok(()), Err);
                }
                Item::Line(mut line, permit) => {
                    if failed.is_none() {
                        line.push('\n');
                        if let Err(e) = out.write_all(line.as_bytes()).await {
                            // The sink is gone: producers stop waiting and their sends fail.
                            failed = Some(e);
                            budget.close();
                        }
                    }
                    drop(permit);
                }
            }
            next = rx.try_recv().ok();
        }
        if failed.is_none() {
            if let Err(e) = out.flush().await {
                failed = Some(e);
                budget.close();
            }
        }
    }
    failed.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn writer_keeps_order_and_whole_lines() {
        let (sink, mut read_side) = tokio::io::duplex(16);
        let (output, writer) = LineWriter::spawn(sink);
        let mut tasks = Vec::new();
        for t in 0..4 {
            let output = output.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..50 {
                    assert!(
                        output
                            .send_line(format!("{{\"t\":{t},\"i\":{i},\"pad\":\"{}\"}}", "p".repeat(40)))
                            .await
                    );
                }
            }));
        }
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            read_side.read_to_end(&mut all).await.expect("read");
            all
        });
        for t in tasks {
            t.await.expect("task");
        }
        writer.close().await.expect("close");
        drop(output);
        let all = String::from_utf8(reader.await.expect("reader")).expect("utf8");
        let mut last = [-1i64; 4];
        let mut count = 0;
        for line in all.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("whole JSON line");
            let t = v["t"].as_u64().expect("t") as usize;
            let i = v["i"].as_i64().expect("i");
            assert!(i > last[t], "per-sender order kept");
            last[t] = i;
            count += 1;
        }
        assert_eq!(count, 200);
    }

    #[tokio::test]
    async fn the_queue_is_bounded_in_bytes_and_admits_one_oversized_line() {
        // A sink nobody reads: the first line fills the pipe, the rest wait in the queue.
        let (sink, read_side) = tokio::io::duplex(64);
        let (output, _writer) = LineWriter::spawn(sink);
        assert!(
            output.try_send_line("x".repeat(QUEUE_BYTES * 3)),
            "a long line alone always fits"
        );
        tokio::task::yield_now().await;
        // The writer holds the long line (its permits) while the pipe is full.
        assert!(!output.try_send_line("y".into()), "nothing more fits while it waits");
        drop(read_side);
        // The sink is gone: waiting senders are let go and fail instead of hanging.
        let sent = tokio::time::timeout(std::time::Duration::from_secs(5), output.send_line("z".into())).await;
        assert_eq!(sent, Ok(false));
    }
}
