//! The file mutation queue: edits and writes to one file run one at a time, in request order.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use tokio::sync::oneshot;

type Queues = Mutex<HashMap<PathBuf, (u64, oneshot::Receiver<()>)>>;

fn queues() -> &'static Queues {
    static QUEUES: OnceLock<Queues> = OnceLock::new();
    QUEUES.get_or_init(|| Mutex::new(HashMap::new()))
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The queue key: the real path when it resolves, else the path as given.
fn queue_key(path: &Path) -> PathBuf {
    // Resolved synchronously on purpose: the place in line is taken before the first await, so
    // the order of calls is the order of work. realpath on a local path is a few syscalls.
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Run `work` after every earlier mutation of the same file has finished.
/// The place in line is taken when this future is first polled.
pub async fn with_file_mutation_queue<T, F>(path: &Path, work: F) -> T
where
    F: Future<Output = T>,
{
    let key = queue_key(path);
    let id = next_id();
    let (done_tx, done_rx) = oneshot::channel::<()>();
    let previous = {
        let mut map = queues().lock().unwrap_or_else(|e| e.into_inner());
        map.insert(key.clone(), (id, done_rx)).map(|(_, rx)| rx)
    };
    if let Some(prev) = previous {
        // An error only means the previous holder went away, which also frees the file.
        let _ = prev.await;
    }
    let result = work.await;
    {
        let mut map = queues().lock().unwrap_or_else(|e| e.into_inner());
        if map.get(&key).is_some_and(|(owner, _)| *owner == id) {
            map.remove(&key);
        }
    }
    let _ = done_tx.send(());
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn same_file_runs_in_order_different_files_overlap() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.txt");
        std::fs::write(&a, "").expect("write");
        let log = Arc::new(Mutex::new(Vec::new()));
        let mk = |tag: &'static str, path: PathBuf, delay: u64| {
            let log = log.clone();
            async move {
                with_file_mutation_queue(&path, async {
                    log.lock().expect("log").push(format!("{tag}+"));
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    log.lock().expect("log").push(format!("{tag}-"));
                })
                .await
            }
        };
        let b = dir.path().join("b.txt");
        tokio::join!(mk("a1", a.clone(), 30), mk("a2", a.clone(), 1), mk("b1", b, 1));
        let log = log.lock().expect("log").clone();
        let pos = |s: &str| log.iter().position(|x| x == s).expect("entry");
        assert!(pos("a1-") < pos("a2+"), "{log:?}");
        assert!(pos("b1+") < pos("a1-"), "{log:?}");
        assert!(queues().lock().expect("map").get(&queue_key(&a)).is_none());
    }
}
