//! The `google-vertex` API: Gemini on Google Cloud Vertex AI. The body and the stream are
//! Gemini's ([`super::google`]); this module owns where the request goes and how it
//! authenticates.
//!
//! With an API key (`GOOGLE_CLOUD_API_KEY`, Vertex "express mode") requests go to the global
//! endpoint, `x-goog-api-key` carrying the key. A model whose base URL is a plain URL (no
//! `{location}` placeholder) is called there instead, under `/v1` unless the URL names an API
//! version. Application default credentials (a project, a location and a credentials file) are
//! recognised by [`crate::env_keys`] but not implemented here: such a call fails with a message
//! that says so.

use serde_json::Value;

use crate::events::AssistantStream;
use crate::http;
use crate::options::StreamOptions;
use crate::providers::{apply_payload_hook, google, join_url, model_headers};
use crate::stream_driver::error_stream;
use crate::types::{Context, Model};

const API_VERSION: &str = "v1";
/// The global endpoint of express mode.
const EXPRESS_BASE_URL: &str = "https://aiplatform.googleapis.com";
/// The key pi stores when Vertex is configured through credentials rather than a key.
const CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";

/// Stream a reply. `api_key` is the Vertex API key, or a marker of ambient credentials.
pub fn stream(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> AssistantStream {
    let Some(key) = usable_api_key(&api_key) else {
        return error_stream(
            model,
            "Vertex AI with application default credentials is not supported by this build; \
             set GOOGLE_CLOUD_API_KEY to a Vertex AI API key"
                .to_string(),
        );
    };
    let mut headers = vec![
        ("x-goog-api-key".to_string(), key.to_string()),
        ("user-agent".to_string(), http::user_agent().to_string()),
    ];
    headers.extend(model_headers(model));
    headers.extend(options.headers.iter().cloned());
    let url = endpoint(model);
    let mut body = google::build_body(model, context, &options);
    parts_before_role(&mut body);
    let body = apply_payload_hook(&options, model, body);
    google::spawn_stream(model, &options, body, url, &headers)
}

/// The Vertex SDK writes each content entry as `{parts, role}` (Gemini's keeps `{role, parts}`).
fn parts_before_role(body: &mut Value) {
    let Some(contents) = body.get_mut("contents").and_then(Value::as_array_mut) else {
        return;
    };
    for content in contents {
        if let Some(entry) = content.as_object_mut() {
            if let Some(role) = entry.shift_remove("role") {
                entry.insert("role".into(), role);
            }
        }
    }
}

/// An API key, or `None` for the markers of ambient credentials (`<authenticated>`, the
/// credentials marker, any `<...>` placeholder).
fn usable_api_key(key: &str) -> Option<&str> {
    let key = key.trim();
    let placeholder = key.starts_with('<') && key.ends_with('>') && key.len() > 2;
    (!key.is_empty() && key != CREDENTIALS_MARKER && !placeholder).then_some(key)
}

/// `<base>[/v1]/publishers/google/models/<id>:streamGenerateContent?alt=sse`.
pub fn endpoint(model: &Model) -> String {
    let custom = model.base_url.trim();
    let base = if custom.is_empty() || custom.contains("{location}") {
        join_url(EXPRESS_BASE_URL, API_VERSION)
    } else if names_api_version(custom) {
        custom.trim_end_matches('/').to_string()
    } else {
        join_url(custom, API_VERSION)
    };
    join_url(
        &base,
        &format!("publishers/google/models/{}:streamGenerateContent?alt=sse", model.id),
    )
}

/// Whether a path segment of `url` is an API version (`v1`, `v1beta1`, ...).
fn names_api_version(url: &str) -> bool {
    let path = reqwest::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.to_string());
    path.split('/').any(|part| {
        let Some(rest) = part.strip_prefix('v') else {
            return false;
        };
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        let tail = &rest[digits..];
        tail.is_empty()
            || tail
                .strip_prefix("beta")
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{InputKind, ModelCost};

    fn model(base_url: &str) -> Model {
        Model {
            id: "gemini-x".into(),
            name: "gemini-x".into(),
            api: "google-vertex".into(),
            provider: "google-vertex".into(),
            base_url: base_url.into(),
            reasoning: false,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 4096,
            headers: None,
            compat: None,
            thinking_level_map: None,
        }
    }

    #[test]
    fn endpoints_follow_the_base_url() {
        let tail = "publishers/google/models/gemini-x:streamGenerateContent?alt=sse";
        assert_eq!(
            endpoint(&model("https://{location}-aiplatform.googleapis.com")),
            format!("https://aiplatform.googleapis.com/v1/{tail}")
        );
        assert_eq!(endpoint(&model("http://proxy:8/")), format!("http://proxy:8/v1/{tail}"));
        assert_eq!(
            endpoint(&model("http://proxy:8/v1beta1")),
            format!("http://proxy:8/v1beta1/{tail}")
        );
        assert_eq!(
            endpoint(&model("http://proxy:8/vertex")),
            format!("http://proxy:8/vertex/v1/{tail}")
        );
    }

    #[test]
    fn credential_markers_are_not_keys() {
        assert_eq!(usable_api_key(" k "), Some("k"));
        for marker in ["", "<authenticated>", "gcp-vertex-credentials"] {
            assert_eq!(usable_api_key(marker), None, "{marker}");
        }
    }
}
