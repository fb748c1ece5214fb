//! The `azure-openai-responses` API (provider `azure`): OpenAI's Responses stream behind an
//! Azure OpenAI resource. The body and the stream are those of [`super::openai_responses`]
//! (with Azure's differences there: the deployment as `model`, `store:false`, no retention
//! fields); this module owns what is Azure's own: where the endpoint is, the `api-key` header,
//! the deployment name and the wording of errors.
//!
//! Configuration comes from the environment, as in pi: `AZURE_OPENAI_BASE_URL` or
//! `AZURE_OPENAI_RESOURCE_NAME` (else the model's base URL), `AZURE_OPENAI_API_VERSION`
//! (default `v1`) and `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`model=deployment,...`).

use crate::events::AssistantStream;
use crate::http::{self, ErrorBodyStyle, HttpError, RetryPolicy};
use crate::options::StreamOptions;
use crate::providers::{model_headers, openai_responses};
use crate::stream_driver::error_stream;
use crate::types::{Context, Model};

/// Lookup of an environment variable (empty values count as unset).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

const DEFAULT_API_VERSION: &str = "v1";

/// Stream a response. `api_key` must already be resolved.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let env = &crate::env_keys::process_env;
    let url = match endpoint(model, env) {
        Ok(url) => url,
        Err(e) => return error_stream(model, e),
    };
    let payload = match openai_responses::request_payload(model, context, &options) {
        Ok(p) => p,
        Err(e) => return error_stream(model, e),
    };
    let headers = request_headers(model, &options, &api_key);
    let policy = RetryPolicy::from_options(&options);
    openai_responses::spawn_run(
        model,
        &options,
        url,
        headers,
        payload,
        policy,
        std::sync::Arc::new(describe_http_error),
        crate::providers::grammar_tools::inputs(model, &context.tools),
    )
}

/// The deployment a model is served by: its entry in `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, else
/// the model id.
pub fn deployment_name(model: &Model, env: Env) -> String {
    env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")
        .and_then(|map| {
            map.split(',').find_map(|entry| {
                let (id, deployment) = entry.trim().split_once('=')?;
                let (id, deployment) = (id.trim(), deployment.trim());
                (id == model.id && !deployment.is_empty()).then(|| deployment.to_string())
            })
        })
        .unwrap_or_else(|| model.id.clone())
}

/// `<base>/responses?api-version=<version>`.
pub fn endpoint(model: &Model, env: Env) -> Result<String, String> {
    let base = base_url(model, env)?;
    let version = env("AZURE_OPENAI_API_VERSION")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_API_VERSION.to_string());
    Ok(format!("{base}/responses?api-version={version}"))
}

/// The resource's base URL: `AZURE_OPENAI_BASE_URL`, else the resource named by
/// `AZURE_OPENAI_RESOURCE_NAME`, else the model's. Azure hosts given without a path get
/// `/openai/v1`.
pub fn base_url(model: &Model, env: Env) -> Result<String, String> {
    let configured = env("AZURE_OPENAI_BASE_URL")
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty())
        .or_else(|| {
            env("AZURE_OPENAI_RESOURCE_NAME")
                .filter(|n| !n.is_empty())
                .map(|name| format!("https://{name}.openai.azure.com/openai/v1"))
        })
        .or_else(|| Some(model.base_url.trim().to_string()).filter(|u| !u.is_empty()));
    let Some(url) = configured else {
        return Err(
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, \
                    or set the model's baseUrl."
                .to_string(),
        );
    };
    normalize_base_url(&url)
}

fn normalize_base_url(url: &str) -> Result<String, String> {
    let trimmed = url.trim().trim_end_matches('/');
    let mut parsed = reqwest::Url::parse(trimmed).map_err(|_| format!("Invalid Azure OpenAI base URL: {url}"))?;
    let host = parsed.host_str().unwrap_or_default().to_string();
    let azure_host = [".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com"]
        .iter()
        .any(|suffix| host.ends_with(suffix));
    let path = parsed.path().trim_end_matches('/').to_string();
    if azure_host && matches!(path.as_str(), "" | "/openai" | "/openai/v1/responses") {
        parsed.set_path("/openai/v1");
        parsed.set_query(None);
    }
    Ok(parsed.as_str().trim_end_matches('/').to_string())
}

/// `api-key` auth, pi's user agent, the model's headers, then the caller's. Azure gets no
/// session-affinity headers.
pub fn request_headers(model: &Model, options: &StreamOptions, api_key: &str) -> Vec<(String, String)> {
    let mut headers = vec![
        ("accept".to_string(), "application/json".to_string()),
        ("api-key".to_string(), api_key.to_string()),
        ("user-agent".to_string(), http::user_agent().to_string()),
    ];
    headers.extend(model_headers(model));
    headers.extend(options.headers.iter().cloned());
    headers
}

/// `Azure OpenAI API error (<status>): <body's error object>` as pi words it; when the body
/// has no error object, the SDK's own `<status> <message>` follows the prefix.
pub fn describe_http_error(error: &HttpError) -> String {
    error.message_with_prefix(ErrorBodyStyle::ErrorField, Some("Azure OpenAI API error"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{InputKind, ModelCost};
    use std::collections::HashMap;

    fn model(base_url: &str) -> Model {
        Model {
            id: "gpt-x".into(),
            name: "gpt-x".into(),
            api: "azure-openai-responses".into(),
            provider: "azure".into(),
            base_url: base_url.into(),
            reasoning: false,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 4096,
            headers: None,
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn endpoint_comes_from_the_environment_then_the_model() {
        let m = model("");
        let none = env_of(&[]);
        assert!(endpoint(&m, &none)
            .expect_err("no url")
            .contains("AZURE_OPENAI_BASE_URL"));
        let by_name = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "res")]);
        assert_eq!(
            endpoint(&m, &by_name).as_deref(),
            Ok("https://res.openai.azure.com/openai/v1/responses?api-version=v1")
        );
        let by_url = env_of(&[
            ("AZURE_OPENAI_BASE_URL", "https://x.cognitiveservices.azure.com/"),
            ("AZURE_OPENAI_RESOURCE_NAME", "ignored"),
            ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
        ]);
        assert_eq!(
            endpoint(&m, &by_url).as_deref(),
            Ok("https://x.cognitiveservices.azure.com/openai/v1/responses?api-version=2025-04-01-preview")
        );
        // Other hosts (proxies, mocks) keep their path.
        assert_eq!(
            endpoint(&model("http://127.0.0.1:9/v1/"), &none).as_deref(),
            Ok("http://127.0.0.1:9/v1/responses?api-version=v1")
        );
        assert!(base_url(&model("not a url"), &none).is_err());
    }

    #[test]
    fn deployment_names_come_from_the_map() {
        let env = env_of(&[("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-y=other, gpt-x = mine ,bad")]);
        assert_eq!(deployment_name(&model(""), &env), "mine");
        assert_eq!(deployment_name(&model(""), &env_of(&[])), "gpt-x");
    }

    #[test]
    fn errors_name_azure_and_carry_the_error_object() {
        let status = |status, body: &str| {
            describe_http_error(&HttpError::Status {
                status,
                body: body.into(),
            })
        };
        assert_eq!(
            status(429, r#"{"error":{"message":"Rate limit"}}"#),
            r#"Azure OpenAI API error (429): {"message":"Rate limit"}"#
        );
        assert_eq!(
            status(500, ""),
            "Azure OpenAI API error (500): 500 status code (no body)"
        );
        assert_eq!(
            status(502, "bad gateway"),
            "Azure OpenAI API error (502): 502 bad gateway"
        );
        assert_eq!(describe_http_error(&HttpError::Timeout), "Request timed out.");
    }
}
