//! The names users see for the built-in providers (pi shows these in `/login` and `/logout`
//! instead of the provider ids).

/// pi 1.6's provider names (each provider's `name` in pi-ai).
const NAMES: &[(&str, &str)] = &[
    ("amazon-bedrock", "Amazon Bedrock"),
    ("ant-ling", "Ant Ling"),
    ("anthropic", "Anthropic"),
    ("azure", "Azure"),
    ("baseten", "Baseten"),
    ("cerebras", "Cerebras"),
    ("cloudflare-ai-gateway", "Cloudflare AI Gateway"),
    ("cloudflare-workers-ai", "Cloudflare Workers AI"),
    ("deepseek", "DeepSeek"),
    ("fireworks", "Fireworks"),
    ("github-copilot", "GitHub Copilot"),
    ("google", "Google"),
    ("google-vertex", "Google Vertex AI"),
    ("groq", "Groq"),
    ("huggingface", "Hugging Face"),
    ("kimi-coding", "Kimi For Coding"),
    ("meta", "Meta"),
    ("minimax", "MiniMax"),
    ("minimax-cn", "MiniMax CN"),
    ("mistral", "Mistral"),
    ("moonshotai", "Moonshot AI"),
    ("moonshotai-cn", "Moonshot AI CN"),
    ("nvidia", "NVIDIA"),
    ("openai", "OpenAI"),
    ("openai-codex", "OpenAI Codex"),
    ("opencode", "OpenCode Zen"),
    ("opencode-go", "OpenCode Go"),
    ("openrouter", "OpenRouter"),
    ("qwen-token-plan", "Qwen Token Plan Team"),
    ("qwen-token-plan-cn", "Qwen Token Plan Team CN"),
    ("qwen-token-plan-individual", "Qwen Token Plan Individual"),
    ("qwen-token-plan-individual-cn", "Qwen Token Plan Individual CN"),
    ("radius", "Radius"),
    ("together", "Together"),
    ("typesafe", "TypeSafe"),
    ("vercel-ai-gateway", "Vercel AI Gateway"),
    ("xai", "xAI"),
    ("xiaomi", "Xiaomi"),
    ("xiaomi-token-plan-ams", "Xiaomi Token Plan AMS"),
    ("xiaomi-token-plan-cn", "Xiaomi Token Plan CN"),
    ("xiaomi-token-plan-sgp", "Xiaomi Token Plan SGP"),
    ("zai", "Z.AI"),
    ("zai-coding-cn", "Z.AI Coding CN"),
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
        assert_eq!(builtin_provider_name("google"), Some("Google"));
        assert_eq!(builtin_provider_name("azure"), Some("Azure"));
        assert_eq!(builtin_provider_name("azure-openai-responses"), None);
        assert_eq!(builtin_provider_name("xai"), Some("xAI"));
        assert_eq!(builtin_provider_name("my-server"), None);
    }
}
