//! Providers extensions register (`pi.registerProvider`) in the product: their models join the
//! model registry (listed, selectable, with their auth), and the `api`s they stream themselves
//! (`streamSimple`) are streamed by the host through the session's stream function.

use std::collections::HashSet;
use std::sync::Arc;

use pi_ai::{AssistantStream, Context, Model, StreamFn, StreamOptions};
use pi_extensions::{ExtensionError, Registrations};
use serde_json::{json, Map, Value};

use super::ExtensionSlot;
use crate::config::models_json::{self, ProviderConfig};
use crate::session::agent_session::lock;
use crate::session::AgentSession;

/// The event name pi 1.6 reports failed provider registrations under.
const EVENT: &str = "register_provider";

/// What the registrations give the model registry: the providers in load order (a name
/// registered twice keeps its last config, as pi's registry does), the `api`s streamed by
/// the host, and what could not be read.
fn collect(registrations: &Registrations) -> (Vec<(String, ProviderConfig)>, HashSet<String>, Vec<ExtensionError>) {
    let mut providers: Vec<(String, ProviderConfig)> = Vec::new();
    let mut stream_apis = HashSet::new();
    let mut errors = Vec::new();
    for ext in &registrations.extensions {
        for provider in &ext.providers {
            let mut config = match &provider.config {
                Value::Object(map) => map.clone(),
                _ => Map::new(),
            };
            // Unset fields travel as absent, never as null (models.json's schema has no nulls).
            config.retain(|_, v| !v.is_null());
            if provider.stream_simple {
                if let Some(api) = config.get("api").and_then(Value::as_str) {
                    stream_apis.insert(api.to_string());
                }
            }
            let root = json!({ "providers": { provider.name.clone(): Value::Object(config) } });
            match models_json::from_value(&root) {
                Ok(parsed) => {
                    for (name, config) in parsed.providers {
                        providers.retain(|(n, _)| n != &name);
                        providers.push((name, config));
                    }
                }
                Err(message) => errors.push(ExtensionError {
                    extension_path: ext.path.clone(),
                    event: EVENT.to_string(),
                    error: format!("Provider {}: {message}", provider.name),
                    stack: None,
                }),
            }
        }
    }
    (providers, stream_apis, errors)
}

/// Put the providers of the current registrations into the session's model registry; the
/// session's model is refreshed when its definition changed. Read-errors are reported.
pub async fn apply(slot: &ExtensionSlot, session: &AgentSession) {
    let Some(runner) = slot.runner() else { return };
    let registrations = runner.registrations();
    let (providers, stream_apis, errors) = collect(&registrations);
    slot.set_stream_apis(stream_apis);
    slot.set_oauth_providers(
        registrations
            .extensions
            .iter()
            .flat_map(|ext| &ext.providers)
            .filter(|p| p.oauth.is_some())
            .map(|p| p.name.clone())
            .collect(),
    );
    {
        let mut registry = lock(session.registry());
        registry.set_extension_providers(providers);
    }
    // `ctx.modelRegistry` lists them from now on.
    let update = super::startup::model_state(session);
    if let Err(error) = runner.push_state(&update) {
        slot.host_failed("register_provider", &error).await;
    }
    super::startup::push_all_models(session.services().extensions(), session);
    slot.report(errors).await;
}

/// The session's stream function: a model whose `api` an extension streams goes to the host,
/// every other one to pi-ai's providers. A provider registered with an `oauth` block gets its
/// key from the host first (the stored login refreshed when it expires, as pi 1.6 does).
pub fn stream_fn(slot: Arc<ExtensionSlot>) -> StreamFn {
    Arc::new(
        move |model: &Model, context: &Context, options: StreamOptions| -> AssistantStream {
            if slot.has_oauth_provider(&model.provider) {
                return with_oauth_key(Arc::clone(&slot), model.clone(), context.clone(), options);
            }
            route(&slot, model, context, options)
        },
    )
}

fn route(slot: &ExtensionSlot, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
    if slot.streams_api(&model.api) {
        if let Some(runner) = slot.runner() {
            return runner.stream_provider(model, context, options);
        }
    }
    pi_ai::stream_simple(model, context, options)
}

/// Ask the host for the key of `model`'s OAuth provider, then stream with it; a failure ends
/// the stream with an `error` message.
fn with_oauth_key(
    slot: Arc<ExtensionSlot>,
    model: Model,
    context: Context,
    mut options: StreamOptions,
) -> AssistantStream {
    let (mut sender, stream) = pi_ai::event_channel();
    tokio::spawn(async move {
        match super::oauth::request_key(&slot, &model.provider).await {
            Ok(key) => options.api_key = Some(key),
            Err(error) => {
                let mut message = pi_ai::AssistantMessage::empty_for(&model);
                message.stop_reason = pi_ai::StopReason::Error;
                message.error_message = Some(error);
                sender
                    .send(pi_ai::AssistantMessageEvent::Error {
                        reason: pi_ai::StopReason::Error,
                        error: message,
                    })
                    .await;
                return;
            }
        }
        let mut inner = route(&slot, &model, &context, options);
        while let Some(event) = inner.next_event().await {
            if !sender.send(event).await {
                break;
            }
        }
    });
    stream
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registrations(providers: Value) -> Result<Registrations, serde_json::Error> {
        let ext = serde_json::from_value(json!({
            "path": "/x/provider.ts",
            "resolvedPath": "/x/provider.ts",
            "providers": providers,
        }))?;
        Ok(Registrations {
            extensions: vec![ext],
            errors: Vec::new(),
            mcp_servers: Vec::new(),
        })
    }

    #[test]
    fn a_streaming_provider_gives_models_and_its_api() -> Result<(), serde_json::Error> {
        let regs = registrations(json!([{
            "name": "mine",
            "config": {
                "baseUrl": "http://localhost:1", "apiKey": "k", "api": "mine-api", "headers": null,
                "models": [{ "id": "m1", "name": "M1", "contextWindow": 1000, "maxTokens": 100 }]
            },
            "streamSimple": true,
            "oauth": null
        }]))?;
        let (providers, apis, errors) = collect(&regs);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(providers.len(), 1);
        assert_eq!(providers[0].0, "mine");
        assert_eq!(providers[0].1.models[0].id, "m1");
        assert_eq!(providers[0].1.api.as_deref(), Some("mine-api"));
        assert!(apis.contains("mine-api"));
        Ok(())
    }

    #[test]
    fn a_config_the_schema_refuses_is_reported_not_applied() -> Result<(), serde_json::Error> {
        let regs = registrations(json!([{
            "name": "bad",
            "config": { "baseUrl": 42, "models": [{ "id": "m" }] },
            "streamSimple": false
        }]))?;
        let (providers, apis, errors) = collect(&regs);
        assert!(providers.is_empty());
        assert!(apis.is_empty());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].event, "register_provider");
        assert!(errors[0].error.starts_with("Provider bad: "), "{}", errors[0].error);
        Ok(())
    }
}
