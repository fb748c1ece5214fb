//! Model and thinking-level control of a session: the cycle set (`--models`), cycling, and the
//! models the user may pick.

use pi_ai::{Model, ThinkingLevel};

use super::agent_session::{lock, AgentSession, PromptError};
use crate::config::model_resolver::ScopedModel;

/// The outcome of cycling the model.
#[derive(Debug, Clone, PartialEq)]
pub struct CycledModel {
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    /// The model came from the `--models` cycle set.
    pub is_scoped: bool,
}

impl AgentSession {
    /// Set the cycle set (`--models` / `enabledModels`).
    pub fn set_scoped_models(&self, models: Vec<ScopedModel>) {
        *lock(&self.inner.scoped_models) = models;
    }

    pub fn scoped_models(&self) -> Vec<ScopedModel> {
        lock(&self.inner.scoped_models).clone()
    }

    /// Models whose provider has credentials (models.json is re-read, as pi does).
    pub fn available_models(&self) -> Vec<Model> {
        let mut registry = lock(&self.inner.registry);
        registry.refresh();
        registry.available()
    }

    /// Find a model by provider and id among all known models.
    pub fn find_model(&self, provider: &str, id: &str) -> Option<Model> {
        lock(&self.inner.registry).find(provider, id)
    }

    /// Move to the next (or previous) model: over the scoped models that have credentials,
    /// else over every available model. `None` when there is nothing else to switch to.
    pub async fn cycle_model(&self, forward: bool) -> Result<Option<CycledModel>, PromptError> {
        let available = self.available_models();
        let scoped: Vec<ScopedModel> = self
            .scoped_models()
            .into_iter()
            .filter(|s| available.iter().any(|a| a.same_as(&s.model)))
            .collect();
        let is_scoped = !scoped.is_empty();
        let candidates: Vec<(Model, Option<ThinkingLevel>)> = if is_scoped {
            scoped.into_iter().map(|s| (s.model, s.thinking_level)).collect()
        } else {
            available.into_iter().map(|m| (m, None)).collect()
        };
        if candidates.len() <= 1 {
            return Ok(None);
        }
        let current = self.model();
        let at = current
            .as_ref()
            .and_then(|c| candidates.iter().position(|(m, _)| m.same_as(c)));
        let next = match (at, forward) {
            (Some(i), true) => (i + 1) % candidates.len(),
            (Some(i), false) => (i + candidates.len() - 1) % candidates.len(),
            (None, _) => 0,
        };
        let (model, level) = candidates[next].clone();
        self.select_model(model.clone(), "cycle").await?;
        // A level from the cycle set (`model:level`) wins over the one the switch chose.
        let thinking_level = match level {
            Some(l) => self.set_thinking_level(l).await,
            None => self.thinking_level(),
        };
        Ok(Some(CycledModel {
            model,
            thinking_level,
            is_scoped,
        }))
    }

    /// The levels the current model offers, lowest first.
    pub fn available_thinking_levels(&self) -> Vec<ThinkingLevel> {
        match self.model() {
            Some(m) => pi_ai::thinking::supported_thinking_levels(&m),
            None => vec![ThinkingLevel::Off],
        }
    }

    /// Step to the next offered thinking level, wrapping around. `None` when only one exists.
    pub async fn cycle_thinking_level(&self) -> Option<ThinkingLevel> {
        let levels = self.available_thinking_levels();
        if levels.len() <= 1 {
            return None;
        }
        let current = self.thinking_level();
        let next = levels
            .iter()
            .position(|l| *l == current)
            .map_or(0, |i| (i + 1) % levels.len());
        Some(self.set_thinking_level(levels[next]).await)
    }
}
