//! TypeScript definition heads painted the way pi 1.6's highlighter (highlight.js 10) paints
//! them. The bundled grammar is JavaScript's, which loses track of `function f(p: T): R {`,
//! `constructor(public n: string) {`, `(x: number) =>`, class heads with type parameters and
//! decorators; these are found in the line's text and repainted over the grammar's classes.

use crate::code_classes::ts_word_class;
use crate::highlight::CodeToken;

/// Repaint the definition heads of one TypeScript line; `tokens` holds one class per char.
pub(crate) fn repaint_line(line: &str, tokens: &mut [CodeToken]) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() != tokens.len() {
        return;
    }
    let mut head = Heads { chars: &chars, tokens };
    head.forget_grammar_heads();
    head.decorators();
    head.functions();
    head.classes();
    head.methods();
    head.arrows();
}

struct Heads<'a> {
    chars: &'a [char],
    tokens: &'a mut [CodeToken],
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Text the grammar already knows to be a string, comment or decorator is never code.
fn is_text(t: CodeToken) -> bool {
    matches!(t, CodeToken::String | CodeToken::Comment)
}

impl Heads<'_> {
    fn word_at(&self, i: usize) -> Option<(usize, String)> {
        if i >= self.chars.len() || !is_word(self.chars[i]) || (i > 0 && is_word(self.chars[i - 1])) {
            return None;
        }
        let end = (i..self.chars.len())
            .find(|&j| !is_word(self.chars[j]))
            .unwrap_or(self.chars.len());
        Some((end, self.chars[i..end].iter().collect()))
    }

    /// Where the keyword `kw` stands as code (not inside a string or comment).
    fn keyword_positions(&self, kw: &str) -> Vec<usize> {
        (0..self.chars.len())
            .filter(|&i| !is_text(self.tokens[i]))
            .filter(|&i| self.word_at(i).is_some_and(|(_, w)| w == kw))
            .collect()
    }

    /// The index of the `)` closing the `(` at `open`, counting nested pairs outside strings.
    fn closing(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for j in open..self.chars.len() {
            if is_text(self.tokens[j]) {
                continue;
            }
            match self.chars[j] {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn skip_space(&self, mut i: usize) -> usize {
        while i < self.chars.len() && self.chars[i].is_whitespace() {
            i += 1;
        }
        i
    }

    /// Paint a parameter list's inside: parameters, with their types, literals, numbers and
    /// modifiers (`public`) told apart as that highlighter does.
    fn params(&mut self, from: usize, to: usize) {
        let mut i = from;
        while i < to {
            if is_text(self.tokens[i]) {
                i += 1;
                continue;
            }
            if let Some((end, word)) = self.word_at(i) {
                let end = end.min(to);
                let token = if word.starts_with(|c: char| c.is_ascii_digit()) {
                    CodeToken::Number
                } else {
                    ts_word_class(&word).unwrap_or(CodeToken::Variable)
                };
                self.tokens[i..end].fill(token);
                i = end;
                continue;
            }
            self.tokens[i] = CodeToken::Variable;
            i += 1;
        }
    }

    /// Drop the grammar's own definitions (`name(…)` without a body, every `=>`), which that
    /// highlighter does not see as such; the passes below paint the ones it does.
    fn forget_grammar_heads(&mut self) {
        let mut i = 0;
        while i < self.chars.len() {
            if self.chars[i] == '=' && self.chars.get(i + 1) == Some(&'>') && self.tokens[i] == CodeToken::Function {
                self.tokens[i..i + 2].fill(CodeToken::Plain);
                i += 2;
                continue;
            }
            let Some((end, word)) = self.word_at(i) else {
                if self.tokens[i] == CodeToken::Function {
                    self.tokens[i] = CodeToken::Plain;
                }
                i += 1;
                continue;
            };
            if is_text(self.tokens[i]) {
                i = end;
                continue;
            }
            // A number the grammar lost track of is still a number.
            if word.starts_with(|c: char| c.is_ascii_digit()) {
                self.tokens[i..end].fill(CodeToken::Number);
            }
            let definition = self.tokens[i] == CodeToken::Function;
            if definition {
                self.tokens[i..end].fill(CodeToken::Plain);
            }
            if definition && self.chars.get(end) == Some(&'(') {
                let close = self.closing(end).unwrap_or(self.chars.len() - 1);
                for t in &mut self.tokens[i..=close] {
                    if matches!(t, CodeToken::Function | CodeToken::Variable) {
                        *t = CodeToken::Plain;
                    }
                }
            }
            i = end;
        }
    }

    /// `@Name` and `@a.b` are decorators.
    fn decorators(&mut self) {
        let mut i = 0;
        while i < self.chars.len() {
            if self.chars[i] == '@' && !is_text(self.tokens[i]) && self.chars.get(i + 1).is_some_and(|&c| is_word(c)) {
                let mut end = i + 1;
                while end < self.chars.len() && (is_word(self.chars[end]) || self.chars[end] == '.') {
                    end += 1;
                }
                self.tokens[i..end].fill(CodeToken::Meta);
                i = end;
            } else {
                i += 1;
            }
        }
    }

    /// `function name<T>(params): R` up to its `{` or `;`: the head in the definition's
    /// colour, each parameter list's inside as parameters.
    fn functions(&mut self) {
        for at in self.keyword_positions("function") {
            let mut i = at + "function".len();
            while i < self.chars.len() {
                if is_text(self.tokens[i]) {
                    i += 1;
                    continue;
                }
                match self.chars[i] {
                    '{' | ';' => break,
                    '(' => {
                        let close = self.closing(i).unwrap_or(self.chars.len());
                        self.tokens[i] = CodeToken::Function;
                        self.params(i + 1, close);
                        if close < self.chars.len() {
                            self.tokens[close] = CodeToken::Function;
                        }
                        i = close + 1;
                    }
                    _ => {
                        self.tokens[i] = CodeToken::Function;
                        i += 1;
                    }
                }
            }
        }
    }

    /// `class Name<T> extends Base implements I {`: names in the definition's colour, the
    /// brackets between as a type.
    fn classes(&mut self) {
        for at in self.keyword_positions("class") {
            let mut i = at + "class".len();
            let mut extended = false;
            while i < self.chars.len() {
                if is_text(self.tokens[i]) || matches!(self.chars[i], '{' | ';' | '=') {
                    break;
                }
                if let Some((end, word)) = self.word_at(i) {
                    let keyword = (word == "extends" || word == "implements") && !extended;
                    extended |= word == "extends";
                    let token = if keyword {
                        CodeToken::Keyword
                    } else {
                        CodeToken::Function
                    };
                    self.tokens[i..end].fill(token);
                    i = end;
                    continue;
                }
                if !self.chars[i].is_whitespace() {
                    self.tokens[i] = CodeToken::Type;
                }
                i += 1;
            }
        }
    }

    /// `name(params) {` (a method or a constructor): the name and brackets in the
    /// definition's colour, the inside as parameters. A return type between `)` and `{` makes
    /// it no definition for that highlighter.
    fn methods(&mut self) {
        let mut i = 0;
        while i < self.chars.len() {
            let Some((end, word)) = self.word_at(i) else {
                i += 1;
                continue;
            };
            let skip = is_text(self.tokens[i])
                || matches!(word.as_str(), "function" | "while" | "if" | "switch" | "catch" | "for")
                || self.chars.get(end) != Some(&'(');
            if skip {
                i = end;
                continue;
            }
            let Some(close) = self.closing(end) else {
                return;
            };
            let after = self.skip_space(close + 1);
            if self.chars.get(after) == Some(&'{') {
                self.tokens[i..=end].fill(CodeToken::Function);
                self.params(end + 1, close);
                self.tokens[close] = CodeToken::Function;
            }
            i = end;
        }
    }

    /// `(params) =>`: the brackets and arrow in the definition's colour, the inside as
    /// parameters.
    fn arrows(&mut self) {
        let mut i = 0;
        while i < self.chars.len() {
            if is_text(self.tokens[i]) {
                i += 1;
                continue;
            }
            // `x => …`: one parameter without brackets.
            if let Some((end, _)) = self.word_at(i) {
                let arrow = self.skip_space(end);
                if self.chars.get(arrow) == Some(&'=') && self.chars.get(arrow + 1) == Some(&'>') {
                    self.tokens[i..end].fill(CodeToken::Variable);
                    self.tokens[end..arrow + 2].fill(CodeToken::Function);
                    i = arrow + 2;
                } else {
                    i = end;
                }
                continue;
            }
            if self.chars[i] != '(' {
                i += 1;
                continue;
            }
            let Some(close) = self.closing(i) else {
                return;
            };
            let arrow = self.skip_space(close + 1);
            let is_arrow = self.chars.get(arrow) == Some(&'=') && self.chars.get(arrow + 1) == Some(&'>');
            if is_arrow {
                self.tokens[i] = CodeToken::Function;
                self.params(i + 1, close);
                self.tokens[close..arrow + 2].fill(CodeToken::Function);
                i = arrow + 2;
            } else {
                i += 1;
            }
        }
    }
}
