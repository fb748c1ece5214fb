//! Fuzzy matching (nucleo-matcher) for autocomplete and filterable lists; exact and prefix
//! matches rank first.

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// A reusable matcher (keeps its scratch memory between calls).
pub struct FuzzyMatcher {
    matcher: Matcher,
    buf: Vec<char>,
}

impl Default for FuzzyMatcher {
    fn default() -> Self {
        Self::new(false)
    }
}

impl FuzzyMatcher {
    /// `paths`: tune bonuses for path separators.
    pub fn new(paths: bool) -> Self {
        let config = if paths {
            Config::DEFAULT.match_paths()
        } else {
            Config::DEFAULT
        };
        FuzzyMatcher {
            matcher: Matcher::new(config),
            buf: Vec::new(),
        }
    }

    /// Score of `text` against `query` (None when it does not match). An empty query matches
    /// everything with score 0.
    pub fn score(&mut self, text: &str, query: &str) -> Option<u32> {
        if query.is_empty() {
            return Some(0);
        }
        let pattern = Pattern::new(query, CaseMatching::Smart, Normalization::Smart, AtomKind::Fuzzy);
        let s = pattern.score(Utf32Str::new(text, &mut self.buf), &mut self.matcher)?;
        let lt = text.to_lowercase();
        let lq = query.to_lowercase();
        // Exact beats prefix beats fuzzy; among prefix matches the shorter text wins.
        if lt == lq {
            return Some(1_000_000);
        }
        if lt.starts_with(&lq) {
            return Some(100_000 + 1_000u32.saturating_sub(lt.chars().count() as u32));
        }
        Some(s.min(99_999))
    }

    /// Indices of `items` matching `query`, best first (stable for equal scores).
    pub fn filter<T>(&mut self, items: &[T], query: &str, key: impl Fn(&T) -> &str) -> Vec<usize> {
        let mut scored: Vec<(usize, u32)> = items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| self.score(key(it), query).map(|s| (i, s)))
            .collect();
        scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().map(|(i, _)| i).collect()
    }
}

/// One-shot fuzzy filter over strings.
pub fn fuzzy_filter<T>(items: &[T], query: &str, key: impl Fn(&T) -> &str) -> Vec<usize> {
    FuzzyMatcher::new(false).filter(items, query, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_exact_and_prefix_first() {
        let items = ["model-select", "mode", "compact", "mod"];
        let idx = fuzzy_filter(&items, "mod", |s| s);
        assert_eq!(items[idx[0]], "mod");
        assert_eq!(items[idx[1]], "mode");
        assert!(!idx.iter().any(|&i| items[i] == "compact"));
        let all = fuzzy_filter(&items, "", |s| s);
        assert_eq!(all, vec![0, 1, 2, 3]);
        assert!(FuzzyMatcher::new(true).score("src/main.rs", "smr").is_some());
    }
}
