//! Mermaid source to statements (lines split on `;` outside quotes, `%%` comments and a
//! leading `---` frontmatter block left out) and the label clean-up the grammars share:
//! HTML entities, inline formatting tags, quotes.

/// Control characters other than tab and line breaks: they would measure a column and print
/// none, or send escapes to the terminal.
fn is_stripped_control(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f' | '\x7f'..='\u{9f}')
}

/// `src` without control characters.
pub fn strip_controls(src: &str) -> String {
    src.chars().filter(|c| !is_stripped_control(*c)).collect()
}

/// Split one line into statements.
fn split_line(line: &str, out: &mut Vec<String>) {
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            quoted = c != '"';
            cur.push(c);
        } else if c == '"' {
            quoted = true;
            cur.push(c);
        } else if c == '%' && chars.peek() == Some(&'%') {
            break;
        } else if c == ';' {
            flush(&mut cur, out);
        } else {
            cur.push(c);
        }
    }
    flush(&mut cur, out);
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    let t = cur.trim();
    if !t.is_empty() {
        out.push(t.to_string());
    }
    cur.clear();
}

/// The lines of a frontmatter block (`---` ... `---`) before the header, and the lines after
/// it; an unclosed block takes everything.
fn split_frontmatter(src: &str) -> (Vec<&str>, Vec<&str>) {
    let lines: Vec<&str> = src.lines().collect();
    let mut i = lines.iter().take_while(|l| l.trim().is_empty()).count();
    if lines.get(i).map(|l| l.trim()) != Some("---") {
        return (Vec::new(), lines);
    }
    i += 1;
    while i < lines.len() && lines[i].trim() != "---" {
        i += 1;
    }
    let end = (i + 1).min(lines.len());
    (lines[..end].to_vec(), lines[end..].to_vec())
}

/// The source without its frontmatter block.
pub fn body(src: &str) -> String {
    split_frontmatter(src).1.join("\n")
}

/// The frontmatter's `title:`, unquoted: the one key that means something in a terminal.
pub fn title(src: &str) -> Option<String> {
    let (front, _) = split_frontmatter(src);
    for line in front {
        // An indented `title:` belongs to another key.
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim_end() != "title" {
            continue;
        }
        let v = value.trim();
        let quoted =
            v.len() > 1 && ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\'')));
        let t = if quoted { &v[1..v.len() - 1] } else { v }.trim();
        return (!t.is_empty()).then(|| t.to_string());
    }
    None
}

/// The statements of a diagram's source, the header first.
pub fn statements(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in split_frontmatter(src).1 {
        split_line(line, &mut out);
    }
    out
}

/// The first word of a statement.
pub fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

/// The diagram kind a source declares: its first statement's first word, lower case.
pub fn header_kind(src: &str) -> Option<String> {
    let st = statements(src);
    let word = first_word(st.first()?);
    (!word.is_empty()).then(|| word.to_ascii_lowercase())
}

fn entity(body: &str) -> Option<char> {
    match body {
        "lt" => return Some('<'),
        "gt" => return Some('>'),
        "amp" => return Some('&'),
        "quot" => return Some('"'),
        "apos" => return Some('\''),
        _ => {}
    }
    let num = body.strip_prefix('#')?;
    let code = match num.strip_prefix(['x', 'X']) {
        Some(hex) if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) => {
            u32::from_str_radix(hex, 16).ok()?
        }
        None if !num.is_empty() && num.chars().all(|c| c.is_ascii_digit()) => num.parse().ok()?,
        _ => return None,
    };
    // Control characters would reach the terminal as escapes.
    char::from_u32(code).filter(|c| !c.is_control())
}

/// `&lt;`, `&#65;`, `&#x41;` and the like decoded, in one pass; anything else stays literal.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '&' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        // The `;` must come within ten characters.
        let hi = (i + 11).min(chars.len());
        let semi = (i + 1..hi).find(|&j| chars[j] == ';');
        match semi.and_then(|j| entity(&chars[i + 1..j].iter().collect::<String>()).map(|c| (j, c))) {
            Some((j, c)) => {
                out.push(c);
                i = j + 1;
            }
            None => {
                out.push('&');
                i += 1;
            }
        }
    }
    out
}

/// Inline formatting tags, which mean nothing in a terminal.
const FORMAT_TAGS: [&str; 25] = [
    "b", "strong", "i", "em", "u", "s", "strike", "del", "ins", "mark", "small", "big", "sub", "sup", "code", "kbd",
    "samp", "var", "tt", "span", "font", "q", "abbr", "cite", "pre",
];

/// The tag starting at `start` (`<name ...>` or `</name>`): its name and where it ends.
fn tag_at(chars: &[char], start: usize) -> Option<(String, usize)> {
    let mut i = start + 1;
    if chars.get(i) == Some(&'/') {
        i += 1;
    }
    let name_start = i;
    while chars.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
        i += 1;
    }
    if i == name_start {
        return None;
    }
    let name: String = chars[name_start..i].iter().collect();
    while let Some(&c) = chars.get(i) {
        match c {
            '>' => return Some((name, i + 1)),
            '<' => return None,
            _ => i += 1,
        }
    }
    None
}

/// Formatting tags removed and `<br>` made a space; other `<...>` text stays.
fn strip_tags(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '<' {
            if let Some((name, end)) = tag_at(&chars, i) {
                let lower = name.to_ascii_lowercase();
                if lower == "br" || FORMAT_TAGS.contains(&lower.as_str()) {
                    if lower == "br" {
                        out.push(' ');
                    }
                    i = end;
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// A backticked label's Markdown emphasis removed (`*`, `_` kept inside words).
fn strip_markdown(s: &str) -> String {
    let s = s.replace('`', "").replace("**", "").replace("__", "");
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let in_word = i > 0 && chars[i - 1].is_alphanumeric() && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if (c == '*' || c == '_') && !in_word {
            continue;
        }
        out.push(c);
    }
    out.trim().to_string()
}

fn unwrap(s: &str, open: char, close: char) -> Option<&str> {
    (s.chars().count() >= 2 && s.starts_with(open) && s.ends_with(close))
        .then(|| &s[open.len_utf8()..s.len() - close.len_utf8()])
}

/// A label as written (`"quoted"`, with tags, entities or a backticked Markdown string) as
/// it is shown.
pub fn clean_label(raw: &str) -> String {
    let tagless = strip_tags(raw.trim());
    let trimmed = tagless.trim();
    let unquoted = unwrap(trimmed, '"', '"')
        .or_else(|| unwrap(trimmed, '\'', '\''))
        .unwrap_or(trimmed)
        .trim();
    match unwrap(unquoted, '`', '`') {
        Some(md) => decode_entities(&strip_markdown(md.trim())),
        None => decode_entities(unquoted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_on_semicolons_outside_quotes_and_stop_at_comments() {
        let st = statements("---\ntitle: x\n---\nsequenceDiagram\n A->>B: \"a;b\"; B->>A %% note\n%% all\n");
        assert_eq!(st, ["sequenceDiagram", "A->>B: \"a;b\"", "B->>A"]);
        assert_eq!(
            header_kind("  \n%% c\nSequenceDiagram\nA->>B").as_deref(),
            Some("sequencediagram")
        );
        assert!(
            statements("---\nsequenceDiagram").is_empty(),
            "an open frontmatter hides the rest"
        );
        let src = "\n---\nconfig:\n  title: no\ntitle: \"Login flow\"\n---\ngraph TD\nA-->B";
        assert_eq!(title(src).as_deref(), Some("Login flow"));
        assert_eq!(body(src), "graph TD\nA-->B");
        assert_eq!(title("graph TD\nA-->B"), None);
    }

    #[test]
    fn labels_lose_markup_and_decode_entities() {
        assert_eq!(
            decode_entities("a &lt;b&gt; &#65;&#x42; &amp;lt; &bogus; &"),
            "a <b> AB &lt; &bogus; &"
        );
        assert_eq!(decode_entities("&#0;"), "&#0;", "no control characters");
        assert_eq!(clean_label(" \"<b>Big</b> one<br>two\" "), "Big one two");
        assert_eq!(clean_label("'Vec<String>'"), "Vec<String>");
        assert_eq!(clean_label("`**bold** snake_case _x_`"), "bold snake_case x");
        assert_eq!(strip_controls("a\x1b[31mb\tc"), "a[31mb\tc");
    }
}
