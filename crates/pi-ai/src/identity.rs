//! pi's attribution headers: with attribution on (the coding agent turns it on when install
//! telemetry is enabled, as pi 1.6 does), requests to OpenRouter name pi in `HTTP-Referer`,
//! `X-OpenRouter-Title` and `X-OpenRouter-Categories`, NVIDIA NIM in
//! `X-BILLING-INVOKE-ORIGIN`, and OpenCode in `x-opencode-client`. They go below the model's
//! and the caller's headers, which may replace them. Off by default, as in 1.6's pi-ai.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::types::Model;

static ATTRIBUTION: AtomicBool = AtomicBool::new(false);

/// Turn pi's attribution headers on or off for the requests that follow.
pub fn set_attribution(on: bool) {
    ATTRIBUTION.store(on, Ordering::Relaxed);
}

pub fn attribution_enabled() -> bool {
    ATTRIBUTION.load(Ordering::Relaxed)
}

fn host_is(base_url: &str, host: &str) -> bool {
    url::Url::parse(base_url).is_ok_and(|u| u.host_str() == Some(host))
}

/// The attribution headers for a request to `model` (none when attribution is off).
pub fn attribution_headers(model: &Model) -> Vec<(String, String)> {
    headers_for(model, attribution_enabled())
}

/// Whether `model` is served by OpenCode (its providers, or its host).
pub fn is_opencode(model: &Model) -> bool {
    matches!(model.provider.as_str(), "opencode" | "opencode-go") || host_is(&model.base_url, "opencode.ai")
}

fn headers_for(model: &Model, on: bool) -> Vec<(String, String)> {
    if !on {
        return Vec::new();
    }
    let pairs: &[(&str, &str)] = if model.provider == "openrouter" || model.base_url.contains("openrouter.ai") {
        &[
            ("HTTP-Referer", "https://pi.dev"),
            ("X-OpenRouter-Title", "pi"),
            ("X-OpenRouter-Categories", "cli-agent"),
        ]
    } else if model.provider == "nvidia" || host_is(&model.base_url, "integrate.api.nvidia.com") {
        &[("X-BILLING-INVOKE-ORIGIN", "Pi")]
    } else if is_opencode(model) {
        &[("x-opencode-client", "pi")]
    } else {
        &[]
    };
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_follow_the_target() {
        let model = |provider: &str, base: &str| -> Model {
            serde_json::from_value(serde_json::json!({
                "id": "m", "name": "m", "api": "openai-completions", "provider": provider, "baseUrl": base,
                "reasoning": false, "input": ["text"], "cost": {}, "contextWindow": 1, "maxTokens": 1,
            }))
            .expect("model")
        };
        let names = |m: &Model| headers_for(m, true).into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(
            names(&model("custom", "https://openrouter.ai/api/v1")),
            ["HTTP-Referer", "X-OpenRouter-Title", "X-OpenRouter-Categories"]
        );
        assert_eq!(
            headers_for(&model("nvidia", "http://x"), true),
            [("X-BILLING-INVOKE-ORIGIN".to_string(), "Pi".to_string())]
        );
        assert_eq!(
            names(&model("custom", "https://opencode.ai/zen/v1")),
            ["x-opencode-client"]
        );
        assert!(headers_for(&model("openai", "https://api.openai.com/v1"), true).is_empty());
        // A host merely starting with the name is not NVIDIA's.
        assert!(headers_for(&model("x", "https://integrate.api.nvidia.com.evil/v1"), true).is_empty());
        assert!(headers_for(&model("openrouter", "http://x"), false).is_empty());
    }
}
