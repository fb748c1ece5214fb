//! The numbers of prompt cache warming: when a refresh is due, whether a request can be
//! replayed without changing its cache key, and whether a refresh pays for itself. The host
//! (the coding agent's session) owns the scheduling; this module owns only the policy.

use std::time::Duration;

use crate::{calculate_cost, CacheRetention, Model, Usage};

/// A streaming-phase run never warms past this long after the request that started it.
pub const MAX_AGE: Duration = Duration::from_secs(60 * 60);
/// An idle run stops sooner: the chance of a next request fades with time.
pub const MAX_IDLE_AGE: Duration = Duration::from_secs(30 * 60);
/// A refresh is sent only when it is expected to save at least this many dollars.
pub const MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// The chance that a real request follows before the entry expires while the agent is idle.
/// While it runs, the next request is certain.
pub const IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;

/// Whether the agent is running (its next request is coming) or waiting for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmingPhase {
    Streaming,
    Idle,
}

/// What a refresh would cost and save, and the action that follows from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmingDecision {
    pub phase: WarmingPhase,
    /// A refresh: the prompt read from the cache plus one output token.
    pub warm_cost: f64,
    /// What losing the entry costs: writing (or reading uncached) the prompt again, minus a hit.
    pub miss_cost: f64,
    pub continuation_probability: f64,
    pub expected_savings: f64,
    /// False when the model has no prices or the prompt size is unknown.
    pub economics_available: bool,
    pub warm: bool,
}

/// When to refresh an entry that lives `ttl`: at 90% of it, keeping at least ten seconds of
/// margin. `None` for entries too short-lived to refresh.
pub fn refresh_delay(ttl: Duration) -> Option<Duration> {
    let ttl_ms = ttl.as_millis() as u64;
    if ttl_ms <= 10_000 {
        return None;
    }
    let delay = ((ttl_ms as f64 * 0.9).min((ttl_ms - 10_000) as f64)).floor() as u64;
    Some(Duration::from_millis(delay.max(1)))
}

/// How long the entry a request writes lives, from the model's `promptCache` tier for the
/// retention the request used; `None` without caching or a known lifetime.
pub fn prompt_cache_ttl(model: &Model, retention: CacheRetention) -> Option<Duration> {
    let seconds = match retention {
        CacheRetention::None => return None,
        CacheRetention::Short => model.prompt_cache?.short?,
        CacheRetention::Long => model.prompt_cache?.long?,
    };
    (seconds.is_finite() && seconds > 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// Whether replaying the request with a one-token output cap leaves its cache entry as it was.
/// Anthropic's budget-based thinking derives the budget from `max_tokens`, which is part of the
/// cache key, so such requests cannot be replayed; adaptive thinking can.
pub fn is_replayable(model: &Model, thinking: bool) -> bool {
    if !thinking || model.api != "anthropic-messages" {
        return true;
    }
    model
        .compat
        .as_ref()
        .and_then(|c| c.get("forceAdaptiveThinking"))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// Whether refreshing the entry of a `prompt_tokens`-token request pays for itself in `phase`.
pub fn evaluate(model: &Model, prompt_tokens: u64, phase: WarmingPhase) -> WarmingDecision {
    let price = |usage: Usage| {
        let mut usage = usage;
        calculate_cost(model, &mut usage).total
    };
    let hit = price(Usage {
        cache_read: prompt_tokens,
        ..Default::default()
    });
    let miss = price(if model.cost.cache_write > 0.0 {
        Usage {
            cache_write: prompt_tokens,
            ..Default::default()
        }
    } else {
        Usage {
            input: prompt_tokens,
            ..Default::default()
        }
    });
    let warm_cost = price(Usage {
        cache_read: prompt_tokens,
        output: 1,
        ..Default::default()
    });
    let miss_cost = (miss - hit).max(0.0);
    let continuation_probability = match phase {
        WarmingPhase::Idle => IDLE_CONTINUATION_PROBABILITY,
        WarmingPhase::Streaming => 1.0,
    };
    let expected_savings = continuation_probability * miss_cost - warm_cost;
    WarmingDecision {
        phase,
        warm_cost,
        miss_cost,
        continuation_probability,
        expected_savings,
        economics_available: prompt_tokens > 0 && (hit > 0.0 || miss > 0.0),
        warm: expected_savings >= MINIMUM_EXPECTED_SAVINGS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ModelCost, PromptCache};

    fn model(cost: ModelCost, prompt_cache: Option<PromptCache>) -> Model {
        let mut m = crate::get_model("anthropic", "claude-sonnet-4-5")
            .cloned()
            .unwrap_or_else(|| crate::builtin_models()[0].clone());
        m.cost = cost;
        m.prompt_cache = prompt_cache;
        m
    }

    #[test]
    fn refreshes_come_at_ninety_percent_of_the_lifetime_with_ten_seconds_to_spare() {
        assert_eq!(refresh_delay(Duration::from_secs(300)), Some(Duration::from_secs(270)));
        // Ten seconds of margin wins over 90% for short entries.
        assert_eq!(refresh_delay(Duration::from_secs(20)), Some(Duration::from_secs(10)));
        assert_eq!(refresh_delay(Duration::from_secs(10)), None);
    }

    #[test]
    fn the_lifetime_follows_the_retention_of_the_request() {
        let m = model(
            ModelCost::default(),
            Some(PromptCache {
                short: Some(300.0),
                long: Some(3600.0),
            }),
        );
        assert_eq!(
            prompt_cache_ttl(&m, CacheRetention::Short),
            Some(Duration::from_secs(300))
        );
        assert_eq!(
            prompt_cache_ttl(&m, CacheRetention::Long),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(prompt_cache_ttl(&m, CacheRetention::None), None);
        assert_eq!(
            prompt_cache_ttl(&model(ModelCost::default(), None), CacheRetention::Short),
            None
        );
    }

    #[test]
    fn a_large_prompt_is_worth_warming_while_running_and_a_small_one_is_not_when_idle() {
        let cost = ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: Vec::new(),
        };
        let m = model(cost, None);
        let running = evaluate(&m, 100_000, WarmingPhase::Streaming);
        assert!(running.warm && running.economics_available, "{running:?}");
        // 100k tokens: a miss writes $0.375, a hit reads $0.03.
        assert!((running.miss_cost - 0.345).abs() < 1e-9, "{running:?}");
        let idle = evaluate(&m, 100_000, WarmingPhase::Idle);
        // 15% of $0.345 minus the refresh is below five cents.
        assert!(!idle.warm, "{idle:?}");
        assert!(!evaluate(&m, 0, WarmingPhase::Streaming).economics_available);
        assert!(!evaluate(&model(ModelCost::default(), None), 1000, WarmingPhase::Streaming).economics_available);
    }

    #[test]
    fn budget_thinking_on_anthropic_cannot_be_replayed() {
        let mut m = model(ModelCost::default(), None);
        m.api = "anthropic-messages".into();
        m.compat = None;
        assert!(!is_replayable(&m, true));
        assert!(is_replayable(&m, false));
        m.compat = Some(serde_json::json!({"forceAdaptiveThinking": true}));
        assert!(is_replayable(&m, true));
    }
}
