//! Prompt cache warming (pi 1.6's `cacheWarming`): after each request of the session, resend
//! it with a one-token output cap shortly before the provider's cache entry expires, while the
//! conversation still extends it and the refresh is expected to pay for itself. Extensions may
//! overrule each decision (`cache_warming_decision`); each refresh's usage is recorded as a
//! `usage` entry.
//!
//! One run at a time: a new request replaces the run, a settled agent moves it to the idle
//! phase, and it stops on its own at its safety limits, when the context changes, or when the
//! session is gone. The scheduling lives in one task per run; the numbers are pi-ai's
//! [`pi_ai::cache_warming`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use pi_agent::AgentMessage;
use pi_ai::cache_warming::{self, WarmingDecision, WarmingPhase};
use pi_ai::{Context, Message, Model, StopReason, StreamFn, StreamOptions};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::agent_session::{lock, AgentSession, Inner};
use super::SessionEvent;
use crate::config::settings::CacheWarmingMode;

/// The one warming run of a session, if any.
pub(crate) struct CacheWarmer {
    state: Mutex<State>,
    next_run: AtomicU64,
}

struct State {
    run: Option<RunControl>,
    inactive: &'static str,
    last_stop: Option<(WarmingDecision, bool)>,
}

/// What the session changes of a run from outside its task.
struct RunControl {
    id: u64,
    started_at: Instant,
    model: Model,
    /// The last refresh happened because an extension overruled pi's decision.
    overridden: bool,
    cancel: CancellationToken,
    phase: WarmingPhase,
    next_warm_at: Instant,
    refreshing: bool,
    /// The transcript the request was sent after (shared with the run's task).
    prefix: Arc<Vec<AgentMessage>>,
}

/// The request a run repeats, and what it was sent after.
struct WarmRequest {
    model: Model,
    context: Context,
    options: StreamOptions,
    /// The transcript when the request was made: the run stays valid while the transcript
    /// extends it.
    prefix: Arc<Vec<AgentMessage>>,
    ttl: Duration,
    delay: Duration,
}

impl Default for CacheWarmer {
    fn default() -> Self {
        CacheWarmer {
            state: Mutex::new(State {
                run: None,
                inactive: "waiting for first request",
                last_stop: None,
            }),
            next_run: AtomicU64::new(1),
        }
    }
}

impl Drop for CacheWarmer {
    fn drop(&mut self) {
        if let Some(run) = lock(&self.state).run.take() {
            run.cancel.cancel();
        }
    }
}

/// The agent's stream function with warming started for every request of this session
/// (compaction and summaries carry no session id and are not warmed, as in pi).
pub(crate) fn warming_stream_fn(inner_fn: StreamFn, session: Weak<Inner>, session_id: String) -> StreamFn {
    let send = inner_fn.clone();
    Arc::new(move |model: &Model, context: &Context, options: StreamOptions| {
        if options.session_id.as_deref() == Some(session_id.as_str()) {
            if let Some(inner) = session.upgrade() {
                let session = AgentSession { inner };
                start(&session, &inner_fn, model, context, &options);
            }
        }
        send(model, context, options)
    })
}

/// Replace the session's run with one that keeps `model`/`context` warm, when the mode, the
/// model's cache lifetime and the request allow it.
fn start(session: &AgentSession, send: &StreamFn, model: &Model, context: &Context, options: &StreamOptions) {
    let warmer = &session.inner.cache_warmer;
    warmer.clear_run();
    if lock(session.settings()).cache_warming_mode() == CacheWarmingMode::Off {
        return warmer.stop("cache warming disabled", None);
    }
    if !cache_warming::is_replayable(model, options.reasoning.is_some()) {
        return warmer.stop("request cannot be replayed safely", None);
    }
    let Some(ttl) = cache_warming::prompt_cache_ttl(model, options.cache_retention) else {
        let reason = if options.cache_retention == pi_ai::CacheRetention::None {
            "request disabled prompt caching"
        } else {
            "cache lifetime unavailable"
        };
        return warmer.stop(reason, None);
    };
    let Some(delay) = cache_warming::refresh_delay(ttl) else {
        return warmer.stop("cache lifetime unavailable", None);
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return warmer.stop("inactive", None);
    };
    let now = Instant::now();
    let id = warmer.next_run.fetch_add(1, Ordering::Relaxed);
    let prefix = Arc::new(session.messages());
    let cancel = CancellationToken::new();
    lock(&warmer.state).run = Some(RunControl {
        id,
        started_at: now,
        model: model.clone(),
        overridden: false,
        cancel: cancel.clone(),
        phase: WarmingPhase::Streaming,
        next_warm_at: now + delay,
        refreshing: false,
        prefix: prefix.clone(),
    });
    let request = WarmRequest {
        model: model.clone(),
        context: context.clone(),
        options: StreamOptions {
            max_tokens: Some(1),
            max_retries: Some(0),
            ..options.clone()
        },
        prefix,
        ttl,
        delay,
    };
    let weak = Arc::downgrade(&session.inner);
    let send = send.clone();
    runtime.spawn(async move {
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = run(weak, id, request, send, cancel.clone()) => {}
        }
    });
}

/// The run's loop: wait for the refresh time, decide, refresh, schedule the next one.
async fn run(session: Weak<Inner>, id: u64, request: WarmRequest, send: StreamFn, cancel: CancellationToken) {
    loop {
        let Some(next_warm_at) = session
            .upgrade()
            .and_then(|inner| inner.cache_warmer.control(id, |run| run.next_warm_at))
        else {
            return;
        };
        tokio::time::sleep_until(next_warm_at).await;
        let Some(inner) = session.upgrade() else { return };
        let session = AgentSession { inner };
        if !refresh(&session, id, &request, &send, &cancel).await {
            return;
        }
        if !session.inner.cache_warmer.schedule(id, &request) {
            return;
        }
    }
}

/// One refresh; `false` when the run ended.
async fn refresh(
    session: &AgentSession,
    id: u64,
    request: &WarmRequest,
    send: &StreamFn,
    cancel: &CancellationToken,
) -> bool {
    let warmer = &session.inner.cache_warmer;
    if !warmer.validate(session, id, request) || warmer.deadline_missed(id, request) {
        return false;
    }
    let Some(phase) = warmer.control(id, |run| run.phase) else {
        return false;
    };
    let decision = cache_warming::evaluate(&request.model, last_prompt_tokens(session), phase);
    let ours = if decision.warm { "warm" } else { "stop" };
    let payload = json!({
        "warmCost": decision.warm_cost,
        "missCost": decision.miss_cost,
        "continuationProbability": decision.continuation_probability,
        "action": ours,
    });
    // A failing extension leaves pi's own decision.
    let warm = session
        .extensions()
        .cache_warming_decision(payload)
        .await
        .unwrap_or(decision.warm);
    if !warmer.validate(session, id, request) || warmer.deadline_missed(id, request) {
        return false;
    }
    let overridden = warm != decision.warm;
    if !warm {
        let reason = if overridden {
            "stopped by extension"
        } else if decision.economics_available {
            "expected savings below threshold"
        } else {
            "cache economics unavailable"
        };
        warmer.stop(reason, Some((decision, overridden)));
        return false;
    }
    warmer.set_refreshing(id, true, overridden);
    let options = StreamOptions {
        cancel: cancel.child_token(),
        ..request.options.clone()
    };
    let message = send(&request.model, &request.context, options).result().await;
    if !warmer.validate(session, id, request) {
        return false;
    }
    if !matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
        let model_name = message.response_model.as_deref().unwrap_or(&message.model);
        let note = overridden.then_some("extension override");
        let written = session.with_store(|s| {
            s.append_usage("cache_warm", &message.provider, model_name, &message.usage, note)
                .map(|entry| serde_json::to_value(&entry).ok())
        });
        match written {
            Ok(Some(entry)) => session.emit(SessionEvent::EntryAppended { entry }).await,
            Ok(None) => {}
            Err(e) => {
                lock(&session.inner.persist_error).get_or_insert(e.to_string());
            }
        }
    }
    warmer.set_refreshing(id, false, overridden);
    true
}

impl AgentSession {
    /// `cacheWarming`'s mode name and the warmer's status line, for `/session`.
    pub fn cache_warming_status(&self) -> (&'static str, String) {
        let mode = lock(self.settings()).cache_warming_mode();
        let current = self.warming_run_is_current();
        let status = self
            .inner
            .cache_warmer
            .status_text(mode, last_prompt_tokens(self), current);
        (mode.as_str(), status)
    }

    /// Whether the warmer's run (if any) still matches the session: a model switch or a
    /// rewritten transcript makes it stale before its next refresh notices.
    fn warming_run_is_current(&self) -> bool {
        let run = lock(&self.inner.cache_warmer.state)
            .run
            .as_ref()
            .map(|r| (r.model.clone(), r.prefix.clone()));
        run.is_none_or(|(model, prefix)| is_current(self, &model, &prefix))
    }

    /// What a cache miss and a refresh would cost (`miss`, `warm`), when the warmer's status
    /// carries a decision with known economics: the live run's, or the one it stopped on.
    pub fn cache_warming_costs(&self) -> Option<(f64, f64)> {
        let mode = lock(self.settings()).cache_warming_mode();
        let decision =
            self.inner
                .cache_warmer
                .status_decision(mode, last_prompt_tokens(self), self.warming_run_is_current())?;
        decision
            .economics_available
            .then_some((decision.miss_cost, decision.warm_cost))
    }
}

/// The prompt size of the last real request, as its provider reported it.
fn last_prompt_tokens(session: &AgentSession) -> u64 {
    session.with_messages(|messages| {
        messages
            .iter()
            .rev()
            .find_map(AgentMessage::as_assistant)
            .map_or(0, |a| a.usage.input + a.usage.cache_read + a.usage.cache_write)
    })
}

/// The same message object (messages are shared, so a kept message is the same allocation).
fn same_message(a: &AgentMessage, b: &AgentMessage) -> bool {
    match (a, b) {
        (AgentMessage::Llm(Message::User(x)), AgentMessage::Llm(Message::User(y))) => Arc::ptr_eq(x, y),
        (AgentMessage::Llm(Message::Assistant(x)), AgentMessage::Llm(Message::Assistant(y))) => Arc::ptr_eq(x, y),
        (AgentMessage::Llm(Message::ToolResult(x)), AgentMessage::Llm(Message::ToolResult(y))) => Arc::ptr_eq(x, y),
        (AgentMessage::Custom(x), AgentMessage::Custom(y)) => x == y,
        _ => false,
    }
}

impl CacheWarmer {
    /// The run's state as `/session` shows it (pi 1.6's wording).
    pub fn status_text(&self, mode: CacheWarmingMode, prompt_tokens: u64, current: bool) -> String {
        if mode == CacheWarmingMode::Off {
            return "Inactive (cache warming disabled)".to_string();
        }
        let state = lock(&self.state);
        let Some(run) = &state.run else {
            return match state.last_stop {
                Some((decision, overridden)) if decision.economics_available || overridden => {
                    format!("Stopped ({})", decision_details(&decision, overridden))
                }
                _ => format!("Inactive ({})", state.inactive),
            };
        };
        if !current {
            return "Inactive (conversation context changed)".to_string();
        }
        let decision = cache_warming::evaluate(&run.model, prompt_tokens, run.phase);
        if !decision.economics_available && !run.refreshing {
            return "Inactive (cache economics unavailable)".to_string();
        }
        let details = decision_details(&decision, run.overridden);
        if run.refreshing {
            return format!("Warming cache ({details})");
        }
        let left = run.next_warm_at.saturating_duration_since(Instant::now());
        format!("{} ({details})", decision_time(left))
    }

    /// The decision the status line is about: none when warming is off or inactive without
    /// one, the live run's while it has economics (or is refreshing), else the stop's.
    fn status_decision(&self, mode: CacheWarmingMode, prompt_tokens: u64, current: bool) -> Option<WarmingDecision> {
        if mode == CacheWarmingMode::Off {
            return None;
        }
        let state = lock(&self.state);
        let Some(run) = &state.run else {
            return state.last_stop.map(|(decision, _)| decision);
        };
        if !current {
            return None;
        }
        let decision = cache_warming::evaluate(&run.model, prompt_tokens, run.phase);
        (decision.economics_available || run.refreshing).then_some(decision)
    }

    /// The agent settled: a run keeps going into the idle phase (mode `idle`) or ends.
    pub(crate) fn on_agent_settled(&self, mode: CacheWarmingMode) {
        let mut state = lock(&self.state);
        let Some(run) = state.run.as_mut() else { return };
        if mode != CacheWarmingMode::Idle {
            drop(state);
            return self.stop("agent run settled", None);
        }
        run.phase = WarmingPhase::Idle;
        let deadline = run.started_at + cache_warming::MAX_IDLE_AGE;
        if run.next_warm_at > deadline || Instant::now() >= deadline {
            drop(state);
            self.stop("30-minute idle safety limit reached", None);
        }
    }

    /// End the current run (a session replacement or dispose).
    pub(crate) fn cancel(&self) {
        self.stop("inactive", None);
    }

    fn control<T>(&self, id: u64, f: impl FnOnce(&RunControl) -> T) -> Option<T> {
        lock(&self.state).run.as_ref().filter(|r| r.id == id).map(f)
    }

    fn set_refreshing(&self, id: u64, refreshing: bool, overridden: bool) {
        if let Some(run) = lock(&self.state).run.as_mut().filter(|r| r.id == id) {
            run.refreshing = refreshing;
            run.overridden = overridden;
        }
    }

    fn clear_run(&self) {
        if let Some(run) = lock(&self.state).run.take() {
            run.cancel.cancel();
        }
    }

    fn stop(&self, reason: &'static str, decision: Option<(WarmingDecision, bool)>) {
        self.clear_run();
        let mut state = lock(&self.state);
        state.inactive = reason;
        state.last_stop = decision;
    }

    /// Whether run `id` is still the current one and worth keeping; stops it when not.
    fn validate(&self, session: &AgentSession, id: u64, request: &WarmRequest) -> bool {
        let Some(phase) = self.control(id, |run| run.phase) else {
            return false;
        };
        let mode = lock(session.settings()).cache_warming_mode();
        let reason = match mode {
            CacheWarmingMode::Off => Some("cache warming disabled"),
            CacheWarmingMode::Streaming if phase == WarmingPhase::Idle => Some("agent run settled"),
            _ if !is_current(session, &request.model, &request.prefix) => Some("conversation context changed"),
            _ => None,
        };
        match reason {
            Some(reason) => {
                self.stop(reason, None);
                false
            }
            None => true,
        }
    }

    /// A refresh that comes too late (a suspended machine, a stalled runtime) would pay for a
    /// full cache write, not a warm: the run ends instead.
    fn deadline_missed(&self, id: u64, request: &WarmRequest) -> bool {
        let Some(next_warm_at) = self.control(id, |run| run.next_warm_at) else {
            return true;
        };
        let margin = (request.ttl.saturating_sub(request.delay)) / 2;
        if Instant::now() <= next_warm_at + margin {
            return false;
        }
        self.stop("cache refresh deadline missed", None);
        true
    }

    /// Plan run `id`'s next refresh; `false` (and the run stopped) past its safety limit.
    fn schedule(&self, id: u64, request: &WarmRequest) -> bool {
        let next = Instant::now() + request.delay;
        let Some((phase, started_at)) = self.control(id, |run| (run.phase, run.started_at)) else {
            return false;
        };
        let (limit, reason) = match phase {
            WarmingPhase::Idle => (cache_warming::MAX_IDLE_AGE, "30-minute idle safety limit reached"),
            WarmingPhase::Streaming => (cache_warming::MAX_AGE, "one-hour safety limit reached"),
        };
        if next > started_at + limit {
            self.stop(reason, None);
            return false;
        }
        if let Some(run) = lock(&self.state).run.as_mut().filter(|r| r.id == id) {
            run.next_warm_at = next;
        }
        true
    }
}

/// Dollars as pi shows them: three decimals, a minus before the sign.
fn dollars(value: f64) -> String {
    if value < 0.0 {
        format!("-${:.3}", value.abs())
    } else {
        format!("${value:.3}")
    }
}

/// Why the run warms or stops: the economics and the action, or the extension's override.
fn decision_details(decision: &WarmingDecision, overridden: bool) -> String {
    let economics = if decision.economics_available {
        let percent = (decision.continuation_probability * 100.0).round();
        let running = if decision.phase == WarmingPhase::Streaming {
            " while agent is running"
        } else {
            ""
        };
        let comparison = if decision.warm { ">=" } else { "<" };
        format!(
            "{percent}% continuation probability{running}, expected savings {} {comparison} ${:.3}",
            dollars(decision.expected_savings),
            cache_warming::MINIMUM_EXPECTED_SAVINGS
        )
    } else {
        "cache economics unavailable".to_string()
    };
    if overridden {
        format!("extension override, {economics}")
    } else {
        format!("{economics} -> {}", if decision.warm { "warm" } else { "stop" })
    }
}

/// `Decision in 4m 30s`, or `Decision now` when it is due.
fn decision_time(left: Duration) -> String {
    if left.is_zero() {
        return "Decision now".to_string();
    }
    let mut seconds = left.as_millis().div_ceil(1000) as u64;
    let hours = seconds / 3600;
    seconds %= 3600;
    let minutes = seconds / 60;
    seconds %= 60;
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes}m"));
    }
    if seconds > 0 || parts.is_empty() {
        parts.push(format!("{seconds}s"));
    }
    format!("Decision in {}", parts.join(" "))
}

/// The session still uses the request's model and its transcript extends the request's.
fn is_current(session: &AgentSession, model: &Model, prefix: &[AgentMessage]) -> bool {
    if !session.model().is_some_and(|m| m.same_as(model)) {
        return false;
    }
    session.with_messages(|current| {
        current.len() >= prefix.len() && prefix.iter().zip(current).all(|(kept, now)| same_message(kept, now))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(warm: bool, phase: WarmingPhase, savings: f64) -> WarmingDecision {
        WarmingDecision {
            phase,
            warm_cost: 0.01,
            miss_cost: 0.5,
            continuation_probability: if phase == WarmingPhase::Idle { 0.15 } else { 1.0 },
            expected_savings: savings,
            economics_available: true,
            warm,
        }
    }

    #[test]
    fn decisions_read_as_pi_16_writes_them() {
        assert_eq!(
            decision_details(&decision(true, WarmingPhase::Streaming, 0.49), false),
            "100% continuation probability while agent is running, expected savings $0.490 >= $0.050 -> warm"
        );
        assert_eq!(
            decision_details(&decision(false, WarmingPhase::Idle, -0.001), true),
            "extension override, 15% continuation probability, expected savings -$0.001 < $0.050"
        );
        let mut unknown = decision(false, WarmingPhase::Idle, 0.0);
        unknown.economics_available = false;
        assert_eq!(decision_details(&unknown, false), "cache economics unavailable -> stop");
    }

    #[test]
    fn the_next_decision_is_counted_down_in_whole_seconds() {
        assert_eq!(decision_time(Duration::ZERO), "Decision now");
        assert_eq!(decision_time(Duration::from_millis(270_000)), "Decision in 4m 30s");
        assert_eq!(decision_time(Duration::from_millis(3_600_500)), "Decision in 1h 1s");
        assert_eq!(decision_time(Duration::from_secs(120)), "Decision in 2m");
    }
}
