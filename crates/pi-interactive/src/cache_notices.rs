//! The transcript notices of `showCacheMissNotices`, as pi 1.6 words them: a reply whose
//! prompt was billed again instead of read from the cache (`Cache miss: 25k tokens
//! re-billed (~$0.07)`, naming a model switch or an idle gap past the cache lifetime), and
//! what a compaction or branch summary cost. Misses are not stored: they are worked out
//! again from the replies' usage whenever the transcript is built. Also the reasoning a
//! provider reported it withheld from the model (`Anthropic dropped 2 thinking blocks`), shown
//! live only, and what cache warming cost (`Cache warmed: $0.012`), stored as usage entries.

use std::collections::HashMap;

use pi_agent::AgentMessage;
use pi_ai::{AssistantMessage, Message};
use pi_session::{Entry, EntryKind};
use serde_json::Value;

use super::footer::format_tokens;

/// The prompt cache's lifetime: a longer idle gap is named as the likely cause of a miss.
const CACHE_TTL_MS: i64 = 5 * 60 * 1000;
/// Misses this small are cache breakpoint granularity, not worth counting.
const NOISE_FLOOR_TOKENS: u64 = 1024;

/// The request before the one being judged.
#[derive(Debug, Clone)]
struct Previous {
    prompt_tokens: u64,
    model_key: String,
    timestamp: i64,
    /// The provider has reported cache activity in this session.
    reported_cache: bool,
}

/// One counted cache miss.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    pub missed_tokens: u64,
    pub missed_cost: f64,
    pub idle_ms: i64,
    pub model_changed: bool,
}

fn prompt_tokens(u: &pi_ai::Usage) -> u64 {
    u.input + u.cache_read + u.cache_write
}

fn detect(prev: Option<&Previous>, m: &AssistantMessage, cache_read_rate: &dyn Fn(&str, &str) -> f64) -> Option<Miss> {
    let u = &m.usage;
    let prompt = prompt_tokens(u);
    let prev = prev?;
    // A reply without cache figures only counts once the provider has reported caching.
    if prompt == 0 || (u.cache_read + u.cache_write == 0 && !prev.reported_cache) {
        return None;
    }
    let missed = prev.prompt_tokens.min(prompt).saturating_sub(u.cache_read);
    if missed <= NOISE_FLOOR_TOKENS {
        return None;
    }
    // Missed tokens were billed at this reply's paid rate instead of the cache-read rate.
    let paid = u.input + u.cache_write;
    let paid_rate = if paid > 0 {
        (u.cost.input + u.cost.cache_write) / paid as f64
    } else {
        0.0
    };
    let read_rate = if u.cache_read > 0 {
        u.cost.cache_read / u.cache_read as f64
    } else {
        cache_read_rate(&m.provider, &m.model) / 1_000_000.0
    };
    Some(Miss {
        missed_tokens: missed,
        missed_cost: missed as f64 * (paid_rate - read_rate).max(0.0),
        idle_ms: (m.timestamp - prev.timestamp).max(0),
        model_changed: format!("{}/{}", m.provider, m.model) != prev.model_key,
    })
}

fn previous(m: &AssistantMessage, reported: bool) -> Option<Previous> {
    let prompt = prompt_tokens(&m.usage);
    (prompt > 0).then(|| Previous {
        prompt_tokens: prompt,
        model_key: format!("{}/{}", m.provider, m.model),
        timestamp: m.timestamp,
        reported_cache: reported || m.usage.cache_read + m.usage.cache_write > 0,
    })
}

fn num(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Walk the entries: the last request seen and every counted miss (by reply timestamp).
/// `skip` leaves out a reply (one just finished that may already be recorded).
fn scan(
    entries: &[Entry],
    skip: Option<&AssistantMessage>,
    rate: &dyn Fn(&str, &str) -> f64,
) -> (Option<Previous>, HashMap<i64, Miss>) {
    let mut prev: Option<Previous> = None;
    let mut misses = HashMap::new();
    for e in entries {
        step(&mut prev, e, skip, rate, &mut |a, miss| {
            misses.insert(a.timestamp, miss);
        });
    }
    (prev, misses)
}

/// One entry of the walk: moves `prev` on and reports a reply's miss to `on_miss`.
fn step(
    prev: &mut Option<Previous>,
    e: &Entry,
    skip: Option<&AssistantMessage>,
    rate: &dyn Fn(&str, &str) -> f64,
    on_miss: &mut dyn FnMut(&AssistantMessage, Miss),
) {
    match &e.kind {
        // The context changed on purpose: the next prompt is new content.
        EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. } => *prev = None,
        EntryKind::Unknown { type_name, fields } if type_name == "usage" => {
            let warm = fields.get("kind").and_then(Value::as_str) == Some("cache_warm");
            if let (true, Some(u)) = (warm, fields.get("usage")) {
                let prompt = num(u, "input") + num(u, "cacheRead") + num(u, "cacheWrite");
                if prompt > 0 {
                    let field = |k: &str| fields.get(k).and_then(Value::as_str).unwrap_or("");
                    let timestamp =
                        chrono::DateTime::parse_from_rfc3339(&e.timestamp).map_or(0, |t| t.timestamp_millis());
                    *prev = Some(Previous {
                        prompt_tokens: prompt,
                        model_key: format!("{}/{}", field("provider"), field("model")),
                        timestamp,
                        reported_cache: true,
                    });
                }
            }
        }
        EntryKind::Message {
            message: AgentMessage::Llm(Message::Assistant(a)),
            ..
        } => {
            if skip.is_some_and(|s| s.timestamp == a.timestamp && s.usage == a.usage) {
                return;
            }
            if let Some(miss) = detect(prev.as_ref(), a, rate) {
                on_miss(a, miss);
            }
            let reported = prev.as_ref().is_some_and(|p| p.reported_cache);
            *prev = previous(a, reported).or(prev.take());
        }
        _ => {}
    }
}

/// The miss of a reply that just finished, judged against the entries before it.
pub fn miss_of(entries: &[Entry], m: &AssistantMessage, rate: &dyn Fn(&str, &str) -> f64) -> Option<Miss> {
    let (prev, _) = scan(entries, Some(m), rate);
    detect(prev.as_ref(), m, rate)
}

/// The session's cache misses summed, as `/session` reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Waste {
    pub missed_tokens: u64,
    pub missed_cost: f64,
    pub miss_count: u64,
}

/// Every counted miss of the session added up (each reply counted once, even when two share
/// a timestamp).
pub fn waste(entries: &[Entry], rate: &dyn Fn(&str, &str) -> f64) -> Waste {
    let mut prev: Option<Previous> = None;
    let mut total = Waste::default();
    for e in entries {
        step(&mut prev, e, None, rate, &mut |_, miss| {
            total.missed_tokens += miss.missed_tokens;
            total.missed_cost += miss.missed_cost;
            total.miss_count += 1;
        });
    }
    total
}

/// Every counted miss of the session, by the timestamp of the reply that paid for it.
pub fn all_misses(entries: &[Entry], rate: &dyn Fn(&str, &str) -> f64) -> HashMap<i64, Miss> {
    scan(entries, None, rate).1
}

/// The notice for a miss, or none when it is too small to mention.
pub fn miss_text(miss: &Miss) -> Option<String> {
    if miss.missed_tokens < 20_000 && miss.missed_cost < 0.1 {
        return None;
    }
    let cost = if miss.missed_cost >= 0.01 {
        format!(" (~${:.2})", miss.missed_cost)
    } else {
        String::new()
    };
    let label = if miss.model_changed {
        "Cache miss after model switch".to_string()
    } else if miss.idle_ms >= CACHE_TTL_MS {
        format!("Cache miss after {}m idle", (miss.idle_ms as f64 / 60_000.0).round())
    } else {
        "Cache miss".to_string()
    };
    Some(format!(
        "{label}: {} tokens re-billed{cost}",
        format_tokens(miss.missed_tokens)
    ))
}

/// What a compaction (`compaction: true`) or a branch summary cost.
pub fn summary_cost_text(compaction: bool, usage: &Value) -> String {
    let tokens = num(usage, "input") + num(usage, "output") + num(usage, "cacheRead") + num(usage, "cacheWrite");
    let total = usage.pointer("/cost/total").and_then(Value::as_f64).unwrap_or(0.0);
    let cost = if total >= 0.01 {
        format!(" (~${total:.2})")
    } else {
        String::new()
    };
    let label = if compaction { "Compaction" } else { "Branch summary" };
    format!("{label}: {} tokens billed{cost}", format_tokens(tokens))
}

/// Reasoning a provider reported as withheld from the request, by diagnostic type: the
/// provider's name, the transformation type that means a drop, and the noun (one, many).
const REASONING_DROPS: [(&str, &str, &str, [&str; 2]); 2] = [
    (
        "anthropic_input_transformations",
        "Anthropic",
        "thinking_dropped",
        ["thinking block", "thinking blocks"],
    ),
    (
        "openai_input_transformations",
        "OpenAI",
        "reasoning",
        ["reasoning item", "reasoning items"],
    ),
];

/// What one reply's diagnostics say was dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped {
    /// Index into [`REASONING_DROPS`].
    kind: usize,
    count: usize,
    reasons: Vec<String>,
}

/// The reasoning the request behind `m` lost, from the first diagnostic that reports any.
pub fn dropped_reasoning(m: &AssistantMessage) -> Option<Dropped> {
    let list = m.diagnostics.as_ref()?.as_array()?;
    for diagnostic in list {
        let kind_name = diagnostic.get("type").and_then(Value::as_str).unwrap_or("");
        let Some(kind) = REASONING_DROPS.iter().position(|(t, ..)| *t == kind_name) else {
            continue;
        };
        let Some(items) = diagnostic.pointer("/details/transformations").and_then(Value::as_array) else {
            continue;
        };
        let dropped: Vec<&Value> = items
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some(REASONING_DROPS[kind].2))
            .collect();
        if dropped.is_empty() {
            continue;
        }
        let mut reasons: Vec<String> = Vec::new();
        for reason in dropped.iter().filter_map(|t| t.get("reason").and_then(Value::as_str)) {
            if !reasons.iter().any(|r| r == reason) {
                reasons.push(reason.to_string());
            }
        }
        return Some(Dropped {
            kind,
            count: dropped.len(),
            reasons,
        });
    }
    None
}

/// The warning for reasoning the reply `m` lost, or none. A withheld block is reported again
/// on every later request that replays it, so only a count above the previous reply's (the
/// `previous` assistant message of the branch, same provider) is news.
pub fn drop_text(m: &AssistantMessage, previous: Option<&AssistantMessage>) -> Option<String> {
    let dropped = dropped_reasoning(m)?;
    if let Some(before) = previous.and_then(dropped_reasoning) {
        if before.kind == dropped.kind && dropped.count <= before.count {
            return None;
        }
    }
    let (_, provider, _, nouns) = REASONING_DROPS[dropped.kind];
    let noun = nouns[usize::from(dropped.count != 1)];
    let reasons = if dropped.reasons.is_empty() {
        String::new()
    } else {
        format!(": {}", dropped.reasons.join(", "))
    };
    Some(format!(
        "{provider} dropped {} {noun}{reasons} (details in session)",
        dropped.count
    ))
}

/// The line for one or more back-to-back cache warms: their total cost with at least three
/// decimals and at most six (`Cache warmed: $0.0125`), and the note, if any.
pub fn warm_text(total_cost: f64, note: Option<&str>) -> String {
    let mut cost = format!("{total_cost:.6}");
    let keep = cost.find('.').map_or(cost.len(), |dot| dot + 4);
    while cost.len() > keep && cost.ends_with('0') {
        cost.pop();
    }
    let note = note.map(|n| format!(" ({n})")).unwrap_or_default();
    format!("Cache warmed{note}: ${cost}")
}

/// A cache-warm usage entry's cost and note, when `entry` (as JSON) is one.
pub fn warm_of(entry: &Value) -> Option<(f64, Option<String>)> {
    let fields = entry.as_object()?;
    (entry.get("type").and_then(Value::as_str) == Some("usage"))
        .then(|| warm_fields(fields))
        .flatten()
}

/// The cost and note of a usage entry's fields, when it records a cache warm.
fn warm_fields(fields: &serde_json::Map<String, Value>) -> Option<(f64, Option<String>)> {
    (fields.get("kind").and_then(Value::as_str) == Some("cache_warm")).then(|| {
        (
            fields
                .get("usage")
                .and_then(|u| u.pointer("/cost/total"))
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            fields.get("note").and_then(Value::as_str).map(str::to_string),
        )
    })
}

/// The cache warms of a branch, each with the number of context messages before it (as
/// the chat shows them: from the last compaction's first kept entry).
pub fn branch_warms(path: &[&Entry], messages: usize) -> Vec<(usize, f64, Option<String>)> {
    let shown_from = super::extension_ui::message_block::first_shown_entry(path);
    // Counted from the end: the messages after an entry end the context in order.
    let mut after = 0usize;
    let mut out = Vec::new();
    for entry in path[shown_from..].iter().rev() {
        match &entry.kind {
            EntryKind::Unknown { type_name, fields } if type_name == "usage" => {
                if let Some((cost, note)) = warm_fields(fields) {
                    out.push((messages.saturating_sub(after), cost, note));
                }
            }
            EntryKind::Message { .. } | EntryKind::CustomMessage { .. } => after += 1,
            EntryKind::BranchSummary { summary, .. } if !summary.is_empty() => after += 1,
            _ => {}
        }
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(input: u64, read: u64, write: u64, ts: i64, model: &str) -> AssistantMessage {
        let mut m = AssistantMessage {
            provider: "p".into(),
            model: model.into(),
            timestamp: ts,
            ..Default::default()
        };
        m.usage.input = input;
        m.usage.cache_read = read;
        m.usage.cache_write = write;
        // $3 per million paid, $0.30 per million read.
        m.usage.cost.input = input as f64 * 3e-6;
        m.usage.cost.cache_write = write as f64 * 3e-6;
        m.usage.cost.cache_read = read as f64 * 0.3e-6;
        m
    }

    fn entry(m: AssistantMessage) -> Entry {
        Entry {
            id: "e".into(),
            parent_id: None,
            timestamp: String::new(),
            kind: EntryKind::Message {
                message: AgentMessage::Llm(Message::Assistant(std::sync::Arc::new(m))),
                extra: Default::default(),
            },
        }
    }

    fn dropping(kind: &str, items: serde_json::Value) -> AssistantMessage {
        let mut m = reply(1, 0, 0, 0, "m");
        m.push_diagnostic(serde_json::json!({"type": kind, "details": {"transformations": items}}));
        m
    }

    #[test]
    fn dropped_reasoning_is_named_once_per_new_loss() {
        let two = dropping(
            "anthropic_input_transformations",
            serde_json::json!([
                {"type": "thinking_dropped", "reason": "signature_invalid"},
                {"type": "thinking_dropped", "reason": "signature_invalid"},
                {"type": "other"}
            ]),
        );
        assert_eq!(
            drop_text(&two, None).as_deref(),
            Some("Anthropic dropped 2 thinking blocks: signature_invalid (details in session)")
        );
        // The same two blocks reported again by the next request: nothing new.
        assert_eq!(drop_text(&two, Some(&two)), None);
        let one = dropping(
            "openai_input_transformations",
            serde_json::json!([{"type": "reasoning", "action": "removed"}]),
        );
        assert_eq!(
            drop_text(&one, Some(&two)).as_deref(),
            Some("OpenAI dropped 1 reasoning item (details in session)")
        );
        assert_eq!(drop_text(&reply(1, 0, 0, 0, "m"), None), None);
    }

    #[test]
    fn warm_costs_keep_three_to_six_decimals() {
        assert_eq!(warm_text(0.0125, None), "Cache warmed: $0.0125");
        assert_eq!(warm_text(0.5, None), "Cache warmed: $0.500");
        assert_eq!(
            warm_text(0.001_234_567, Some("extension override")),
            "Cache warmed (extension override): $0.001235"
        );
        let entry = serde_json::json!({"type": "usage", "kind": "cache_warm", "usage": {"cost": {"total": 0.02}}});
        assert_eq!(warm_of(&entry), Some((0.02, None)));
    }

    #[test]
    fn a_rebilled_prompt_is_a_miss_and_small_ones_are_noise() {
        let rate = |_: &str, _: &str| 0.3;
        let first = reply(100, 0, 30_000, 0, "m");
        let hit = reply(200, 30_000, 0, 60_000, "m");
        // The whole prompt billed again, after ten idle minutes.
        let miss = reply(31_000, 0, 0, 660_000, "m");
        let entries = vec![entry(first), entry(hit)];
        let found = miss_of(&entries, &miss, &rate).expect("a miss");
        assert_eq!(found.missed_tokens, 30_200);
        assert_eq!(
            miss_text(&found).as_deref(),
            Some("Cache miss after 10m idle: 30k tokens re-billed (~$0.08)")
        );
        // A model switch is named; a small miss says nothing.
        let switched = reply(31_000, 0, 0, 70_000, "other");
        let m = miss_of(&entries, &switched, &rate).expect("a miss");
        assert!(miss_text(&m).is_some_and(|t| t.starts_with("Cache miss after model switch: ")));
        let small = reply(3_000, 28_000, 0, 70_000, "m");
        assert!(miss_of(&entries, &small, &rate).and_then(|m| miss_text(&m)).is_none());
        // Rebuilding finds the same miss, keyed by its reply.
        let mut all = entries.clone();
        all.push(entry(miss.clone()));
        assert_eq!(all_misses(&all, &rate).get(&660_000), Some(&found));
        assert_eq!(
            summary_cost_text(
                true,
                &serde_json::json!({"input": 12000, "output": 800, "cost": {"total": 0.05}})
            ),
            "Compaction: 13k tokens billed (~$0.05)"
        );
    }
}
