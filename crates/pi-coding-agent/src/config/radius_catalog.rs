//! The model list of a Radius gateway, as pi 1.6 loads it: `GET <gateway>/v1/config` with the
//! account's token (`{baseUrl, models}`), each valid model served by the `pi-messages` API at
//! the answer's `baseUrl`. The list replaces what the provider had (an organisation may turn
//! models off), and is kept in models-store.json under the provider's id.
//!
//! The gateways: the built-in `radius` (its gateway moved by `PI_OAUTH_ORIGIN` in tests, as its
//! sign-in is) and every models.json provider with `"oauth": "radius"` (its `baseUrl` without
//! `/v1`).

use serde_json::{Map, Value};

/// The model fields a gateway entry must carry, with their JSON types, to be kept.
fn is_gateway_model(value: &Value) -> bool {
    let Some(m) = value.as_object() else {
        return false;
    };
    m.get("id").is_some_and(Value::is_string)
        && m.get("name").is_some_and(Value::is_string)
        && m.get("reasoning").is_some_and(Value::is_boolean)
        && m.get("input").is_some_and(Value::is_array)
        && m.get("cost").is_some_and(Value::is_object)
        && m.get("contextWindow").is_some_and(Value::is_number)
        && m.get("maxTokens").is_some_and(Value::is_number)
}

/// The models of a `/v1/config` answer as models-store.json keeps them for `provider` (the
/// entry's fields, then `api`, `provider` and `baseUrl`), or `None` when the answer is not
/// `{baseUrl: string, models: [...]}`. Entries missing a field are dropped.
pub fn models_from_config(provider: &str, config: &Value) -> Option<Vec<Value>> {
    let base_url = config.get("baseUrl")?.as_str()?;
    let models = config.get("models")?.as_array()?;
    Some(
        models
            .iter()
            .filter(|m| is_gateway_model(m))
            .filter_map(|m| {
                let mut model: Map<String, Value> = m.as_object()?.clone();
                model.insert("api".into(), "pi-messages".into());
                model.insert("provider".into(), provider.into());
                model.insert("baseUrl".into(), base_url.into());
                Some(Value::Object(model))
            })
            .collect(),
    )
}

/// The body of a failed answer as 1.6 quotes it: trimmed, at most 512 characters.
fn quote_body(body: &str) -> String {
    let trimmed = body.trim();
    match trimmed.char_indices().nth(512) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_string(),
    }
}

/// Fetch the gateway's model list for `provider` with `api_key` (an access token or a key).
/// The caller bounds the time it may take, as 1.6 does (one request, no retry).
pub async fn fetch_models(
    client: &reqwest::Client,
    gateway: &str,
    provider: &str,
    api_key: Option<&str>,
) -> Result<Vec<Value>, String> {
    let url = pi_oauth::radius_endpoint(gateway, "/v1/config");
    let mut request = client.get(&url).header("accept", "application/json");
    if let Some(key) = api_key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    let response = request.send().await.map_err(|_| "fetch failed".to_string())?;
    let status = response.status();
    let body = response.text().await.map_err(|_| "fetch failed".to_string())?;
    if !status.is_success() {
        return Err(format!(
            "Could not load Radius config from {gateway}: {}: {}",
            status.as_u16(),
            quote_body(&body)
        ));
    }
    serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|config| models_from_config(provider, &config))
        .ok_or_else(|| format!("Invalid Radius config from {gateway}"))
}

/// The gateway of a models.json provider's `baseUrl`: without a trailing `/v1`, with a
/// scheme, without a trailing slash.
pub fn gateway_of_base_url(base_url: &str) -> String {
    let stripped = base_url
        .strip_suffix("/v1/")
        .or_else(|| base_url.strip_suffix("/v1"))
        .unwrap_or(base_url);
    pi_oauth::normalize_gateway_url(stripped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_config_answer_becomes_pi_messages_models_of_the_provider() {
        let config = json!({"baseUrl": "https://gw.example/v1", "models": [
            {"id": "a", "name": "A", "reasoning": true, "input": ["text"], "cost": {"input": 1},
             "contextWindow": 10, "maxTokens": 5, "thinkingLevelMap": {"xhigh": null}, "api": "other"},
            {"id": "b", "name": "B", "reasoning": "yes", "input": [], "cost": {}, "contextWindow": 1, "maxTokens": 1},
            "not a model"
        ]});
        let models = models_from_config("corp", &config).unwrap();
        assert_eq!(models.len(), 1, "{models:?}");
        assert_eq!(models[0]["api"], "pi-messages");
        assert_eq!(models[0]["provider"], "corp");
        assert_eq!(models[0]["baseUrl"], "https://gw.example/v1");
        assert_eq!(models[0]["thinkingLevelMap"], json!({"xhigh": null}));
        let model: pi_ai::Model = serde_json::from_value(models[0].clone()).unwrap();
        assert_eq!((model.context_window, model.max_tokens), (10, 5));
        assert!(models_from_config("corp", &json!({"models": []})).is_none());
        assert!(models_from_config("corp", &json!({"baseUrl": "x", "models": {}})).is_none());
        assert_eq!(gateway_of_base_url("gw.example/v1/"), "https://gw.example");
        assert_eq!(gateway_of_base_url("http://127.0.0.1:8/v1"), "http://127.0.0.1:8");
        let long = "x".repeat(600);
        assert_eq!(quote_body(&format!("  {long} ")).chars().count(), 513);
    }
}
