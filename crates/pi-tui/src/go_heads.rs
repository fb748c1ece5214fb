//! Go `func` heads painted the way pi 1.6's highlighter (highlight.js 10) paints them: the
//! head up to its `{` in the definition's colour, each bracketed list in it (receiver,
//! parameters, results) as parameters with the keywords inside kept; type names elsewhere
//! plain.

use crate::highlight::CodeToken;

/// Repaint the `func` heads of one Go line; `tokens` holds one class per char.
pub(crate) fn repaint_line(line: &str, tokens: &mut [CodeToken]) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() != tokens.len() {
        return;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let is_text = |t: CodeToken| matches!(t, CodeToken::String | CodeToken::Comment);
    // Only the heads below are definitions there (`type Point struct` names none).
    for t in tokens.iter_mut() {
        if *t == CodeToken::Function {
            *t = CodeToken::Plain;
        }
    }
    // Words take their class from that highlighter's lists (`error` is on none).
    let mut i = 0;
    while i < chars.len() {
        if !is_word(chars[i]) || chars[i].is_ascii_digit() || is_text(tokens[i]) {
            i += 1;
            continue;
        }
        let end = (i..chars.len()).find(|&j| !is_word(chars[j])).unwrap_or(chars.len());
        let word: String = chars[i..end].iter().collect();
        let has = |list: &str| list.split(' ').any(|w| w == word);
        let token = if has(KEYWORDS) {
            Some(CodeToken::Keyword)
        } else if has(LITERALS) {
            Some(CodeToken::Number)
        } else if has(BUILT_INS) {
            Some(CodeToken::Type)
        } else if matches!(tokens[i], CodeToken::Keyword | CodeToken::Type | CodeToken::Number) {
            Some(CodeToken::Plain)
        } else {
            None
        };
        if let Some(token) = token {
            tokens[i..end].fill(token);
        }
        i = end;
    }
    let mut i = 0;
    while i < chars.len() {
        let starts_word = is_word(chars[i]) && (i == 0 || !is_word(chars[i - 1]));
        let is_func = starts_word
            && !is_text(tokens[i])
            && chars[i..].starts_with(&['f', 'u', 'n', 'c'])
            && !chars.get(i + 4).is_some_and(|&c| is_word(c));
        if !is_func {
            i += 1;
            continue;
        }
        i += 4;
        let mut depth = 0usize;
        while i < chars.len() {
            let c = chars[i];
            if depth == 0 && c == '{' {
                break;
            }
            if is_text(tokens[i]) {
                i += 1;
                continue;
            }
            match c {
                '(' if depth == 0 => {
                    depth = 1;
                    tokens[i] = CodeToken::Variable;
                }
                ')' if depth == 1 => {
                    depth = 0;
                    tokens[i] = CodeToken::Variable;
                }
                _ if depth > 0 => {
                    if !matches!(tokens[i], CodeToken::Keyword | CodeToken::Number) {
                        tokens[i] = CodeToken::Variable;
                    }
                }
                _ => tokens[i] = CodeToken::Function,
            }
            i += 1;
        }
    }
}

const KEYWORDS: &str = "break default func interface select case map struct chan else goto package switch const \
                        fallthrough if range type continue for import return var go defer bool byte complex64 \
                        complex128 float32 float64 int8 int16 int32 int64 string uint8 uint16 uint32 uint64 int \
                        uint uintptr rune";
const LITERALS: &str = "true false iota nil";
const BUILT_INS: &str = "append cap close complex copy imag len make new panic print println real recover delete";
