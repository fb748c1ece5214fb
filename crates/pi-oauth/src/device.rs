//! Polling a device-code grant (RFC 8628) until the user approves it, it fails or it expires.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::OAuthError;

/// One poll's outcome.
pub(crate) enum Poll<T> {
    Complete(T),
    Pending,
    /// Poll less often: by the server's new interval, else 5 s more (RFC 8628 §3.5).
    SlowDown(Option<u64>),
    Failed(String),
}

const MINIMUM_INTERVAL: Duration = Duration::from_secs(1);
/// RFC 8628 §3.2: without an `interval` the client waits 5 s.
const DEFAULT_INTERVAL_SECONDS: u64 = 5;

/// Poll every `interval_seconds` until `expires_in_seconds` pass.
pub(crate) async fn poll_device_flow<T, F, Fut>(
    interval_seconds: Option<u64>,
    expires_in_seconds: Option<u64>,
    wait_before_first_poll: bool,
    mut poll: F,
) -> Result<T, OAuthError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll<T>, OAuthError>>,
{
    let deadline = expires_in_seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let mut interval = Duration::from_secs(interval_seconds.unwrap_or(DEFAULT_INTERVAL_SECONDS)).max(MINIMUM_INTERVAL);
    let mut slowed = false;
    let remaining = |deadline: Option<Instant>| deadline.map(|d| d.saturating_duration_since(Instant::now()));
    if wait_before_first_poll {
        tokio::time::sleep(remaining(deadline).map_or(interval, |r| r.min(interval))).await;
    }
    loop {
        if remaining(deadline).is_some_and(|r| r.is_zero()) {
            break;
        }
        match poll().await? {
            Poll::Complete(value) => return Ok(value),
            Poll::Failed(message) => return Err(OAuthError::Invalid(message)),
            Poll::Pending => {}
            Poll::SlowDown(server_interval) => {
                slowed = true;
                interval = match server_interval.filter(|s| *s > 0) {
                    Some(s) => Duration::from_secs(s).max(MINIMUM_INTERVAL),
                    None => interval + Duration::from_secs(5),
                };
            }
        }
        let wait = remaining(deadline).map_or(interval, |r| r.min(interval));
        if wait.is_zero() {
            break;
        }
        tokio::time::sleep(wait).await;
    }
    Err(OAuthError::Timeout(if slowed {
        "Device flow timed out after one or more slow_down responses. This is often caused by clock drift in WSL or VM environments. Please sync or restart the VM clock and try again.".into()
    } else {
        "Device flow timed out".into()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(start_paused = true)]
    async fn pending_then_complete_and_expiry() {
        let calls = AtomicUsize::new(0);
        let value = poll_device_flow(Some(1), Some(60), false, || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok(if n < 2 { Poll::Pending } else { Poll::Complete(n) }) }
        })
        .await
        .expect("completes");
        assert_eq!(value, 2);
        let never = poll_device_flow::<(), _, _>(Some(1), Some(3), true, || async { Ok(Poll::SlowDown(None)) }).await;
        match never {
            Err(OAuthError::Timeout(m)) => assert!(m.contains("slow_down"), "{m}"),
            _ => panic!("expected a timeout"),
        }
        let failed =
            poll_device_flow::<(), _, _>(None, None, false, || async { Ok(Poll::Failed("denied".into())) }).await;
        assert!(matches!(failed, Err(OAuthError::Invalid(m)) if m == "denied"));
    }
}
