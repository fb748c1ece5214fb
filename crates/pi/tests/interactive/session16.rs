//! `/session` with prompt caching, as pi 1.6 shows it: the cached and uncached share of the
//! input, what the cache warmer weighs (a miss against a refresh), and what cache misses
//! billed again. The numbers are the ones pi 1.6 prints for the same replies.

use pi_test_support::{Script, Turn, UsageSpec};
use serde_json::json;

use super::{quit, set_setting, setup, ENTER};

fn usage(input: u64, cache_read: u64, cache_write: u64, output: u64) -> UsageSpec {
    UsageSpec {
        input: Some(input),
        output: Some(output),
        cache_read: Some(cache_read),
        cache_write: Some(cache_write),
    }
}

#[test]
fn session_shows_cache_warming_costs_and_rebilled_misses() {
    let s = setup(Script::sequential(vec![
        Turn::text("one").with_usage(usage(30_000, 0, 20_000, 50)),
        Turn::text("two").with_usage(usage(1_000, 50_000, 0, 60)),
        // The prompt read nothing from the cache: 51,000 tokens billed again.
        Turn::text("three").with_usage(usage(52_000, 0, 0, 70)),
    ]));
    // A model with cache prices and a five-minute cache lifetime, so the warmer has numbers.
    let models = json!({"providers": {"mock-anthropic": {
        "baseUrl": s.server.url(), "api": "anthropic-messages", "apiKey": "sk-ant-mock",
        "models": [{"id": "mock-model", "name": "Cached", "reasoning": false, "input": ["text"],
            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
            "contextWindow": 200000, "maxTokens": 32000, "promptCache": {"short": 300}},
            {"id": "other-model", "name": "Other", "reasoning": false, "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 100000, "maxTokens": 1000}]}}});
    s.agent.write("models.json", models.to_string()).unwrap();
    set_setting(&s, "cacheWarming", json!("idle"));
    let mut pty = s.pi(40, 100);
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_text("Status: Inactive (waiting for first request)");
    // No request yet: no costs to weigh, no cost block.
    assert!(!pty.contents().contains("Cache miss penalty"), "{}", pty.contents());
    assert!(!pty.contents().contains("Cost"), "{}", pty.contents());
    for (ask, answer) in [("a", "one"), ("b", "two"), ("c", "three")] {
        pty.type_text(ask);
        pty.send(ENTER);
        pty.wait_text(answer);
    }
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_text("Cache Re-billed:");
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim().to_string()).collect();
    let at = |text: &str| {
        rows.iter()
            .rposition(|r| r == text)
            .unwrap_or_else(|| panic!("{text}:\n{}", rows.join("\n")))
    };
    let input = at("Input: 153,000");
    assert_eq!(rows[input + 1], "Cached: 50,000 (32.7%)");
    assert_eq!(rows[input + 2], "Uncached: 103,000 (20,000 written to cache)");
    let penalty = at("Cache miss penalty: $0.179");
    assert!(rows[penalty - 1].starts_with("stop)") || rows[penalty - 1].starts_with("Status: Decision in"));
    assert_eq!(rows[penalty + 1], "Refresh cost: $0.016");
    let cost = at("Cost");
    assert_eq!(rows[cost + 1], "Total: $0.342");
    assert_eq!(rows[cost + 2], "Cache Re-billed: $0.138 (51,000 tokens, 1 miss)");
    // Another model: the run no longer matches the session, so there is nothing to weigh.
    pty.send("\x10"); // Ctrl+P
    pty.wait_text("other-model");
    pty.type_text("/session");
    pty.send(ENTER);
    pty.wait_for("a second block", std::time::Duration::from_secs(10), |c| {
        c.contains("Status: Inactive (conversation context changed)")
    });
    let rows: Vec<String> = pty.rows().iter().map(|r| r.trim().to_string()).collect();
    let status = rows.iter().rposition(|r| r.starts_with("Status:")).expect("status");
    assert_eq!(rows[status], "Status: Inactive (conversation context changed)");
    assert!(
        !rows[status..].iter().any(|r| r.starts_with("Cache miss penalty")),
        "{}",
        rows.join("\n")
    );
    // The switch is noted under the cost: the selected model answered nothing.
    assert!(
        rows[status..]
            .iter()
            .any(|r| r.starts_with("mock-anthropic/mock-model: $0.342")),
        "{}",
        rows.join("\n")
    );
    quit(&mut pty);
}
