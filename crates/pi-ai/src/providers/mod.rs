//! One module per wire API, plus the small helpers they share.

pub mod anthropic;
pub mod azure;
pub mod bedrock;
pub mod google;
pub mod google_auth;
pub mod grammar_tools;
pub(crate) mod json_tree;
pub(crate) mod lenient;
pub mod mistral;
pub mod openai_codex;
pub mod openai_completions;
pub mod openai_responses;
pub mod output_cap;
pub mod pi_messages;
pub mod vertex;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::http::{self, HttpError, RetryPolicy};
use crate::stream_driver::ProviderError;

use crate::options::{CacheRetention, StreamOptions};
use crate::types::Model;

/// The cache retention of a call: the option, or `long` when `PI_CACHE_RETENTION=long` and the
/// option was left at its default.
pub(crate) fn cache_retention(options: &StreamOptions) -> CacheRetention {
    if options.cache_retention == CacheRetention::Short
        && std::env::var("PI_CACHE_RETENTION").is_ok_and(|v| v == "long")
    {
        return CacheRetention::Long;
    }
    options.cache_retention
}

/// The header a bearer key travels in: Cloudflare's AI Gateway takes its key in
/// `cf-aig-authorization` and pi 1.6 sends it no `Authorization`; every other service takes
/// `Authorization`.
pub(crate) fn bearer_header(model: &Model, api_key: &str) -> (String, String) {
    let name = if model.provider == "cloudflare-ai-gateway" {
        "cf-aig-authorization"
    } else {
        "authorization"
    };
    (name.to_string(), format!("Bearer {api_key}"))
}

/// The model's own headers as name/value pairs (non-string values are written as JSON), after
/// pi's attribution headers, which they may replace (or remove, with `null`).
pub(crate) fn model_headers(model: &Model) -> Vec<(String, String)> {
    let own = model.headers.iter().flatten();
    let mut headers: Vec<(String, String)> = crate::identity::attribution_headers(model)
        .into_iter()
        .filter(|(name, _)| !own.clone().any(|(k, _)| k.eq_ignore_ascii_case(name)))
        .collect();
    headers.extend(own.filter(|(_, v)| !v.is_null()).map(|(k, v)| {
        let value = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        (k.clone(), value)
    }));
    headers
}

/// The base URL a GitHub Copilot token names in its `proxy-ep=proxy.<host>` field
/// (`https://api.<host>`), for requests of the `github-copilot` provider; `None` otherwise.
pub fn copilot_base_url(model: &Model, api_key: &str) -> Option<String> {
    if model.provider != "github-copilot" {
        return None;
    }
    let proxy = api_key
        .split(';')
        .find_map(|field| field.trim().strip_prefix("proxy-ep="))
        .filter(|p| !p.is_empty() && !p.contains(['/', '\\', '?', '#', '@']))?;
    let host = proxy
        .strip_prefix("proxy.")
        .map_or_else(|| proxy.to_string(), |rest| format!("api.{rest}"));
    Some(format!("https://{host}"))
}

/// `base` + `/` + `path`, without doubling the slash.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// A boolean field of `model.compat`.
pub(crate) fn compat_bool(model: &Model, key: &str) -> Option<bool> {
    model.compat.as_ref()?.get(key)?.as_bool()
}

/// A string field of `model.compat`.
pub(crate) fn compat_str<'a>(model: &'a Model, key: &str) -> Option<&'a str> {
    model.compat.as_ref()?.get(key)?.as_str()
}

/// Replace `body` through the `on_payload` hook, if one is set and it returns a value.
pub(crate) fn apply_payload_hook(options: &StreamOptions, model: &Model, body: Value) -> Value {
    match &options.on_payload {
        Some(hook) => hook(&body, model).unwrap_or(body),
        None => body,
    }
}

/// A number as JavaScript writes it in JSON: integral values without a fraction (`1`, not `1.0`).
pub(crate) fn js_number(value: f64) -> Value {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(value as i64)
    } else {
        serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

/// Bodies at least this large are freed off the request's path (see [`post_body`]).
const BACKGROUND_FREE_BYTES: usize = 256 * 1024;

/// POST `body` as JSON with the provider-layer retry. An HTTP failure becomes the provider's
/// error text, worded by `describe` the way that API's SDK words it.
///
/// The body is freed on a blocking-pool thread while the request is in flight: for a long
/// conversation it is a tree of thousands of values, and freeing it took milliseconds that
/// the caller would otherwise spend before it can read the reply.
pub(crate) async fn post_body(
    url: &str,
    headers: HeaderMap,
    body: Value,
    policy: RetryPolicy,
    describe: impl Fn(&HttpError) -> String,
) -> Result<reqwest::Response, ProviderError> {
    let payload = serde_json::to_vec(&body).map_err(|e| ProviderError::Message(e.to_string()))?;
    if payload.len() >= BACKGROUND_FREE_BYTES {
        drop(tokio::task::spawn_blocking(move || drop(body)));
    } else {
        drop(body);
    }
    post_bytes(url, headers, payload, policy, describe).await
}

/// [`post_body`] for a body already serialized.
pub(crate) async fn post_bytes(
    url: &str,
    headers: HeaderMap,
    payload: Vec<u8>,
    policy: RetryPolicy,
    describe: impl Fn(&HttpError) -> String,
) -> Result<reqwest::Response, ProviderError> {
    let call = crate::provider_hooks::current();
    let payload = match &call {
        Some(call) => crate::provider_hooks::rewrite_payload(call, payload).await,
        None => payload,
    };
    let response = http::post_json(url, headers, payload.into(), policy)
        .await
        .map_err(|e| ProviderError::Message(describe(&e)))?;
    if let Some(call) = &call {
        crate::provider_hooks::report_response(call, &response).await;
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_tokens_name_their_endpoint() {
        let mut model = crate::models::get_models("github-copilot")[0].clone();
        let token = "tid=1;exp=2;proxy-ep=proxy.business.githubcopilot.com;st=x";
        assert_eq!(
            copilot_base_url(&model, token).as_deref(),
            Some("https://api.business.githubcopilot.com")
        );
        assert_eq!(copilot_base_url(&model, "ghu_plain"), None);
        assert_eq!(copilot_base_url(&model, "proxy-ep=evil.example/path"), None);
        model.provider = "openai".into();
        assert_eq!(copilot_base_url(&model, token), None);
    }
}
