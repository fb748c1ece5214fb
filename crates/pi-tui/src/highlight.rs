//! Code highlighting with syntect. The syntax and theme sets load on first use (or in the
//! background after `preload`), never at startup.

use std::cell::RefCell;
use std::sync::OnceLock;

use syntect::easy::{HighlightLines, ScopeRangeIterator};
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use crate::code_classes::{classify, paint_words, Class, Lang};
use crate::ts_heads::repaint_line;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();

fn assets() -> Option<&'static Assets> {
    ASSETS
        .get_or_init(|| {
            let syntaxes = SyntaxSet::load_defaults_newlines();
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove("base16-ocean.dark")?;
            Some(Assets { syntaxes, theme })
        })
        .as_ref()
}

/// Load the syntax definitions on a background thread so the first code block is fast.
pub fn preload() {
    if ASSETS.get().is_none() {
        std::thread::spawn(|| {
            let _ = assets();
        });
    }
}

fn find_syntax<'a>(set: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    let lang = lang.trim().to_lowercase();
    // Names the bundled set lacks: map to the closest grammar it has.
    let alias = match lang.as_str() {
        "ts" | "typescript" | "tsx" | "jsx" | "mjs" | "cjs" | "node" => "js",
        "shell" | "zsh" | "console" | "sh" => "bash",
        "py" | "python3" => "python",
        "yml" => "yaml",
        "jsonc" | "json5" => "json",
        "c++" | "hpp" => "cpp",
        "rs" => "rust",
        "golang" => "go",
        other => other,
    };
    set.find_syntax_by_token(alias)
        .or_else(|| set.find_syntax_by_name(alias))
}

/// Highlight `code` as `lang`; one string per line, coloured with 24-bit foregrounds that are
/// closed at each line end. None when the language is unknown.
pub fn highlight(code: &str, lang: &str) -> Option<Vec<String>> {
    if lang.trim().is_empty() {
        return None;
    }
    let a = assets()?;
    let syntax = find_syntax(&a.syntaxes, lang)?;
    let mut h = HighlightLines::new(syntax, &a.theme);
    let mut out = Vec::new();
    for line in code.split('\n') {
        let with_nl = format!("{line}\n");
        let ranges = h.highlight_line(&with_nl, &a.syntaxes).ok()?;
        let mut s = String::new();
        for (style, text) in ranges {
            let text = text.trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            let c = style.foreground;
            s.push_str(&format!("\x1b[38;2;{};{};{}m{text}", c.r, c.g, c.b));
        }
        if !s.is_empty() {
            s.push_str("\x1b[39m");
        }
        out.push(s);
    }
    Some(out)
}

/// What a stretch of code is, so a theme's syntax colours can paint it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeToken {
    Plain,
    Keyword,
    Function,
    Variable,
    String,
    Number,
    Type,
    Operator,
    Punctuation,
    Comment,
    /// Decorators, attributes, a script's `#!` line.
    Meta,
    /// A diff's added lines.
    Added,
    /// A diff's removed lines.
    Removed,
}

/// Highlight `code` as `lang` with `paint` colouring each stretch by what it is; one string
/// per line. None when the language is unknown.
pub fn highlight_with(code: &str, lang: &str, paint: &dyn Fn(CodeToken, &str) -> String) -> Option<Vec<String>> {
    if lang.trim().is_empty() {
        return None;
    }
    if let Some(lines) = crate::line_langs::highlight(code, lang, paint) {
        return Some(lines);
    }
    let a = assets()?;
    let syntax = find_syntax(&a.syntaxes, lang)?;
    let go = matches!(lang.trim().to_lowercase().as_str(), "go" | "golang");
    let java = matches!(lang.trim().to_lowercase().as_str(), "java" | "jsp");
    let lang = Lang::of(lang);
    // JavaScript, TypeScript, Go and Java lines are sorted char by char first, so their JSX tags
    // and definition heads can be repainted before the runs are painted.
    let js = matches!(lang, Lang::JavaScript | Lang::TypeScript);
    let per_char = go || java || js;
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    for (n, line) in code.split('\n').enumerate() {
        // JSX tags are hidden from the grammar (blanked out) and painted afterwards.
        let tags = if js {
            jsx_tags_in(line, &state, &stack, lang, &a.syntaxes)
        } else {
            Vec::new()
        };
        let line_chars: Vec<char> = line.chars().collect();
        let masked: String = if tags.is_empty() {
            line.to_string()
        } else {
            line_chars
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    if tags.iter().any(|&(s, e)| (s..e).contains(&i)) {
                        ' '
                    } else {
                        c
                    }
                })
                .collect()
        };
        let with_nl = format!("{masked}\n");
        let ops = state.parse_line(&with_nl, &a.syntaxes).ok()?;
        // A script's `#!` line is painted as meta, not as a comment.
        if n == 0 && lang == Lang::Bash && line.starts_with("#!") {
            for (_, op) in ScopeRangeIterator::new(&ops, &with_nl) {
                stack.apply(op).ok()?;
            }
            out.push(paint(CodeToken::Meta, line));
            continue;
        }
        let mut s = String::new();
        let chars = RefCell::new(Vec::new());
        let collect = |t: CodeToken, text: &str| {
            chars.borrow_mut().extend(text.chars().map(|_| t));
            String::new()
        };
        for (range, op) in ScopeRangeIterator::new(&ops, &with_nl) {
            stack.apply(op).ok()?;
            let text = with_nl[range].trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            if per_char {
                paint_words(text, classify(&stack, lang), lang, &collect);
            } else {
                s.push_str(&paint_words(text, classify(&stack, lang), lang, paint));
            }
        }
        if per_char {
            let mut tokens = chars.into_inner();
            if go {
                crate::go_heads::repaint_line(line, &mut tokens);
            } else if java {
                crate::java_heads::repaint_line(line, &mut tokens);
            } else if lang == Lang::TypeScript {
                repaint_line(line, &mut tokens);
            }
            if tokens.len() == line_chars.len() {
                for &tag in &tags {
                    crate::jsx_tags::paint(&line_chars, &mut tokens, tag);
                }
            }
            s = paint_runs(line, &tokens, paint);
        }
        out.push(s);
    }
    Some(out)
}

/// The JSX tags of `line` (char ranges), those the grammar reads as code: a `<` inside a
/// string or a comment opens none. The line is read on a copy of the grammar's state.
fn jsx_tags_in(line: &str, state: &ParseState, stack: &ScopeStack, lang: Lang, set: &SyntaxSet) -> Vec<(usize, usize)> {
    let chars: Vec<char> = line.chars().collect();
    let tags = crate::jsx_tags::find(&chars);
    if tags.is_empty() {
        return tags;
    }
    let (mut state, mut stack) = (state.clone(), stack.clone());
    let with_nl = format!("{line}\n");
    let Ok(ops) = state.parse_line(&with_nl, set) else {
        return Vec::new();
    };
    let mut text_at = Vec::with_capacity(chars.len());
    for (range, op) in ScopeRangeIterator::new(&ops, &with_nl) {
        if stack.apply(op).is_err() {
            return Vec::new();
        }
        let text = with_nl[range].trim_end_matches('\n');
        let is_text = matches!(
            classify(&stack, lang),
            Class::Whole(CodeToken::String) | Class::Whole(CodeToken::Comment)
        );
        text_at.extend(text.chars().map(|_| is_text));
    }
    tags.into_iter()
        .filter(|&(s, _)| !text_at.get(s).copied().unwrap_or(false))
        .collect()
}

/// Paint `line` run by run, `tokens` holding one class per char.
fn paint_runs(line: &str, tokens: &[CodeToken], paint: &dyn Fn(CodeToken, &str) -> String) -> String {
    let mut out = String::new();
    let mut start = 0;
    let mut current: Option<CodeToken> = None;
    for ((at, _), &token) in line.char_indices().zip(tokens) {
        if current.is_some_and(|c| c != token) {
            out.push_str(&paint(current.unwrap_or(token), &line[start..at]));
            start = at;
        }
        current = Some(token);
    }
    if let Some(token) = current {
        out.push_str(&paint(token, &line[start..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_are_told_apart_by_what_they_are() {
        let paint = |t: CodeToken, s: &str| format!("<{t:?}:{s}>");
        let lines = highlight_with("def f(x):\n    return 1 # done", "python", &paint).expect("python");
        assert!(lines[0].contains("<Keyword:def>"), "{lines:?}");
        assert!(lines[0].contains("<Function:f>"), "{lines:?}");
        assert!(lines[1].contains("<Number:1>"), "{lines:?}");
        assert!(lines[1].contains("<Comment:"), "{lines:?}");
        assert!(highlight_with("x", "no-such-language", &paint).is_none());
    }

    #[test]
    fn highlights_known_languages_only() {
        let lines = highlight("fn main() {}\nlet x = 1;", "rust").expect("rust is known");
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("\x1b[38;2;"));
        assert_eq!(crate::ansi::strip_ansi(&lines[0]), "fn main() {}");
        assert!(highlight("x", "no-such-language").is_none());
        assert!(highlight("const a = 1", "ts").is_some());
    }
}
