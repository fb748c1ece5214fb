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
    let replacements: Vec<Replacement> = matched
        .iter()
        .map(|(_, m, text)| (m.index, m.len, (*text).to_string()))
        .collect();
    // A fuzzy match rewrites only the lines it touches (from the normalised text); every other
    // line keeps its original characters.
    let (base, replacements) = if any_fuzzy {
        (content.to_string(), widen_to_lines(content, &base, &replacements)?)
    } else {
        (base, replacements)
    };
    let new = apply_replacements(&base, &replacements, 0);
    if base == new {
        return Err(if total == 1 {
            format!("No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.")
        } else {
            format!("No changes made to {path}. The replacements produced identical content.")
        });
    }
    Ok(Applied { base, new })
}

/// A unified patch of `old` -> `new` for `path`: `--- path` / `+++ path` headers and hunks with
/// `context` lines around each change, every hunk range written `start,len`, and a `\ No newline
/// at end of file` note after a last line without one.
pub fn unified_patch(path: &str, old: &str, new: &str, context: usize) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = format!("--- {path}\n+++ {path}\n");
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let new_start = first.new_range().start;
        let old_len = last.old_range().end - old_start;
        let new_len = last.new_range().end - new_start;
        // An empty range starts at the line before it, as in the classic format.
        let start = |start: usize, len: usize| if len == 0 { start } else { start + 1 };
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            start(old_start, old_len),
            start(new_start, new_len)
        ));
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                };
                let value = change.value();
                out.push(sign);
                match value.strip_suffix('\n') {
                    Some(line) => {
                        out.push_str(line);
                        out.push('\n');
                    }
                    None => {
                        out.push_str(value);
                        out.push_str("\n\\ No newline at end of file\n");
                    }
                }
            }
        }
    }
    out
}

/// One replacement: `(byte index, byte length, new text)`.
type Replacement = (usize, usize, String);

/// `(index, len, text)` replacements, sorted and disjoint, applied to `content` whose first
/// byte is at `offset` of the text the indices point into.
fn apply_replacements(content: &str, replacements: &[Replacement], offset: usize) -> String {
    let mut out = content.to_string();
    for (index, len, text) in replacements.iter().rev() {
        let start = index - offset;
        // Indices come from searches of this same text; a range off a character boundary would be
        // a bug, and is skipped rather than allowed to panic.
        if out.is_char_boundary(start) && out.is_char_boundary(start + len) {
            out.replace_range(start..start + len, text);
        }
    }
    out
}

/// Byte spans of the lines of `text`, each with its `\n`.
fn line_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < text.len() {
        spans.push((start, text.len()));
    }
    spans
}

/// Replacements matched in `base` (the fuzzy-normalised view of `original`) as replacements of
/// whole lines of `original`: each covers the lines its match touches, rewritten from `base`;
/// replacements on shared lines merge.
fn widen_to_lines(original: &str, base: &str, replacements: &[Replacement]) -> Result<Vec<Replacement>, String> {
    let original_lines = line_spans(original);
    let base_lines = line_spans(base);
    if original_lines.len() != base_lines.len() {
        return Err("Cannot preserve unchanged lines because the base content has a different line count.".to_string());
    }
    let outside = || "Replacement range is outside the base content.".to_string();
    // (first line, end line, members)
    let mut groups: Vec<(usize, usize, Vec<Replacement>)> = Vec::new();
    for r in replacements {
        let (index, len, _) = r;
        let start_line = base_lines
            .iter()
            .position(|(s, e)| *index >= *s && *index < *e)
            .ok_or_else(outside)?;
        let mut end_line = start_line;
        while end_line < base_lines.len() && base_lines[end_line].1 < index + len {
            end_line += 1;
        }
        if end_line >= base_lines.len() {
            return Err(outside());
        }
        let end_line = end_line + 1;
        match groups.last_mut() {
            Some(group) if start_line < group.1 => {
                group.1 = group.1.max(end_line);
                group.2.push(r.clone());
            }
            _ => groups.push((start_line, end_line, vec![r.clone()])),
        }
    }
    Ok(groups
        .into_iter()
        .map(|(first, end, members)| {
            let (from, to) = (base_lines[first].0, base_lines[end - 1].1);
            let start = original_lines[first].0;
            let text = apply_replacements(&base[from..to], &members, from);
            (start, original_lines[end - 1].1 - start, text)
        })
        .collect())
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
    fn fuzzy_match_rewrites_only_the_lines_it_touches() {
        let content = "say \u{201C}hi\u{201D}   \nkeep\u{2014}dash\nand \u{2018}this\u{2019}\n";
        let a = apply_edits(content, &[edit("say \"hi\"", "say \"yo\"")], "f").expect("fuzzy");
        // The touched line comes from the normalised text; the others keep their characters.
        assert_eq!(a.new, "say \"yo\"\nkeep\u{2014}dash\nand \u{2018}this\u{2019}\n");
        assert_eq!(a.base, content);
        // Two fuzzy edits on one line merge into one rewrite of that line.
        let a = apply_edits(
            "a \u{201C}b\u{201D} c \u{201C}d\u{201D}\nrest\u{2014}\n",
            &[edit("\"b\"", "B"), edit("\"d\"", "D")],
            "f",
        )
        .expect("fuzzy");
        assert_eq!(a.new, "a B c D\nrest\u{2014}\n");
    }

    #[test]
    fn unified_patch_writes_every_range_with_its_length() {
        assert_eq!(
            unified_patch("f", "a\nb\n", "a\nc\n", 4),
            "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        );
        assert_eq!(
            unified_patch("f", "x", "y", 4),
            "--- f\n+++ f\n@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n"
        );
        assert_eq!(
            unified_patch("f", "", "new\n", 4),
            "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+new\n"
        );
    }

    #[test]
    fn line_endings_are_detected_and_restored() {
        assert_eq!(detect_line_ending("a\r\nb\n"), "\r\n");
        assert_eq!(detect_line_ending("a\nb\r\n"), "\n");
        assert_eq!(restore_line_endings("a\nb", "\r\n"), "a\r\nb");
        assert_eq!(strip_bom("\u{FEFF}x"), ("\u{FEFF}", "x"));
    }
}
