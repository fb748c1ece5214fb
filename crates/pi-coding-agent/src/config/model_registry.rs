//! The model registry: the built-in catalogue plus models.json, and which models can be used
//! (a model is available when its provider has auth configured).
//!
//! The built-in models and the environment-key lookup are inputs, so the registry does not
//! depend on how the catalogue is stored and tests can use small hand-made lists.
//!
//! The model list is built on demand from the catalogue and the applied config. Start-up asks
//! only for the providers it needs (the settings' default, the providers with auth), so a
//! plain `pi -p` never parses the rest of the 1,698 built-in models; the whole list is built
//! once, the first time something needs every model (a `--model` pattern, the picker).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use pi_ai::{Model, ModelCost};
use serde_json::{Map, Value};

use super::auth::{resolve_config_value_or_err, AuthStorage};
use super::models_json::{self, merge_compat, ModelOverride, ModelsConfig, ProviderConfig};
use super::models_store;

/// Request-time auth settings of a provider from models.json.
#[derive(Debug, Clone, Default, PartialEq)]
struct ProviderRequestConfig {
    api_key: Option<String>,
    headers: Option<Vec<(String, String)>>,
    auth_header: bool,
}

/// The key and extra headers for one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestAuth {
    pub api_key: Option<String>,
    pub headers: Vec<(String, String)>,
}

/// Where the registry's built-in models come from.
#[derive(Debug)]
enum Builtins {
    /// The compiled-in catalogue, parsed afresh into the registry's own list each time
    /// models.json is applied, which edits that list in place: copying the process-wide
    /// catalogue instead held it twice (several megabytes).
    Catalogue,
    /// A list the caller gave (tests, hand-made catalogues).
    Given(Cow<'static, [Model]>),
}

/// Built-in and custom models of one agent dir.
#[derive(Debug)]
pub struct ModelRegistry {
    builtins: Builtins,
    /// The built-ins with models-store.json's catalogues merged in, when the store has any.
    stored_builtins: Option<Vec<Model>>,
    /// The models fetched from each models.json Radius gateway (`"oauth": "radius"`), from
    /// models-store.json, by provider: they replace the provider's built-in models.
    gateway_models: HashMap<String, Vec<Model>>,
    builtin_providers: HashSet<String>,
    models_json_path: Option<PathBuf>,
    /// models.json with the extension providers spliced in, as last applied: what the model
    /// list is built from.
    config: ModelsConfig,
    /// Providers only extensions define; their models go last, as pi 1.6 lists them.
    extension_only: HashSet<String>,
    /// Every model, built the first time something needs them all; reset by each apply.
    all_models: OnceLock<Vec<Model>>,
    provider_requests: HashMap<String, ProviderRequestConfig>,
    model_headers: HashMap<(String, String), Vec<(String, String)>>,
    provider_names: HashMap<String, String>,
    /// models.json's provider `baseUrl`s, which image and classifier models take too.
    provider_base_urls: HashMap<String, String>,
    /// models.json's provider `compat`s, which classifier models take too (System One's
    /// image input and opt-in header).
    provider_compats: HashMap<String, Map<String, Value>>,
    load_error: Option<String>,
    auth: AuthStorage,
    /// Providers extensions registered (`pi.registerProvider`), in models.json's shape;
    /// models.json applies above them.
    extension_providers: Vec<(String, ProviderConfig)>,
    /// Counts the changes that may alter the models or their auth (a refresh, a write
    /// through [`Self::auth_mut`]), so a mirror of them knows when to look again.
    revision: u64,
}

impl ModelRegistry {
    /// Build from the catalogue, the credentials and (if given) the models.json path.
    /// The file is read now; a bad file leaves only the built-ins and sets [`Self::error`].
    pub fn new(
        builtins: impl Into<Cow<'static, [Model]>>,
        auth: AuthStorage,
        models_json_path: Option<PathBuf>,
    ) -> Self {
        let builtins = builtins.into();
        let builtin_providers = builtins.iter().map(|m| m.provider.clone()).collect();
        Self::build(Builtins::Given(builtins), builtin_providers, auth, models_json_path)
    }

    /// [`new`](Self::new) with the compiled-in catalogue, which the registry then holds once
    /// (its own parsed copy with models.json applied).
    pub fn from_catalogue(auth: AuthStorage, models_json_path: Option<PathBuf>) -> Self {
        let builtin_providers = pi_ai::get_providers().into_iter().map(str::to_string).collect();
        Self::build(Builtins::Catalogue, builtin_providers, auth, models_json_path)
    }

    fn build(
        builtins: Builtins,
        builtin_providers: HashSet<String>,
        auth: AuthStorage,
        models_json_path: Option<PathBuf>,
    ) -> Self {
        let mut registry = ModelRegistry {
            builtins,
            stored_builtins: None,
            gateway_models: HashMap::new(),
            builtin_providers,
            models_json_path,
            config: ModelsConfig::default(),
            extension_only: HashSet::new(),
            all_models: OnceLock::new(),
            provider_requests: HashMap::new(),
            model_headers: HashMap::new(),
            provider_names: HashMap::new(),
            provider_base_urls: HashMap::new(),
            provider_compats: HashMap::new(),
            load_error: None,
            auth,
            extension_providers: Vec::new(),
            revision: 0,
        };
        registry.refresh();
        registry
    }

    /// Re-read models.json (pi does this whenever the model picker opens).
    pub fn refresh(&mut self) {
        self.revision += 1;
        self.provider_requests.clear();
        self.model_headers.clear();
        self.provider_names.clear();
        self.load_error = None;
        let builtin_providers = self.builtin_providers.clone();
        let is_builtin = move |p: &str| builtin_providers.contains(p);
        let config = match &self.models_json_path {
            Some(path) => match models_json::load(path, &is_builtin) {
                Ok(c) => c,
                Err(e) => {
                    self.load_error = Some(e);
                    None
                }
            },
            None => None,
        };
        let mut config = config.unwrap_or_default();
        // Providers left out for a broken rule are reported; the rest of the file applies.
        if !config.provider_errors.is_empty() {
            self.load_error = Some(config.provider_errors.join("\n"));
        }
        // Providers only extensions define are listed after models.json's, as pi 1.6 lists
        // them; models.json still applies above an extension's config of the same name.
        self.extension_only = self
            .extension_providers
            .iter()
            .map(|(name, _)| name.clone())
            .filter(|name| !self.builtin_providers.contains(name) && !config.providers.iter().any(|(n, _)| n == name))
            .collect();
        config.providers.splice(0..0, self.extension_providers.iter().cloned());
        let mut store = self.read_models_store();
        self.import_legacy_gateway_lists(&config, &mut store);
        self.gateway_models = config
            .providers
            .iter()
            .filter(|(_, p)| p.oauth.as_deref() == Some("radius"))
            .map(|(name, _)| {
                let models = store
                    .as_ref()
                    .and_then(|s| s.get(name))
                    .map(|entry| models_store::chat_models(entry, name))
                    .unwrap_or_default();
                (name.clone(), models)
            })
            .collect();
        // Only entries of built-in providers change the built-ins: a store holding only
        // gateways' lists leaves the catalogue unparsed.
        let store = store.map(|mut store| {
            store.retain(|id, _| self.builtin_providers.contains(id) && !self.gateway_models.contains_key(id));
            store
        });
        self.stored_builtins = store.filter(|s| !s.is_empty()).and_then(|store| {
            // The store is rare: it is merged over the process-wide catalogue.
            let builtins: &[Model] = match &self.builtins {
                Builtins::Catalogue => pi_ai::builtin_models(),
                Builtins::Given(list) => list,
            };
            models_store::overlay(builtins, &store)
        });
        self.apply_config(config);
    }

    /// A Radius login written before models-store.json existed keeps the gateway's list in
    /// its `gatewayConfig`: a gateway without a stored list takes that one, as 1.6 imports it.
    fn import_legacy_gateway_lists(&self, config: &ModelsConfig, store: &mut Option<models_store::Store>) {
        let gateways = config
            .providers
            .iter()
            .filter(|(_, p)| p.oauth.as_deref() == Some("radius"))
            .map(|(name, _)| name.as_str())
            .chain(self.builtin_providers.contains("radius").then_some("radius"));
        for id in gateways {
            if store.as_ref().is_some_and(|s| s.contains_key(id)) {
                continue;
            }
            let Some(super::auth::Credential::OAuth { extra, .. }) = self.auth.get(id) else {
                continue;
            };
            let models = extra
                .get("gatewayConfig")
                .and_then(|c| super::radius_catalog::models_from_config(id, c))
                .unwrap_or_default();
            if !models.is_empty() {
                let entry = models_store::StoreEntry {
                    models,
                    ..models_store::StoreEntry::default()
                };
                store
                    .get_or_insert_with(models_store::Store::new)
                    .insert(id.to_string(), entry);
            }
        }
    }

    /// models-store.json beside models.json, when it has entries; a missing or unreadable
    /// store changes nothing (1.6 refetches it).
    fn read_models_store(&self) -> Option<models_store::Store> {
        let path = models_store::path_beside(self.models_json_path.as_ref()?);
        models_store::read(&path).ok().filter(|store| !store.is_empty())
    }

    /// The Radius gateways whose model lists are fetched: the built-in `radius` at `builtin`
    /// (unless models.json makes it a gateway of its own), then each models.json provider
    /// with `"oauth": "radius"` at its `baseUrl` without `/v1`. Id and gateway URL.
    pub fn radius_gateways(&self, builtin: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.builtin_providers.contains("radius") && !self.gateway_models.contains_key("radius") {
            out.push(("radius".to_string(), builtin.to_string()));
        }
        for (name, p) in &self.config.providers {
            if p.oauth.as_deref() != Some("radius") || out.iter().any(|(id, _)| id == name) {
                continue;
            }
            if let Some(base_url) = &p.base_url {
                out.push((name.clone(), super::radius_catalog::gateway_of_base_url(base_url)));
            }
        }
        out
    }

    /// Replace the providers extensions registered and rebuild the model list.
    pub fn set_extension_providers(&mut self, providers: Vec<(String, ProviderConfig)>) {
        if self.extension_providers == providers {
            return;
        }
        self.extension_providers = providers;
        self.refresh();
    }

    /// Whether a built-in provider has this name (extension configs are checked as
    /// models.json entries, which differ for built-in providers).
    pub fn is_builtin_provider(&self, provider: &str) -> bool {
        self.builtin_providers.contains(provider)
    }

    /// Use an already parsed models.json (tests, or a config from elsewhere). What requests
    /// need (keys, headers, names, URLs) is read now; the models are built when asked for.
    pub fn apply_config(&mut self, config: ModelsConfig) {
        self.provider_base_urls.clear();
        self.provider_compats.clear();
        for (name, p) in &config.providers {
            if let Some(url) = &p.base_url {
                self.provider_base_urls.insert(name.clone(), url.clone());
            }
            if let Some(Value::Object(compat)) = &p.compat {
                self.provider_compats.insert(name.clone(), compat.clone());
            }
            if let Some(display) = &p.name {
                self.provider_names.insert(name.clone(), display.clone());
            }
            if p.api_key.is_some() || p.headers.is_some() || p.auth_header.unwrap_or(false) {
                self.provider_requests.insert(
                    name.clone(),
                    ProviderRequestConfig {
                        api_key: p.api_key.clone(),
                        headers: p.headers.clone(),
                        auth_header: p.auth_header.unwrap_or(false),
                    },
                );
            }
            for (id, o) in &p.model_overrides {
                self.store_model_headers(name, id, o.headers.clone());
            }
        }
        // A custom model's own headers replace an override's for the same id.
        for (name, p) in &config.providers {
            for def in &p.models {
                self.store_model_headers(name, &def.id, def.headers.clone());
            }
        }
        self.config = config;
        self.all_models = OnceLock::new();
    }

    /// The models of the providers `wanted` lets through, in the order of the full list:
    /// the built-ins as shipped with models.json's overrides, custom models replacing a
    /// built-in of the same id or added after them, extension-only providers last.
    fn build_models(&self, wanted: Wanted<'_>) -> Vec<Model> {
        let config = &self.config;
        let mut provider_overrides: HashMap<&str, &ProviderConfig> = HashMap::new();
        let mut model_overrides: HashMap<(&str, &str), &ModelOverride> = HashMap::new();
        for (name, p) in &config.providers {
            if p.base_url.is_some() || p.compat.is_some() {
                provider_overrides.insert(name, p);
            }
            for (id, o) in &p.model_overrides {
                model_overrides.insert((name, id), o);
            }
        }

        let mut models = self.builtin_models(wanted);
        // From the built-ins as shipped (custom models inherit their provider's api and URL).
        let custom_models = custom_models(config, &models, &self.gateway_models, wanted);
        for model in &mut models {
            if let Some(p) = provider_overrides.get(model.provider.as_str()) {
                if let Some(url) = &p.base_url {
                    model.base_url = url.clone();
                }
                model.compat = merge_compat(model.compat.as_ref(), p.compat.as_ref());
            }
            if let Some(o) = model_overrides.get(&(model.provider.as_str(), model.id.as_str())) {
                apply_override(model, o);
            }
        }

        // Exact room: pushing onto the full list would double its capacity.
        models.reserve_exact(custom_models.len());
        for custom in custom_models {
            match models.iter_mut().find(|m| m.same_as(&custom)) {
                Some(existing) => *existing = custom,
                None => models.push(custom),
            }
        }
        if !self.extension_only.is_empty() {
            let (mut listed, extension): (Vec<Model>, Vec<Model>) = models
                .into_iter()
                .partition(|m| !self.extension_only.contains(&m.provider));
            listed.extend(extension);
            models = listed;
        }
        models
    }

    /// The built-in models (models-store.json's catalogues merged in) of the wanted
    /// providers, as shipped. Only the wanted providers' lines of the catalogue are parsed.
    fn builtin_models(&self, wanted: Wanted<'_>) -> Vec<Model> {
        if !self.gateway_models.is_empty() {
            // A models.json gateway of a built-in id has only its gateway's models.
            let gateways = &self.gateway_models;
            let not_gateway = move |p: &str| !gateways.contains_key(p) && wanted.includes(p);
            return self.builtin_models_of(Wanted::Only(&not_gateway));
        }
        self.builtin_models_of(wanted)
    }

    fn builtin_models_of(&self, wanted: Wanted<'_>) -> Vec<Model> {
        let keep = |list: &[Model]| list.iter().filter(|m| wanted.includes(&m.provider)).cloned().collect();
        match (&self.stored_builtins, &self.builtins, wanted) {
            (Some(stored), _, _) => keep(stored),
            (None, Builtins::Given(list), _) => keep(list),
            (None, Builtins::Catalogue, Wanted::All) => pi_ai::models::parse_builtin_models(),
            (None, Builtins::Catalogue, Wanted::Only(_)) => pi_ai::get_providers()
                .into_iter()
                .filter(|p| wanted.includes(p))
                .flat_map(pi_ai::models::parse_provider_models)
                .collect(),
        }
    }

    fn store_model_headers(&mut self, provider: &str, id: &str, headers: Option<Vec<(String, String)>>) {
        let key = (provider.to_string(), id.to_string());
        match headers {
            Some(h) if !h.is_empty() => {
                self.model_headers.insert(key, h);
            }
            _ => {
                self.model_headers.remove(&key);
            }
        }
    }

    /// The models.json problem: why the file was ignored, or which providers were left out.
    pub fn error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    /// Every model (built-in and custom), built on first use.
    pub fn all(&self) -> &[Model] {
        self.all_models.get_or_init(|| self.build_models(Wanted::All))
    }

    /// Models whose provider has auth configured (no commands run, no tokens refreshed).
    /// Until the full list is needed, only the providers with auth are built.
    pub fn available(&self) -> Vec<Model> {
        match self.all_models.get() {
            Some(all) => all.iter().filter(|m| self.has_configured_auth(m)).cloned().collect(),
            None => self.build_models(Wanted::Only(&|provider| self.provider_has_auth(provider))),
        }
    }

    /// One model by provider and id; builds only that provider's models when the full list
    /// is not built yet.
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        let found = |m: &Model| m.provider == provider && m.id == id;
        match self.all_models.get() {
            Some(all) => all.iter().find(|m| found(m)).cloned(),
            None => self
                .build_models(Wanted::Only(&|p| p == provider))
                .into_iter()
                .find(found),
        }
    }

    /// Whether a key is configured for the model's provider: `--api-key`, auth.json, the
    /// environment, or a models.json `apiKey`.
    pub fn has_configured_auth(&self, model: &Model) -> bool {
        self.provider_has_auth(&model.provider)
    }

    pub fn provider_has_auth(&self, provider: &str) -> bool {
        self.auth.has_auth(provider)
            || self
                .provider_requests
                .get(provider)
                .and_then(|c| c.api_key.as_deref())
                .is_some_and(|key| self.config_key_is_set(key))
    }

    /// Whether a models.json `apiKey` can give a key: a command or a literal always may; a
    /// `$VAR` template only when every variable it names is set (pi 1.6 lists such a provider
    /// as not configured otherwise).
    fn config_key_is_set(&self, key: &str) -> bool {
        let env = self.auth.env();
        super::auth::config_value_env_names(key)
            .into_iter()
            .all(|name| env(name).is_some())
    }

    /// pi 1.6's `getProviderAuthStatus(provider)`: `{configured, source?, label?}`, where
    /// `source` says where the auth comes from (`runtime`, `stored`, `models_json_command`,
    /// `environment` with the variables as `label`, `fallback` for an extension's key,
    /// `models_json_key`).
    pub fn auth_status(&self, provider: &str) -> serde_json::Value {
        use super::auth::AuthSource;
        use serde_json::json;
        match self.auth.auth_source(provider) {
            Some(AuthSource::Runtime) => return json!({ "configured": true, "source": "runtime" }),
            Some(AuthSource::Stored) => return json!({ "configured": true, "source": "stored" }),
            _ => {}
        }
        if let Some(key) = self.provider_requests.get(provider).and_then(|c| c.api_key.as_deref()) {
            if key.starts_with('!') {
                return json!({ "configured": true, "source": "models_json_command" });
            }
            let names = super::auth::config_value_env_names(key);
            if !names.is_empty() {
                return if self.config_key_is_set(key) {
                    json!({ "configured": true, "source": "environment", "label": names.join(", ") })
                } else {
                    json!({ "configured": false })
                };
            }
            let from_extension = self
                .extension_providers
                .iter()
                .any(|(name, config)| name == provider && config.api_key.is_some());
            let source = if from_extension { "fallback" } else { "models_json_key" };
            return json!({ "configured": true, "source": source });
        }
        match self.auth.auth_source(provider) {
            Some(AuthSource::Environment(name)) if !name.is_empty() => {
                json!({ "configured": true, "source": "environment", "label": name })
            }
            Some(_) => json!({ "configured": true, "source": "environment" }),
            None => json!({ "configured": false }),
        }
    }

    /// Display name of a provider from models.json `name`, else the id.
    /// models.json's `name` for the provider, else the built-in provider's name, else the id.
    /// The `baseUrl` models.json gives `provider`, if any.
    pub fn provider_base_url(&self, provider: &str) -> Option<&str> {
        self.provider_base_urls.get(provider).map(String::as_str)
    }

    /// `base_url` with Cloudflare's account and gateway ids filled in, as pi 1.6 does before
    /// each request: from `provider`'s stored credential (its `env`), else the environment.
    /// An id set nowhere stays as written.
    pub fn endpoint_url(&self, provider: &str, base_url: &str) -> String {
        if !base_url.contains('{') {
            return base_url.to_string();
        }
        let scoped = self.auth.provider_env(provider);
        let env = |name: &str| {
            scoped
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| (self.auth.env())(name))
        };
        pi_ai::env_keys::fill_cloudflare_ids(base_url, &env)
    }

    /// `stream` with Cloudflare's ids filled into each request's URL by [`Self::endpoint_url`]
    /// (the session's stream function: chat, compaction and summaries alike).
    pub fn with_endpoints(
        registry: std::sync::Arc<std::sync::Mutex<Self>>,
        stream: pi_ai::StreamFn,
    ) -> pi_ai::StreamFn {
        std::sync::Arc::new(
            move |model: &Model, context: &pi_ai::Context, options: pi_ai::StreamOptions| {
                if !model.base_url.contains('{') {
                    return stream(model, context, options);
                }
                let base_url = registry
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .endpoint_url(&model.provider, &model.base_url);
                let model = Model {
                    base_url,
                    ..model.clone()
                };
                stream(&model, context, options)
            },
        )
    }

    /// An image or classifier model as models.json leaves it, as pi 1.6 layers it: the
    /// provider's `baseUrl` replaces the model's, and for a classifier the provider's `compat`
    /// is merged over the model's key by key (its classifier APIs read their own switches,
    /// such as how System One takes images). The catalogue entry a script lists changes alike.
    pub fn task_model(&self, model: &pi_ai::task_models::TaskModel) -> pi_ai::task_models::TaskModel {
        let mut model = model.clone();
        if let Some(url) = self.provider_base_url(&model.provider) {
            model.base_url = url.to_string();
            if let Some(json) = model.json.as_object_mut() {
                json.insert("baseUrl".into(), Value::String(url.to_string()));
            }
        }
        let compat = self.provider_compats.get(&model.provider);
        if let Some(compat) = compat.filter(|_| model.kind == pi_ai::task_models::TaskKind::Classifier) {
            let mut merged = model.compat.take().unwrap_or_default();
            merged.extend(compat.iter().map(|(k, v)| (k.clone(), v.clone())));
            if let Some(json) = model.json.as_object_mut() {
                json.insert("compat".into(), Value::Object(merged.clone()));
            }
            model.compat = Some(merged);
        }
        model
    }

    pub fn provider_display_name<'a>(&'a self, provider: &'a str) -> &'a str {
        self.provider_names
            .get(provider)
            .map(String::as_str)
            .or_else(|| super::provider_names::builtin_provider_name(provider))
            .unwrap_or(provider)
    }

    pub fn auth(&self) -> &AuthStorage {
        &self.auth
    }
    pub fn auth_mut(&mut self) -> &mut AuthStorage {
        self.revision += 1;
        &mut self.auth
    }

    /// Changes so far (see the field): equal numbers mean nothing changed in between.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Whether the model's provider is logged in with OAuth.
    pub fn is_using_oauth(&self, model: &Model) -> bool {
        self.provider_uses_oauth(&model.provider)
    }

    /// Whether `provider` is logged in with OAuth.
    pub fn provider_uses_oauth(&self, provider: &str) -> bool {
        matches!(self.auth.get(provider), Some(super::auth::Credential::OAuth { .. }))
    }

    /// The API key for a provider: stored or environment auth first, then models.json.
    pub fn api_key_for_provider(&mut self, provider: &str) -> Option<String> {
        if let Some(key) = self.auth.api_key(provider, false) {
            return Some(key);
        }
        let config = self.provider_requests.get(provider)?.api_key.clone()?;
        super::auth::resolve_config_value_uncached(&config, self.auth.env())
    }

    /// The key and headers for a request to `model` (pi's `getApiKeyAndHeaders`). models.json
    /// values are resolved now, so `!command` values run for every request.
    pub fn request_auth(&mut self, model: &Model) -> Result<RequestAuth, String> {
        let provider_config = self.provider_requests.get(&model.provider).cloned();
        let api_key = match self.auth.api_key(&model.provider, false) {
            Some(k) => Some(k),
            None => match provider_config.as_ref().and_then(|c| c.api_key.as_ref()) {
                Some(cfg) => Some(resolve_config_value_or_err(
                    cfg,
                    &format!("API key for provider \"{}\"", model.provider),
                    self.auth.env(),
                )?),
                None => None,
            },
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        if let Some(h) = &model.headers {
            for (k, v) in h {
                if let Some(v) = v.as_str() {
                    put_header(&mut headers, k, v.to_string());
                }
            }
        }
        for (k, v) in self.config_headers(model)? {
            put_header(&mut headers, &k, v);
        }
        let mut put = |k: &str, v: String| put_header(&mut headers, k, v);
        if provider_config.as_ref().is_some_and(|c| c.auth_header) {
            let Some(key) = &api_key else {
                return Err(format!("No API key found for \"{}\"", model.provider));
            };
            put("Authorization", format!("Bearer {key}"));
        }
        Ok(RequestAuth { api_key, headers })
    }
}

impl ModelRegistry {
    /// The headers models.json gives `model` (its provider's `headers`, then the model's own),
    /// with `$VAR` and `!command` values resolved now: they go with every request, on top of
    /// the headers the model itself carries.
    pub fn config_headers(&self, model: &Model) -> Result<Vec<(String, String)>, String> {
        let mut headers: Vec<(String, String)> = Vec::new();
        if let Some(h) = self
            .provider_requests
            .get(&model.provider)
            .and_then(|c| c.headers.as_ref())
        {
            for (k, v) in h {
                let what = format!("provider \"{}\" header \"{k}\"", model.provider);
                put_header(&mut headers, k, resolve_config_value_or_err(v, &what, self.auth.env())?);
            }
        }
        if let Some(h) = self.model_headers.get(&(model.provider.clone(), model.id.clone())) {
            for (k, v) in h {
                let what = format!("model \"{}/{}\" header \"{k}\"", model.provider, model.id);
                put_header(&mut headers, k, resolve_config_value_or_err(v, &what, self.auth.env())?);
            }
        }
        Ok(headers)
    }
}

impl super::model_resolver::ModelLookup for ModelRegistry {
    fn lookup(&self, provider: &str, id: &str) -> Option<Model> {
        self.find(provider, id)
    }
}

/// Which providers' models to build.
#[derive(Clone, Copy)]
enum Wanted<'a> {
    All,
    Only(&'a dyn Fn(&str) -> bool),
}

impl Wanted<'_> {
    fn includes(self, provider: &str) -> bool {
        match self {
            Wanted::All => true,
            Wanted::Only(wanted) => wanted(provider),
        }
    }
}

/// The custom models models.json (and extensions) define for the wanted providers, each
/// Radius gateway's fetched models before its own; a built-in provider's inherit its first
/// model's api and URL, a gateway's those of its fetched models.
fn custom_models(
    config: &ModelsConfig,
    builtins: &[Model],
    gateways: &HashMap<String, Vec<Model>>,
    wanted: Wanted<'_>,
) -> Vec<Model> {
    let mut out = Vec::new();
    for (provider, p) in &config.providers {
        if !wanted.includes(provider) {
            continue;
        }
        let fetched = gateways.get(provider.as_str()).map(Vec::as_slice).unwrap_or_default();
        for model in fetched {
            out.push(gateway_model(model, p));
        }
        if p.models.is_empty() {
            continue;
        }
        // A built-in provider's custom models inherit its first model's api and URL.
        let inherited = fetched
            .first()
            .or_else(|| builtins.iter().find(|m| &m.provider == provider))
            .map(|m| (m.api.clone(), m.base_url.clone()));
        for def in &p.models {
            let Some(api) = def
                .api
                .clone()
                .or_else(|| p.api.clone())
                .or_else(|| inherited.as_ref().map(|i| i.0.clone()))
            else {
                continue;
            };
            let Some(base_url) = def
                .base_url
                .clone()
                .or_else(|| p.base_url.clone())
                .or_else(|| inherited.as_ref().map(|i| i.1.clone()))
            else {
                continue;
            };
            out.push(Model {
                id: def.id.clone(),
                name: def.name.clone().unwrap_or_else(|| def.id.clone()),
                api,
                provider: provider.clone(),
                base_url,
                reasoning: def.reasoning.unwrap_or(false),
                input: def.input.clone().unwrap_or_else(|| vec![pi_ai::InputKind::Text]),
                cost: def.cost.clone().unwrap_or_default(),
                context_window: def.context_window.map(|n| n as u64).unwrap_or(128_000),
                max_tokens: def.max_tokens.map(|n| n as u64).unwrap_or(16_384),
                headers: None,
                compat: merge_compat(p.compat.as_ref(), def.compat.as_ref()),
                thinking_level_map: def.thinking_level_map.clone(),
                prompt_cache: def.prompt_cache,
            });
        }
    }
    out
}

/// A gateway's fetched model as models.json leaves it: its own `baseUrl` kept (the gateway
/// named it), the provider's `compat` merged over its own, and its `modelOverrides` entry
/// applied, as pi 1.6 composes a Radius provider.
fn gateway_model(model: &Model, p: &ProviderConfig) -> Model {
    let mut model = model.clone();
    model.compat = merge_compat(model.compat.as_ref(), p.compat.as_ref());
    if let Some((_, o)) = p.model_overrides.iter().find(|(id, _)| *id == model.id) {
        apply_override(&mut model, o);
    }
    model
}

/// Set header `k` (a later value replaces an earlier one of the same name).
fn put_header(headers: &mut Vec<(String, String)>, k: &str, v: String) {
    match headers.iter_mut().find(|(hk, _)| hk == k) {
        Some(slot) => slot.1 = v,
        None => headers.push((k.to_string(), v)),
    }
}

fn apply_override(model: &mut Model, o: &ModelOverride) {
    if let Some(name) = &o.name {
        model.name = name.clone();
    }
    if let Some(r) = o.reasoning {
        model.reasoning = r;
    }
    if let Some(map) = &o.thinking_level_map {
        let mut merged: Map<String, Value> = model.thinking_level_map.clone().unwrap_or_default();
        for (k, v) in map {
            merged.insert(k.clone(), v.clone());
        }
        model.thinking_level_map = Some(merged);
    }
    if let Some(input) = &o.input {
        model.input = input.clone();
    }
    if let Some(over) = o.prompt_cache {
        let base = model.prompt_cache.unwrap_or_default();
        model.prompt_cache = Some(pi_ai::PromptCache {
            short: over.short.or(base.short),
            long: over.long.or(base.long),
        });
    }
    if let Some(c) = o.context_window {
        model.context_window = c as u64;
    }
    if let Some(m) = o.max_tokens {
        model.max_tokens = m as u64;
    }
    if let Some(cost) = &o.cost {
        model.cost = ModelCost {
            input: cost.input.unwrap_or(model.cost.input),
            output: cost.output.unwrap_or(model.cost.output),
            cache_read: cost.cache_read.unwrap_or(model.cost.cache_read),
            cache_write: cost.cache_write.unwrap_or(model.cost.cache_write),
            // Overrides change the base prices; the model's long-context tiers stay.
            tiers: std::mem::take(&mut model.cost.tiers),
        };
    }
    model.compat = merge_compat(model.compat.as_ref(), o.compat.as_ref());
}
