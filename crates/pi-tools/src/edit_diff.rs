//! Text replacement for the edit tool: line endings, BOM, fuzzy matching, multi-edit application
//! and the numbered diff shown to users.

use similar::{DiffOp, TextDiff};
use unicode_normalization::UnicodeNormalization;

use crate::truncate::utf16_len;

/// `\r\n` when the first line break is CRLF, else `\n`.
pub fn detect_line_ending(content: &str) -> &'static str {
    match (content.find("\r\n"), content.find('\n')) {
        (Some(crlf), Some(lf)) if crlf < lf => "\r\n",
        _ => "\n",
    }
}

/// CRLF and lone CR become LF.
pub fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Put CRLF back when the file used it.
pub fn restore_line_endings(text: &str, ending: &str) -> String {
    if ending == "\r\n" {
        text.replace('\n', "\r\n")
    } else {
        text.to_string()
    }
}

/// Split off a leading UTF-8 BOM.
pub fn strip_bom(content: &str) -> (&str, &str) {
    match content.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", content),
    }
}

/// Whitespace as JavaScript's `trimEnd` sees it.
fn is_js_whitespace(c: char) -> bool {
    c.is_whitespace() && c != '\u{0085}' || c == '\u{FEFF}'
}

/// NFKC, trailing whitespace per line, and typographic quotes, dashes and spaces folded to ASCII.
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    let trimmed = nfkc
        .split('\n')
        .map(|line| line.trim_end_matches(is_js_whitespace))
        .collect::<Vec<_>>()
        .join("\n");
    trimmed
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

/// Where `old` was found, and whether only the fuzzy form matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    pub index: usize,
    pub len: usize,
    pub fuzzy: bool,
}

/// Exact search first, then in fuzzy-normalised space (indices are then into the normalised text).
pub fn fuzzy_find_text(content: &str, old: &str) -> Option<Match> {
    if let Some(index) = content.find(old) {
        return Some(Match {
            index,
            len: old.len(),
            fuzzy: false,
        });
    }
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let fuzzy_old = normalize_for_fuzzy_match(old);
    fuzzy_content.find(&fuzzy_old).map(|index| Match {
        index,
        len: fuzzy_old.len(),
        fuzzy: true,
    })
}

fn count_occurrences(content: &str, old: &str) -> usize {
    let fc = normalize_for_fuzzy_match(content);
    let fo = normalize_for_fuzzy_match(old);
    if fo.is_empty() {
        return utf16_len(&fc).saturating_sub(1);
    }
    fc.matches(fo.as_str()).count()
}

/// One replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old_text: String,
    pub new_text: String,
}

/// The text the diff is computed from (possibly fuzzy-normalised) and the edited text, both LF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub base: String,
    pub new: String,
}

/// Apply all edits, each matched against the same original content. Errors are pi's texts.
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<Applied, String> {
    let total = edits.len();
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            old_text: normalize_to_lf(&e.old_text),
            new_text: normalize_to_lf(&e.new_text),
        })
        .collect();
    for (i, e) in edits.iter().enumerate() {
        if e.old_text.is_empty() {
            return Err(if total == 1 {
                format!("oldText must not be empty in {path}.")
            } else {
                format!("edits[{i}].oldText must not be empty in {path}.")
            });
        }
    }
    let any_fuzzy = edits
        .iter()
        .any(|e| fuzzy_find_text(content, &e.old_text).is_some_and(|m| m.fuzzy));
    let base = if any_fuzzy {
        normalize_for_fuzzy_match(content)
    } else {
        content.to_string()
    };
    let mut matched: Vec<(usize, Match, &str)> = Vec::with_capacity(total);
    for (i, e) in edits.iter().enumerate() {
        let Some(m) = fuzzy_find_text(&base, &e.old_text) else {
            return Err(if total == 1 {
                format!("Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines.")
            } else {
                format!("Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines.")
            });
        };
        let n = count_occurrences(&base, &e.old_text);
        if n > 1 {
            return Err(if total == 1 {
                format!("Found {n} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique.")
            } else {
                format!("Found {n} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique.")
            });
        }
        matched.push((i, m, e.new_text.as_str()));
    }
    matched.sort_by_key(|(_, m, _)| m.index);
    for pair in matched.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.1.index + a.1.len > b.1.index {
            return Err(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                a.0, b.0
            ));
        }
    }
    let mut new = base.clone();
    for (_, m, text) in matched.iter().rev() {
        // Fuzzy indices point into the normalised base; a mismatch would mean a bug, not bad input.
        if new.is_char_boundary(m.index) && new.is_char_boundary(m.index + m.len) {
            new.replace_range(m.index..m.index + m.len, text);
        }
    }
    if base == new {
        return Err(if total == 1 {
            format!("No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.")
        } else {
            format!("No changes made to {path}. The replacements produced identical content.")
        });
    }
    Ok(Applied { base, new })
}

/// The numbered diff and the first changed line of the new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffResult {
    pub diff: String,
    pub first_changed_line: Option<usize>,
}

enum Kind {
    Equal,
    Removed,
    Added,
}

/// pi's diff: `+N`/`-N`/` N` lines with up to `context` lines around each change, ` ...` for gaps.
pub fn generate_diff_string(old: &str, new: &str, context: usize) -> DiffResult {
    let diff = TextDiff::from_lines(old, new);
    let old_tokens: Vec<&str> = diff.old_slices().to_vec();
    let new_tokens: Vec<&str> = diff.new_slices().to_vec();
    let strip = |s: &str| s.strip_suffix('\n').unwrap_or(s).to_string();
    let mut parts: Vec<(Kind, Vec<String>)> = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { old_index, len, .. } => parts.push((
                Kind::Equal,
                old_tokens[old_index..old_index + len]
                    .iter()
                    .map(|s| strip(s))
                    .collect(),
            )),
            DiffOp::Delete { old_index, old_len, .. } => parts.push((
                Kind::Removed,
                old_tokens[old_index..old_index + old_len]
                    .iter()
                    .map(|s| strip(s))
                    .collect(),
            )),
            DiffOp::Insert { new_index, new_len, .. } => parts.push((
                Kind::Added,
                new_tokens[new_index..new_index + new_len]
                    .iter()
                    .map(|s| strip(s))
                    .collect(),
            )),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                parts.push((
                    Kind::Removed,
                    old_tokens[old_index..old_index + old_len]
                        .iter()
                        .map(|s| strip(s))
                        .collect(),
                ));
                parts.push((
                    Kind::Added,
                    new_tokens[new_index..new_index + new_len]
                        .iter()
                        .map(|s| strip(s))
                        .collect(),
                ));
            }
        }
    }
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let width = max_line.to_string().len();
    let num = |n: usize| format!("{n:>width$}");
    let gap = format!(" {} ...", " ".repeat(width));
    let mut out: Vec<String> = Vec::new();
    let (mut old_n, mut new_n) = (1usize, 1usize);
    let mut last_was_change = false;
    let mut first_changed = None;
    for (i, (kind, lines)) in parts.iter().enumerate() {
        match kind {
            Kind::Added | Kind::Removed => {
                first_changed.get_or_insert(new_n);
                for line in lines {
                    if matches!(kind, Kind::Added) {
                        out.push(format!("+{} {line}", num(new_n)));
                        new_n += 1;
                    } else {
                        out.push(format!("-{} {line}", num(old_n)));
                        old_n += 1;
                    }
                }
                last_was_change = true;
            }
            Kind::Equal => {
                let next_is_change = parts.get(i + 1).is_some_and(|(k, _)| !matches!(k, Kind::Equal));
                let show = |out: &mut Vec<String>, ls: &[String], old_n: &mut usize, new_n: &mut usize| {
                    for line in ls {
                        out.push(format!(" {} {line}", num(*old_n)));
                        *old_n += 1;
                        *new_n += 1;
                    }
                };
                let n = lines.len();
                if last_was_change && next_is_change {
                    if n <= context * 2 {
                        show(&mut out, lines, &mut old_n, &mut new_n);
                    } else {
                        show(&mut out, &lines[..context], &mut old_n, &mut new_n);
                        out.push(gap.clone());
                        let skipped = n - 2 * context;
                        old_n += skipped;
                        new_n += skipped;
                        show(&mut out, &lines[n - context..], &mut old_n, &mut new_n);
                    }
                } else if last_was_change {
                    let shown = n.min(context);
                    show(&mut out, &lines[..shown], &mut old_n, &mut new_n);
                    if n > shown {
                        out.push(gap.clone());
                        old_n += n - shown;
                        new_n += n - shown;
                    }
                } else if next_is_change {
                    let skipped = n.saturating_sub(context);
                    if skipped > 0 {
                        out.push(gap.clone());
                        old_n += skipped;
                        new_n += skipped;
                    }
                    show(&mut out, &lines[skipped..], &mut old_n, &mut new_n);
                } else {
                    old_n += n;
                    new_n += n;
                }
                last_was_change = false;
            }
        }
    }
    DiffResult {
        diff: out.join("\n"),
        first_changed_line: first_changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(o: &str, n: &str) -> Edit {
        Edit {
            old_text: o.into(),
            new_text: n.into(),
        }
    }

    #[test]
    fn golden_edit_diff() {
        let old = "Hello world\nThis is a test file.\nThird line.\n";
        let a = apply_edits(old, &[edit("Hello world", "Hello pi")], "hello.txt").expect("edit");
        let d = generate_diff_string(&a.base, &a.new, 4);
        assert_eq!(
            d.diff,
            "-1 Hello world\n+1 Hello pi\n 2 This is a test file.\n 3 Third line."
        );
        assert_eq!(d.first_changed_line, Some(1));
    }

    #[test]
    fn far_context_is_elided() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 10\n", "line ten\n");
        let d = generate_diff_string(&old, &new, 4);
        let lines: Vec<&str> = d.diff.lines().collect();
        assert_eq!(lines[0], "    ...");
        assert_eq!(lines[1], "  6 line 6");
        assert!(lines.contains(&"-10 line 10"));
        assert!(lines.contains(&"+10 line ten"));
        assert_eq!(*lines.last().expect("last"), "    ...");
        assert_eq!(d.first_changed_line, Some(10));
    }

    #[test]
    fn error_texts_match_pi() {
        let c = "a\nb\na\n";
        assert_eq!(
            apply_edits(c, &[edit("zzz", "y")], "f").expect_err("missing"),
            "Could not find the exact text in f. The old text must match exactly including all whitespace and newlines."
        );
        assert_eq!(
            apply_edits(c, &[edit("a", "y")], "f").expect_err("dup"),
            "Found 2 occurrences of the text in f. The text must be unique. Please provide more context to make it unique."
        );
        assert_eq!(
            apply_edits(c, &[edit("b", "y"), edit("q", "x")], "f").expect_err("missing"),
            "Could not find edits[1] in f. The oldText must match exactly including all whitespace and newlines."
        );
        assert_eq!(
            apply_edits("abcdef", &[edit("bcd", "1"), edit("cde", "2")], "f").expect_err("overlap"),
            "edits[0] and edits[1] overlap in f. Merge them into one edit or target disjoint regions."
        );
        assert_eq!(
            apply_edits(c, &[edit("b", "b")], "f").expect_err("same"),
            "No changes made to f. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
        );
        assert_eq!(
            apply_edits(c, &[edit("", "b")], "f").expect_err("empty"),
            "oldText must not be empty in f."
        );
    }

    #[test]
    fn edits_match_the_original_not_each_other() {
        let a = apply_edits("one two three", &[edit("three", "3"), edit("one", "1")], "f").expect("edits");
        assert_eq!(a.new, "1 two 3");
    }

    #[test]
    fn fuzzy_match_normalises_the_whole_file() {
        let content = "say \u{201C}hi\u{201D}   \nkeep\u{2014}dash\n";
        let a = apply_edits(content, &[edit("say \"hi\"", "say \"yo\"")], "f").expect("fuzzy");
        assert_eq!(a.new, "say \"yo\"\nkeep-dash\n");
    }

    #[test]
    fn line_endings_are_detected_and_restored() {
        assert_eq!(detect_line_ending("a\r\nb\n"), "\r\n");
        assert_eq!(detect_line_ending("a\nb\r\n"), "\n");
        assert_eq!(restore_line_endings("a\nb", "\r\n"), "a\r\nb");
        assert_eq!(strip_bom("\u{FEFF}x"), ("\u{FEFF}", "x"));
    }
}
