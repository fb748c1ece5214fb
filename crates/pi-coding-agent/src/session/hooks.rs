//! The agent hooks a session installs: credentials per request from the model registry, pi's
//! conversion of its own message roles for the LLM, and the tool loadout's changes between
//! the turns of a run, declared to the transcript before each request.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_agent::{AgentContext, AgentHooks, AgentMessage, HookError, NextTurn, TurnContext};
use pi_ai::Message;

use crate::config::ModelRegistry;

pub struct SessionHooks {
    registry: Arc<Mutex<ModelRegistry>>,
    loadout: Option<Arc<super::loadout::Loadout>>,
}

impl SessionHooks {
    pub fn new(registry: Arc<Mutex<ModelRegistry>>) -> Self {
        SessionHooks {
            registry,
            loadout: None,
        }
    }

    /// Tools registered or (de)activated during a run reach the run's next request.
    pub fn with_loadout(mut self, loadout: Arc<super::loadout::Loadout>) -> Self {
        self.loadout = Some(loadout);
        self
    }
}

#[async_trait]
impl AgentHooks for SessionHooks {
    async fn convert_to_llm(&self, messages: &[AgentMessage]) -> Result<Vec<Message>, HookError> {
        Ok(super::messages::convert_to_llm(messages))
    }

    /// Key lookups may run a `!command` or refresh a token, so they leave the async runtime.
    async fn get_api_key(&self, provider: &str) -> Result<Option<String>, HookError> {
        let registry = Arc::clone(&self.registry);
        let provider = provider.to_string();
        tokio::task::spawn_blocking(move || {
            let mut registry = registry.lock().unwrap_or_else(|e| e.into_inner());
            registry.api_key_for_provider(&provider)
        })
        .await
        .map_err(|e| HookError::new(format!("API key lookup failed: {e}")))
    }

    /// models.json's provider and model `headers`, resolved for each request (a `!command`
    /// runs each time, as in pi).
    async fn request_headers(&self, model: &pi_ai::Model) -> Result<Vec<(String, String)>, HookError> {
        let registry = Arc::clone(&self.registry);
        let model = model.clone();
        tokio::task::spawn_blocking(move || {
            let registry = registry.lock().unwrap_or_else(|e| e.into_inner());
            registry.config_headers(&model)
        })
        .await
        .map_err(|e| HookError::new(format!("header lookup failed: {e}")))?
        .map_err(HookError::new)
    }

    async fn prepare_next_turn(&self, _turn: TurnContext<'_>) -> Result<Option<NextTurn>, HookError> {
        Ok(self.loadout.as_ref().and_then(|l| l.next_turn()))
    }

    /// Tools an extension or an MCP server added or removed during the run are recorded as
    /// pi 1.6 records them: a system message before the next request with the tools added and
    /// removed and the prompt sections that changed with them.
    async fn declare_changes(&self, context: &AgentContext) -> Option<AgentMessage> {
        let now = pi_ai::now_ms();
        match &self.loadout {
            Some(loadout) => {
                super::system_message::declare_changes(&context.messages, &loadout.sections(), &context.tools, now)
            }
            None => super::system_message::declare_tool_changes(&context.messages, &context.tools, now),
        }
    }
}
