//! The names users see for the built-in providers (pi shows these in `/login` and `/logout`
//! instead of the provider ids).

const NAMES: &[(&str, &str)] = &[
    ("amazon-bedrock", "Amazon Bedrock"),
    ("anthropic", "Anthropic"),
    ("azure-openai-responses", "Azure OpenAI Responses"),
    ("cerebras", "Cerebras"),
    ("cloudflare-ai-gateway", "Cloudflare AI Gateway"),
    ("cloudflare-workers-ai", "Cloudflare Workers AI"),
    ("deepseek", "DeepSeek"),
    ("fireworks", "Fireworks"),
    ("google", "Google Gemini"),
    ("google-vertex", "Google Vertex AI"),
    ("groq", "Groq"),
    ("huggingface", "Hugging Face"),
    ("kimi-coding", "Kimi For Coding"),
    ("minimax", "MiniMax"),
    ("minimax-cn", "MiniMax (China)"),
    ("mistral", "Mistral"),
    ("moonshotai", "Moonshot AI"),
    ("moonshotai-cn", "Moonshot AI (China)"),
    ("openai", "OpenAI"),
    ("opencode", "OpenCode Zen"),
    ("opencode-go", "OpenCode Go"),
    ("openrouter", "OpenRouter"),
    ("vercel-ai-gateway", "Vercel AI Gateway"),
    ("xai", "xAI"),
    ("xiaomi", "Xiaomi MiMo"),
    ("xiaomi-token-plan-ams", "Xiaomi MiMo Token Plan (Amsterdam)"),
    ("xiaomi-token-plan-cn", "Xiaomi MiMo Token Plan (China)"),
    ("xiaomi-token-plan-sgp", "Xiaomi MiMo Token Plan (Singapore)"),
    ("zai", "ZAI"),
];

/// The display name of a built-in provider, if it has one.
pub fn builtin_provider_name(id: &str) -> Option<&'static str> {
    NAMES.iter().find(|(k, _)| *k == id).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ids_have_names_and_others_none() {
        assert_eq!(builtin_provider_name("google"), Some("Google Gemini"));
        assert_eq!(builtin_provider_name("xai"), Some("xAI"));
        assert_eq!(builtin_provider_name("my-server"), None);
    }
}
