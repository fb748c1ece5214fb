//! `--model` text to one model when several providers offer the same id: an exact id, a
//! `provider/id` (provider ids may contain slashes), a fuzzy match, and a `:<thinking>` suffix.
//! Where the text fits models of several providers, the provider with credentials wins; with
//! none or more than one, the reference is ambiguous.

use pi_ai::{Model, ThinkingLevel};

use super::model_resolver::is_alias;

/// What a reference resolved to.
#[derive(Debug, Clone, PartialEq)]
pub enum Reference {
    Resolved {
        model: Box<Model>,
        thinking_level: Option<ThinkingLevel>,
        warning: Option<String>,
    },
    /// Models of several providers fit; `usable` of them have credentials.
    Ambiguous { candidates: Vec<Model>, usable: usize },
    /// Nothing fits. `target` names the provider the text pointed at (by `--provider` or a
    /// `provider/` prefix) with the id to use as a custom model there.
    NotFound { target: Option<Target> },
}

/// A provider and the id asked of it, for a custom model.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub provider: String,
    /// The text after the provider, thinking suffix included.
    pub model_text: String,
    /// The id without a valid thinking suffix.
    pub model_id: String,
    pub thinking_level: Option<ThinkingLevel>,
}

/// The last `:<level>` of `text`, when it is a thinking level.
fn split_thinking_suffix(text: &str) -> Option<(&str, ThinkingLevel)> {
    let (base, suffix) = text.rsplit_once(':')?;
    ThinkingLevel::parse(suffix).map(|level| (base, level))
}

/// The longest known provider id that prefixes `text` before a slash, and the rest.
fn split_provider_prefix<'a>(text: &'a str, pool: &[Model]) -> Option<(String, &'a str)> {
    let lower = text.to_lowercase();
    let mut best: Option<(String, &str)> = None;
    for model in pool {
        let prefix = model.provider.trim().to_lowercase();
        if prefix.is_empty() || best.as_ref().is_some_and(|(p, _)| p.len() >= model.provider.len()) {
            continue;
        }
        let Some(slash) = lower
            .get(prefix.len()..)
            .and_then(|rest| rest.find('/'))
            .map(|i| i + prefix.len())
        else {
            continue;
        };
        if lower[..slash].trim() != prefix {
            continue;
        }
        let rest = text[slash + 1..].trim();
        if !rest.is_empty() {
            best = Some((model.provider.clone(), rest));
        }
    }
    best
}

fn fuzzy_matches<'a>(text: &str, models: impl IntoIterator<Item = &'a Model>) -> Vec<&'a Model> {
    let lower = text.to_lowercase();
    models
        .into_iter()
        .filter(|m| m.id.to_lowercase().contains(&lower) || m.name.to_lowercase().contains(&lower))
        .collect()
}

/// Aliases before dated ids, then the highest id.
fn best_fuzzy<'a>(matches: &[&'a Model]) -> Option<&'a Model> {
    let aliases: Vec<&Model> = matches.iter().copied().filter(|m| is_alias(&m.id)).collect();
    let pool = if aliases.is_empty() { matches.to_vec() } else { aliases };
    pool.into_iter().max_by(|a, b| a.id.cmp(&b.id))
}

fn distinct_providers(models: &[&Model]) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for m in models {
        if !seen.contains(&m.provider.as_str()) {
            seen.push(&m.provider);
        }
    }
    seen.len()
}

fn resolved(model: &Model) -> Reference {
    Reference::Resolved {
        model: Box::new(model.clone()),
        thinking_level: None,
        warning: None,
    }
}

fn ambiguous(candidates: &[&Model], usable: usize) -> Reference {
    Reference::Ambiguous {
        candidates: candidates.iter().map(|m| (*m).clone()).collect(),
        usable,
    }
}

/// An exact id, or a `provider/…` reference; `None` when neither fits.
fn select_reference(text: &str, pool: &[Model], usable: &dyn Fn(&str) -> bool) -> Option<Reference> {
    let lower = text.to_lowercase();
    let raw: Vec<&Model> = pool.iter().filter(|m| m.id.to_lowercase() == lower).collect();
    let named: Option<&Model> = split_provider_prefix(text, pool).and_then(|(provider, rest)| {
        let own: Vec<&Model> = pool.iter().filter(|m| m.provider == provider).collect();
        let rest_lower = rest.to_lowercase();
        own.iter()
            .copied()
            .find(|m| m.id.to_lowercase() == rest_lower)
            .or_else(|| raw.iter().copied().find(|m| m.provider == provider))
            .or_else(|| best_fuzzy(&fuzzy_matches(rest, own.iter().copied())))
    });
    let others: Vec<&Model> = raw
        .into_iter()
        .filter(|m| named.is_none_or(|n| !std::ptr::eq(*m, n)))
        .collect();
    let candidates: Vec<&Model> = named.into_iter().chain(others.iter().copied()).collect();
    let first = *candidates.first()?;
    if distinct_providers(&candidates) == 1 {
        return Some(resolved(first));
    }
    if let Some(n) = named.filter(|n| usable(&n.provider)) {
        return Some(resolved(n));
    }
    let usable_others: Vec<&Model> = others.iter().copied().filter(|m| usable(&m.provider)).collect();
    match (usable_others.as_slice(), named) {
        ([only], _) => Some(resolved(only)),
        ([], Some(n)) => Some(resolved(n)),
        _ => Some(ambiguous(&candidates, usable_others.len())),
    }
}

/// A fuzzy match; among several providers the ones with credentials are preferred.
fn select_fuzzy(matches: &[&Model], usable: &dyn Fn(&str) -> bool) -> Option<Reference> {
    if matches.is_empty() {
        return None;
    }
    let usable_matches: Vec<&Model> = if distinct_providers(matches) > 1 {
        matches.iter().copied().filter(|m| usable(&m.provider)).collect()
    } else {
        Vec::new()
    };
    let pool = if usable_matches.is_empty() {
        matches.to_vec()
    } else {
        usable_matches.clone()
    };
    let best = best_fuzzy(&pool)?;
    let tied: Vec<&Model> = pool.iter().copied().filter(|m| m.id == best.id).collect();
    if distinct_providers(&tied) == 1 {
        return Some(resolved(best));
    }
    let usable = if usable_matches.is_empty() { 0 } else { tied.len() };
    Some(ambiguous(&tied, usable))
}

fn resolve_text(text: &str, pool: &[Model], usable: &dyn Fn(&str) -> bool) -> Reference {
    if let Some(r) = select_reference(text, pool, usable) {
        return r;
    }
    if let Some(r) = select_fuzzy(&fuzzy_matches(text, pool), usable) {
        return r;
    }
    // A valid `:level` suffix; an invalid one stays part of the id and finds nothing.
    let Some((base, level)) = split_thinking_suffix(text) else {
        return Reference::NotFound { target: None };
    };
    match resolve_text(base, pool, usable) {
        Reference::Resolved { model, warning, .. } => Reference::Resolved {
            thinking_level: warning.is_none().then_some(level),
            model,
            warning,
        },
        other => other,
    }
}

/// Resolve `text` among `models` (only `provider`'s when given, case-insensitive). `usable`
/// says whether a provider has credentials; it only breaks ties, so a unique match resolves
/// without any.
pub fn resolve_model_reference(
    text: &str,
    provider: Option<&str>,
    models: &[Model],
    usable: &dyn Fn(&str) -> bool,
) -> Reference {
    let text = text.trim();
    if text.is_empty() {
        return Reference::NotFound { target: None };
    }
    let constraint = provider.map(str::to_lowercase);
    let pool: Vec<Model> = match &constraint {
        Some(c) => models
            .iter()
            .filter(|m| m.provider.to_lowercase() == *c)
            .cloned()
            .collect(),
        None => models.to_vec(),
    };
    let result = resolve_text(text, &pool, usable);
    if !matches!(result, Reference::NotFound { .. }) {
        return result;
    }
    let split = split_provider_prefix(text, &pool);
    let anchor = match (&constraint, &split) {
        (Some(_), _) => pool.first(),
        (None, Some((p, _))) => pool.iter().find(|m| &m.provider == p),
        (None, None) => None,
    };
    let Some(anchor) = anchor else { return result };
    let model_text = split.map(|(_, rest)| rest).unwrap_or(text).to_string();
    let (model_id, thinking_level) = match split_thinking_suffix(&model_text) {
        Some((base, level)) => (base.to_string(), Some(level)),
        None => (model_text.clone(), None),
    };
    Reference::NotFound {
        target: Some(Target {
            provider: anchor.provider.clone(),
            model_text,
            model_id,
            thinking_level,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model_resolver::tests::model;

    fn pool() -> Vec<Model> {
        vec![
            model("mock-openai", "mock-model"),
            model("mock-openai", "mock-thinker"),
            model("mock-anthropic", "mock-model"),
            model("mock-anthropic", "mock-thinker"),
            model("openrouter", "openai/gpt-4o"),
            model("openai", "gpt-4o"),
            model("zai", "glm-5"),
            model("vercel-ai-gateway", "zai/glm-5"),
        ]
    }

    fn provider_of(r: &Reference) -> Option<&str> {
        match r {
            Reference::Resolved { model, .. } => Some(&model.provider),
            _ => None,
        }
    }

    #[test]
    fn the_authenticated_provider_wins() {
        let only_anthropic = |p: &str| p == "mock-anthropic";
        let r = resolve_model_reference("mock-model", None, &pool(), &only_anthropic);
        assert_eq!(provider_of(&r), Some("mock-anthropic"));
        let r = resolve_model_reference("mock-thinker:max", None, &pool(), &only_anthropic);
        assert!(
            matches!(&r, Reference::Resolved { thinking_level: Some(ThinkingLevel::Max), model, .. } if model.provider == "mock-anthropic"),
            "{r:?}"
        );
    }

    #[test]
    fn several_or_no_authenticated_providers_are_ambiguous() {
        for (usable, count) in [(&(|_: &str| true) as &dyn Fn(&str) -> bool, 2), (&|_: &str| false, 0)] {
            match resolve_model_reference("mock-model", None, &pool(), usable) {
                Reference::Ambiguous { candidates, usable } => {
                    assert_eq!(candidates.len(), 2);
                    assert_eq!(usable, count);
                }
                other => panic!("{other:?}"),
            }
        }
        // Fuzzy matches tie the same way.
        assert!(matches!(
            resolve_model_reference("thinker", None, &pool(), &|_| true),
            Reference::Ambiguous { .. }
        ));
    }

    #[test]
    fn provider_prefix_and_constraint() {
        let none = |_: &str| false;
        let r = resolve_model_reference("mock-openai/mock-model", None, &pool(), &none);
        assert_eq!(provider_of(&r), Some("mock-openai"));
        let r = resolve_model_reference("mock-model", Some("MOCK-ANTHROPIC"), &pool(), &none);
        assert_eq!(provider_of(&r), Some("mock-anthropic"));
        // `zai/glm-5` is both zai's glm-5 and a gateway id: the named provider wins when usable,
        // else the sole usable raw match.
        let r = resolve_model_reference("zai/glm-5", None, &pool(), &|p| p == "zai");
        assert_eq!(provider_of(&r), Some("zai"));
        let r = resolve_model_reference("zai/glm-5", None, &pool(), &|p| p == "vercel-ai-gateway");
        assert_eq!(provider_of(&r), Some("vercel-ai-gateway"));
        // Not a provider: the exact id.
        let r = resolve_model_reference("openai/gpt-4o", None, &pool(), &none);
        assert_eq!(provider_of(&r), Some("openai"), "openai/ names the provider first");
    }

    #[test]
    fn unknown_ids_point_at_their_provider() {
        let none = |_: &str| false;
        match resolve_model_reference("mock-openai/future-1:high", None, &pool(), &none) {
            Reference::NotFound { target: Some(t) } => {
                assert_eq!(t.provider, "mock-openai");
                assert_eq!(t.model_id, "future-1");
                assert_eq!(t.model_text, "future-1:high");
                assert_eq!(t.thinking_level, Some(ThinkingLevel::High));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            resolve_model_reference("nothing-like-this", None, &pool(), &none),
            Reference::NotFound { target: None }
        );
        assert_eq!(
            split_provider_prefix("a/b/c", &[model("a/b", "x"), model("a", "y")]),
            Some(("a/b".to_string(), "c"))
        );
    }
}
