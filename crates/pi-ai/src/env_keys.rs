//! API keys found in the environment, per provider, and `{VAR}` placeholders in base URLs.
//!
//! Every function has a variant taking the environment as a lookup closure so callers (and
//! tests) can supply their own instead of the process environment. As in JavaScript, a variable
//! set to the empty string counts as unset.

use std::path::{Path, PathBuf};

/// The key reported for providers whose credentials come from the platform (Vertex ADC, AWS)
/// rather than from a single variable.
pub const AUTHENTICATED: &str = "<authenticated>";

/// Anthropic's bearer token variable: it configures the provider but is not an API key.
pub const ANTHROPIC_AUTH_TOKEN_ENV: &str = "ANTHROPIC_AUTH_TOKEN";

/// The variables holding `provider`'s API key, highest priority first; `None` for providers
/// without one (OAuth-only or credential-chain providers, unknown providers).
pub fn api_key_env_vars(provider: &str) -> Option<&'static [&'static str]> {
    let vars: &'static [&'static str] = match provider {
        "github-copilot" => &["COPILOT_GITHUB_TOKEN"],
        // `ANTHROPIC_AUTH_TOKEN` is listed (it counts as configured) but is never returned as
        // the API key: it is sent as `Authorization: Bearer`. An OAuth token wins over a key.
        "anthropic" => &[ANTHROPIC_AUTH_TOKEN_ENV, "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        "ant-ling" => &["ANT_LING_API_KEY"],
        // Qwen Token Plan: the per-plan variable, then the region variable both plans shared.
        "qwen-token-plan" => &["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-cn" => &["QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
        "qwen-token-plan-individual" => &["QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-individual-cn" => &["QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
        "openai" => &["OPENAI_API_KEY"],
        "azure" => &["AZURE_OPENAI_API_KEY"],
        "nvidia" => &["NVIDIA_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        "google-vertex" => &["GOOGLE_CLOUD_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "typesafe" => &["TYPESAFE_API_KEY"],
        "radius" => &["RADIUS_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "vercel-ai-gateway" => &["AI_GATEWAY_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        "zai-coding-cn" => &["ZAI_CODING_CN_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "minimax" => &["MINIMAX_API_KEY"],
        "minimax-cn" => &["MINIMAX_CN_API_KEY"],
        "moonshotai" | "moonshotai-cn" => &["MOONSHOT_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "fireworks" => &["FIREWORKS_API_KEY"],
        "together" => &["TOGETHER_API_KEY"],
        "baseten" => &["BASETEN_API_KEY"],
        "opencode" | "opencode-go" => &["OPENCODE_API_KEY"],
        "kimi-coding" => &["KIMI_API_KEY"],
        "meta" => &["META_API_KEY"],
        "cloudflare-workers-ai" | "cloudflare-ai-gateway" => &["CLOUDFLARE_API_KEY"],
        "xiaomi" => &["XIAOMI_API_KEY"],
        "xiaomi-token-plan-cn" => &["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
        "xiaomi-token-plan-ams" => &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
        "xiaomi-token-plan-sgp" => &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
        _ => return None,
    };
    Some(vars)
}

/// The process environment, with empty values treated as unset.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Which of `provider`'s key variables are set, highest priority first (pi's `findEnvKeys`);
/// `None` when none is.
pub fn find_env_keys(provider: &str) -> Option<Vec<&'static str>> {
    find_env_keys_with(provider, &process_env)
}

/// [`find_env_keys`] over a given environment.
pub fn find_env_keys_with(provider: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<Vec<&'static str>> {
    let found: Vec<&'static str> = api_key_env_vars(provider)?
        .iter()
        .copied()
        .filter(|var| is_set(env, var))
        .collect();
    (!found.is_empty()).then_some(found)
}

/// `provider`'s API key from the process environment (pi's `getEnvApiKey`). Vertex with
/// application default credentials, a project and a location, and Bedrock with any AWS
/// credential source, yield [`AUTHENTICATED`].
pub fn env_api_key(provider: &str) -> Option<String> {
    env_api_key_with(provider, &process_env, &|p: &Path| p.exists())
}

/// [`env_api_key`] over a given environment and file-existence check (the latter decides
/// whether Vertex's application default credentials file is there).
pub fn env_api_key_with(
    provider: &str,
    env: &dyn Fn(&str) -> Option<String>,
    file_exists: &dyn Fn(&Path) -> bool,
) -> Option<String> {
    if let Some(key) = api_key_env_vars(provider)
        .into_iter()
        .flatten()
        .filter(|var| **var != ANTHROPIC_AUTH_TOKEN_ENV)
        .find_map(|var| env(var).filter(|v| !v.is_empty()))
    {
        return Some(key);
    }
    let authenticated = match provider {
        "google-vertex" => {
            has_vertex_adc(env, file_exists)
                && (is_set(env, "GOOGLE_CLOUD_PROJECT") || is_set(env, "GCLOUD_PROJECT"))
                && is_set(env, "GOOGLE_CLOUD_LOCATION")
        }
        "amazon-bedrock" => has_aws_credentials(env),
        _ => false,
    };
    authenticated.then(|| AUTHENTICATED.to_string())
}

fn is_set(env: &dyn Fn(&str) -> Option<String>, name: &str) -> bool {
    env(name).is_some_and(|v| !v.is_empty())
}

/// Application default credentials: the file `GOOGLE_APPLICATION_CREDENTIALS` names, or else
/// gcloud's default file under the home directory.
fn has_vertex_adc(env: &dyn Fn(&str) -> Option<String>, file_exists: &dyn Fn(&Path) -> bool) -> bool {
    if let Some(path) = env("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.is_empty()) {
        return file_exists(Path::new(&path));
    }
    let Some(home) = env("HOME").filter(|h| !h.is_empty()) else {
        return false;
    };
    let path: PathBuf = [
        home.as_str(),
        ".config",
        "gcloud",
        "application_default_credentials.json",
    ]
    .iter()
    .collect();
    file_exists(&path)
}

/// Any source the AWS credential chain would use: a profile, static keys, a Bedrock bearer
/// token, ECS container credentials or web identity (IRSA).
fn has_aws_credentials(env: &dyn Fn(&str) -> Option<String>) -> bool {
    is_set(env, "AWS_PROFILE")
        || (is_set(env, "AWS_ACCESS_KEY_ID") && is_set(env, "AWS_SECRET_ACCESS_KEY"))
        || is_set(env, "AWS_BEARER_TOKEN_BEDROCK")
        || is_set(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        || is_set(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI")
        || is_set(env, "AWS_WEB_IDENTITY_TOKEN_FILE")
}

/// A `{VAR}` placeholder in a base URL whose variable is not set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var} is required for provider {provider} but is not set.")]
pub struct MissingPlaceholder {
    pub var: String,
    pub provider: String,
}

/// Fill the `{VAR}` placeholders of a base URL (the Cloudflare providers' account and gateway
/// ids) from the process environment. A URL without `{` is returned unchanged.
pub fn resolve_base_url(base_url: &str, provider: &str) -> Result<String, MissingPlaceholder> {
    resolve_base_url_with(base_url, provider, &process_env)
}

/// [`resolve_base_url`] over a given environment. Only names of the form `[A-Z_][A-Z0-9_]*`
/// are placeholders; other braces are left as they are.
pub fn resolve_base_url_with(
    base_url: &str,
    provider: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, MissingPlaceholder> {
    if !base_url.contains('{') {
        return Ok(base_url.to_string());
    }
    let mut out = String::with_capacity(base_url.len());
    let mut rest = base_url;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name = after
            .find('}')
            .map(|close| &after[..close])
            .filter(|n| is_placeholder_name(n));
        match name {
            Some(name) => {
                let value = env(name).filter(|v| !v.is_empty()).ok_or_else(|| MissingPlaceholder {
                    var: name.to_string(),
                    provider: provider.to_string(),
                })?;
                out.push_str(&value);
                rest = &after[name.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The Cloudflare providers' endpoint placeholders: their account and gateway ids.
const CLOUDFLARE_PLACEHOLDERS: [&str; 2] = ["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"];

/// Fill the Cloudflare account and gateway ids of a base URL as pi 1.6 does before a request:
/// from `env` (a stored credential's `env` over the process environment), a placeholder whose
/// variable is unset staying as written.
pub fn fill_cloudflare_ids(base_url: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut url = base_url.to_string();
    for name in CLOUDFLARE_PLACEHOLDERS {
        let placeholder = format!("{{{name}}}");
        if url.contains(&placeholder) {
            if let Some(value) = env(name).filter(|v| !v.is_empty()) {
                url = url.replace(&placeholder, &value);
            }
        }
    }
    url
}

fn is_placeholder_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    fn key(provider: &str, pairs: &[(&str, &str)]) -> Option<String> {
        env_api_key_with(provider, &env_of(pairs), &|_| false)
    }

    #[test]
    fn plain_provider_keys() {
        let cases = [
            ("openai", "OPENAI_API_KEY"),
            ("azure", "AZURE_OPENAI_API_KEY"),
            ("ant-ling", "ANT_LING_API_KEY"),
            ("nvidia", "NVIDIA_API_KEY"),
            ("typesafe", "TYPESAFE_API_KEY"),
            ("radius", "RADIUS_API_KEY"),
            ("zai-coding-cn", "ZAI_CODING_CN_API_KEY"),
            ("together", "TOGETHER_API_KEY"),
            ("baseten", "BASETEN_API_KEY"),
            ("meta", "META_API_KEY"),
            ("deepseek", "DEEPSEEK_API_KEY"),
            ("google", "GEMINI_API_KEY"),
            ("google-vertex", "GOOGLE_CLOUD_API_KEY"),
            ("groq", "GROQ_API_KEY"),
            ("cerebras", "CEREBRAS_API_KEY"),
            ("xai", "XAI_API_KEY"),
            ("openrouter", "OPENROUTER_API_KEY"),
            ("vercel-ai-gateway", "AI_GATEWAY_API_KEY"),
            ("zai", "ZAI_API_KEY"),
            ("mistral", "MISTRAL_API_KEY"),
            ("minimax", "MINIMAX_API_KEY"),
            ("minimax-cn", "MINIMAX_CN_API_KEY"),
            ("moonshotai", "MOONSHOT_API_KEY"),
            ("moonshotai-cn", "MOONSHOT_API_KEY"),
            ("huggingface", "HF_TOKEN"),
            ("fireworks", "FIREWORKS_API_KEY"),
            ("opencode", "OPENCODE_API_KEY"),
            ("opencode-go", "OPENCODE_API_KEY"),
            ("kimi-coding", "KIMI_API_KEY"),
            ("cloudflare-workers-ai", "CLOUDFLARE_API_KEY"),
            ("cloudflare-ai-gateway", "CLOUDFLARE_API_KEY"),
            ("xiaomi", "XIAOMI_API_KEY"),
            ("xiaomi-token-plan-cn", "XIAOMI_TOKEN_PLAN_CN_API_KEY"),
            ("xiaomi-token-plan-ams", "XIAOMI_TOKEN_PLAN_AMS_API_KEY"),
            ("xiaomi-token-plan-sgp", "XIAOMI_TOKEN_PLAN_SGP_API_KEY"),
        ];
        for (provider, var) in cases {
            assert_eq!(key(provider, &[(var, "k1")]).as_deref(), Some("k1"), "{provider}");
            assert_eq!(key(provider, &[]), None, "{provider}");
        }
    }

    #[test]
    fn every_catalogue_provider_is_covered() {
        for provider in crate::models::get_providers() {
            let covered =
                api_key_env_vars(provider).is_some() || provider == "amazon-bedrock" || provider == "openai-codex";
            assert!(covered, "{provider}");
        }
        assert_eq!(api_key_env_vars("openai-codex"), None);
        // Renamed to `azure` in 1.0.3; the old id has no key of its own.
        assert_eq!(api_key_env_vars("azure-openai-responses"), None);
        assert_eq!(key("unknown-provider", &[("OPENAI_API_KEY", "x")]), None);
    }

    #[test]
    fn anthropic_oauth_token_wins() {
        let both = [("ANTHROPIC_API_KEY", "api"), ("ANTHROPIC_OAUTH_TOKEN", "oauth")];
        assert_eq!(key("anthropic", &both).as_deref(), Some("oauth"));
        assert_eq!(key("anthropic", &both[..1]).as_deref(), Some("api"));
        let found = find_env_keys_with("anthropic", &env_of(&both));
        assert_eq!(found, Some(vec!["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]));
    }

    #[test]
    fn anthropic_auth_token_configures_but_is_not_the_key() {
        let env = [("ANTHROPIC_AUTH_TOKEN", "bearer")];
        assert_eq!(key("anthropic", &env), None);
        assert_eq!(
            find_env_keys_with("anthropic", &env_of(&env)),
            Some(vec!["ANTHROPIC_AUTH_TOKEN"])
        );
        let both = [("ANTHROPIC_AUTH_TOKEN", "bearer"), ("ANTHROPIC_API_KEY", "api")];
        assert_eq!(key("anthropic", &both).as_deref(), Some("api"));
    }

    #[test]
    fn qwen_token_plans_fall_back_to_the_shared_region_key() {
        let shared = [("QWEN_TOKEN_PLAN_API_KEY", "shared")];
        assert_eq!(key("qwen-token-plan", &shared).as_deref(), Some("shared"));
        assert_eq!(key("qwen-token-plan-individual", &shared).as_deref(), Some("shared"));
        assert_eq!(key("qwen-token-plan-cn", &shared), None);
        let both = [
            ("QWEN_TOKEN_PLAN_CN_API_KEY", "shared"),
            ("QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "team"),
        ];
        assert_eq!(key("qwen-token-plan-cn", &both).as_deref(), Some("team"));
        assert_eq!(key("qwen-token-plan-individual-cn", &both).as_deref(), Some("shared"));
    }

    #[test]
    fn copilot_reads_only_its_own_token() {
        // pi 1.6 no longer reads GH_TOKEN / GITHUB_TOKEN.
        let env = [("GITHUB_TOKEN", "gh2"), ("GH_TOKEN", "gh1")];
        assert_eq!(key("github-copilot", &env), None);
        let env = [
            ("GITHUB_TOKEN", "gh2"),
            ("GH_TOKEN", "gh1"),
            ("COPILOT_GITHUB_TOKEN", "c"),
        ];
        assert_eq!(key("github-copilot", &env).as_deref(), Some("c"));
    }

    #[test]
    fn empty_values_count_as_unset() {
        let env = [("ANTHROPIC_OAUTH_TOKEN", ""), ("ANTHROPIC_API_KEY", "api")];
        assert_eq!(key("anthropic", &env).as_deref(), Some("api"));
        assert_eq!(
            find_env_keys_with("anthropic", &env_of(&env)),
            Some(vec!["ANTHROPIC_API_KEY"])
        );
        assert_eq!(find_env_keys_with("openai", &env_of(&[("OPENAI_API_KEY", "")])), None);
    }

    #[test]
    fn bedrock_credential_sources() {
        let sources: [&[(&str, &str)]; 6] = [
            &[("AWS_PROFILE", "dev")],
            &[("AWS_ACCESS_KEY_ID", "a"), ("AWS_SECRET_ACCESS_KEY", "s")],
            &[("AWS_BEARER_TOKEN_BEDROCK", "t")],
            &[("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/creds")],
            &[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.2/creds")],
            &[("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/token")],
        ];
        for env in sources {
            assert_eq!(key("amazon-bedrock", env).as_deref(), Some(AUTHENTICATED), "{env:?}");
        }
        assert_eq!(key("amazon-bedrock", &[("AWS_ACCESS_KEY_ID", "a")]), None);
        assert_eq!(key("amazon-bedrock", &[]), None);
    }

    #[test]
    fn vertex_adc_needs_credentials_project_and_location() {
        let gac = [
            ("GOOGLE_APPLICATION_CREDENTIALS", "/creds.json"),
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "us-central1"),
        ];
        let only_creds = |p: &Path| p == Path::new("/creds.json");
        let vertex = |pairs: &[(&str, &str)], exists: &dyn Fn(&Path) -> bool| {
            env_api_key_with("google-vertex", &env_of(pairs), exists)
        };
        assert_eq!(vertex(&gac, &only_creds).as_deref(), Some(AUTHENTICATED));
        // The named file must exist; the default file is then not consulted.
        assert_eq!(vertex(&gac, &|_| false), None);
        assert_eq!(vertex(&gac[..2], &only_creds), None, "no location");
        assert_eq!(vertex(&[gac[0], gac[2]], &only_creds), None, "no project");
        let gcloud = [
            ("GCLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "l"),
            ("HOME", "/home/u"),
        ];
        let default_file = |p: &Path| p == Path::new("/home/u/.config/gcloud/application_default_credentials.json");
        assert_eq!(vertex(&gcloud, &default_file).as_deref(), Some(AUTHENTICATED));
        // An explicit API key wins over ADC.
        let mut with_key = gac.to_vec();
        with_key.push(("GOOGLE_CLOUD_API_KEY", "gk"));
        assert_eq!(vertex(&with_key, &only_creds).as_deref(), Some("gk"));
    }

    #[test]
    fn base_url_placeholders_are_filled() {
        let env = env_of(&[("CLOUDFLARE_ACCOUNT_ID", "acc"), ("CLOUDFLARE_GATEWAY_ID", "gw")]);
        let url = "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/anthropic";
        assert_eq!(
            resolve_base_url_with(url, "cloudflare-ai-gateway", &env).as_deref(),
            Ok("https://gateway.ai.cloudflare.com/v1/acc/gw/anthropic")
        );
        for model in crate::models::get_models("cloudflare-workers-ai") {
            let resolved = resolve_base_url_with(&model.base_url, &model.provider, &env).expect("resolved");
            assert_eq!(resolved, "https://api.cloudflare.com/client/v4/accounts/acc/ai/v1");
        }
        assert_eq!(
            resolve_base_url_with("https://api.openai.com/v1", "openai", &env_of(&[])).as_deref(),
            Ok("https://api.openai.com/v1")
        );
        // Braces that are not placeholders stay.
        assert_eq!(
            resolve_base_url_with("https://h/{lower}/{A", "p", &env).as_deref(),
            Ok("https://h/{lower}/{A")
        );
    }

    #[test]
    fn cloudflare_ids_are_filled_and_unset_ones_kept() {
        let url = "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/{OTHER}";
        assert_eq!(
            fill_cloudflare_ids(url, &env_of(&[("CLOUDFLARE_ACCOUNT_ID", "acc"), ("OTHER", "x")])),
            "https://gateway.ai.cloudflare.com/v1/acc/{CLOUDFLARE_GATEWAY_ID}/{OTHER}"
        );
        assert_eq!(
            fill_cloudflare_ids(url, &env_of(&[("CLOUDFLARE_ACCOUNT_ID", "")])),
            url,
            "an empty id counts as unset"
        );
    }

    #[test]
    fn missing_placeholder_names_the_variable() {
        let env = env_of(&[("CLOUDFLARE_ACCOUNT_ID", "acc")]);
        let url = "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/openai";
        let err = resolve_base_url_with(url, "cloudflare-ai-gateway", &env).expect_err("missing gateway id");
        assert_eq!(
            err.to_string(),
            "CLOUDFLARE_GATEWAY_ID is required for provider cloudflare-ai-gateway but is not set."
        );
    }
}
