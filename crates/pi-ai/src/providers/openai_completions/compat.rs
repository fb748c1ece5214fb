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
    /// Grammar-constrained tools (codemode's) go as OpenAI `custom` tools; without it they
    /// fall back to function tools.
    pub supports_openai_grammar_tools: bool,
    /// `anthropic` marks cache breakpoints the Anthropic way.
    pub cache_control_format: Option<String>,
    pub send_session_affinity_headers: bool,
    /// `openai` (`session_id` + request id + affinity), `openai-nosession` (no `session_id`)
    /// or `openrouter` (`x-session-id`).
    pub session_affinity_format: String,
    pub supports_long_cache_retention: bool,
    /// An assistant turn without text sends `""` instead of `null`.
    pub requires_non_null_assistant_content: bool,
    /// Send `tools: []` when no tools are offered but the history has tool calls.
    pub requires_tools_with_tool_history: bool,
    /// `auto` (api.openai.com, or long retention), `enabled` or `disabled`.
    pub prompt_cache_key_mode: String,
    /// A top-level `priority` (vLLM).
    pub vllm_priority: Option<Value>,
    /// Field that carries the thinking budget (`thinking_token_budget` when only
    /// `supportsThinkingTokenBudget` is set).
    pub thinking_token_budget_field: Option<String>,
    /// Templates of `chat_template_kwargs` / `chat_template_args` (`chat-template`, `baseten`).
    pub chat_template_kwargs: Option<serde_json::Map<String, Value>>,
    pub chat_template_args: Option<serde_json::Map<String, Value>>,
}

impl Compat {
    /// Defaults detected from the provider name and base URL.
    pub fn detect(model: &Model) -> Compat {
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let is_zai = provider == "zai"
            || provider == "zai-coding-cn"
            || url.contains("api.z.ai")
            || url.contains("open.bigmodel.cn");
        let is_together = provider == "together" || url.contains("api.together.ai") || url.contains("api.together.xyz");
        let is_moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
        let is_openrouter = provider == "openrouter" || url.contains("openrouter.ai");
        let is_cf_workers = provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
        let is_cf_gateway = provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
        let is_nvidia = provider == "nvidia" || url.contains("integrate.api.nvidia.com");
        let is_ant_ling = provider == "ant-ling" || url.contains("api.ant-ling.com");
        let is_cerebras = provider == "cerebras" || url.contains("cerebras.ai");
        let is_grok = provider == "xai" || url.contains("api.x.ai");
        let is_deepseek = provider == "deepseek" || url.to_lowercase().contains("deepseek.com");
        // The developer role is OpenAI's own; other hosts' chat templates may reject it.
        let is_openai = provider == "openai" || url.contains("api.openai.com");
        let non_standard = is_nvidia
            || is_cerebras
            || is_grok
            || is_together
            || url.contains("chutes.ai")
            || is_deepseek
            || is_zai
            || is_moonshot
            || provider == "opencode"
            || url.contains("opencode.ai")
            || is_cf_workers
            || is_cf_gateway
            || is_ant_ling;
        let use_max_tokens = url.contains("chutes.ai")
            || is_deepseek
            || is_moonshot
            || is_cf_gateway
            || is_together
            || is_nvidia
            || is_ant_ling
            || is_zai;
        let thinking_format = if is_deepseek {
            "deepseek"
        } else if is_zai {
            "zai"
        } else if is_together {
            "together"
        } else if is_ant_ling {
            "ant-ling"
        } else if is_openrouter {
            "openrouter"
        } else {
            "openai"
        };
        Compat {
            supports_store: !non_standard,
            supports_developer_role: is_openai,
            supports_reasoning_effort: !is_grok
                && !is_zai
                && !is_moonshot
                && !is_together
                && !is_cf_gateway
                && !is_nvidia
                && !is_ant_ling,
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
            // Being OpenAI-compatible says nothing about strict tool schemas.
            supports_strict_mode: false,
            supports_openai_grammar_tools: false,
            cache_control_format: (provider == "openrouter" && model.id.starts_with("anthropic/"))
                .then(|| "anthropic".to_string()),
            send_session_affinity_headers: is_openrouter,
            session_affinity_format: if is_openrouter { "openrouter" } else { "openai" }.to_string(),
            supports_long_cache_retention: !(is_together || is_cf_workers || is_cf_gateway || is_nvidia || is_ant_ling),
            requires_non_null_assistant_content: false,
            requires_tools_with_tool_history: false,
            prompt_cache_key_mode: "auto".to_string(),
            vllm_priority: None,
            thinking_token_budget_field: None,
            chat_template_kwargs: None,
            chat_template_args: None,
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
            supports_openai_grammar_tools: b("supportsOpenAIGrammarTools", d.supports_openai_grammar_tools),
            cache_control_format: compat_str(model, "cacheControlFormat")
                .map(String::from)
                .or(d.cache_control_format),
            send_session_affinity_headers: b("sendSessionAffinityHeaders", d.send_session_affinity_headers),
            session_affinity_format: compat_str(model, "sessionAffinityFormat")
                .map(String::from)
                .unwrap_or(d.session_affinity_format),
            supports_long_cache_retention: b("supportsLongCacheRetention", d.supports_long_cache_retention),
            requires_non_null_assistant_content: b(
                "requiresNonNullAssistantContent",
                d.requires_non_null_assistant_content,
            ),
            requires_tools_with_tool_history: b("requiresToolsWithToolHistory", d.requires_tools_with_tool_history),
            prompt_cache_key_mode: compat_str(model, "promptCacheKeyMode")
                .map(String::from)
                .unwrap_or(d.prompt_cache_key_mode),
            vllm_priority: model
                .compat
                .as_ref()
                .and_then(|c| c.get("vllmPriority"))
                .filter(|v| !v.is_null())
                .cloned(),
            thinking_token_budget_field: compat_str(model, "thinkingTokenBudgetField")
                .map(String::from)
                .or_else(|| b("supportsThinkingTokenBudget", false).then(|| "thinking_token_budget".to_string())),
            chat_template_kwargs: object("chatTemplateKwargs").and_then(|v| v.as_object().cloned()),
            chat_template_args: object("chatTemplateArgs").and_then(|v| v.as_object().cloned()),
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
        assert!(
            !c.supports_developer_role,
            "only OpenAI's own API gets the developer role"
        );
        assert!(Compat::for_model(&model("openai", "https://api.openai.com/v1", true)).supports_developer_role);
        assert!(Compat::for_model(&model("x", "https://api.openai.com/v1", true)).supports_developer_role);
        let c = Compat::for_model(&model("openrouter", "https://openrouter.ai/api/v1", true));
        assert!(c.send_session_affinity_headers && c.session_affinity_format == "openrouter");
        assert!(!c.supports_strict_mode);
        let c = Compat::for_model(&model("together", "https://api.together.xyz/v1", true));
        assert_eq!(
            (c.thinking_format.as_str(), c.max_tokens_field.as_str()),
            ("together", "max_tokens")
        );
    }
}
