//! The `google-vertex` API: Gemini on Google Cloud Vertex AI. The body and the stream are
//! Gemini's ([`super::google`]); this module owns where the request goes and how it
//! authenticates.
//!
//! With an API key (`GOOGLE_CLOUD_API_KEY`, Vertex "express mode") requests go to the global
//! endpoint, `x-goog-api-key` carrying the key. A model whose base URL is a plain URL (no
//! `{location}` placeholder) is called there instead, under `/v1` unless the URL names an API
//! version. Without a key, application default credentials sign the request
//! ([`super::google_auth`]): a bearer token for the project and location the environment names
//! (`GOOGLE_CLOUD_PROJECT` or `GCLOUD_PROJECT`, `GOOGLE_CLOUD_LOCATION`), at the regional
//! endpoint `https://<location>-aiplatform.googleapis.com/v1/projects/<p>/locations/<l>/…`.

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
        return stream_with_credentials(model, context, options, &crate::env_keys::process_env);
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

/// A request signed with application default credentials.
fn stream_with_credentials(
    model: &Model,
    context: &Context,
    options: StreamOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> AssistantStream {
    let url = match adc_endpoint(model, env) {
        Ok(url) => url,
        Err(e) => return error_stream(model, e),
    };
    let Some(path) = super::google_auth::credentials_path(env) else {
        return error_stream(
            model,
            "No Google application default credentials file was found".to_string(),
        );
    };
    let mut headers = vec![("user-agent".to_string(), http::user_agent().to_string())];
    headers.extend(model_headers(model));
    headers.extend(options.headers.iter().cloned());
    let mut body = google::build_body(model, context, &options);
    parts_before_role(&mut body);
    let body = apply_payload_hook(&options, model, body);
    let token = async move { super::google_auth::access_token(&path).await };
    google::spawn_stream_authorized(model, &options, body, url, &headers, token)
}

/// The endpoint of a request with credentials: a custom base URL as with a key, else the
/// project's model under the location's regional host (`global` has none).
pub fn adc_endpoint(model: &Model, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let custom = model.base_url.trim();
    if !custom.is_empty() && !custom.contains("{location}") {
        return Ok(endpoint(model));
    }
    let nonempty = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let project = nonempty("GOOGLE_CLOUD_PROJECT")
        .or_else(|| nonempty("GCLOUD_PROJECT"))
        .ok_or(
            "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options.",
        )?;
    let location = nonempty("GOOGLE_CLOUD_LOCATION")
        .ok_or("Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options.")?;
    let host = if location == "global" {
        EXPRESS_BASE_URL.to_string()
    } else {
        format!("https://{location}-aiplatform.googleapis.com")
    };
    Ok(format!(
        "{host}/{API_VERSION}/projects/{project}/locations/{location}/publishers/google/models/{}:streamGenerateContent?alt=sse",
        model.id
    ))
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
    #[test]
    fn credentials_go_to_the_projects_regional_endpoint() {
        let m = model("");
        let env = |k: &str| match k {
            "GOOGLE_CLOUD_PROJECT" => Some("proj".to_string()),
            "GOOGLE_CLOUD_LOCATION" => Some("us-central1".to_string()),
            _ => None,
        };
        assert_eq!(
            adc_endpoint(&m, &env).expect("url"),
            format!("https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/{}:streamGenerateContent?alt=sse", m.id)
        );
        let global = |k: &str| match k {
            "GCLOUD_PROJECT" => Some("p2".to_string()),
            "GOOGLE_CLOUD_LOCATION" => Some("global".to_string()),
            _ => None,
        };
        assert!(adc_endpoint(&m, &global)
            .expect("url")
            .starts_with("https://aiplatform.googleapis.com/v1/projects/p2/locations/global/"));
        let none = |_: &str| None;
        assert!(adc_endpoint(&m, &none)
            .expect_err("no project")
            .starts_with("Vertex AI requires a project ID"));
    }

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
            prompt_cache: None,
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
