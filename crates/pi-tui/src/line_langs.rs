//! Languages sorted line by line, without a grammar: diffs and TOML/INI, painted with the
//! classes pi 1.6's highlighter (highlight.js 10) gives them.

use crate::highlight::CodeToken;

/// Paint `code` as `lang` if it is one of these languages; one string per line.
pub(crate) fn highlight(code: &str, lang: &str, paint: &dyn Fn(CodeToken, &str) -> String) -> Option<Vec<String>> {
    let line_fn: fn(&str) -> Vec<(CodeToken, &str)> = match lang.trim().to_lowercase().as_str() {
        "diff" | "patch" => diff_line,
        "toml" | "ini" => toml_line,
        _ => return None,
    };
    Some(
        code.split('\n')
            .map(|line| {
                line_fn(line)
                    .into_iter()
                    .filter(|(_, text)| !text.is_empty())
                    .map(|(token, text)| paint(token, text))
                    .collect()
            })
            .collect(),
    )
}

/// `@@ -1,3 +1,4 @@` (the hunk header's numbers only), file headers as comments, added and
/// removed lines.
fn diff_line(line: &str) -> Vec<(CodeToken, &str)> {
    if let Some(end) = hunk_header_end(line) {
        return vec![(CodeToken::Meta, &line[..end]), (CodeToken::Plain, &line[end..])];
    }
    let starts = |p: &str| line.starts_with(p);
    if starts("index")
        || starts("---")
        || starts("*** ")
        || starts("+++")
        || starts("diff --git")
        || line == "*".repeat(15)
    {
        return vec![(CodeToken::Comment, line)];
    }
    if let Some(at) = line.find("Index: ").or_else(|| line.find("===")) {
        return vec![(CodeToken::Plain, &line[..at]), (CodeToken::Comment, &line[at..])];
    }
    if starts("+") || starts("!") {
        return vec![(CodeToken::Added, line)];
    }
    if starts("-") {
        return vec![(CodeToken::Removed, line)];
    }
    vec![(CodeToken::Plain, line)]
}

/// Where `@@ -a,b +c,d @@` ends, if the line starts with one.
fn hunk_header_end(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("@@")?;
    let mut i = line.len() - rest.len();
    let b = line.as_bytes();
    let spaces = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && b[*i] == b' ' {
            *i += 1;
        }
        *i > from
    };
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > from
    };
    let byte = |i: &mut usize, c: u8| {
        let ok = *i < b.len() && b[*i] == c;
        *i += usize::from(ok);
        ok
    };
    let range = |i: &mut usize, sign: u8| byte(i, sign) && digits(i) && byte(i, b',') && digits(i);
    let ok = spaces(&mut i) && range(&mut i, b'-') && spaces(&mut i) && range(&mut i, b'+') && spaces(&mut i);
    (ok && line[i..].starts_with("@@")).then_some(i + 2)
}

/// `[section]` plain, `key = value` with the key as a variable and the value's strings,
/// numbers and booleans told apart, `#` and `;` comments.
fn toml_line(line: &str) -> Vec<(CodeToken, &str)> {
    let body = line.trim_start();
    if body.starts_with('#') || body.starts_with(';') {
        return vec![(CodeToken::Comment, line)];
    }
    let Some(eq) = key_end(line) else {
        return vec![(CodeToken::Plain, line)];
    };
    let key_start = line.len() - body.len();
    let key_end = line[..eq].trim_end().len();
    let mut out = vec![
        (CodeToken::Plain, &line[..key_start]),
        (CodeToken::Variable, &line[key_start..key_end]),
        (CodeToken::Plain, &line[key_end..eq + 1]),
    ];
    out.extend(toml_value(&line[eq + 1..]));
    out
}

/// The `=` after a bare, quoted or dotted key, when a value follows it.
fn key_end(line: &str) -> Option<usize> {
    let body = line.trim_start();
    let start = line.len() - body.len();
    let mut in_quote: Option<char> = None;
    for (i, c) in line[start..].char_indices() {
        let at = start + i;
        match (in_quote, c) {
            (Some(q), c) if c == q => in_quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => in_quote = Some(c),
            (None, '=') => {
                let value = line[at + 1..].trim_start();
                let ok = i > 0 && !value.is_empty() && !value.starts_with('#');
                return ok.then_some(at);
            }
            (None, c) if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ' ' | '\t') => {}
            (None, _) => return None,
        }
    }
    None
}

fn toml_value(text: &str) -> Vec<(CodeToken, &str)> {
    let mut out = Vec::new();
    let mut i = 0;
    let b = text.as_bytes();
    let mut plain_from = 0;
    while i < b.len() {
        let c = b[i];
        let (token, end) = if c == b'#' || c == b';' {
            (CodeToken::Comment, b.len())
        } else if c == b'"' || c == b'\'' {
            let close = text[i + 1..].find(c as char).map_or(b.len(), |j| i + 1 + j + 1);
            (CodeToken::String, close)
        } else if let Some(end) = number_end(b, i) {
            (CodeToken::Number, end)
        } else if c.is_ascii_alphabetic() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let end = (i..b.len()).find(|&j| !b[j].is_ascii_alphanumeric()).unwrap_or(b.len());
            let word = text[i..end].to_ascii_lowercase();
            if matches!(word.as_str(), "true" | "false" | "on" | "off" | "yes" | "no") {
                (CodeToken::Number, end)
            } else {
                i = end;
                continue;
            }
        } else {
            i += 1;
            continue;
        };
        out.push((CodeToken::Plain, &text[plain_from..i]));
        out.push((token, &text[i..end]));
        i = end;
        plain_from = end;
    }
    out.push((CodeToken::Plain, &text[plain_from..]));
    out
}

/// Where a number starting at `i` ends: `1_000` (signs included), or digits with an optional
/// fraction that start a word.
fn number_end(b: &[u8], i: usize) -> Option<usize> {
    let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let digits = |from: usize| (from..b.len()).find(|&j| !b[j].is_ascii_digit()).unwrap_or(b.len());
    let mut start = i;
    while start < b.len() && matches!(b[start], b'+' | b'-') {
        start += 1;
    }
    let end = digits(start);
    if end > start && b.get(end) == Some(&b'_') {
        return Some(
            (end..b.len())
                .find(|&j| !(b[j].is_ascii_digit() || b[j] == b'_'))
                .unwrap_or(b.len()),
        );
    }
    if start != i || end == i || !word_start {
        return None;
    }
    if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
        return Some(digits(end + 1));
    }
    Some(end)
}
