//! `models.json`: custom providers, custom models, per-model overrides and `compat` flags.
//!
//! The file is JSON with `//` line comments and trailing commas allowed (block comments are
//! not). It is checked against pi's schema, where any failure ignores the whole file (the
//! built-in models stay usable), and then each provider against pi's cross-field rules: as in
//! pi 1.6, a provider that breaks one is left out on its own (keeping its built-in models) and
//! named in [`ModelsConfig::provider_errors`], while the others apply. Messages are in pi's
//! wording. This module only reads: pi never writes models.json.

use std::path::Path;

use pi_ai::{InputKind, ModelCost};
use serde_json::{Map, Value};

/// The parsed file, providers in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelsConfig {
    pub providers: Vec<(String, ProviderConfig)>,
    /// Providers left out for breaking a cross-field rule, one line each as pi 1.6 reports
    /// them: `Provider "<id>": <rule>`.
    pub provider_errors: Vec<String>,
}

/// One `providers.<name>` entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderConfig {
    /// Display name (e.g. in `/login`).
    pub name: Option<String>,
    pub base_url: Option<String>,
    /// A literal, an environment variable name, or `!command`.
    pub api_key: Option<String>,
    pub api: Option<String>,
    /// `oauth`: the account sign-in the provider uses; only `"radius"` (a self-hosted Radius
    /// gateway at `baseUrl`) exists.
    pub oauth: Option<String>,
    /// Header values resolve like `api_key`.
    pub headers: Option<Vec<(String, String)>>,
    pub compat: Option<Value>,
    /// Send `Authorization: Bearer <key>`.
    pub auth_header: Option<bool>,
    pub models: Vec<ModelDef>,
    pub model_overrides: Vec<(String, ModelOverride)>,
}

/// A custom model. Unset fields get pi's defaults when the model is built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelDef {
    pub id: String,
    pub name: Option<String>,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<Map<String, Value>>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<ModelCost>,
    pub context_window: Option<f64>,
    pub max_tokens: Option<f64>,
    pub headers: Option<Vec<(String, String)>>,
    pub compat: Option<Value>,
    /// `promptCache`: cache lifetimes in seconds per retention tier.
    pub prompt_cache: Option<pi_ai::PromptCache>,
}

/// Changes to one built-in model; `cost` fields and `compat` merge into the model's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOverride {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<Map<String, Value>>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<PartialCost>,
    pub context_window: Option<f64>,
    pub max_tokens: Option<f64>,
    pub headers: Option<Vec<(String, String)>>,
    pub compat: Option<Value>,
    /// Tiers given here replace the model's, the others stay.
    pub prompt_cache: Option<pi_ai::PromptCache>,
}

/// The `promptCache` object (`{short?, long?}`, seconds); a tier that is not a positive
/// number is left out.
fn prompt_cache(o: &Map<String, Value>) -> Option<pi_ai::PromptCache> {
    let cache = o.get("promptCache")?.as_object()?;
    let tier = |name: &str| {
        cache
            .get(name)
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s > 0.0)
    };
    Some(pi_ai::PromptCache {
        short: tier("short"),
        long: tier("long"),
    })
}

/// Long-context tiers of a models.json `cost` (`tiers: [{inputTokensAbove, input, ...}]`);
/// `None` when absent or not a list of tiers.
fn cost_tiers(cost: &serde_json::Map<String, Value>) -> Option<Vec<pi_ai::CostTier>> {
    serde_json::from_value(cost.get("tiers")?.clone()).ok()
}

/// A cost override: each price optional.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PartialCost {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

/// Remove `//` line comments and trailing commas outside string literals.
pub fn strip_json_comments(input: &str) -> String {
    // Pass 1: comments.
    let mut no_comments = String::with_capacity(input.len());
    let mut chars = input.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c == '"' {
            no_comments.push(c);
            copy_string_rest(&mut chars, &mut no_comments);
        } else if c == '/' && chars.peek().is_some_and(|(_, n)| *n == '/') {
            while let Some(&(_, n)) = chars.peek() {
                if n == '\n' {
                    break;
                }
                chars.next();
            }
        } else {
            no_comments.push(c);
        }
    }
    // Pass 2: a comma followed only by whitespace and a closing bracket.
    let mut out = String::with_capacity(no_comments.len());
    let mut chars = no_comments.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '"' {
            out.push(c);
            copy_string_rest(&mut chars, &mut out);
        } else if c == ',' {
            let rest = no_comments[i + 1..].trim_start();
            if !(rest.starts_with('}') || rest.starts_with(']')) {
                out.push(c);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn copy_string_rest(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>, out: &mut String) {
    while let Some((_, c)) = chars.next() {
        out.push(c);
        match c {
            '\\' => {
                if let Some((_, n)) = chars.next() {
                    out.push(n);
                }
            }
            '"' => return,
            _ => {}
        }
    }
}

/// Read and check `path`. `Ok(None)` when the file does not exist. The error text is what pi
/// shows (`Failed to parse models.json: …`, `Invalid models.json schema: …`,
/// `Failed to load models.json: …`, each followed by the file path).
pub fn load(path: &Path, builtin_providers: &dyn Fn(&str) -> bool) -> Result<Option<ModelsConfig>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("Failed to load models.json: {e}\n\nFile: {}", path.display())),
    };
    parse(&text, builtin_providers)
        .map(Some)
        .map_err(|e| format!("{e}\n\nFile: {}", path.display()))
}

/// Parse and check the text of a models.json (errors without the `File:` line).
pub fn parse(text: &str, builtin_providers: &dyn Fn(&str) -> bool) -> Result<ModelsConfig, String> {
    let value: Value =
        serde_json::from_str(&strip_json_comments(text)).map_err(|e| format!("Failed to parse models.json: {e}"))?;
    let mut errors = Vec::new();
    check_root(&value, &mut errors);
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(|(p, m)| format!("  - {p}: {m}")).collect();
        return Err(format!("Invalid models.json schema:\n{}", lines.join("\n")));
    }
    let mut config = convert(&value);
    leave_out_broken_providers(&mut config, builtin_providers);
    Ok(config)
}

/// Read providers already in models.json's JSON shape (what extensions register), checked
/// against the schema only: their own rules were applied where they were registered.
pub fn from_value(value: &Value) -> Result<ModelsConfig, String> {
    let mut errors = Vec::new();
    check_root(value, &mut errors);
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(|(p, m)| format!("{p}: {m}")).collect();
        return Err(lines.join("; "));
    }
    Ok(convert(value))
}

/// Take out the providers that break one of pi's cross-field rules and record why, as pi 1.6
/// composes each provider on its own: one bad entry no longer hides every custom model.
fn leave_out_broken_providers(config: &mut ModelsConfig, builtin_providers: &dyn Fn(&str) -> bool) {
    let mut errors = Vec::new();
    config
        .providers
        .retain(|(name, p)| match provider_error(name, p, builtin_providers(name)) {
            Some(rule) => {
                errors.push(format!("Provider \"{name}\": {rule}"));
                false
            }
            None => true,
        });
    config.provider_errors = errors;
}

/// pi's cross-field rules for one provider: the first it breaks, in pi's words.
fn provider_error(name: &str, p: &ProviderConfig, builtin: bool) -> Option<String> {
    if p.oauth.is_some() && p.base_url.is_none() {
        return Some(format!(
            "Provider {name}: \"baseUrl\" is required when \"oauth\" is set."
        ));
    }
    if p.models.is_empty() {
        if p.base_url.is_none() && p.headers.is_none() && p.compat.is_none() && p.model_overrides.is_empty() {
            return Some(format!(
                    "Provider {name}: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
                ));
        }
    } else if !builtin && p.base_url.is_none() {
        // pi 1.6 needs no `apiKey` here: the key may come from auth.json or the
        // environment, and a provider without one fails only when it is used.
        return Some(format!(
            "Provider {name}: \"baseUrl\" is required when defining custom models."
        ));
    }
    // A Radius gateway's models take their api from the list it serves (checked when the
    // models are built: without a fetched list, such a model is left out).
    let gateway = p.oauth.is_some();
    for m in &p.models {
        if p.api.is_none() && m.api.is_none() && !builtin && !gateway {
            return Some(format!(
                "Provider {name}, model {}: no \"api\" specified. Set at provider or model level.",
                m.id
            ));
        }
        if m.id.is_empty() {
            return Some(format!("Provider {name}: model missing \"id\""));
        }
        if m.context_window.is_some_and(|c| c <= 0.0) {
            return Some(format!("Provider {name}, model {}: invalid contextWindow", m.id));
        }
        if m.max_tokens.is_some_and(|c| c <= 0.0) {
            return Some(format!("Provider {name}, model {}: invalid maxTokens", m.id));
        }
    }
    None
}

// ----- schema check ------------------------------------------------------------------------

type Errors = Vec<(String, String)>;

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn display(path: &str) -> String {
    if path.is_empty() {
        "root".to_string()
    } else {
        path.to_string()
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn expect_type(v: &Value, want: &str, path: &str, errors: &mut Errors) -> bool {
    if type_name(v) == want {
        true
    } else {
        errors.push((display(path), format!("must be {want}")));
        false
    }
}

fn check_required(obj: &Map<String, Value>, required: &[&str], path: &str, errors: &mut Errors) {
    let missing: Vec<&str> = required.iter().copied().filter(|k| !obj.contains_key(*k)).collect();
    if let Some(first) = missing.first() {
        errors.push((
            join(path, first),
            format!("must have required properties {}", missing.join(", ")),
        ));
    }
}

fn check_string(obj: &Map<String, Value>, key: &str, min_len: bool, path: &str, errors: &mut Errors) {
    if let Some(v) = obj.get(key) {
        let p = join(path, key);
        if expect_type(v, "string", &p, errors) && min_len && v.as_str().is_some_and(str::is_empty) {
            errors.push((p, "must not have fewer than 1 characters".to_string()));
        }
    }
}

/// `oauth` is the constant `"radius"`; a value of another type fails both rules, as pi's
/// schema reports it.
fn check_oauth(obj: &Map<String, Value>, path: &str, errors: &mut Errors) {
    let Some(v) = obj.get("oauth") else { return };
    let p = join(path, "oauth");
    expect_type(v, "string", &p, errors);
    if v.as_str() != Some("radius") {
        errors.push((p, "must be equal to constant".to_string()));
    }
}

fn check_simple(obj: &Map<String, Value>, key: &str, want: &str, path: &str, errors: &mut Errors) {
    if let Some(v) = obj.get(key) {
        expect_type(v, want, &join(path, key), errors);
    }
}

fn check_string_record(obj: &Map<String, Value>, key: &str, path: &str, errors: &mut Errors) {
    if let Some(v) = obj.get(key) {
        let p = join(path, key);
        if let Some(map) = v.as_object() {
            for (k, val) in map {
                expect_type(val, "string", &join(&p, k), errors);
            }
        } else {
            expect_type(v, "object", &p, errors);
        }
    }
}

fn check_input(obj: &Map<String, Value>, path: &str, errors: &mut Errors) {
    let Some(v) = obj.get("input") else { return };
    let p = join(path, "input");
    let Some(items) = v.as_array() else {
        expect_type(v, "array", &p, errors);
        return;
    };
    for (i, item) in items.iter().enumerate() {
        if !matches!(item.as_str(), Some("text" | "image")) {
            let ip = join(&p, &i.to_string());
            errors.push((ip.clone(), "must be equal to constant".into()));
            errors.push((ip.clone(), "must be equal to constant".into()));
            errors.push((ip, "must match a schema in anyOf".into()));
        }
    }
}

fn check_thinking_map(obj: &Map<String, Value>, path: &str, errors: &mut Errors) {
    let Some(v) = obj.get("thinkingLevelMap") else { return };
    let p = join(path, "thinkingLevelMap");
    let Some(map) = v.as_object() else {
        expect_type(v, "object", &p, errors);
        return;
    };
    for level in ["off", "minimal", "low", "medium", "high", "xhigh"] {
        if let Some(val) = map.get(level) {
            if !(val.is_string() || val.is_null()) {
                let lp = join(&p, level);
                errors.push((lp.clone(), "must be string".into()));
                errors.push((lp.clone(), "must be null".into()));
                errors.push((lp, "must match a schema in anyOf".into()));
            }
        }
    }
}

fn check_compat(obj: &Map<String, Value>, path: &str, errors: &mut Errors) {
    // The three per-API compat schemas are open objects with optional fields, so in practice
    // any object passes unless a field shared by all three has the wrong type. Like pi, a
    // failure is reported once per alternative, then for the union.
    let Some(v) = obj.get("compat") else { return };
    let p = join(path, "compat");
    let failure = match v.as_object() {
        None => Some((p.clone(), "must be object")),
        Some(map) => map
            .get("supportsLongCacheRetention")
            .filter(|val| !val.is_boolean())
            .map(|_| (join(&p, "supportsLongCacheRetention"), "must be boolean")),
    };
    if let Some((at, message)) = failure {
        for _ in 0..3 {
            errors.push((at.clone(), message.to_string()));
        }
        errors.push((p, "must match a schema in anyOf".to_string()));
    }
}

fn check_cost(obj: &Map<String, Value>, path: &str, all_required: bool, errors: &mut Errors) {
    let Some(v) = obj.get("cost") else { return };
    let p = join(path, "cost");
    let Some(map) = v.as_object() else {
        expect_type(v, "object", &p, errors);
        return;
    };
    let keys = ["input", "output", "cacheRead", "cacheWrite"];
    if all_required {
        check_required(map, &keys, &p, errors);
    }
    for k in keys {
        check_simple(map, k, "number", &p, errors);
    }
}

/// A model definition (`is_definition`) or an override, field by field in schema order.
fn check_model(m: &Map<String, Value>, path: &str, is_definition: bool, errors: &mut Errors) {
    if is_definition {
        check_required(m, &["id"], path, errors);
        check_string(m, "id", true, path, errors);
    }
    check_string(m, "name", true, path, errors);
    if is_definition {
        check_string(m, "api", true, path, errors);
        check_string(m, "baseUrl", true, path, errors);
    }
    check_simple(m, "reasoning", "boolean", path, errors);
    check_thinking_map(m, path, errors);
    check_input(m, path, errors);
    check_cost(m, path, is_definition, errors);
    check_simple(m, "contextWindow", "number", path, errors);
    check_simple(m, "maxTokens", "number", path, errors);
    check_string_record(m, "headers", path, errors);
    check_compat(m, path, errors);
}

fn check_root(v: &Value, errors: &mut Errors) {
    let Some(root) = v.as_object() else {
        expect_type(v, "object", "", errors);
        return;
    };
    check_required(root, &["providers"], "", errors);
    let Some(providers) = root.get("providers") else { return };
    let Some(providers) = providers.as_object() else {
        expect_type(providers, "object", "providers", errors);
        return;
    };
    for (name, pv) in providers {
        let path = join("providers", name);
        let Some(p) = pv.as_object() else {
            expect_type(pv, "object", &path, errors);
            continue;
        };
        for key in ["name", "baseUrl", "apiKey", "api"] {
            check_string(p, key, true, &path, errors);
        }
        check_oauth(p, &path, errors);
        check_string_record(p, "headers", &path, errors);
        check_compat(p, &path, errors);
        check_simple(p, "authHeader", "boolean", &path, errors);
        if let Some(models) = p.get("models") {
            let mp = join(&path, "models");
            if let Some(list) = models.as_array() {
                for (i, mv) in list.iter().enumerate() {
                    let ip = join(&mp, &i.to_string());
                    let Some(m) = mv.as_object() else {
                        expect_type(mv, "object", &ip, errors);
                        continue;
                    };
                    check_model(m, &ip, true, errors);
                }
            } else {
                expect_type(models, "array", &mp, errors);
            }
        }
        if let Some(overrides) = p.get("modelOverrides") {
            let op = join(&path, "modelOverrides");
            if let Some(map) = overrides.as_object() {
                for (id, ov) in map {
                    let ip = join(&op, id);
                    let Some(o) = ov.as_object() else {
                        expect_type(ov, "object", &ip, errors);
                        continue;
                    };
                    check_model(o, &ip, false, errors);
                }
            } else {
                expect_type(overrides, "object", &op, errors);
            }
        }
    }
}

// ----- conversion (after the schema check passed) ----------------------------------------

fn s(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

fn string_pairs(obj: &Map<String, Value>, key: &str) -> Option<Vec<(String, String)>> {
    obj.get(key).and_then(Value::as_object).map(|m| {
        m.iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect()
    })
}

fn input_kinds(obj: &Map<String, Value>) -> Option<Vec<InputKind>> {
    obj.get("input").and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(|v| match v.as_str() {
                Some("text") => Some(InputKind::Text),
                Some("image") => Some(InputKind::Image),
                _ => None,
            })
            .collect()
    })
}

fn convert(v: &Value) -> ModelsConfig {
    let mut config = ModelsConfig::default();
    let Some(providers) = v.get("providers").and_then(Value::as_object) else {
        return config;
    };
    for (name, pv) in providers {
        let Some(p) = pv.as_object() else { continue };
        let models = p
            .get("models")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_object).map(convert_model).collect())
            .unwrap_or_default();
        let model_overrides = p
            .get("modelOverrides")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(id, o)| o.as_object().map(|o| (id.clone(), convert_override(o))))
                    .collect()
            })
            .unwrap_or_default();
        config.providers.push((
            name.clone(),
            ProviderConfig {
                name: s(p, "name"),
                base_url: s(p, "baseUrl"),
                api_key: s(p, "apiKey"),
                api: s(p, "api"),
                oauth: s(p, "oauth"),
                headers: string_pairs(p, "headers"),
                compat: p.get("compat").cloned(),
                auth_header: p.get("authHeader").and_then(Value::as_bool),
                models,
                model_overrides,
            },
        ));
    }
    config
}

fn convert_model(m: &Map<String, Value>) -> ModelDef {
    ModelDef {
        id: s(m, "id").unwrap_or_default(),
        name: s(m, "name"),
        api: s(m, "api"),
        base_url: s(m, "baseUrl"),
        reasoning: m.get("reasoning").and_then(Value::as_bool),
        thinking_level_map: m.get("thinkingLevelMap").and_then(Value::as_object).cloned(),
        input: input_kinds(m),
        cost: m.get("cost").and_then(Value::as_object).map(|c| ModelCost {
            input: c.get("input").and_then(Value::as_f64).unwrap_or(0.0),
            output: c.get("output").and_then(Value::as_f64).unwrap_or(0.0),
            cache_read: c.get("cacheRead").and_then(Value::as_f64).unwrap_or(0.0),
            cache_write: c.get("cacheWrite").and_then(Value::as_f64).unwrap_or(0.0),
            tiers: cost_tiers(c).unwrap_or_default(),
        }),
        context_window: m.get("contextWindow").and_then(Value::as_f64),
        max_tokens: m.get("maxTokens").and_then(Value::as_f64),
        headers: string_pairs(m, "headers"),
        compat: m.get("compat").cloned(),
        prompt_cache: prompt_cache(m),
    }
}

fn convert_override(o: &Map<String, Value>) -> ModelOverride {
    ModelOverride {
        name: s(o, "name"),
        reasoning: o.get("reasoning").and_then(Value::as_bool),
        thinking_level_map: o.get("thinkingLevelMap").and_then(Value::as_object).cloned(),
        input: input_kinds(o),
        cost: o.get("cost").and_then(Value::as_object).map(|c| PartialCost {
            input: c.get("input").and_then(Value::as_f64),
            output: c.get("output").and_then(Value::as_f64),
            cache_read: c.get("cacheRead").and_then(Value::as_f64),
            cache_write: c.get("cacheWrite").and_then(Value::as_f64),
        }),
        context_window: o.get("contextWindow").and_then(Value::as_f64),
        max_tokens: o.get("maxTokens").and_then(Value::as_f64),
        headers: string_pairs(o, "headers"),
        compat: o.get("compat").cloned(),
        prompt_cache: prompt_cache(o),
    }
}

/// Merge compat objects: override keys win; the two routing objects merge key by key.
pub fn merge_compat(base: Option<&Value>, over: Option<&Value>) -> Option<Value> {
    let Some(over) = over.and_then(Value::as_object) else {
        return base.cloned();
    };
    let base_obj = base.and_then(Value::as_object).cloned().unwrap_or_default();
    let mut merged = base_obj.clone();
    for (k, v) in over {
        merged.insert(k.clone(), v.clone());
    }
    for routing in ["openRouterRouting", "vercelGatewayRouting"] {
        let b = base_obj.get(routing).and_then(Value::as_object);
        let o = over.get(routing).and_then(Value::as_object);
        if b.is_some() || o.is_some() {
            let mut r = b.cloned().unwrap_or_default();
            if let Some(o) = o {
                for (k, v) in o {
                    r.insert(k.clone(), v.clone());
                }
            }
            merged.insert(routing.to_string(), Value::Object(r));
        }
    }
    Some(Value::Object(merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_is_radius_with_a_base_url() {
        let none = |_: &str| false;
        let ok = parse(
            r#"{"providers":{"corp":{"baseUrl":"http://gw/v1","oauth":"radius"}}}"#,
            &none,
        )
        .unwrap();
        assert_eq!(ok.providers[0].1.oauth.as_deref(), Some("radius"));
        // pi 1.6's schema messages: another string fails the constant, another type both rules.
        let err = parse(r#"{"providers":{"corp":{"baseUrl":"u","oauth":"github"}}}"#, &none).unwrap_err();
        assert_eq!(
            err,
            "Invalid models.json schema:\n  - providers.corp.oauth: must be equal to constant"
        );
        let err = parse(r#"{"providers":{"corp":{"baseUrl":"u","oauth":3}}}"#, &none).unwrap_err();
        assert_eq!(
            err,
            "Invalid models.json schema:\n  - providers.corp.oauth: must be string\n  - providers.corp.oauth: must be equal to constant"
        );
        let config = parse(
            r#"{"providers":{"corp":{"oauth":"radius","api":"pi-messages"}}}"#,
            &none,
        )
        .expect("a broken provider leaves the file loaded");
        assert!(config.providers.is_empty());
        assert_eq!(
            config.provider_errors,
            ["Provider \"corp\": Provider corp: \"baseUrl\" is required when \"oauth\" is set."]
        );
    }

    fn none(_: &str) -> bool {
        false
    }

    #[test]
    fn strips_comments_and_trailing_commas_but_not_strings() {
        let text = "{\n // comment\n \"a\": \"x // y,}\", // trailing\n \"b\": [1, 2,],\n}";
        let v: Value = serde_json::from_str(&strip_json_comments(text)).expect("valid");
        assert_eq!(v["a"], "x // y,}");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
        let escaped = r#"{"a": "q\"//", "b": 1,}"#;
        let v: Value = serde_json::from_str(&strip_json_comments(escaped)).expect("valid");
        assert_eq!(v["a"], "q\"//");
    }

    #[test]
    fn custom_models_keep_their_long_context_tiers() {
        let config = parse(
            r#"{"providers":{"foo":{"baseUrl":"http://x","apiKey":"k","api":"openai-completions","models":[
                {"id":"a","cost":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,
                 "tiers":[{"inputTokensAbove":200000,"input":2,"output":4,"cacheRead":0.5,"cacheWrite":0}]}}]}}}"#,
            &none,
        )
        .expect("valid");
        let cost = config.providers[0].1.models[0].cost.clone().expect("cost");
        assert_eq!(cost.tiers.len(), 1);
        assert_eq!((cost.tiers[0].input_tokens_above, cost.tiers[0].output), (200_000, 4.0));
    }

    #[test]
    fn schema_messages_match_pi() {
        let err = parse(
            r#"{"providers":{"foo":{"baseUrl":"http://x","apiKey":"k","api":"a","models":[{"name":"n"}]}}}"#,
            &none,
        )
        .expect_err("missing id");
        assert_eq!(
            err,
            "Invalid models.json schema:\n  - providers.foo.models.0.id: must have required properties id"
        );
        let err = parse(r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"k","api":"a","models":[{"id":"a","contextWindow":"big"}]}}}"#, &none)
            .expect_err("type");
        assert!(
            err.ends_with("  - providers.foo.models.0.contextWindow: must be number"),
            "{err}"
        );
        let err = parse(r#"{}"#, &none).expect_err("no providers");
        assert!(err.ends_with("  - providers: must have required properties providers"));
        let err = parse(r#"{"providers":[]}"#, &none).expect_err("array");
        assert!(err.ends_with("  - providers: must be object"));
        let err = parse(
            r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"k","api":"a","models":[{"id":"a","cost":{"input":1}}]}}}"#,
            &none,
        )
        .expect_err("cost");
        assert!(err.contains(
            "providers.foo.models.0.cost.output: must have required properties output, cacheRead, cacheWrite"
        ));
    }

    #[test]
    fn compat_union_messages() {
        let err = parse(
            r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"k","api":"a","compat":[],"models":[{"id":"a"}]}}}"#,
            &none,
        )
        .expect_err("compat");
        assert_eq!(
            err,
            "Invalid models.json schema:\n  - providers.foo.compat: must be object\n  - providers.foo.compat: must be object\n  - providers.foo.compat: must be object\n  - providers.foo.compat: must match a schema in anyOf"
        );
        assert!(parse(r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"k","api":"a","compat":{"supportsStore":"x"},"models":[{"id":"a"}]}}}"#, &none).is_ok());
        let err = parse(r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"","api":"a","headers":{"a":1},"models":[{"id":"a","thinkingLevelMap":{"off":1}}]}}}"#, &none)
            .expect_err("several");
        assert_eq!(
            err,
            "Invalid models.json schema:\n  - providers.foo.apiKey: must not have fewer than 1 characters\n  - providers.foo.headers.a: must be string\n  - providers.foo.models.0.thinkingLevelMap.off: must be string\n  - providers.foo.models.0.thinkingLevelMap.off: must be null\n  - providers.foo.models.0.thinkingLevelMap.off: must match a schema in anyOf"
        );
    }

    #[test]
    fn rule_messages_match_pi() {
        let cases = [
            (
                r#"{"providers":{"foo":{}}}"#,
                "Provider foo: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\".",
            ),
            (
                r#"{"providers":{"foo":{"apiKey":"k","api":"a","models":[{"id":"a"}]}}}"#,
                "Provider foo: \"baseUrl\" is required when defining custom models.",
            ),
            (
                r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"k","models":[{"id":"a"}]}}}"#,
                "Provider foo, model a: no \"api\" specified. Set at provider or model level.",
            ),
            (
                r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"k","api":"x","models":[{"id":"a","maxTokens":0}]}}}"#,
                "Provider foo, model a: invalid maxTokens",
            ),
            (
                r#"{"providers":{"foo":{"baseUrl":"u","apiKey":"k","api":"x","models":[{"id":"a","contextWindow":-1}]}}}"#,
                "Provider foo, model a: invalid contextWindow",
            ),
        ];
        for (text, msg) in cases {
            let config = parse(text, &none).expect(text);
            assert!(config.providers.is_empty(), "{text}");
            assert_eq!(config.provider_errors, [format!("Provider \"foo\": {msg}")], "{text}");
        }
        // Each provider is judged on its own, as pi 1.6 composes them: the good one stays.
        let config = parse(
            r#"{"providers":{"bad":{"apiKey":"k","api":"a","models":[{"id":"m"}]},
                             "good":{"baseUrl":"u","api":"a","models":[{"id":"g"}]}}}"#,
            &none,
        )
        .expect("loaded");
        let names: Vec<&str> = config.providers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["good"]);
        assert_eq!(
            config.provider_errors,
            ["Provider \"bad\": Provider bad: \"baseUrl\" is required when defining custom models."]
        );
        // A custom provider needs no apiKey (auth.json or the environment may hold it).
        assert!(parse(
            r#"{"providers":{"foo":{"baseUrl":"u","api":"a","models":[{"id":"a"}]}}}"#,
            &none
        )
        .is_ok());
        // A built-in provider may add models without baseUrl, apiKey or api.
        let builtin = |p: &str| p == "openai";
        assert!(parse(r#"{"providers":{"openai":{"models":[{"id":"gpt-x"}]}}}"#, &builtin).is_ok());
        // Headers alone are a valid override.
        assert!(parse(r#"{"providers":{"openai":{"headers":{"x":"y"}}}}"#, &builtin).is_ok());
    }

    #[test]
    fn parse_error_is_reported() {
        let err = parse(r#"{"providers": {"foo" "x"}}"#, &none).expect_err("bad json");
        assert!(err.starts_with("Failed to parse models.json: "), "{err}");
    }

    #[test]
    fn compat_merge_merges_routing() {
        let base = serde_json::json!({"supportsStore": false, "openRouterRouting": {"only": ["a"], "order": ["x"]}});
        let over = serde_json::json!({"supportsStore": true, "openRouterRouting": {"order": ["y"]}});
        let merged = merge_compat(Some(&base), Some(&over)).expect("merged");
        assert_eq!(
            merged,
            serde_json::json!({"supportsStore": true, "openRouterRouting": {"only": ["a"], "order": ["y"]}})
        );
    }
}
