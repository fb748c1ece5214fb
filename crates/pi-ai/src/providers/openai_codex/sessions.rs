//! What the Codex WebSocket transport keeps between the requests of a session: one open socket
//! per session and account (reused for 5 minutes of quiet, renewed after 45 minutes of age, as
//! the server ends sockets at 60), the last request and reply that let the next request send
//! only its new input after `previous_response_id`, and the sessions that fell back to SSE.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use serde_json::Value;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

use super::socket::Socket;

/// An idle socket is closed after this long.
const IDLE_TTL: Duration = Duration::from_secs(5 * 60);
/// A socket this old is replaced before the next request.
const MAX_AGE: Duration = Duration::from_secs(45 * 60);
/// How long closing waits for the close frame to be written.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The last exchange on a socket: the next request of the session may continue from it.
#[derive(Debug, Clone)]
pub(crate) struct Continuation {
    /// The last request's full body (before any delta was taken).
    pub body: Value,
    pub response_id: String,
    /// The reply as the next request's input replays it.
    pub response_items: Vec<Value>,
}

/// A cached socket and its state.
pub(crate) struct Entry {
    pub socket: Socket,
    pub created: Instant,
    pub released: Instant,
    pub continuation: Option<Continuation>,
}

enum Slot {
    /// A request uses the socket; its lease id.
    Busy(u64),
    Idle(Box<Entry>),
}

type Key = (String, String);

struct Registry {
    slots: HashMap<Key, Slot>,
    /// Sessions whose WebSocket failed: they stay on SSE.
    sse_only: HashSet<String>,
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            Mutex::new(Registry {
                slots: HashMap::new(),
                sse_only: HashSet::new(),
            })
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn next_lease_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether an earlier failure put this session on SSE.
pub(crate) fn is_sse_only(session: &str) -> bool {
    registry().sse_only.contains(session)
}

/// Keep this session on SSE from now on.
pub(crate) fn mark_sse_only(session: &str) {
    registry().sse_only.insert(session.to_string());
}

/// The right to use a session's socket slot for one request. Dropped without
/// [`Lease::release`] (a failed or cancelled request), it frees the slot.
pub(crate) struct Lease {
    key: Key,
    id: u64,
}

/// What [`acquire`] found for a session.
pub(crate) enum Acquired {
    /// The session's idle socket, to reuse.
    Reused(Lease, Box<Entry>),
    /// No usable socket: connect one and keep it under this lease.
    Fresh(Lease),
    /// Another request of the session holds its socket: use a socket of your own, uncached.
    Busy,
}

/// Take the session's socket slot.
pub(crate) fn acquire(session: &str, account: &str) -> Acquired {
    let key = (session.to_string(), account.to_string());
    let id = next_lease_id();
    let mut registry = registry();
    let previous = registry.slots.remove(&key);
    let found = match previous {
        Some(Slot::Busy(holder)) => {
            registry.slots.insert(key, Slot::Busy(holder));
            return Acquired::Busy;
        }
        Some(Slot::Idle(entry)) => Some(entry),
        None => None,
    };
    registry.slots.insert(key.clone(), Slot::Busy(id));
    drop(registry);
    let lease = Lease { key, id };
    match found {
        Some(mut entry) => {
            if usable(&mut entry) {
                Acquired::Reused(lease, entry)
            } else {
                close_in_background(entry.socket, "connection_age_limit");
                Acquired::Fresh(lease)
            }
        }
        None => Acquired::Fresh(lease),
    }
}

impl Lease {
    /// Put the socket back for the session's next request.
    pub(crate) fn release(self, mut entry: Box<Entry>) {
        let released = Instant::now();
        entry.released = released;
        let mut registry = registry();
        if matches!(registry.slots.get(&self.key), Some(Slot::Busy(id)) if *id == self.id) {
            registry.slots.insert(self.key.clone(), Slot::Idle(entry));
            drop(registry);
            schedule_idle_close(self.key.clone(), released);
        } else {
            drop(registry);
            close_quietly(entry.socket);
        }
        // Released: the slot now belongs to the entry, not to this lease.
        std::mem::forget(self);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut registry = registry();
        if matches!(registry.slots.get(&self.key), Some(Slot::Busy(id)) if *id == self.id) {
            registry.slots.remove(&self.key);
        }
    }
}

/// Close every cached socket of `session` (all sessions if `None`), as pi 1.6 does when a
/// session is disposed: a normal close with the reason `debug_close`. Waits (at most two
/// seconds) for the close frames to go out, so a process that exits next still sends them.
/// Sockets in use by a request are left to it.
pub async fn close_sessions(session: Option<&str>) {
    let closed: Vec<Box<Entry>> = {
        let mut registry = registry();
        let keys: Vec<Key> = registry
            .slots
            .keys()
            .filter(|(s, _)| session.is_none_or(|wanted| s == wanted))
            .cloned()
            .collect();
        keys.into_iter()
            .filter_map(|k| match registry.slots.remove(&k) {
                Some(Slot::Idle(entry)) => Some(entry),
                Some(busy) => {
                    registry.slots.insert(k, busy);
                    None
                }
                None => None,
            })
            .collect()
    };
    let closes = closed.into_iter().map(|entry| close_with(entry.socket, "debug_close"));
    let _ = tokio::time::timeout(CLOSE_WAIT, futures::future::join_all(closes)).await;
}

/// Young enough, not idle too long, and still open (a close or error the server sent while
/// the socket sat idle is read now, without waiting).
fn usable(entry: &mut Entry) -> bool {
    if entry.created.elapsed() >= MAX_AGE || entry.released.elapsed() >= IDLE_TTL {
        return false;
    }
    loop {
        match entry.socket.next().now_or_never() {
            None => return true,
            Some(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Some(Some(Ok(Message::Text(_) | Message::Binary(_) | Message::Frame(_)))) => continue,
            Some(_) => return false,
        }
    }
}

/// Send a close frame in the background (where a runtime runs), or just drop the socket.
pub(crate) fn close_quietly(socket: Socket) {
    close_in_background(socket, "done");
}

fn close_in_background(socket: Socket, reason: &'static str) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(async move {
            let _ = tokio::time::timeout(CLOSE_WAIT, close_with(socket, reason)).await;
        });
    }
}

/// A normal close (1000) with `reason`, as pi 1.6 closes its sockets.
async fn close_with(mut socket: Socket, reason: &'static str) {
    let frame = CloseFrame {
        code: CloseCode::Normal,
        reason: reason.into(),
    };
    let _ = socket.close(Some(frame)).await;
}

/// Close the session's socket once it has sat idle for [`IDLE_TTL`] (unless a request took it
/// in the meantime), as pi 1.6's idle timer does, so a quiet session holds no connection.
fn schedule_idle_close(key: Key, released: Instant) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    handle.spawn(async move {
        tokio::time::sleep(IDLE_TTL).await;
        let expired = {
            let mut registry = registry();
            match registry.slots.get(&key) {
                Some(Slot::Idle(entry)) if entry.released == released => registry.slots.remove(&key),
                _ => None,
            }
        };
        if let Some(Slot::Idle(entry)) = expired {
            close_in_background(entry.socket, "idle_timeout");
        }
    });
}

/// The body to send over a socket whose last exchange was `continuation`: only the input
/// after the last request's input and reply, with `previous_response_id`, when everything
/// else is unchanged; `None` when the full body must go.
pub(crate) fn delta_body(body: &Value, continuation: &Continuation) -> Option<Value> {
    let without_input = |v: &Value| {
        let mut map = v.as_object().cloned().unwrap_or_default();
        map.remove("input");
        map.remove("previous_response_id");
        map
    };
    if without_input(body) != without_input(&continuation.body) {
        return None;
    }
    let empty = Vec::new();
    let input = |v: &Value| v.get("input").and_then(Value::as_array).unwrap_or(&empty).clone();
    let current = input(body);
    let mut baseline = input(&continuation.body);
    baseline.extend(continuation.response_items.iter().cloned());
    if current.len() < baseline.len() || current[..baseline.len()] != baseline[..] {
        return None;
    }
    let mut delta = body.as_object().cloned().unwrap_or_default();
    delta.insert(
        "previous_response_id".into(),
        Value::String(continuation.response_id.clone()),
    );
    delta.insert("input".into(), Value::Array(current[baseline.len()..].to_vec()));
    Some(Value::Object(delta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_that_extends_the_last_one_sends_only_its_new_input() {
        let continuation = Continuation {
            body: json!({"model": "m", "input": [{"role": "user", "content": "a"}], "tools": []}),
            response_id: "resp_1".into(),
            response_items: vec![json!({"type": "message", "role": "assistant"})],
        };
        let next = json!({"model": "m", "input": [
            {"role": "user", "content": "a"},
            {"type": "message", "role": "assistant"},
            {"role": "user", "content": "b"},
        ], "tools": []});
        let delta = delta_body(&next, &continuation).expect("a delta");
        assert_eq!(delta["input"], json!([{"role": "user", "content": "b"}]));
        assert_eq!(delta["previous_response_id"], "resp_1");
        // Keys keep the body's order; the continuation id comes last, as pi 1.6 spreads it.
        let keys: Vec<&String> = delta.as_object().map(|m| m.keys().collect()).unwrap_or_default();
        assert_eq!(keys, ["model", "input", "tools", "previous_response_id"]);

        let changed_tools = json!({"model": "m", "input": next["input"], "tools": [{"name": "x"}]});
        assert!(delta_body(&changed_tools, &continuation).is_none());
        let rewritten = json!({"model": "m", "input": [{"role": "user", "content": "z"}], "tools": []});
        assert!(delta_body(&rewritten, &continuation).is_none());
    }
}
