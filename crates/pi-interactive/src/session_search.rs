//! The `/resume` search as pi 1.6 matches it: words match a session's name, id, messages or
//! folder (names first, then exact text, then scattered letters in the name or folder),
//! `"a phrase"` matches exactly, `re:<pattern>` is a case-insensitive regular expression.

use pi_session::SessionInfo;

/// How the list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// Forks under the session they came from, latest activity first.
    Threaded,
    Recent,
    /// Best match first (newest first among equals).
    Relevance,
}

impl Sort {
    pub fn label(self) -> &'static str {
        match self {
            Sort::Threaded => "Threaded",
            Sort::Recent => "Recent",
            Sort::Relevance => "Fuzzy",
        }
    }

    pub fn next(self) -> Sort {
        match self {
            Sort::Threaded => Sort::Recent,
            Sort::Recent => Sort::Relevance,
            Sort::Relevance => Sort::Threaded,
        }
    }
}

enum Token {
    Words(String),
    Phrase(String),
}

enum Query {
    Tokens(Vec<Token>),
    Regex(Option<regex::Regex>),
}

/// Tiers dominate scores: a hit in the name beats exact text elsewhere beats scattered letters.
const TIER: u64 = 1_000_000;

fn parse(query: &str) -> Query {
    let trimmed = query.trim();
    if let Some(pattern) = trimmed.strip_prefix("re:") {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Query::Regex(None);
        }
        return Query::Regex(regex::RegexBuilder::new(pattern).case_insensitive(true).build().ok());
    }
    let mut tokens = Vec::new();
    let mut buf = String::new();
    let mut quoted = false;
    let flush = |buf: &mut String, tokens: &mut Vec<Token>, phrase: bool| {
        let v = buf.trim().to_string();
        buf.clear();
        if !v.is_empty() {
            tokens.push(if phrase { Token::Phrase(v) } else { Token::Words(v) });
        }
    };
    for ch in trimmed.chars() {
        if ch == '"' {
            flush(&mut buf, &mut tokens, quoted);
            quoted = !quoted;
        } else if !quoted && ch.is_whitespace() {
            flush(&mut buf, &mut tokens, false);
        } else {
            buf.push(ch);
        }
    }
    if quoted {
        // An unclosed quote: every word on its own.
        return Query::Tokens(
            trimmed
                .split_whitespace()
                .map(|w| Token::Words(w.to_string()))
                .collect(),
        );
    }
    flush(&mut buf, &mut tokens, false);
    Query::Tokens(tokens)
}

fn squash(s: &str) -> String {
    s.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A fuzzy score where lower is better (as the tiers add up).
fn fuzzy(m: &mut pi_tui::fuzzy::FuzzyMatcher, text: &str, query: &str) -> Option<u64> {
    m.score(text, query)
        .map(|s| u64::from(1_000_000u32.saturating_sub(s)) % TIER)
}

fn literal(m: &mut pi_tui::fuzzy::FuzzyMatcher, s: &SessionInfo, value: &str, phrase: bool) -> Option<u64> {
    let norm = |t: &str| if phrase { squash(t) } else { t.to_lowercase() };
    let name = norm(s.name.as_deref().unwrap_or(""));
    if name.contains(value) {
        return Some(fuzzy(m, &name, value).unwrap_or(0));
    }
    let messages = norm(&s.all_messages_text);
    if s.id.to_lowercase().contains(value) || messages.contains(value) || norm(&s.cwd).contains(value) {
        return Some(TIER);
    }
    None
}

fn score(m: &mut pi_tui::fuzzy::FuzzyMatcher, s: &SessionInfo, q: &Query) -> Option<u64> {
    match q {
        Query::Regex(None) => None,
        Query::Regex(Some(re)) => {
            if s.name.as_deref().is_some_and(|n| re.is_match(n)) {
                Some(0)
            } else if re.is_match(&s.id) || re.is_match(&s.all_messages_text) || re.is_match(&s.cwd) {
                Some(TIER)
            } else {
                None
            }
        }
        Query::Tokens(tokens) => {
            let mut total = 0;
            for t in tokens {
                total += match t {
                    Token::Phrase(p) => literal(m, s, &squash(p), true)?,
                    Token::Words(w) => match literal(m, s, &w.to_lowercase(), false) {
                        Some(v) => v,
                        None => {
                            let name = s.name.clone().unwrap_or_default();
                            [name.as_str(), s.cwd.as_str()]
                                .iter()
                                .filter_map(|f| fuzzy(m, f, w))
                                .min()
                                .map(|v| 2 * TIER + v)?
                        }
                    },
                };
            }
            Some(total)
        }
    }
}

/// The sessions matching `query` (all of them for an empty one), by `sort`: Recent keeps
/// the given order (newest first), the others order by match.
pub fn filter_and_sort<'a>(sessions: &[&'a SessionInfo], query: &str, sort: Sort) -> Vec<&'a SessionInfo> {
    if query.trim().is_empty() {
        return sessions.to_vec();
    }
    let q = parse(query);
    let mut m = pi_tui::fuzzy::FuzzyMatcher::new(false);
    let mut scored: Vec<(u64, &SessionInfo)> = sessions
        .iter()
        .filter_map(|s| score(&mut m, s, &q).map(|v| (v, *s)))
        .collect();
    if sort != Sort::Recent {
        scored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.modified_ms.cmp(&a.1.modified_ms)));
    }
    scored.into_iter().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: &str, name: Option<&str>, text: &str, modified: i64) -> SessionInfo {
        SessionInfo {
            path: format!("/s/{id}.jsonl").into(),
            id: id.into(),
            cwd: "/work/proj".into(),
            name: name.map(str::to_string),
            parent_session_path: None,
            created: String::new(),
            modified_ms: modified,
            message_count: 1,
            first_message: text.into(),
            all_messages_text: text.into(),
        }
    }

    #[test]
    fn names_beat_text_phrases_are_exact_and_regex_works() {
        let a = info("aaa", None, "we talked about parsing here", 3);
        let b = info("bbb", Some("parsing notes"), "nothing", 1);
        let c = info("ccc", None, "pars ing apart", 2);
        let all = [&a, &b, &c];
        let ids = |v: Vec<&SessionInfo>| v.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(filter_and_sort(&all, "parsing", Sort::Relevance)), ["bbb", "aaa"]);
        assert_eq!(ids(filter_and_sort(&all, "parsing", Sort::Recent)), ["aaa", "bbb"]);
        assert_eq!(ids(filter_and_sort(&all, "\"pars ing\"", Sort::Relevance)), ["ccc"]);
        assert_eq!(ids(filter_and_sort(&all, "re:^pars.*apart$", Sort::Relevance)), ["ccc"]);
        assert!(filter_and_sort(&all, "re:", Sort::Relevance).is_empty());
        // An id matches exactly.
        assert_eq!(ids(filter_and_sort(&all, "bbb", Sort::Relevance)), ["bbb"]);
    }
}
