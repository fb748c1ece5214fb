//! GitHub Copilot: GitHub's device code (github.com or an Enterprise domain), then the
//! GitHub token is exchanged for a short-lived Copilot token. The GitHub token is the stored
//! `refresh`; every refresh exchanges it again and lists the models the account may use.

use std::time::Duration;

use serde_json::{json, Value};

use crate::device::{poll_device_flow, Poll};
use crate::http::{self, str_field};
use crate::ui::{LoginEvent, LoginUi, Prompt};
use crate::{Config, Credential, OAuthError};

const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
const API_VERSION: &str = "2026-06-01";
const INDIVIDUAL_API: &str = "https://api.individual.githubcopilot.com";

pub(crate) const NAME: &str = "GitHub Copilot";

/// The headers Copilot's token and model endpoints expect from an editor client.
fn editor_headers() -> Vec<(&'static str, String)> {
    vec![
        ("User-Agent", USER_AGENT.into()),
        ("Editor-Version", "vscode/1.107.0".into()),
        ("Editor-Plugin-Version", "copilot-chat/0.35.0".into()),
        ("Copilot-Integration-Id", "vscode-chat".into()),
    ]
}

/// The host of a GitHub Enterprise URL or domain; `None` for text that names none.
fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_string()
    } else {
        format!("https://{trimmed}")
    };
    url::Url::parse(&with_scheme).ok()?.host_str().map(str::to_string)
}

/// The API base URL a Copilot token names in its `proxy-ep` field (`proxy.X` → `https://api.X`),
/// else the Enterprise API, else the individual API.
pub fn copilot_base_url(token: &str, enterprise_domain: Option<&str>) -> String {
    let from_token = token
        .split(';')
        .find_map(|field| field.trim().strip_prefix("proxy-ep="));
    if let Some(proxy) = from_token.filter(|p| !p.is_empty()) {
        let host = proxy
            .strip_prefix("proxy.")
            .map_or_else(|| proxy.to_string(), |rest| format!("api.{rest}"));
        return format!("https://{host}");
    }
    match enterprise_domain {
        Some(domain) => format!("https://copilot-api.{domain}"),
        None => INDIVIDUAL_API.to_string(),
    }
}

/// The Enterprise domain a stored credential names.
pub(crate) fn enterprise_domain(credential: &Credential) -> Option<String> {
    credential
        .get("enterpriseUrl")
        .and_then(Value::as_str)
        .and_then(normalize_domain)
}

async fn exchange_copilot_token(
    config: &Config,
    github_token: &str,
    domain: Option<&str>,
) -> Result<Credential, OAuthError> {
    let what = "Copilot token request";
    let url = config.endpoint(&format!(
        "https://api.{}/copilot_internal/v2/token",
        domain.unwrap_or("github.com")
    ));
    let mut headers = editor_headers();
    headers.push(("Authorization", format!("Bearer {github_token}")));
    let json = http::get(&url, &headers, what).await?.require_ok(what)?;
    let (Some(token), Some(expires_at)) = (
        str_field(&json, "token"),
        json.get("expires_at").and_then(Value::as_f64),
    ) else {
        return Err(OAuthError::Invalid("Invalid Copilot token response fields".into()));
    };
    let mut out = Credential::new();
    out.insert("type".into(), "oauth".into());
    out.insert("refresh".into(), github_token.into());
    out.insert("access".into(), token.into());
    out.insert(
        "expires".into(),
        ((expires_at * 1000.0) as i64 - crate::REFRESH_MARGIN_MS).into(),
    );
    if let Some(domain) = domain {
        out.insert("enterpriseUrl".into(), domain.into());
    }
    Ok(out)
}

/// Model ids of the account: those enabled in the picker, and those whose policy is not set
/// yet (which the login enables).
struct AccountModels {
    available: Vec<String>,
    unconfigured: Vec<String>,
}

async fn fetch_models(config: &Config, token: &str, domain: Option<&str>) -> Result<AccountModels, OAuthError> {
    let what = "Copilot model list";
    let base = copilot_base_url(token, domain);
    // Some individual accounts report no picker model although their policies enable some.
    let allow_policy_fallback = base == INDIVIDUAL_API;
    let mut headers = editor_headers();
    headers.push(("Authorization", format!("Bearer {token}")));
    headers.push(("X-GitHub-Api-Version", API_VERSION.into()));
    let json = http::get(&config.endpoint(&format!("{base}/models")), &headers, what)
        .await?
        .require_ok(what)?;
    let Some(items) = json.get("data").and_then(Value::as_array) else {
        return Err(OAuthError::Invalid("Invalid Copilot models response".into()));
    };
    let known = pi_ai::get_models("github-copilot");
    let mut picker = Vec::new();
    let mut enabled = Vec::new();
    let mut unconfigured = Vec::new();
    for item in items {
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            continue;
        };
        if item.pointer("/capabilities/supports/tool_calls") == Some(&Value::Bool(false)) {
            continue;
        }
        let in_picker = item.get("model_picker_enabled") == Some(&Value::Bool(true));
        let state = item.pointer("/policy/state").and_then(Value::as_str);
        if in_picker && state != Some("disabled") {
            picker.push(id.to_string());
        }
        if state == Some("enabled") {
            enabled.push(id.to_string());
        }
        if state == Some("unconfigured") && known.iter().any(|m| m.id == id) {
            unconfigured.push((id.to_string(), in_picker));
        }
    }
    let fallback = allow_policy_fallback && picker.is_empty();
    let unconfigured = unconfigured
        .into_iter()
        .filter(|(_, in_picker)| *in_picker || fallback)
        .map(|(id, _)| id)
        .collect();
    Ok(AccountModels {
        available: if fallback { enabled } else { picker },
        unconfigured,
    })
}

/// Turn on a model whose policy is unset (Claude and Grok need it); best effort.
async fn enable_model(config: &Config, token: &str, model: &str, domain: Option<&str>) -> bool {
    let base = copilot_base_url(token, domain);
    let mut headers = editor_headers();
    headers.push(("Authorization", format!("Bearer {token}")));
    headers.push(("openai-intent", "chat-policy".into()));
    headers.push(("x-interaction-type", "chat-policy".into()));
    let url = config.endpoint(&format!("{base}/models/{model}/policy"));
    http::post_json(&url, &headers, &json!({"state": "enabled"}), "Copilot model policy")
        .await
        .is_ok_and(|r| r.ok())
}

pub(crate) async fn login(config: &Config, ui: &dyn LoginUi) -> Result<Credential, OAuthError> {
    let input = ui
        .prompt(Prompt::Text {
            message: "GitHub Enterprise URL/domain (blank for github.com)".into(),
            placeholder: "company.ghe.com".into(),
        })
        .await?;
    let domain = normalize_domain(&input);
    if !input.trim().is_empty() && domain.is_none() {
        return Err(OAuthError::Invalid("Invalid GitHub Enterprise URL/domain".into()));
    }
    let host = domain.clone().unwrap_or_else(|| "github.com".into());
    let what = "GitHub device code request";
    let ua = vec![("User-Agent", USER_AGENT.to_string())];
    let device = http::post_form(
        &config.endpoint(&format!("https://{host}/login/device/code")),
        &ua,
        &[("client_id", CLIENT_ID), ("scope", "read:user")],
        what,
    )
    .await?
    .require_ok(what)?;
    let (Some(device_code), Some(user_code), Some(verification_uri), Some(expires_in)) = (
        str_field(&device, "device_code"),
        str_field(&device, "user_code"),
        str_field(&device, "verification_uri"),
        device.get("expires_in").and_then(Value::as_u64),
    ) else {
        return Err(OAuthError::Invalid("Invalid device code response fields".into()));
    };
    let trusted = url::Url::parse(verification_uri)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| OAuthError::Invalid("Untrusted verification_uri in device code response".into()))?;
    let interval = device.get("interval").and_then(Value::as_u64);
    ui.notify(LoginEvent::DeviceCode {
        user_code: user_code.to_string(),
        verification_uri: trusted.to_string(),
        interval_seconds: interval,
        expires_in_seconds: Some(expires_in),
    });
    let token_url = config.endpoint(&format!("https://{host}/login/oauth/access_token"));
    let github_token = poll_device_flow(interval, Some(expires_in), true, || async {
        let what = "GitHub device token";
        let pairs = [
            ("client_id", CLIENT_ID),
            ("device_code", device_code),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ];
        let json = http::post_form(&token_url, &ua, &pairs, what).await?.require_ok(what)?;
        if let Some(token) = str_field(&json, "access_token") {
            return Ok(Poll::Complete(token.to_string()));
        }
        Ok(match str_field(&json, "error") {
            Some("authorization_pending") => Poll::Pending,
            Some("slow_down") => Poll::SlowDown(json.get("interval").and_then(Value::as_u64)),
            Some(error) => Poll::Failed(match str_field(&json, "error_description") {
                Some(d) => format!("Device flow failed: {error}: {d}"),
                None => format!("Device flow failed: {error}"),
            }),
            None => Poll::Failed("Invalid device token response".into()),
        })
    })
    .await?;
    let mut credential = exchange_copilot_token(config, &github_token, domain.as_deref()).await?;
    let access = credential
        .get("access")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let models = fetch_models(config, &access, domain.as_deref()).await?;
    let mut available = models.available;
    if !models.unconfigured.is_empty() {
        ui.notify(LoginEvent::Progress("Enabling models...".into()));
        for id in &models.unconfigured {
            let enabled = tokio::time::timeout(
                Duration::from_secs(5),
                enable_model(config, &access, id, domain.as_deref()),
            )
            .await
            .unwrap_or(false);
            if enabled && !available.contains(id) {
                available.push(id.clone());
            }
        }
    }
    credential.insert("availableModelIds".into(), json!(available));
    Ok(credential)
}

pub(crate) async fn refresh(config: &Config, stored: &Credential) -> Result<Credential, OAuthError> {
    let github_token = stored.get("refresh").and_then(Value::as_str).unwrap_or_default();
    let domain = enterprise_domain(stored);
    let mut fresh = stored.clone();
    fresh.extend(exchange_copilot_token(config, github_token, domain.as_deref()).await?);
    let access = fresh
        .get("access")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let models = fetch_models(config, &access, domain.as_deref()).await?;
    fresh.insert("availableModelIds".into(), json!(models.available));
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_follows_the_token() {
        assert_eq!(
            copilot_base_url("tid=1;exp=2;proxy-ep=proxy.individual.githubcopilot.com;st=x", None),
            "https://api.individual.githubcopilot.com"
        );
        assert_eq!(
            copilot_base_url("tid=1;proxy-ep=proxy.business.githubcopilot.com", Some("ghe.example")),
            "https://api.business.githubcopilot.com"
        );
        assert_eq!(
            copilot_base_url("opaque", Some("ghe.example")),
            "https://copilot-api.ghe.example"
        );
        assert_eq!(copilot_base_url("opaque", None), INDIVIDUAL_API);
    }

    #[test]
    fn enterprise_domains_normalize() {
        assert_eq!(
            normalize_domain("https://company.ghe.com/login").as_deref(),
            Some("company.ghe.com")
        );
        assert_eq!(
            normalize_domain(" company.ghe.com ").as_deref(),
            Some("company.ghe.com")
        );
        assert_eq!(normalize_domain(""), None);
        assert_eq!(normalize_domain("bad host name"), None);
    }
}
