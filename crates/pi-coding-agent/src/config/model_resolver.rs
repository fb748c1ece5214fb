//! From what the user typed to a model: `--model` patterns, `provider/id`, `:thinking`
//! suffixes, `--models` globs, the initial model, and the thinking-level clamp.
//!
//! Everything here is a pure function of the model lists it is given; warnings are returned,
//! never printed.

use pi_ai::{Model, ThinkingLevel};

/// The thinking level when nothing else chooses one.
pub const DEFAULT_THINKING_LEVEL: ThinkingLevel = ThinkingLevel::Medium;

/// pi 1.6's default model per provider, in its search order. Callers pass this (or
/// another table) to the functions below.
pub const DEFAULT_MODEL_PER_PROVIDER: &[(&str, &str)] = &[
    ("amazon-bedrock", "us.anthropic.claude-opus-5-5"),
    ("ant-ling", "Ring-2.6-1T"),
    ("anthropic", "claude-opus-5-5"),
    ("openai", "gpt-6.2-sol"),
    ("azure", "gpt-6.2-sol"),
    ("openai-codex", "gpt-6.2-sol"),
    ("radius", "balanced"),
    ("nvidia", "nvidia/nemotron-3.5-super-vl-120b-a12b"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-4-argon"),
    ("google-vertex", "gemini-4-argon"),
    ("github-copilot", "gpt-6.1-sol"),
    ("openrouter", "moonshotai/kimi-k2.7-code"),
    ("vercel-ai-gateway", "zai/glm-5.3"),
    ("xai", "grok-4.7"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "gpt-oss-120b"),
    ("zai", "glm-5.3"),
    ("zai-coding-cn", "glm-5.3"),
    ("mistral", "devstral-medium-latest"),
    ("minimax", "MiniMax-M3"),
    ("minimax-cn", "MiniMax-M3"),
    ("moonshotai", "kimi-k2.7-code"),
    ("moonshotai-cn", "kimi-k2.7-code"),
    ("huggingface", "moonshotai/Kimi-K2.7-Code"),
    ("fireworks", "accounts/fireworks/models/kimi-k3"),
    ("together", "moonshotai/Kimi-K3"),
    ("baseten", "zai-org/GLM-5.3"),
    ("opencode", "kimi-k2.7-code"),
    ("opencode-go", "kimi-k3.1-pro"),
    ("kimi-coding", "kimi-for-coding"),
    ("meta", "muse-spark-1.3"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.7-code"),
    ("cloudflare-ai-gateway", "workers-ai/@cf/moonshotai/kimi-k2.7-code"),
    ("qwen-token-plan", "qwen3.8-max"),
    ("qwen-token-plan-cn", "qwen3.8-max"),
    ("qwen-token-plan-individual", "qwen3.8-max"),
    ("qwen-token-plan-individual-cn", "qwen3.8-max"),
    ("xiaomi", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-cn", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-ams", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-sgp", "mimo-v2.6-pro"),
];

/// Per-provider default model ids, in search order.
pub type ProviderDefaults<'a> = &'a [(&'a str, &'a str)];

/// An id without a `-YYYYMMDD` date suffix (or ending `-latest`) is an alias.
pub fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    if bytes.len() >= 9 {
        let tail = &bytes[bytes.len() - 9..];
        if tail[0] == b'-' && tail[1..].iter().all(u8::is_ascii_digit) {
            return false;
        }
    }
    true
}

/// A unique model for a bare id or a canonical `provider/id` (case-insensitive). Ambiguous
/// references match nothing.
pub fn find_exact_model_reference<'a>(reference: &str, models: &'a [Model]) -> Option<&'a Model> {
    let trimmed = reference.trim();
    if trimmed.is_empty() {
        return None;
    }
    let lower = trimmed.to_lowercase();
    let canonical: Vec<&Model> = models
        .iter()
        .filter(|m| format!("{}/{}", m.provider, m.id).to_lowercase() == lower)
        .collect();
    match canonical.len() {
        1 => return Some(canonical[0]),
        n if n > 1 => return None,
        _ => {}
    }
    if let Some((provider, id)) = trimmed.split_once('/') {
        let (provider, id) = (provider.trim().to_lowercase(), id.trim().to_lowercase());
        if !provider.is_empty() && !id.is_empty() {
            let matches: Vec<&Model> = models
                .iter()
                .filter(|m| m.provider.to_lowercase() == provider && m.id.to_lowercase() == id)
                .collect();
            match matches.len() {
                1 => return Some(matches[0]),
                n if n > 1 => return None,
                _ => {}
            }
        }
    }
    let by_id: Vec<&Model> = models.iter().filter(|m| m.id.to_lowercase() == lower).collect();
    (by_id.len() == 1).then(|| by_id[0])
}

/// Exact reference first, then a substring of id or name: aliases preferred (highest id),
/// else the latest dated id.
fn try_match_model<'a>(pattern: &str, models: &'a [Model]) -> Option<&'a Model> {
    if let Some(m) = find_exact_model_reference(pattern, models) {
        return Some(m);
    }
    let lower = pattern.to_lowercase();
    let matches: Vec<&Model> = models
        .iter()
        .filter(|m| m.id.to_lowercase().contains(&lower) || m.name.to_lowercase().contains(&lower))
        .collect();
    if matches.is_empty() {
        return None;
    }
    let (aliases, dated): (Vec<&Model>, Vec<&Model>) = matches.into_iter().partition(|m| is_alias(&m.id));
    let pool = if aliases.is_empty() { dated } else { aliases };
    pool.into_iter().max_by(|a, b| locale_cmp(&a.id, &b.id))
}

/// An approximation of JavaScript's `localeCompare` for ids: case-insensitive first.
fn locale_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase().cmp(&b.to_lowercase()).then_with(|| b.cmp(a))
}

/// The result of matching one pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternMatch {
    pub model: Option<Model>,
    pub thinking_level: Option<ThinkingLevel>,
    pub warning: Option<String>,
}

/// Match `pattern` (which may end in `:<level>`). The whole pattern is tried first, since ids
/// may contain colons; then the last `:suffix` is split off. With
/// `allow_invalid_level_fallback` (scope mode) an unknown suffix warns and is dropped; without
/// it (CLI mode) it means no match.
pub fn parse_model_pattern(pattern: &str, models: &[Model], allow_invalid_level_fallback: bool) -> PatternMatch {
    if let Some(m) = try_match_model(pattern, models) {
        return PatternMatch {
            model: Some(m.clone()),
            thinking_level: None,
            warning: None,
        };
    }
    let none = PatternMatch {
        model: None,
        thinking_level: None,
        warning: None,
    };
    let Some(colon) = pattern.rfind(':') else { return none };
    let (prefix, suffix) = (&pattern[..colon], &pattern[colon + 1..]);
    if let Some(level) = ThinkingLevel::parse(suffix) {
        let inner = parse_model_pattern(prefix, models, allow_invalid_level_fallback);
        if inner.model.is_some() {
            return PatternMatch {
                thinking_level: if inner.warning.is_some() { None } else { Some(level) },
                ..inner
            };
        }
        return inner;
    }
    if !allow_invalid_level_fallback {
        return none;
    }
    let inner = parse_model_pattern(prefix, models, true);
    if inner.model.is_some() {
        return PatternMatch {
            model: inner.model,
            thinking_level: None,
            warning: Some(format!(
                "Invalid thinking level \"{suffix}\" in pattern \"{pattern}\". Using default instead."
            )),
        };
    }
    inner
}

/// A model of the `--models` / `enabledModels` cycle set, with its optional level.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedModel {
    pub model: Model,
    pub thinking_level: Option<ThinkingLevel>,
}

fn is_glob(pattern: &str) -> bool {
    pattern.contains('*') || pattern.contains('?') || pattern.contains('[')
}

/// Resolve `--models` patterns against the available models. Returns the scoped models (no
/// duplicates, in pattern order) and the warnings to show (without the `Warning: ` prefix).
pub fn resolve_model_scope(patterns: &[String], available: &[Model]) -> (Vec<ScopedModel>, Vec<String>) {
    let mut scoped: Vec<ScopedModel> = Vec::new();
    let mut warnings = Vec::new();
    let push = |scoped: &mut Vec<ScopedModel>, model: &Model, level: Option<ThinkingLevel>| {
        if !scoped.iter().any(|s| s.model.same_as(model)) {
            scoped.push(ScopedModel {
                model: model.clone(),
                thinking_level: level,
            });
        }
    };
    for pattern in patterns {
        if is_glob(pattern) {
            let (glob_text, level) = match pattern.rfind(':') {
                Some(i) => match ThinkingLevel::parse(&pattern[i + 1..]) {
                    Some(l) => (&pattern[..i], Some(l)),
                    None => (pattern.as_str(), None),
                },
                None => (pattern.as_str(), None),
            };
            let matcher = globset::GlobBuilder::new(glob_text)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher());
            let matching: Vec<&Model> = match &matcher {
                Ok(g) => available
                    .iter()
                    .filter(|m| g.is_match(format!("{}/{}", m.provider, m.id)) || g.is_match(&m.id))
                    .collect(),
                Err(_) => Vec::new(),
            };
            if matching.is_empty() {
                warnings.push(format!("No models match pattern \"{pattern}\""));
                continue;
            }
            for m in matching {
                push(&mut scoped, m, level);
            }
            continue;
        }
        let found = parse_model_pattern(pattern, available, true);
        if let Some(w) = found.warning {
            warnings.push(w);
        }
        match found.model {
            Some(m) => push(&mut scoped, &m, found.thinking_level),
            None => warnings.push(format!("No models match pattern \"{pattern}\"")),
        }
    }
    (scoped, warnings)
}

/// The outcome of `--provider` / `--model`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CliModel {
    pub model: Option<Model>,
    pub thinking_level: Option<ThinkingLevel>,
    /// Show as a yellow warning.
    pub warning: Option<String>,
    /// Show as an error and exit 1.
    pub error: Option<String>,
}

/// Resolve `--model` (and `--provider`) against **all** models, so `--api-key` can be used
/// for a provider that has no stored key yet. `usable` says which providers have credentials:
/// it decides between providers offering the same model (with an inline `--api-key` it
/// decides nothing: the key goes to whichever provider is chosen).
pub fn resolve_cli_model(
    cli_provider: Option<&str>,
    cli_model: Option<&str>,
    all: &[Model],
    defaults: ProviderDefaults<'_>,
    usable: &dyn Fn(&str) -> bool,
    inline_api_key: bool,
    cli_thinking: Option<ThinkingLevel>,
) -> CliModel {
    use super::model_reference::{resolve_model_reference, Reference};
    let Some(cli_model) = cli_model else {
        return CliModel::default();
    };
    let failed = |e: String| CliModel {
        error: Some(e),
        ..CliModel::default()
    };
    if all.is_empty() {
        return failed("No models available. Check your installation or add models to models.json.".into());
    }
    let provider = match cli_provider {
        Some(p) => {
            let lower = p.to_lowercase();
            match all.iter().find(|m| m.provider.to_lowercase() == lower) {
                Some(m) => Some(m.provider.clone()),
                None => {
                    return failed(format!(
                        "Unknown provider \"{p}\". Use --list-models to see available providers/models."
                    ))
                }
            }
        }
        None => None,
    };
    let never = |_: &str| false;
    let usable: &dyn Fn(&str) -> bool = if inline_api_key { &never } else { usable };
    match resolve_model_reference(cli_model, provider.as_deref(), all, usable) {
        Reference::Resolved {
            model,
            thinking_level,
            warning,
        } => CliModel {
            model: Some(*model),
            thinking_level,
            warning,
            error: None,
        },
        Reference::Ambiguous { candidates, usable } => {
            let mut names: Vec<String> = candidates.iter().map(|m| format!("{}/{}", m.provider, m.id)).collect();
            names.sort_by(|a, b| locale_cmp(a, b));
            let hint = if inline_api_key {
                "--api-key does not choose a provider."
            } else if usable == 0 {
                "No matching provider is authenticated."
            } else {
                "More than one matching provider is authenticated."
            };
            failed(format!(
                "Model \"{cli_model}\" is ambiguous across providers: {}. {hint} Use --provider or provider/model.",
                names.join(", ")
            ))
        }
        Reference::NotFound { target: None } => failed(format!(
            "Model \"{cli_model}\" not found. Use --list-models to see available models."
        )),
        Reference::NotFound { target: Some(t) } => {
            // With `--thinking`, a `:suffix` stays part of the custom id.
            let id = if cli_thinking.is_some() {
                &t.model_text
            } else {
                &t.model_id
            };
            let thinking_level = if cli_thinking.is_some() { None } else { t.thinking_level };
            let Some(mut model) = build_fallback_model(&t.provider, id, all, defaults) else {
                return failed(format!(
                    "Model \"{cli_model}\" not found. Use --list-models to see available models."
                ));
            };
            if cli_thinking.or(thinking_level).is_some_and(|l| l != ThinkingLevel::Off) {
                model.reasoning = true;
            }
            CliModel {
                warning: Some(format!(
                    "Model \"{id}\" not found for provider \"{}\". Using custom model id.",
                    t.provider
                )),
                model: Some(model),
                thinking_level,
                error: None,
            }
        }
    }
}

/// A model with an unknown id under a known provider: a copy of the provider's default model
/// (or its first) with the id and name replaced.
pub fn build_fallback_model(provider: &str, id: &str, all: &[Model], defaults: ProviderDefaults<'_>) -> Option<Model> {
    let provider_models: Vec<&Model> = all.iter().filter(|m| m.provider == provider).collect();
    let first = *provider_models.first()?;
    let base = defaults
        .iter()
        .find(|(p, _)| *p == provider)
        .and_then(|(_, default_id)| provider_models.iter().find(|m| m.id == *default_id).copied())
        .unwrap_or(first);
    let mut model = base.clone();
    model.id = id.to_string();
    model.name = id.to_string();
    Some(model)
}

/// The first available model that is its provider's default (in table order), else the first
/// available model.
pub fn first_default_available(available: &[Model], defaults: ProviderDefaults<'_>) -> Option<Model> {
    for (provider, id) in defaults {
        if let Some(m) = available.iter().find(|m| m.provider == *provider && m.id == *id) {
            return Some(m.clone());
        }
    }
    available.first().cloned()
}

/// Where [`find_initial_model`] and [`restore_model_from_session`] look a model up by
/// provider and id: a plain list, or the model registry, which then builds only that
/// provider's models instead of the whole catalogue.
pub trait ModelLookup {
    fn lookup(&self, provider: &str, id: &str) -> Option<Model>;
}

impl ModelLookup for [Model] {
    fn lookup(&self, provider: &str, id: &str) -> Option<Model> {
        self.iter().find(|m| m.provider == provider && m.id == id).cloned()
    }
}

impl ModelLookup for Vec<Model> {
    fn lookup(&self, provider: &str, id: &str) -> Option<Model> {
        self.as_slice().lookup(provider, id)
    }
}

/// Inputs of [`find_initial_model`].
#[derive(Debug, Clone, Default)]
pub struct InitialModelOptions<'a> {
    pub scoped_models: &'a [ScopedModel],
    /// `--continue` / `--resume`: the session's model is restored instead of the scope's.
    pub is_continuing: bool,
    pub default_provider: Option<&'a str>,
    pub default_model_id: Option<&'a str>,
    pub default_thinking_level: Option<ThinkingLevel>,
}

/// The starting model when `--model` gave none: first scoped model (unless continuing), then
/// the settings default, then the first available per-provider default, then the first
/// available model.
pub fn find_initial_model(
    options: &InitialModelOptions<'_>,
    all: &(impl ModelLookup + ?Sized),
    available: &[Model],
    defaults: ProviderDefaults<'_>,
) -> (Option<Model>, ThinkingLevel) {
    if let (Some(first), false) = (options.scoped_models.first(), options.is_continuing) {
        let level = first
            .thinking_level
            .or(options.default_thinking_level)
            .unwrap_or(DEFAULT_THINKING_LEVEL);
        return (Some(first.model.clone()), level);
    }
    if let (Some(p), Some(id)) = (options.default_provider, options.default_model_id) {
        if let Some(m) = all.lookup(p, id) {
            return (
                Some(m),
                options.default_thinking_level.unwrap_or(DEFAULT_THINKING_LEVEL),
            );
        }
    }
    // As pi 1.6: the settings' default level applies to whichever model is picked.
    (
        first_default_available(available, defaults),
        options.default_thinking_level.unwrap_or(DEFAULT_THINKING_LEVEL),
    )
}

/// The outcome of restoring a session's model.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoredModel {
    pub model: Option<Model>,
    /// Shown when the saved model could not be used.
    pub fallback_message: Option<String>,
}

/// Restore `provider/id` from a session if it still exists and has auth; else fall back to
/// `current`, else to the first available default.
pub fn restore_model_from_session(
    provider: &str,
    id: &str,
    current: Option<&Model>,
    all: &(impl ModelLookup + ?Sized),
    available: &[Model],
    defaults: ProviderDefaults<'_>,
) -> RestoredModel {
    let restored = all.lookup(provider, id);
    let has_auth = restored
        .as_ref()
        .is_some_and(|r| available.iter().any(|a| a.same_as(r)));
    if let (Some(m), true) = (restored.as_ref(), has_auth) {
        return RestoredModel {
            model: Some(m.clone()),
            fallback_message: None,
        };
    }
    let reason = if restored.is_none() {
        "model no longer exists"
    } else {
        "no auth configured"
    };
    let fallback = current
        .cloned()
        .or_else(|| first_default_available(available, defaults));
    match fallback {
        Some(m) => RestoredModel {
            fallback_message: Some(format!(
                "Could not restore model {provider}/{id} ({reason}). Using {}/{}.",
                m.provider, m.id
            )),
            model: Some(m),
        },
        None => RestoredModel {
            model: None,
            fallback_message: None,
        },
    }
}

/// The thinking-level rules of pi-ai (supported levels from `thinkingLevelMap`, clamping).
pub use pi_ai::thinking::{clamp_thinking_level, supported_thinking_levels};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pi_ai::{InputKind, ModelCost};

    pub(crate) fn model(provider: &str, id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "openai-completions".into(),
            provider: provider.into(),
            base_url: "http://localhost".into(),
            reasoning: false,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    fn catalogue() -> Vec<Model> {
        vec![
            model("anthropic", "claude-sonnet-4-5"),
            model("anthropic", "claude-sonnet-4-5-20250929"),
            model("anthropic", "claude-opus-4-7"),
            model("anthropic", "claude-haiku-4-5-20251001"),
            model("anthropic", "claude-haiku-4-5-20241022"),
            model("openai", "gpt-5.4"),
            model("openrouter", "openai/gpt-4o"),
            model("openrouter", "openai/gpt-4o:extended"),
            model("zai", "glm-5"),
            model("vercel-ai-gateway", "zai/glm-5"),
        ]
    }

    #[test]
    fn alias_detection() {
        assert!(is_alias("claude-sonnet-4-5"));
        assert!(!is_alias("claude-sonnet-4-5-20250929"));
        assert!(is_alias("devstral-medium-latest"));
    }

    #[test]
    fn aliases_before_dated_and_latest_dated() {
        let all = catalogue();
        let m = parse_model_pattern("sonnet", &all, false).model.expect("match");
        assert_eq!(m.id, "claude-sonnet-4-5");
        let m = parse_model_pattern("haiku", &all, false).model.expect("match");
        assert_eq!(m.id, "claude-haiku-4-5-20251001");
    }

    #[test]
    fn thinking_suffix_and_colon_ids() {
        let all = catalogue();
        let r = parse_model_pattern("sonnet:high", &all, false);
        assert_eq!(r.model.map(|m| m.id).as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(r.thinking_level, Some(ThinkingLevel::High));
        let r = parse_model_pattern("openai/gpt-4o:extended", &all, false);
        assert_eq!(r.model.map(|m| m.id).as_deref(), Some("openai/gpt-4o:extended"));
        assert_eq!(r.thinking_level, None);
        // Strict: an invalid suffix is no match. Scope: warn and use the prefix.
        assert!(parse_model_pattern("opus-4-7:turbo", &all, false).model.is_none());
        let r = parse_model_pattern("opus-4-7:turbo", &all, true);
        assert_eq!(r.model.map(|m| m.id).as_deref(), Some("claude-opus-4-7"));
        assert_eq!(
            r.warning.as_deref(),
            Some("Invalid thinking level \"turbo\" in pattern \"opus-4-7:turbo\". Using default instead.")
        );
    }

    #[test]
    fn cli_provider_prefix_and_fallback() {
        let all = catalogue();
        let d = DEFAULT_MODEL_PER_PROVIDER;
        // A known provider before the slash wins over an id containing the slash.
        let r = resolve_cli_model(None, Some("zai/glm-5"), &all, d, &|_| false, false, None);
        assert_eq!(r.model.as_ref().map(|m| m.provider.as_str()), Some("zai"));
        // Not a provider: exact id across all models.
        let r = resolve_cli_model(None, Some("openai/gpt-4o"), &all, d, &|_| false, false, None);
        assert_eq!(
            r.model.as_ref().map(|m| (m.provider.as_str(), m.id.as_str())),
            Some(("openrouter", "openai/gpt-4o"))
        );
        // --provider with a provider/ prefix in --model.
        let r = resolve_cli_model(
            Some("ANTHROPIC"),
            Some("anthropic/opus-4-7:low"),
            &all,
            d,
            &|_| false,
            false,
            None,
        );
        assert_eq!(r.model.as_ref().map(|m| m.id.as_str()), Some("claude-opus-4-7"));
        assert_eq!(r.thinking_level, Some(ThinkingLevel::Low));
        // Unknown id under a known provider: custom model from the provider default.
        let r = resolve_cli_model(
            Some("anthropic"),
            Some("claude-future-9"),
            &all,
            d,
            &|_| false,
            false,
            None,
        );
        let m = r.model.expect("fallback");
        assert_eq!(m.id, "claude-future-9");
        assert_eq!(m.provider, "anthropic");
        assert_eq!(
            r.warning.as_deref(),
            Some("Model \"claude-future-9\" not found for provider \"anthropic\". Using custom model id.")
        );
        let r = resolve_cli_model(Some("nope"), Some("x"), &all, d, &|_| false, false, None);
        assert_eq!(
            r.error.as_deref(),
            Some("Unknown provider \"nope\". Use --list-models to see available providers/models.")
        );
        let r = resolve_cli_model(None, Some("nothing-like-this"), &all, d, &|_| false, false, None);
        assert_eq!(
            r.error.as_deref(),
            Some("Model \"nothing-like-this\" not found. Use --list-models to see available models.")
        );
    }

    #[test]
    fn scope_globs() {
        let all = catalogue();
        let pats = vec![
            "anthropic/*haiku*:low".to_string(),
            "*GPT-5*".to_string(),
            "claude-haiku-4-5-20251001".to_string(),
            "nomatch*".to_string(),
        ];
        let (scoped, warnings) = resolve_model_scope(&pats, &all);
        let ids: Vec<&str> = scoped.iter().map(|s| s.model.id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["claude-haiku-4-5-20251001", "claude-haiku-4-5-20241022", "gpt-5.4"]
        );
        assert_eq!(scoped[0].thinking_level, Some(ThinkingLevel::Low));
        assert_eq!(warnings, vec!["No models match pattern \"nomatch*\"".to_string()]);
    }

    #[test]
    fn initial_model_priority() {
        let all = catalogue();
        let d = DEFAULT_MODEL_PER_PROVIDER;
        let available: Vec<Model> = all.iter().filter(|m| m.provider != "anthropic").cloned().collect();
        let (m, level) = find_initial_model(&InitialModelOptions::default(), &all, &available, d);
        assert_eq!(m.map(|m| m.id).as_deref(), Some("gpt-5.4"));
        assert_eq!(level, ThinkingLevel::Medium);
        // The settings' level applies to the first available model too (pi 1.6 keeps it).
        let opts = InitialModelOptions {
            default_thinking_level: Some(ThinkingLevel::High),
            ..Default::default()
        };
        let (m, level) = find_initial_model(&opts, &all, &available, d);
        assert_eq!(m.map(|m| m.id).as_deref(), Some("gpt-5.4"));
        assert_eq!(level, ThinkingLevel::High);
        let opts = InitialModelOptions {
            default_provider: Some("anthropic"),
            default_model_id: Some("claude-opus-4-7"),
            default_thinking_level: Some(ThinkingLevel::High),
            ..Default::default()
        };
        let (m, level) = find_initial_model(&opts, &all, &available, d);
        assert_eq!(m.map(|m| m.id).as_deref(), Some("claude-opus-4-7"));
        assert_eq!(level, ThinkingLevel::High);
        let scoped = vec![ScopedModel {
            model: all[8].clone(),
            thinking_level: None,
        }];
        let opts = InitialModelOptions {
            scoped_models: &scoped,
            default_thinking_level: Some(ThinkingLevel::Low),
            ..Default::default()
        };
        let (m, level) = find_initial_model(&opts, &all, &available, d);
        assert_eq!(m.map(|m| m.id).as_deref(), Some("glm-5"));
        assert_eq!(level, ThinkingLevel::Low);
    }

    #[test]
    fn restore_falls_back_with_message() {
        let all = catalogue();
        let available = vec![all[5].clone()];
        let r = restore_model_from_session(
            "anthropic",
            "claude-opus-4-7",
            None,
            &all,
            &available,
            DEFAULT_MODEL_PER_PROVIDER,
        );
        assert_eq!(r.model.map(|m| m.id).as_deref(), Some("gpt-5.4"));
        assert_eq!(
            r.fallback_message.as_deref(),
            Some("Could not restore model anthropic/claude-opus-4-7 (no auth configured). Using openai/gpt-5.4.")
        );
    }

    #[test]
    fn thinking_clamp() {
        let mut m = model("p", "m");
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::High), ThinkingLevel::Off);
        m.reasoning = true;
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::Xhigh), ThinkingLevel::High);
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::Off), ThinkingLevel::Off);
        m.thinking_level_map = Some(
            serde_json::json!({"off": null, "minimal": null, "medium": null, "xhigh": "max"})
                .as_object()
                .cloned()
                .expect("object"),
        );
        assert_eq!(
            supported_thinking_levels(&m),
            vec![ThinkingLevel::Low, ThinkingLevel::High, ThinkingLevel::Xhigh]
        );
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::Off), ThinkingLevel::Low);
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::Medium), ThinkingLevel::High);
    }
}
