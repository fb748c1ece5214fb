//! Compatibility switches of OpenAI-compatible servers: `model.compat` over defaults detected
//! from the provider name and base URL.

use serde_json::Value;

use crate::providers::{compat_bool, compat_str};
use crate::types::Model;

/// Compatibility switches of an OpenAI-compatible server, resolved from `model.compat` over
/// the detected defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Compat {
    pub supports_store: bool,
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    pub supports_usage_in_streaming: bool,
    /// `max_completion_tokens` or `max_tokens`.
    pub max_tokens_field: String,
    pub requires_tool_result_name: bool,
    pub requires_assistant_after_tool_result: bool,
    pub requires_thinking_as_text: bool,
    pub requires_reasoning_content_on_assistant_messages: bool,
    /// `openai`, `zai`, `qwen`, `qwen-chat-template`, `openrouter` or `deepseek`.
    pub thinking_format: String,
    pub open_router_routing: Option<Value>,
    pub vercel_gateway_routing: Option<Value>,
    pub zai_tool_stream: bool,
    pub supports_strict_mode: bool,
    /// `anthropic` marks cache breakpoints the Anthropic way.
    pub cache_control_format: Option<String>,
    pub send_session_affinity_headers: bool,
    pub supports_long_cache_retention: bool,
}

impl Compat {
    /// Defaults detected from the provider name and base URL.
    pub fn detect(model: &Model) -> Compat {
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let is_zai = provider == "zai" || url.contains("api.z.ai");
        let is_moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
        let is_cf_workers = provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
        let is_cf_gateway = provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
        let is_grok = provider == "xai" || url.contains("api.x.ai");
        let is_deepseek = provider == "deepseek" || url.contains("deepseek.com");
        let non_standard = provider == "cerebras"
            || url.contains("cerebras.ai")
            || is_grok
            || url.contains("chutes.ai")
            || url.contains("deepseek.com")
            || is_zai
            || is_moonshot
            || provider == "opencode"
            || url.contains("opencode.ai")
            || is_cf_workers
            || is_cf_gateway;
        let use_max_tokens = url.contains("chutes.ai") || is_moonshot || is_cf_gateway;
        let thinking_format = if is_deepseek {
            "deepseek"
        } else if is_zai {
            "zai"
        } else if provider == "openrouter" || url.contains("openrouter.ai") {
            "openrouter"
        } else {
            "openai"
        };
        Compat {
            supports_store: !non_standard,
            supports_developer_role: !non_standard,
            supports_reasoning_effort: !is_grok && !is_zai && !is_moonshot && !is_cf_gateway,
            supports_usage_in_streaming: true,
            max_tokens_field: if use_max_tokens {
                "max_tokens"
            } else {
                "max_completion_tokens"
            }
            .to_string(),
            requires_tool_result_name: false,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: false,
            requires_reasoning_content_on_assistant_messages: is_deepseek,
            thinking_format: thinking_format.to_string(),
            open_router_routing: None,
            vercel_gateway_routing: None,
            zai_tool_stream: false,
            supports_strict_mode: !is_moonshot && !is_cf_gateway,
            cache_control_format: (provider == "openrouter" && model.id.starts_with("anthropic/"))
                .then(|| "anthropic".to_string()),
            send_session_affinity_headers: false,
            supports_long_cache_retention: !(is_cf_workers || is_cf_gateway),
        }
    }

    /// `model.compat` over the detected defaults.
    pub fn for_model(model: &Model) -> Compat {
        let d = Compat::detect(model);
        let b = |key: &str, default: bool| compat_bool(model, key).unwrap_or(default);
        let object = |key: &str| {
            model
                .compat
                .as_ref()
                .and_then(|c| c.get(key))
                .filter(|v| v.is_object())
                .cloned()
        };
        Compat {
            supports_store: b("supportsStore", d.supports_store),
            supports_developer_role: b("supportsDeveloperRole", d.supports_developer_role),
            supports_reasoning_effort: b("supportsReasoningEffort", d.supports_reasoning_effort),
            supports_usage_in_streaming: b("supportsUsageInStreaming", d.supports_usage_in_streaming),
            max_tokens_field: compat_str(model, "maxTokensField")
                .map(String::from)
                .unwrap_or(d.max_tokens_field),
            requires_tool_result_name: b("requiresToolResultName", d.requires_tool_result_name),
            requires_assistant_after_tool_result: b(
                "requiresAssistantAfterToolResult",
                d.requires_assistant_after_tool_result,
            ),
            requires_thinking_as_text: b("requiresThinkingAsText", d.requires_thinking_as_text),
            requires_reasoning_content_on_assistant_messages: b(
                "requiresReasoningContentOnAssistantMessages",
                d.requires_reasoning_content_on_assistant_messages,
            ),
            thinking_format: compat_str(model, "thinkingFormat")
                .map(String::from)
                .unwrap_or(d.thinking_format),
            open_router_routing: object("openRouterRouting"),
            vercel_gateway_routing: object("vercelGatewayRouting"),
            zai_tool_stream: b("zaiToolStream", d.zai_tool_stream),
            supports_strict_mode: b("supportsStrictMode", d.supports_strict_mode),
            cache_control_format: compat_str(model, "cacheControlFormat")
                .map(String::from)
                .or(d.cache_control_format),
            send_session_affinity_headers: b("sendSessionAffinityHeaders", d.send_session_affinity_headers),
            supports_long_cache_retention: b("supportsLongCacheRetention", d.supports_long_cache_retention),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::openai_completions::tests::model;
    use serde_json::json;

    #[test]
    fn compat_detection_and_overrides() {
        let c = Compat::for_model(&model("cerebras", "https://api.cerebras.ai/v1", true));
        assert!(!c.supports_store && !c.supports_developer_role);
        let c = Compat::for_model(&model("zai", "https://api.z.ai/api/coding/paas/v4", true));
        assert_eq!(c.thinking_format, "zai");
        assert!(!c.supports_reasoning_effort);
        let mut m = model("custom", "http://localhost/v1", true);
        m.compat = Some(json!({"supportsStore": false, "maxTokensField": "max_tokens", "thinkingFormat": "qwen"}));
        let c = Compat::for_model(&m);
        assert!(!c.supports_store);
        assert_eq!(c.max_tokens_field, "max_tokens");
        assert_eq!(c.thinking_format, "qwen");
        assert!(c.supports_developer_role);
    }
}
