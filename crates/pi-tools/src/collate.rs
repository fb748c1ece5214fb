//! Name ordering close to JavaScript's `localeCompare` (ICU root collation) for `ls`.

use std::cmp::Ordering;

use unicode_normalization::UnicodeNormalization;

/// ASCII punctuation and symbols in ICU root order; digits and letters follow.
const PUNCTUATION_ORDER: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

fn primary(c: char) -> u32 {
    if let Some(i) = PUNCTUATION_ORDER.find(c) {
        return i as u32;
    }
    let base = PUNCTUATION_ORDER.len() as u32;
    match c {
        '0'..='9' => base + (c as u32 - '0' as u32),
        'a'..='z' => base + 10 + (c as u32 - 'a' as u32),
        'A'..='Z' => base + 10 + (c as u32 - 'A' as u32),
        // Other characters sort after ASCII letters, by code point.
        _ => base + 100 + c as u32,
    }
}

/// Collation key: base characters first, then accents as a tie-breaker.
fn key(s: &str) -> (Vec<u32>, Vec<u32>) {
    let mut primaries = Vec::with_capacity(s.len());
    let mut secondaries = Vec::with_capacity(s.len());
    for c in s.chars() {
        let mut decomposed = std::iter::once(c).nfd();
        let Some(base) = decomposed.next() else {
            continue;
        };
        primaries.push(primary(base));
        secondaries.push(decomposed.map(|m| m as u32).sum());
    }
    (primaries, secondaries)
}

/// Compare two names the way pi sorts `ls` output (case-insensitive locale order).
pub fn compare_names(a: &str, b: &str) -> Ordering {
    key(&a.to_lowercase()).cmp(&key(&b.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matches_node_locale_compare() {
        let mut names = vec![
            "f", "eb", "éa", "ea", "é", "e", "ab", "a9", "a10", "a1", "a.b", "a-b", "a_b", "a b", ".x", "-x", "_x",
        ];
        names.sort_by(|a, b| compare_names(a, b));
        assert_eq!(
            names,
            vec![
                "_x", "-x", ".x", "a b", "a_b", "a-b", "a.b", "a1", "a10", "a9", "ab", "e", "é", "ea", "éa", "eb", "f"
            ]
        );
    }
}
