//! One module per wire API, plus the small helpers they share.

pub mod anthropic;
pub mod google;
pub mod openai_completions;
pub mod openai_responses;

use serde_json::Value;

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

/// The model's own headers as name/value pairs (non-string values are written as JSON).
pub(crate) fn model_headers(model: &Model) -> Vec<(String, String)> {
    model
        .headers
        .iter()
        .flatten()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let value = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), value)
        })
        .collect()
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
