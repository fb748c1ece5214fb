//! Java painted the way pi 1.6's highlighter (highlight.js 10) paints it: words by its
//! keyword list (types and names plain), class heads with their names, method heads in the
//! definition's colour with the parameters as such.

use crate::highlight::CodeToken;

const KEYWORDS: &str = "false synchronized int abstract float private char boolean var static null if const for \
                        true while long strictfp finally protected import native final void enum else break \
                        transient catch instanceof byte super volatile case assert short package default double \
                        public try this switch continue throws protected public private module requires exports \
                        do class interface extends implements new throw return";

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn is_text(t: CodeToken) -> bool {
    matches!(t, CodeToken::String | CodeToken::Comment | CodeToken::Meta)
}

fn is_keyword(word: &str) -> bool {
    KEYWORDS.split(' ').any(|w| w == word)
}

/// The words of `chars` as `(start, end)`, strings and comments left out.
fn words(chars: &[char], tokens: &[CodeToken]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_word(chars[i]) || is_text(tokens[i]) {
            i += 1;
            continue;
        }
        let end = (i..chars.len()).find(|&j| !is_word(chars[j])).unwrap_or(chars.len());
        out.push((i, end));
        i = end;
    }
    out
}

/// Repaint one Java line; `tokens` holds one class per char.
pub(crate) fn repaint_line(line: &str, tokens: &mut [CodeToken]) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() != tokens.len() {
        return;
    }
    // Only strings, comments, annotations and numbers keep the grammar's classes.
    for (i, t) in tokens.iter_mut().enumerate() {
        let number = *t == CodeToken::Number && !chars[i].is_alphabetic();
        if !is_text(*t) && !number {
            *t = CodeToken::Plain;
        }
    }
    let words = words(&chars, tokens);
    for &(s, e) in &words {
        let word: String = chars[s..e].iter().collect();
        if word.starts_with(|c: char| c.is_ascii_digit()) {
            tokens[s..e].fill(CodeToken::Number);
        } else if is_keyword(&word) {
            tokens[s..e].fill(CodeToken::Keyword);
        }
    }
    let word_at = |i: usize| -> String {
        words
            .iter()
            .find(|&&(s, _)| s == i)
            .map(|&(s, e)| chars[s..e].iter().collect())
            .unwrap_or_default()
    };
    let stop = |c: char| matches!(c, '{' | ';' | '=');
    // Class heads: names in the definition's colour, brackets as a type.
    let mut body = 0;
    for &(s, e) in &words {
        if !matches!(word_at(s).as_str(), "class" | "interface" | "enum") {
            continue;
        }
        let mut i = e;
        while i < chars.len() && !stop(chars[i]) && !is_text(tokens[i]) {
            if let Some(&(ws, we)) = words.iter().find(|&&(ws, _)| ws == i) {
                let w = word_at(ws);
                let token = if w == "extends" || w == "implements" {
                    CodeToken::Keyword
                } else {
                    CodeToken::Function
                };
                tokens[ws..we].fill(token);
                i = we;
                continue;
            }
            if !chars[i].is_whitespace() {
                tokens[i] = CodeToken::Type;
            }
            i += 1;
        }
        body = i;
        break;
    }
    // Method heads: `[modifiers] Type name(params)`, two names or more before the bracket.
    for &(s, e) in &words {
        if s < body {
            continue;
        }
        let open = (e..chars.len()).find(|&j| !chars[j].is_whitespace());
        let Some(open) = open.filter(|&j| chars[j] == '(') else {
            continue;
        };
        // The names before, each with an optional `<…>` and followed by whitespace.
        let mut start = s;
        loop {
            let mut j = start;
            while j > 0 && chars[j - 1].is_whitespace() {
                j -= 1;
            }
            if j == start || j == 0 {
                break;
            }
            if chars[j - 1] == '>' {
                let Some(lt) = (0..j - 1).rev().find(|&x| chars[x] == '<') else {
                    break;
                };
                if chars[lt + 1..j - 1].iter().any(|&c| c == '<' || c == '>') {
                    break;
                }
                j = lt;
            }
            let Some(&(ps, _)) = words.iter().find(|&&(_, pe)| pe == j) else {
                break;
            };
            start = ps;
        }
        // `new`, `throw`, `return` and `else` are taken alone first.
        while start < s && matches!(word_at(start).as_str(), "new" | "throw" | "return" | "else") {
            let Some(&(next, _)) = words.iter().find(|&&(ws, _)| ws > start) else {
                break;
            };
            start = next;
        }
        if start == s {
            continue;
        }
        let mut i = start;
        let mut in_params = false;
        while i < chars.len() {
            if is_text(tokens[i]) {
                i += 1;
                continue;
            }
            let c = chars[i];
            if !in_params && stop(c) {
                break;
            }
            if c == '(' && !in_params && i >= open {
                in_params = true;
            }
            let keyword = tokens[i] == CodeToken::Keyword || tokens[i] == CodeToken::Number;
            if !keyword {
                tokens[i] = if in_params {
                    CodeToken::Variable
                } else {
                    CodeToken::Function
                };
            }
            if c == ')' && in_params {
                in_params = false;
            }
            i += 1;
        }
        return;
    }
}
