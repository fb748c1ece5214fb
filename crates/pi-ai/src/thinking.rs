//! Thinking levels per model: which levels a model offers, clamping a requested level to one it
//! offers, the provider value a level maps to (`Model::thinking_level_map`), and token budgets
//! for budget-based APIs.

use serde_json::Value;

use crate::types::{Model, ThinkingBudgets, ThinkingLevel};

/// What a model's `thinkingLevelMap` says about a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelMapping<'a> {
    /// No entry: the level keeps its own name (and `xhigh` and `max` are unsupported).
    Absent,
    /// `null`: the model does not offer the level.
    Removed,
    /// The provider's value for the level.
    Value(&'a str),
}

/// The map entry of `level` for `model`.
pub fn level_mapping(model: &Model, level: ThinkingLevel) -> LevelMapping<'_> {
    match model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str())) {
        None => LevelMapping::Absent,
        Some(Value::Null) => LevelMapping::Removed,
        Some(Value::String(s)) => LevelMapping::Value(s),
        // Anything else is not a valid entry; treat it as no entry.
        Some(_) => LevelMapping::Absent,
    }
}

/// The provider value for `level`: the mapped string, or the level's own name.
pub fn mapped_effort(model: &Model, level: ThinkingLevel) -> String {
    match level_mapping(model, level) {
        LevelMapping::Value(v) => v.to_string(),
        _ => level.as_str().to_string(),
    }
}

/// Levels `model` offers, lowest first. A non-reasoning model offers only `off`; otherwise all
/// levels except those mapped to `null`, and `xhigh` and `max` only when the map names them.
pub fn supported_thinking_levels(model: &Model) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::ALL
        .into_iter()
        .filter(|&level| match level_mapping(model, level) {
            LevelMapping::Removed => false,
            LevelMapping::Absent => !matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max),
            LevelMapping::Value(_) => true,
        })
        .collect()
}

/// The offered level nearest to `level`: itself, else the next one up, else the next one down.
pub fn clamp_thinking_level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    let available = supported_thinking_levels(model);
    if available.contains(&level) {
        return level;
    }
    let all = ThinkingLevel::ALL;
    let at = all.iter().position(|l| *l == level).unwrap_or(0);
    all[at..]
        .iter()
        .chain(all[..at].iter().rev())
        .find(|l| available.contains(l))
        .copied()
        .or_else(|| available.first().copied())
        .unwrap_or(ThinkingLevel::Off)
}

/// The thinking level a call should use: the requested one clamped to the model, `None` when
/// thinking is off (or not requested).
pub fn effective_reasoning(model: &Model, requested: Option<ThinkingLevel>) -> Option<ThinkingLevel> {
    let level = clamp_thinking_level(model, requested?);
    (level != ThinkingLevel::Off).then_some(level)
}

/// Default token budgets of budget-based thinking, per level.
pub fn default_budget(level: ThinkingLevel) -> u64 {
    match level {
        ThinkingLevel::Off => 0,
        ThinkingLevel::Minimal => 1024,
        ThinkingLevel::Low => 2048,
        ThinkingLevel::Medium => 8192,
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => 16384,
    }
}

/// The thinking budget of `level`: the custom budget, else the default (`xhigh` and `max` use
/// `high`'s).
pub fn budget_for_level(level: ThinkingLevel, budgets: &ThinkingBudgets) -> u64 {
    let custom = match level {
        ThinkingLevel::Minimal => budgets.minimal,
        ThinkingLevel::Low => budgets.low,
        ThinkingLevel::Medium => budgets.medium,
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => budgets.high,
        ThinkingLevel::Off => None,
    };
    custom.unwrap_or_else(|| default_budget(level))
}

/// Output cap and thinking budget for budget-based APIs: the budget comes on top of the base
/// cap (within the model's limit), and at least 1024 tokens are left for the answer when the
/// cap would not hold the budget. `xhigh` uses the `high` budget.
pub fn adjust_max_tokens_for_thinking(
    base_max_tokens: u64,
    model_max_tokens: u64,
    level: ThinkingLevel,
    budgets: &ThinkingBudgets,
) -> (u64, u64) {
    const MIN_OUTPUT_TOKENS: u64 = 1024;
    let mut budget = budget_for_level(level, budgets);
    let max_tokens = (base_max_tokens + budget).min(model_max_tokens);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(MIN_OUTPUT_TOKENS);
    }
    (max_tokens, budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ModelCost;
    use serde_json::json;
    use ThinkingLevel::*;

    fn model(reasoning: bool, map: Value) -> Model {
        Model {
            id: "m".into(),
            name: "m".into(),
            api: "openai-completions".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning,
            input: vec![],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: None,
            compat: None,
            thinking_level_map: map.as_object().cloned(),
            prompt_cache: None,
        }
    }

    #[test]
    fn levels_follow_the_map() {
        assert_eq!(supported_thinking_levels(&model(false, json!(null))), vec![Off]);
        assert_eq!(
            supported_thinking_levels(&model(true, json!(null))),
            vec![Off, Minimal, Low, Medium, High]
        );
        let gpt52 = model(true, json!({"off": null, "xhigh": "xhigh"}));
        assert_eq!(
            supported_thinking_levels(&gpt52),
            vec![Minimal, Low, Medium, High, Xhigh]
        );
        let gemini = model(
            true,
            json!({"off": null, "minimal": null, "low": "LOW", "medium": null, "high": "HIGH"}),
        );
        assert_eq!(supported_thinking_levels(&gemini), vec![Low, High]);
    }

    #[test]
    fn clamping_prefers_the_next_level_up() {
        let gemini = model(
            true,
            json!({"off": null, "minimal": null, "low": "LOW", "medium": null, "high": "HIGH"}),
        );
        assert_eq!(clamp_thinking_level(&gemini, Off), Low);
        assert_eq!(clamp_thinking_level(&gemini, Medium), High);
        assert_eq!(clamp_thinking_level(&gemini, Xhigh), High);
        assert_eq!(clamp_thinking_level(&model(false, json!(null)), High), Off);
        assert_eq!(clamp_thinking_level(&model(true, json!(null)), Xhigh), High);
        // `max` needs a map entry; without one it comes down to the highest level offered.
        assert_eq!(clamp_thinking_level(&model(true, json!(null)), Max), High);
        assert_eq!(
            clamp_thinking_level(&model(true, json!({"xhigh": "xhigh"})), Max),
            Xhigh
        );
        assert_eq!(clamp_thinking_level(&model(true, json!({"max": "max"})), Max), Max);
        assert_eq!(mapped_effort(&gemini, Low), "LOW");
        assert_eq!(mapped_effort(&gemini, Minimal), "minimal");
        assert_eq!(effective_reasoning(&model(true, json!(null)), Some(Off)), None);
        assert_eq!(effective_reasoning(&model(true, json!(null)), Some(High)), Some(High));
    }

    #[test]
    fn budgets_fit_the_model() {
        let none = ThinkingBudgets::default();
        assert_eq!(
            adjust_max_tokens_for_thinking(32000, 64000, High, &none),
            (48384, 16384)
        );
        assert_eq!(adjust_max_tokens_for_thinking(8000, 8000, High, &none), (8000, 6976));
        let custom = ThinkingBudgets {
            low: Some(100),
            ..Default::default()
        };
        assert_eq!(adjust_max_tokens_for_thinking(1000, 64000, Low, &custom), (1100, 100));
    }
}
