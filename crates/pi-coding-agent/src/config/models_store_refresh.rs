//! Fetching the catalogues that `models-store.json` caches, as pi 1.6's `pi update --models`
//! does: for each built-in provider that has credentials, `GET <catalog>/api/models/providers/
//! <id>?types=chat,image,classifier` (revalidated with the stored `etag`, at most every four
//! hours unless forced), and for OpenRouter the list of models the key may use
//! (`<baseUrl>/models/user`), which replaces the catalogue.
//!
//! Radius gateways (the built-in `radius`, models.json providers with `"oauth": "radius"`)
//! list their models themselves (`radius_catalog`): fetched at every refresh when the provider
//! has a login or a key, as 1.6 does, and stored as `{models, checkedAt}`.
//!
//! The catalogue's origin is `https://pi.dev`; `PI_MODEL_CATALOG_URL` points it at a local
//! server (tests). `PI_OFFLINE` does not stop a refresh the user asked for, as in 1.6; it does
//! stop the background refresh that interactive and RPC mode start ([`refresh_in_background`]).

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::model_registry::ModelRegistry;
use super::models_store::{self, StoreEntry};

pub const DEFAULT_CATALOG_URL: &str = "https://pi.dev";
const MODEL_TYPES: [&str; 3] = ["chat", "image", "classifier"];
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(4);
/// Retries after the first attempt, for connection failures and these statuses.
const RETRIES: usize = 2;
const RETRYABLE: [u16; 7] = [408, 425, 429, 500, 502, 503, 504];
const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";

/// The catalogue origin the environment names.
pub fn catalog_url_from_env() -> String {
    std::env::var("PI_MODEL_CATALOG_URL")
        .ok()
        .map(|v| v.trim().trim_end_matches('/').to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_CATALOG_URL.to_string())
}

/// What a refresh did: per provider that failed, `"<id>: <why>"`.
#[derive(Debug, Default)]
pub struct RefreshReport {
    pub failures: Vec<String>,
    /// The ids of the providers whose refresh failed, in order.
    pub failed_providers: Vec<String>,
    /// How many providers' entries were written to models-store.json.
    pub stored: usize,
    /// Providers skipped because their login could not be renewed: `(id, why)`. Not a
    /// failure of the refresh, as in 1.6 (signing in again fixes it).
    pub stale_logins: Vec<(String, String)>,
}

struct Response {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

/// One GET with 1.6's bounded immediate retry; a connection failure is `"fetch failed"`.
async fn fetch(client: &reqwest::Client, url: &str, headers: &[(&str, String)]) -> Result<Response, String> {
    let mut attempt = 0;
    loop {
        let mut request = client.get(url).timeout(ATTEMPT_TIMEOUT);
        for (k, v) in headers {
            request = request.header(*k, v);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                if RETRYABLE.contains(&status) && attempt < RETRIES {
                    attempt += 1;
                    continue;
                }
                let headers = response.headers().clone();
                let body = response.bytes().await.map_err(|_| "fetch failed".to_string())?;
                return Ok(Response {
                    status,
                    headers,
                    body: body.to_vec(),
                });
            }
            Err(_) if attempt < RETRIES => attempt += 1,
            Err(_) => return Err("fetch failed".into()),
        }
    }
}

/// The models of a catalogue answer: an array, `{models: [...]}` or an object of models;
/// entries of unknown types are dropped and each names `provider`.
fn parse_catalog(provider: &str, value: Value) -> Result<Vec<Value>, String> {
    let entries: Vec<Value> = match value {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.shift_remove("models") {
            Some(Value::Array(a)) => a,
            Some(other) => {
                o.insert("models".into(), other);
                o.into_iter().map(|(_, v)| v).collect()
            }
            None => o.into_iter().map(|(_, v)| v).collect(),
        },
        _ => return Err(format!("Invalid model catalog for provider \"{provider}\"")),
    };
    Ok(entries
        .into_iter()
        .filter_map(|e| match e {
            Value::Object(mut m) if m.contains_key("id") => {
                let known = m
                    .get("type")
                    .is_none_or(|t| t.as_str().is_some_and(|t| MODEL_TYPES.contains(&t)));
                known.then(|| {
                    m.insert("provider".into(), provider.into());
                    Value::Object(m)
                })
            }
            _ => None,
        })
        .collect())
}

fn header(response: &Response, name: &str) -> Option<String> {
    response
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn last_modified(response: &Response) -> i64 {
    header(response, "last-modified")
        .and_then(|d| chrono::DateTime::parse_from_rfc2822(&d).ok())
        .map_or(0, |d| d.timestamp_millis())
}

/// Provider ids are `[a-z0-9-]`, which a URL path carries as they are.
fn catalog_request(catalog: &str, provider: &str) -> String {
    format!(
        "{catalog}/api/models/providers/{provider}?types={}",
        MODEL_TYPES.join("%2C")
    )
}

fn catalog_headers(validator: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("accept", "application/json".to_string()),
        ("User-Agent", pi_ai::http::user_agent().to_string()),
    ];
    if let Some(v) = validator {
        headers.push(("if-none-match", v.to_string()));
    }
    headers
}

/// The pi.dev overlay of one provider: the new entry to store (if any), or why it failed.
async fn refresh_remote(
    client: &reqwest::Client,
    catalog: &str,
    provider: &str,
    stored: Option<&StoreEntry>,
    force: bool,
    now: impl Fn() -> i64,
) -> (Option<StoreEntry>, Result<(), String>) {
    if !force && stored.is_some_and(|s| s.is_fresh(now())) {
        return (None, Ok(()));
    }
    // Revalidate only when a cached body backs the validator, so a 304 never empties it.
    let validator = stored.filter(|s| !s.models.is_empty()).and_then(|s| s.etag.as_deref());
    let response = match fetch(client, &catalog_request(catalog, provider), &catalog_headers(validator)).await {
        Ok(r) => r,
        Err(e) => return (None, Err(e)),
    };
    let checked_at = Some(now());
    let kept = || stored.cloned().unwrap_or_default();
    match response.status {
        304 if stored.is_some() => (Some(StoreEntry { checked_at, ..kept() }), Ok(())),
        404 | 501 => (
            Some(StoreEntry {
                checked_at,
                last_modified: Some(0),
                etag: None,
                ..kept()
            }),
            Ok(()),
        ),
        s if !(200..300).contains(&s) => (
            Some(StoreEntry { checked_at, ..kept() }),
            Err(format!("Model catalog request failed for {provider}: {s}")),
        ),
        _ => {
            let parsed = serde_json::from_slice::<Value>(&response.body)
                .map_err(|e| e.to_string())
                .and_then(|v| parse_catalog(provider, v));
            match parsed {
                Ok(models) => (
                    Some(StoreEntry {
                        models,
                        checked_at,
                        last_modified: Some(last_modified(&response)),
                        etag: header(&response, "etag"),
                        extra: Map::new(),
                    }),
                    Ok(()),
                ),
                Err(e) => (None, Err(e)),
            }
        }
    }
}

/// $/token as $/1M tokens (OpenRouter's prices); missing or negative prices are `fallback`.
fn per_million(value: Option<&Value>, fallback: f64) -> f64 {
    let parsed = match value {
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    };
    match parsed {
        Some(p) if p >= 0.0 => ((p * 1_000_000.0) * 1e6).round() / 1e6,
        _ => fallback,
    }
}

/// OpenRouter's pricing object as pi's cost, with prompt-length overrides as tiers.
fn openrouter_cost(pricing: &Value) -> Value {
    let base = [
        ("input", per_million(pricing.get("prompt"), 0.0)),
        ("output", per_million(pricing.get("completion"), 0.0)),
        ("cacheRead", per_million(pricing.get("input_cache_read"), 0.0)),
        ("cacheWrite", per_million(pricing.get("input_cache_write"), 0.0)),
    ];
    let mut cost: Map<String, Value> = base.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let tiers: Vec<Value> = pricing
        .get("overrides")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|o| o.get("min_prompt_tokens").is_some())
        .filter(|o| ["utc_start", "utc_end", "utc_days"].iter().all(|k| o.get(*k).is_none()))
        .map(|o| {
            json!({
                "inputTokensAbove": o["min_prompt_tokens"],
                "input": per_million(o.get("prompt"), base[0].1),
                "output": per_million(o.get("completion"), base[1].1),
                "cacheRead": per_million(o.get("input_cache_read"), base[2].1),
                "cacheWrite": per_million(o.get("input_cache_write"), base[3].1),
            })
        })
        .collect();
    if !tiers.is_empty() {
        cost.insert("tiers".into(), Value::Array(tiers));
    }
    Value::Object(cost)
}

/// OpenRouter's catalogue narrowed to the chat models `key` may use, with the key's limits
/// and prices. A key the endpoint refuses (401/403) or a missing endpoint (404) keeps it.
async fn personalize_openrouter(
    client: &reqwest::Client,
    base_url: &str,
    key: &str,
    catalog: Vec<Value>,
) -> Result<Vec<Value>, String> {
    let url = format!("{}/models/user", base_url.trim_end_matches('/'));
    let headers = [
        ("accept", "application/json".to_string()),
        ("authorization", format!("Bearer {key}")),
    ];
    let response = fetch(client, &url, &headers).await?;
    if matches!(response.status, 401 | 403 | 404) {
        return Ok(catalog);
    }
    if !(200..300).contains(&response.status) {
        return Err(format!("OpenRouter model list request failed: {}", response.status));
    }
    let body: Value =
        serde_json::from_slice(&response.body).map_err(|_| "Invalid OpenRouter model list response".to_string())?;
    let Some(data) = body.get("data").and_then(Value::as_array) else {
        return Err("Invalid OpenRouter model list response".into());
    };
    let allowed: std::collections::HashMap<&str, &Value> =
        data.iter().filter_map(|e| Some((e.get("id")?.as_str()?, e))).collect();
    let positive = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|n| *n > 0);
    Ok(catalog
        .into_iter()
        .filter_map(|mut model| {
            let chat = model.get("type").and_then(Value::as_str).is_none_or(|t| t == "chat");
            if !chat {
                return Some(model);
            }
            let entry = allowed.get(model.get("id")?.as_str()?)?;
            let top = entry.get("top_provider");
            if let Some(n) =
                positive(top.and_then(|t| t.get("context_length"))).or(positive(entry.get("context_length")))
            {
                model["contextWindow"] = json!(n);
            }
            if let Some(n) = positive(top.and_then(|t| t.get("max_completion_tokens"))) {
                model["maxTokens"] = json!(n);
            }
            if let Some(pricing) = entry.get("pricing").filter(|p| p.is_object()) {
                model["cost"] = openrouter_cost(pricing);
            }
            Some(model)
        })
        .collect())
}

/// OpenRouter: the built-ins plus a newer pi.dev catalogue, personalized for the key; always
/// fetched (no interval, no validator), and the entry replaces the catalogue.
async fn refresh_openrouter(
    client: &reqwest::Client,
    catalog: &str,
    registry: &mut ModelRegistry,
    now: impl Fn() -> i64,
) -> (Option<StoreEntry>, Result<(), String>) {
    let builtins: Vec<Value> = pi_ai::builtin_models()
        .iter()
        .filter(|m| m.provider == "openrouter")
        .filter_map(|m| serde_json::to_value(m).ok())
        .collect();
    let response = match fetch(client, &catalog_request(catalog, "openrouter"), &catalog_headers(None)).await {
        Ok(r) => r,
        Err(e) => return (None, Err(e)),
    };
    let mut merged = builtins;
    if !matches!(response.status, 404 | 501) {
        if !(200..300).contains(&response.status) {
            return (
                None,
                Err(format!(
                    "Model catalog request failed for openrouter: {}",
                    response.status
                )),
            );
        }
        let remote = serde_json::from_slice::<Value>(&response.body)
            .map_err(|e| e.to_string())
            .and_then(|v| parse_catalog("openrouter", v));
        let remote = match remote {
            Ok(r) => r,
            Err(e) => return (None, Err(e)),
        };
        if last_modified(&response) > models_store::BUILTIN_GENERATED_AT_MS {
            for model in remote {
                let same = |m: &Value| m.get("id") == model.get("id") && m.get("type") == model.get("type");
                match merged.iter_mut().find(|m| same(m)) {
                    Some(existing) => *existing = model,
                    None => merged.push(model),
                }
            }
        }
    }
    let base_url = registry
        .all()
        .iter()
        .find(|m| m.provider == "openrouter")
        .map_or_else(|| OPENROUTER_BASE_URL.to_string(), |m| m.base_url.clone());
    let personalized = match registry.api_key_for_provider("openrouter") {
        Some(key) => personalize_openrouter(client, &base_url, &key, merged).await,
        None => Ok(merged),
    };
    fetched_entry(personalized, now)
}

/// A list fetched whole (OpenRouter's, a Radius gateway's) as the store keeps it, checked now;
/// a failed fetch stores nothing and is reported.
fn fetched_entry(
    fetched: Result<Vec<serde_json::Value>, String>,
    now: impl Fn() -> i64,
) -> (Option<StoreEntry>, Result<(), String>) {
    match fetched {
        Ok(models) => (
            Some(StoreEntry {
                models,
                checked_at: Some(now()),
                ..StoreEntry::default()
            }),
            Ok(()),
        ),
        Err(e) => (None, Err(e)),
    }
}

/// Why a Radius gateway's list was not refreshed.
enum RadiusSkip {
    /// No login and no key: nothing to fetch with.
    NoCredential,
    /// The login could not be renewed (`OAuth refresh failed for <id>: <why>`).
    StaleLogin(String),
}

/// A Radius gateway's model list for `provider`, fetched with its login's access token
/// (renewed first when it expired) or its key.
async fn refresh_radius(
    client: &reqwest::Client,
    registry: &mut ModelRegistry,
    provider: &str,
    gateway: &str,
    now: impl Fn() -> i64,
) -> Result<(Option<StoreEntry>, Result<(), String>), RadiusSkip> {
    let key = if registry.provider_uses_oauth(provider) {
        match registry.auth_mut().oauth_access_token(provider, 0) {
            Ok(key) => key,
            Err(why) => return Err(RadiusSkip::StaleLogin(why)),
        }
    } else {
        registry.api_key_for_provider(provider)
    };
    let key = key.ok_or(RadiusSkip::NoCredential)?;
    let fetched = super::radius_catalog::fetch_models(client, gateway, provider, Some(&key)).await;
    Ok(fetched_entry(fetched, now))
}

/// Refresh the catalogues of every built-in provider that has credentials and of every
/// Radius gateway, and store them in the models-store.json beside `models_json`.
pub async fn refresh_catalogs(
    registry: &mut ModelRegistry,
    models_json: &std::path::Path,
    catalog: &str,
    force: bool,
) -> RefreshReport {
    refresh_catalogs_of(registry, models_json, catalog, force, None).await
}

/// [`refresh_catalogs`] for `only` this provider when given (after a sign-in).
pub async fn refresh_catalogs_of(
    registry: &mut ModelRegistry,
    models_json: &std::path::Path,
    catalog: &str,
    force: bool,
    only: Option<&str>,
) -> RefreshReport {
    let store_path = models_store::path_beside(models_json);
    let mut report = RefreshReport::default();
    let client = match reqwest::Client::builder().build() {
        Ok(c) => c,
        Err(e) => {
            report.failures.push(format!("http: {e}"));
            return report;
        }
    };
    let store = match models_store::read(&store_path) {
        Ok(s) => s,
        Err(e) => {
            report.failures.push(e.to_string());
            return report;
        }
    };
    let gateways = registry.radius_gateways(&pi_oauth::radius_gateway_url(&pi_oauth::Config::from_env()));
    let remote: Vec<&str> = pi_ai::models::get_providers()
        .into_iter()
        // Radius gateways list their own models, not pi.dev.
        .filter(|p| !gateways.iter().any(|(id, _)| id == p) && registry.provider_has_auth(p))
        .collect();
    let providers = remote
        .iter()
        .map(|p| (p.to_string(), None))
        .chain(gateways.into_iter().map(|(id, gateway)| (id, Some(gateway))))
        .filter(|(p, _)| only.is_none_or(|o| o == p));
    for (provider, gateway) in providers {
        let provider = provider.as_str();
        let (entry, result) = if let Some(gateway) = gateway {
            match refresh_radius(&client, registry, provider, &gateway, pi_oauth::now_ms).await {
                Ok(outcome) => outcome,
                Err(RadiusSkip::NoCredential) => continue,
                Err(RadiusSkip::StaleLogin(why)) => {
                    report.stale_logins.push((provider.to_string(), why));
                    continue;
                }
            }
        } else if provider == "openrouter" {
            refresh_openrouter(&client, catalog, registry, pi_oauth::now_ms).await
        } else {
            refresh_remote(&client, catalog, provider, store.get(provider), force, pi_oauth::now_ms).await
        };
        if let Some(entry) = entry {
            if let Err(e) = models_store::write(&store_path, provider, Some(&entry)) {
                report.failures.push(format!("{provider}: {e}"));
                report.failed_providers.push(provider.to_string());
                continue;
            }
            report.stored += 1;
        }
        if let Err(e) = result {
            report.failures.push(format!("{provider}: {e}"));
            report.failed_providers.push(provider.to_string());
        }
    }
    report
}

/// The whole of `pi update --models` gets this long, as in 1.6.
const OVERALL_TIMEOUT: Duration = Duration::from_secs(15);

/// `pi update --models` for the agent dir of `paths`: `Ok` when every configured provider's
/// catalogue was refreshed (with the warnings to show for logins that could not be renewed,
/// as 1.6 words them), else the text after `Error: `.
pub fn refresh_for_update(paths: &super::paths::Paths) -> Result<Vec<String>, String> {
    let models_json = paths.models_path();
    let catalog = catalog_url_from_env();
    // Its own runtime on its own thread: the caller may sit on a runtime already.
    let outcome = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                let mut registry = crate::subcommands::auth::open_registry(paths);
                runtime.block_on(async {
                    tokio::time::timeout(
                        OVERALL_TIMEOUT,
                        refresh_catalogs(&mut registry, &models_json, &catalog, true),
                    )
                    .await
                    .map_err(|_| "Model catalog refresh timed out.".to_string())
                })
            })
            .join()
            .map_err(|_| "Model catalog refresh stopped unexpectedly".to_string())?
    })?;
    if outcome.failures.is_empty() {
        Ok(outcome
            .stale_logins
            .iter()
            .map(|(id, why)| {
                format!(
                    "Warning: skipped model catalog for {id}: {why}\nLog in again with `pi auth login {id}` to refresh it."
                )
            })
            .collect())
    } else {
        Err(format!(
            "Could not refresh model catalogs: {}",
            outcome.failures.join("; ")
        ))
    }
}

/// The background refresh of interactive and RPC mode gets this long, as in 1.6.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(15);

/// Start pi 1.6's background catalogue refresh for the agent dir of `paths`, unless
/// `PI_OFFLINE` (or `--offline`) is set: on a thread and runtime of its own, so startup and the
/// mode's runtime never wait for it; catalogues younger than four hours are not fetched again.
/// When it stored a catalogue, `on_stored` runs on that thread (the running session reloads its
/// registry, so a Radius gateway's models become usable, as 1.6 publishes them). Failures are
/// silent, as in 1.6 (the built-in and cached catalogues stay in use).
pub fn refresh_in_background(
    paths: &super::paths::Paths,
    on_stored: impl FnOnce() + Send + 'static,
) -> Option<std::thread::JoinHandle<RefreshReport>> {
    if super::offline::offline(super::offline::NetworkUse::Catalogues) {
        return None;
    }
    let paths = paths.clone();
    let catalog = catalog_url_from_env();
    std::thread::Builder::new()
        .name("pi-catalog-refresh".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return RefreshReport::default();
            };
            let models_json = paths.models_path();
            let mut registry = crate::subcommands::auth::open_registry(&paths);
            let report = runtime.block_on(async {
                tokio::time::timeout(
                    BACKGROUND_TIMEOUT,
                    refresh_catalogs(&mut registry, &models_json, &catalog, false),
                )
                .await
                .unwrap_or_else(|_| RefreshReport {
                    failures: vec!["Model catalog refresh timed out.".to_string()],
                    ..RefreshReport::default()
                })
            });
            if report.stored > 0 {
                on_stored();
            }
            report
        })
        .ok()
}

/// How the model picker's refresh ended.
#[derive(Debug, Clone, PartialEq)]
pub enum PickerRefresh {
    /// Every catalogue is current (or, offline, the stored ones were read again).
    Done,
    /// The refresh took longer than 1.6's 15 seconds.
    TimedOut,
    /// These providers' catalogues could not be fetched.
    Failed(Vec<String>),
}

/// The refresh the model picker (`/model`, Ctrl+L) runs when it opens, as 1.6's does: the
/// catalogues of the providers with credentials, fetched unless younger than four hours; with
/// `PI_OFFLINE` nothing is fetched and the stored catalogues are simply read again. Blocking:
/// it runs on a thread and runtime of its own.
pub fn refresh_for_picker(paths: &super::paths::Paths) -> PickerRefresh {
    refresh_blocking(paths, None)
}

/// The refresh 1.6 runs after a sign-in: that provider's catalogue only (a Radius gateway's
/// model list, which is empty until then), not under `PI_OFFLINE`. Blocking, as
/// [`refresh_for_picker`].
pub fn refresh_after_login(paths: &super::paths::Paths, provider: &str) -> PickerRefresh {
    refresh_blocking(paths, Some(provider))
}

fn refresh_blocking(paths: &super::paths::Paths, only: Option<&str>) -> PickerRefresh {
    if super::offline::offline(super::offline::NetworkUse::Catalogues) {
        return PickerRefresh::Done;
    }
    let models_json = paths.models_path();
    let catalog = catalog_url_from_env();
    let outcome = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok()?;
                let mut registry = crate::subcommands::auth::open_registry(paths);
                runtime.block_on(async {
                    tokio::time::timeout(
                        BACKGROUND_TIMEOUT,
                        refresh_catalogs_of(&mut registry, &models_json, &catalog, false, only),
                    )
                    .await
                    .ok()
                })
            })
            .join()
            .ok()
            .flatten()
    });
    match outcome {
        None => PickerRefresh::TimedOut,
        Some(report) if report.failed_providers.is_empty() && report.failures.is_empty() => PickerRefresh::Done,
        Some(report) if report.failed_providers.is_empty() => PickerRefresh::Failed(report.failures),
        Some(report) => PickerRefresh::Failed(report.failed_providers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_shapes_and_prices() {
        let models = parse_catalog(
            "p",
            json!({"models": [{"id": "a"}, {"id": "b", "type": "audio"}, {"name": "no id"}, {"id": "c", "type": "image"}]}),
        )
        .unwrap();
        let ids: Vec<&str> = models.iter().map(|m| m["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert!(models.iter().all(|m| m["provider"] == "p"));
        assert_eq!(parse_catalog("p", json!({"x": {"id": "x"}})).unwrap().len(), 1);
        assert!(parse_catalog("p", json!("nope")).is_err());
        let cost = openrouter_cost(
            &json!({"prompt": "0.000003", "completion": "0.000015", "input_cache_read": "-1",
            "overrides": [{"min_prompt_tokens": 200000, "prompt": "0.000006"}, {"min_prompt_tokens": 1, "utc_start": "x"}]}),
        );
        assert_eq!(
            cost,
            json!({"input": 3.0, "output": 15.0, "cacheRead": 0.0, "cacheWrite": 0.0,
                   "tiers": [{"inputTokensAbove": 200000, "input": 6.0, "output": 15.0, "cacheRead": 0.0, "cacheWrite": 0.0}]})
        );
        assert_eq!(
            catalog_request("https://pi.dev", "kimi-coding"),
            "https://pi.dev/api/models/providers/kimi-coding?types=chat%2Cimage%2Cclassifier"
        );
    }
}
