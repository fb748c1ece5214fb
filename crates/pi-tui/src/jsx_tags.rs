//! JSX tags in JavaScript and TypeScript lines. The bundled grammar knows no JSX and reads a
//! closing tag's `/` as the start of a regular expression that swallows the lines after it,
//! so tags are found in the text, hidden from the grammar and painted as pi 1.6's highlighter
//! paints them: brackets as punctuation, the tag's name as a name, attributes, their values.

use crate::highlight::CodeToken;

fn is_name(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | '-' | ':')
}

/// The tags of one line as `(start, end)` char ranges: `<Name …>`, `</Name>`, `<>`, `</>`,
/// where a tag can stand (not `a < b`, not a type argument such as `f<T>()`).
pub(crate) fn find(chars: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '<' || !tag_may_start(chars, i) {
            i += 1;
            continue;
        }
        match tag_end(chars, i) {
            Some(end) => {
                out.push((i, end));
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// A `<` opens a tag after an operator, a bracket, `return` or the line's start; a `</` or
/// `<>` anywhere.
fn tag_may_start(chars: &[char], at: usize) -> bool {
    let next = chars.get(at + 1).copied();
    if matches!(next, Some('/') | Some('>')) {
        return true;
    }
    if !next.is_some_and(|c| c.is_alphabetic()) {
        return false;
    }
    let before: String = chars[..at].iter().collect();
    let before = before.trim_end();
    let Some(last) = before.chars().last() else {
        return true;
    };
    if matches!(last, '(' | ',' | '=' | ':' | '?' | '&' | '|' | '{' | '}' | '>' | '[') {
        return true;
    }
    before.ends_with("return") && !before[..before.len() - 6].ends_with(|c: char| is_name(c))
}

/// Where the tag opened at `at` ends (past its `>`), quotes and `{…}` skipped; None when it
/// does not close on this line or has no name where one belongs.
fn tag_end(chars: &[char], at: usize) -> Option<usize> {
    let mut i = at + 1;
    if chars.get(i) == Some(&'/') {
        i += 1;
    }
    let name_start = i;
    while i < chars.len() && is_name(chars[i]) {
        i += 1;
    }
    if i == name_start && chars.get(i) != Some(&'>') {
        return None;
    }
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if depth == 0 => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => depth = depth.saturating_sub(1),
            (None, '>') if depth == 0 => return Some(i + 1),
            (None, '<') if depth == 0 => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Paint the tag at `start..end`.
pub(crate) fn paint(chars: &[char], tokens: &mut [CodeToken], (start, end): (usize, usize)) {
    let mut i = start;
    let mut named = false;
    while i < end {
        let c = chars[i];
        if c == '"' || c == '\'' {
            let close = (i + 1..end).find(|&j| chars[j] == c).map_or(end, |j| j + 1);
            tokens[i..close].fill(CodeToken::String);
            i = close;
        } else if c == '{' {
            let mut depth = 0usize;
            let mut j = i;
            while j < end {
                match chars[j] {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            let close = (j + 1).min(end);
            // An attribute's `={…}` value is painted as a string there; a spread `{...props}`
            // as its braces and a name.
            let value = chars[start..i].iter().rev().find(|c| !c.is_whitespace()) == Some(&'=');
            if value {
                tokens[i..close].fill(CodeToken::String);
            } else {
                tokens[i..close].fill(CodeToken::Variable);
                tokens[i] = CodeToken::Punctuation;
                if chars[close - 1] == '}' {
                    tokens[close - 1] = CodeToken::Punctuation;
                }
            }
            i = close;
        } else if is_name(c) {
            let stop = (i..end).find(|&j| !is_name(chars[j])).unwrap_or(end);
            let token = if named { CodeToken::Variable } else { CodeToken::Keyword };
            named = true;
            tokens[i..stop].fill(token);
            i = stop;
        } else {
            tokens[i] = if c.is_whitespace() {
                CodeToken::Plain
            } else {
                CodeToken::Punctuation
            };
            i += 1;
        }
    }
}
