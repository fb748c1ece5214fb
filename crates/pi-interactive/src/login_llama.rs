//! `/login llama.cpp`: the API-key login of pi 1.6's built-in llama.cpp provider. It asks for
//! the server's URL (blank takes `LLAMA_BASE_URL` or the default local router) and an optional
//! key, checks that a llama.cpp router answers `GET /models` there, and saves the key with the
//! URL as the credential's `env.LLAMA_BASE_URL`.

use std::sync::Arc;
use std::time::Duration;

use pi_coding_agent::config::auth::Credential;
use pi_coding_agent::config::oauth::LoginError;
use pi_coding_agent::session::AgentSession;
use pi_oauth::{LoginUi, OAuthError, Prompt};
use serde_json::{json, Value};

/// The provider's id (also its name).
pub const PROVIDER: &str = "llama.cpp";

/// Where a llama.cpp router listens unless told otherwise.
const DEFAULT_SERVER: &str = "http://127.0.0.1:9931";

/// How long the check of the server may take.
const TIMEOUT: Duration = Duration::from_secs(15);

fn failed(message: impl Into<String>) -> LoginError {
    LoginError::Flow(OAuthError::Invalid(message.into()))
}

/// The server's root URL: http(s) only, without query, fragment, trailing slashes or `/v1`.
pub fn normalize_server_url(value: &str) -> Result<String, String> {
    let value = value.trim();
    let Some((scheme, rest)) = value.split_once("://") else {
        return Err("Invalid URL".into());
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err("Server URL must use http or https".into());
    }
    let rest = rest.split(['#', '?']).next().unwrap_or_default();
    if rest.is_empty() || rest.starts_with('/') {
        return Err("Invalid URL".into());
    }
    let mut rest = rest.trim_end_matches('/');
    if let Some(stripped) = rest.strip_suffix("/v1") {
        rest = stripped.trim_end_matches('/');
    }
    Ok(format!("{scheme}://{rest}"))
}

/// Whether `payload` is a llama.cpp router's model catalogue; the reason when not.
fn check_catalog(payload: &Value) -> Result<(), String> {
    let Some(data) = payload.get("data").and_then(Value::as_array) else {
        return Err("llama.cpp returned an invalid model catalog".into());
    };
    let model_info = |m: &Value| {
        m.get("id").is_some_and(Value::is_string) && m.pointer("/status/value").is_some_and(Value::is_string)
    };
    if data.iter().all(model_info) {
        Ok(())
    } else {
        Err("Server is not running in llama.cpp router mode".into())
    }
}

/// Ask `GET <server>/models` and check the answer.
async fn check_server(server: &str, key: Option<&str>) -> Result<(), String> {
    let mut request = pi_ai::http::client().get(format!("{server}/models")).timeout(TIMEOUT);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request
        .send()
        .await
        .map_err(|e| format!("Could not reach llama.cpp server at {server}: {}", root_cause(&e)))?;
    let status = response.status();
    let payload: Value = response
        .text()
        .await
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    if !status.is_success() {
        let message = payload
            .pointer("/error/message")
            .or_else(|| payload.get("error"))
            .and_then(Value::as_str)
            .map_or_else(
                || format!("llama.cpp returned HTTP {}", status.as_u16()),
                str::to_string,
            );
        return Err(message);
    }
    check_catalog(&payload)
}

/// The network-level cause of a failed request (`Connection refused (os error 111)`), as pi
/// 1.6 names it, rather than the request wrapper's own message.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The credential saved for `server` and `key` (a blank key is left out).
pub fn credential(server: &str, key: &str) -> Value {
    let mut c = json!({"type": "api_key", "env": {"LLAMA_BASE_URL": server}});
    if !key.is_empty() {
        c["key"] = json!(key);
    }
    c
}

/// Run the login on `ui` and save what it gave.
pub async fn login(session: AgentSession, ui: Arc<dyn LoginUi>) -> Result<(), LoginError> {
    let from_env = std::env::var("LLAMA_BASE_URL").ok().filter(|v| !v.trim().is_empty());
    let entered = ui
        .prompt(Prompt::Text {
            message: "llama.cpp server URL".into(),
            placeholder: from_env.clone().unwrap_or_else(|| DEFAULT_SERVER.into()),
        })
        .await
        .map_err(|_| LoginError::Cancelled)?;
    let entered = entered.trim();
    let raw = if entered.is_empty() {
        from_env.as_deref().unwrap_or(DEFAULT_SERVER)
    } else {
        entered
    };
    let server = normalize_server_url(raw).map_err(failed)?;
    let key = ui
        .prompt(Prompt::Text {
            message: "API key (optional)".into(),
            placeholder: String::new(),
        })
        .await
        .map_err(|_| LoginError::Cancelled)?;
    let key = key.trim().to_string();
    check_server(&server, (!key.is_empty()).then_some(key.as_str()))
        .await
        .map_err(failed)?;
    let stored = Credential::from_value(&credential(&server, &key));
    // Written once the registry's lock is let go: the write waits for auth.json's own lock.
    let write = match session.registry().lock() {
        Ok(mut reg) => reg.auth_mut().stage(PROVIDER, Some(stored)),
        Err(_) => return Err(LoginError::Save("the model registry is unavailable".into())),
    };
    tokio::task::spawn_blocking(move || write.apply())
        .await
        .map_err(|e| LoginError::Save(e.to_string()))?
        .map_err(LoginError::Save)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_lose_their_api_path_query_and_slashes() {
        assert_eq!(
            normalize_server_url(" http://127.0.0.1:9931/ ").as_deref(),
            Ok("http://127.0.0.1:9931")
        );
        assert_eq!(
            normalize_server_url("https://llm.example/v1/?x=1#y").as_deref(),
            Ok("https://llm.example")
        );
        assert_eq!(
            normalize_server_url("http://host/base/v1").as_deref(),
            Ok("http://host/base")
        );
        assert_eq!(
            normalize_server_url("ftp://host").unwrap_err(),
            "Server URL must use http or https"
        );
        assert_eq!(normalize_server_url("localhost:8080").unwrap_err(), "Invalid URL");
    }

    #[test]
    fn only_a_router_catalogue_is_accepted() {
        assert!(check_catalog(&json!({"data": [{"id": "m", "status": {"value": "loaded"}}]})).is_ok());
        assert!(check_catalog(&json!({"data": []})).is_ok());
        assert_eq!(
            check_catalog(&json!({"data": [{"id": "m"}]})).unwrap_err(),
            "Server is not running in llama.cpp router mode"
        );
        assert_eq!(
            check_catalog(&json!({"models": []})).unwrap_err(),
            "llama.cpp returned an invalid model catalog"
        );
    }

    #[test]
    fn a_blank_key_is_not_stored() {
        assert_eq!(
            credential("http://h", ""),
            json!({"type": "api_key", "env": {"LLAMA_BASE_URL": "http://h"}})
        );
        assert_eq!(credential("http://h", "k")["key"], "k");
    }
}
