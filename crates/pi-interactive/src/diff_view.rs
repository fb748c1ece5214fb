//! An edit's diff (`+N`/`-N`/` N` lines from the edit tool's `details.diff`) coloured as pi
//! shows it: removed and added lines in the diff colours, context dim, and a single changed
//! line's changed words in reverse video.

use similar::{ChangeTag, TextDiff};

use super::theme::UiTheme;

/// A diff line's sign, line-number column and text (`"-12 text"` → `('-', "12", "text")`),
/// read as pi reads them: blanks and digits, then one blank, then the text.
fn parse(line: &str) -> Option<(char, &str, &str)> {
    let sign = line.chars().next().filter(|c| matches!(c, '+' | '-' | ' ' | '\t'))?;
    let rest = &line[sign.len_utf8()..];
    let blank = |c: char| c == ' ' || c == '\t';
    let ws = rest.len() - rest.trim_start_matches(blank).len();
    let after_ws = &rest[ws..];
    let digits = after_ws.len() - after_ws.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let end = ws + digits;
    if rest[end..].starts_with(blank) {
        return Some((sign, &rest[..end], &rest[end + 1..]));
    }
    // No blank after the digits: the last leading blank is the separator.
    (ws > 0).then(|| (sign, &rest[..ws - 1], &rest[ws..]))
}

fn tabs(s: &str) -> String {
    s.replace('\t', "   ")
}

/// The changed words of a one-line change in reverse video; the shared indentation stays
/// plain so an insertion at the start does not take it.
fn word_changes(old: &str, new: &str) -> (String, String) {
    let indent = old
        .chars()
        .zip(new.chars())
        .take_while(|(a, b)| a == b && a.is_whitespace())
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let (mut removed, mut added) = (old[..indent].to_string(), new[..indent].to_string());
    let (mut first_removed, mut first_added) = (true, true);
    let diff = TextDiff::configure().diff_words(&old[indent..], &new[indent..]);
    // Neighbouring words with the same fate make one run (one reversed stretch).
    let mut runs: Vec<(ChangeTag, String)> = Vec::new();
    for change in diff.iter_all_changes() {
        match runs.last_mut() {
            Some((tag, text)) if *tag == change.tag() => text.push_str(change.value()),
            _ => runs.push((change.tag(), change.value().to_string())),
        }
    }
    for (tag, value) in runs {
        match tag {
            ChangeTag::Equal => {
                removed.push_str(&value);
                added.push_str(&value);
            }
            ChangeTag::Delete => push_changed(&mut removed, &value, &mut first_removed),
            ChangeTag::Insert => push_changed(&mut added, &value, &mut first_added),
        }
    }
    (removed, added)
}

/// Leading blanks of the first change stay plain; the rest is reversed.
fn push_changed(line: &mut String, value: &str, first: &mut bool) {
    let mut value = value;
    if *first {
        let trimmed = value.trim_start();
        line.push_str(&value[..value.len() - trimmed.len()]);
        value = trimmed;
        *first = false;
    }
    if !value.is_empty() {
        line.push_str(&format!("\x1b[7m{value}\x1b[27m"));
    }
}

/// The diff's lines, coloured.
pub fn render(diff: &str, t: &UiTheme) -> Vec<String> {
    let lines: Vec<&str> = diff.split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let Some((sign, num, text)) = parse(lines[i]) else {
            out.push(t.paint("toolDiffContext", lines[i]));
            i += 1;
            continue;
        };
        match sign {
            '-' => {
                let removed = run(&lines, &mut i, '-');
                let added = run(&lines, &mut i, '+');
                if let ([(rn, rt)], [(an, at)]) = (removed.as_slice(), added.as_slice()) {
                    let (r, a) = word_changes(&tabs(rt), &tabs(at));
                    out.push(t.paint("toolDiffRemoved", &format!("-{rn} {r}")));
                    out.push(t.paint("toolDiffAdded", &format!("+{an} {a}")));
                } else {
                    for (n, text) in &removed {
                        out.push(t.paint("toolDiffRemoved", &format!("-{n} {}", tabs(text))));
                    }
                    for (n, text) in &added {
                        out.push(t.paint("toolDiffAdded", &format!("+{n} {}", tabs(text))));
                    }
                }
            }
            '+' => {
                out.push(t.paint("toolDiffAdded", &format!("+{num} {}", tabs(text))));
                i += 1;
            }
            _ => {
                out.push(t.paint("toolDiffContext", &format!(" {num} {}", tabs(text))));
                i += 1;
            }
        }
    }
    out
}

/// The consecutive lines with `sign` from `i` on, as `(number column, text)`.
fn run<'a>(lines: &[&'a str], i: &mut usize, sign: char) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    while let Some((s, num, text)) = lines.get(*i).and_then(|l| parse(l)) {
        if s != sign {
            break;
        }
        out.push((num, text));
        *i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_numbers_and_a_one_line_change_marks_its_words() {
        let t = UiTheme::fallback();
        let diff = " 1 line one\n-2 line two\n+2 line 2 changed\n 3 line three\n   ...";
        let lines = render(diff, &t);
        let plain: Vec<String> = lines.iter().map(|l| pi_tui::strip_ansi(l)).collect();
        assert_eq!(
            plain,
            [
                " 1 line one",
                "-2 line two",
                "+2 line 2 changed",
                " 3 line three",
                "   ..."
            ]
        );
        assert!(lines[1].contains("\x1b[7mtwo\x1b[27m"), "{:?}", lines[1]);
        assert!(lines[2].contains("\x1b[7m2 changed\x1b[27m"), "{:?}", lines[2]);
        assert!(!lines[0].contains("\x1b[7m"));
    }

    #[test]
    fn several_changed_lines_are_not_marked_word_by_word() {
        let t = UiTheme::fallback();
        let lines = render("-1 a\n-2 b\n+1 c", &t);
        assert!(lines.iter().all(|l| !l.contains("\x1b[7m")));
        let plain: Vec<String> = lines.iter().map(|l| pi_tui::strip_ansi(l)).collect();
        assert_eq!(plain, ["-1 a", "-2 b", "+1 c"]);
    }
}
