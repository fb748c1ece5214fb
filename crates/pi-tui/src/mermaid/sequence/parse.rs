//! Reading a `sequenceDiagram`: participants (declared, `as` aliases, or met in a message or
//! note), messages (all arrow kinds, `+`/`-` activation marks, to oneself), notes, the
//! `loop`/`alt`/`opt`/`par`/`critical`/`break` blocks with `else`/`and`/`option`,
//! `activate`/`deactivate` and `autonumber`. Leniently, as pi 1.6 reads it: a statement that
//! cannot be read is left out and named in the warnings.

use super::super::statements::{clean_label, decode_entities, first_word, statements};

/// At most this many participants and items; a longer diagram is drawn up to there.
const MAX_PARTICIPANTS: usize = 128;
const MAX_ITEMS: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    Arrow,
    Cross,
}

/// The arrows, longest first so `-->>` is not read as `-->`: (text, dashed, head).
const ARROWS: [(&str, bool, Head); 8] = [
    ("-->>", true, Head::Arrow),
    ("->>", false, Head::Arrow),
    ("--x", true, Head::Cross),
    ("-x", false, Head::Cross),
    ("--)", true, Head::Arrow),
    ("-)", false, Head::Arrow),
    ("-->", true, Head::Arrow),
    ("->", false, Head::Arrow),
];

/// Where a note sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Over(usize, usize),
    LeftOf(usize),
    RightOf(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Message {
        from: usize,
        to: usize,
        text: Option<String>,
        dashed: bool,
        head: Head,
    },
    Note {
        anchor: Anchor,
        text: String,
    },
    /// A block's start, a branch of it (`else`, `and`, `option`) or its `end`.
    Divider(String),
}

/// A lifeline drawn double from item `from` to item `to` (to the end while open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activation {
    pub at: usize,
    pub from: usize,
    pub to: Option<usize>,
}

#[derive(Debug, Default)]
pub struct Sequence {
    /// Shown names, in order of appearance.
    pub labels: Vec<String>,
    ids: Vec<String>,
    pub items: Vec<Item>,
    pub activations: Vec<Activation>,
    /// Why the diagram stops early, once a cap is reached.
    truncated: Option<String>,
    /// Statements left out, and a cap reached.
    pub warnings: Vec<String>,
}

impl Sequence {
    fn participant(&mut self, id: &str, label: Option<String>) -> Option<usize> {
        if let Some(i) = self.ids.iter().position(|p| p == id) {
            if let Some(label) = label {
                self.labels[i] = label;
            }
            return Some(i);
        }
        if self.ids.len() >= MAX_PARTICIPANTS {
            self.truncated
                .get_or_insert_with(|| format!("participant cap ({MAX_PARTICIPANTS}) reached"));
            return None;
        }
        self.ids.push(id.to_string());
        self.labels.push(label.unwrap_or_else(|| id.to_string()));
        Some(self.ids.len() - 1)
    }

    fn push(&mut self, item: Item) {
        if self.items.len() >= MAX_ITEMS {
            self.truncated
                .get_or_insert_with(|| format!("item cap ({MAX_ITEMS}) reached"));
        } else {
            self.items.push(item);
        }
    }

    fn drop_statement(&mut self, st: &str) {
        if self.truncated.is_none() {
            self.warnings.push(format!("dropped, unreadable statement: \"{st}\""));
        }
    }

    fn activate(&mut self, at: usize, from: usize) {
        self.activations.push(Activation { at, from, to: None });
    }

    /// Close the innermost open activation of `at`.
    fn deactivate(&mut self, at: usize, to: usize) {
        if let Some(a) = self.activations.iter_mut().rev().find(|a| a.at == at && a.to.is_none()) {
            a.to = Some(to);
        }
    }
}

/// Read a sequence diagram; `None` when it has no participants at all.
pub fn parse(src: &str) -> Option<Sequence> {
    let statements = statements(src);
    let mut seq = Sequence::default();
    let mut autonumber = false;
    let mut count = 0;
    // One entry per open block: whether it draws a divider at its `end`.
    let mut blocks: Vec<bool> = Vec::new();
    for st in statements.iter().skip(1) {
        let first = first_word(st);
        let lower = first.to_ascii_lowercase();
        let rest = st[first.len()..].trim();
        match lower.as_str() {
            "participant" | "actor" => {
                if rest.is_empty() {
                    seq.drop_statement(st);
                } else {
                    match rest.split_once(" as ") {
                        Some((id, label)) => seq.participant(id.trim(), Some(clean_label(label))),
                        None => seq.participant(rest, None),
                    };
                }
            }
            "autonumber" => autonumber = true,
            "activate" | "deactivate" => {
                // Applies from the row of the message before it.
                let who = seq.ids.iter().position(|p| p == rest);
                if let (Some(who), Some(last)) = (who, seq.items.len().checked_sub(1)) {
                    if lower == "activate" {
                        seq.activate(who, last);
                    } else {
                        seq.deactivate(who, last);
                    }
                }
            }
            // Nothing to draw.
            "create" | "destroy" | "title" | "acctitle" | "accdescr" | "links" | "link" | "properties" => {}
            "note" => match note(rest, &mut seq) {
                Some((anchor, text)) => seq.push(Item::Note { anchor, text }),
                None => seq.drop_statement(st),
            },
            "loop" | "alt" | "opt" | "par" | "critical" | "break" | "else" | "and" | "option" => {
                // A branch only divides a block that draws dividers.
                let branch = matches!(lower.as_str(), "else" | "and" | "option");
                if !branch {
                    blocks.push(true);
                }
                if !branch || blocks.last() == Some(&true) {
                    seq.push(Item::Divider(decode_entities(st)));
                }
            }
            "rect" | "box" => blocks.push(false),
            "end" => {
                if blocks.pop() == Some(true) {
                    seq.push(Item::Divider("end".to_string()));
                }
            }
            _ => match message(st, &mut seq) {
                None => seq.drop_statement(st),
                Some(m) => {
                    let mut text = m.text;
                    if autonumber {
                        count += 1;
                        text = Some(match text {
                            None => format!("{count}."),
                            Some(t) => format!("{count}. {t}"),
                        });
                    }
                    let at = seq.items.len();
                    seq.push(Item::Message {
                        from: m.from,
                        to: m.to,
                        text,
                        dashed: m.dashed,
                        head: m.head,
                    });
                    // `+` activates the receiver on this row, `-` ends the sender's; only when
                    // the message was kept.
                    if seq.items.len() == at + 1 {
                        if m.marks.contains('+') {
                            seq.activate(m.to, at);
                        }
                        if m.marks.contains('-') {
                            seq.deactivate(m.from, at);
                        }
                    }
                }
            },
        }
        if let Some(why) = &seq.truncated {
            let w = format!("diagram truncated: {why}");
            seq.warnings.push(w);
            break;
        }
    }
    (!seq.labels.is_empty()).then_some(seq)
}

/// `over A[,B]: text`, `left of A: text`, `right of A: text`.
fn note(rest: &str, seq: &mut Sequence) -> Option<(Anchor, String)> {
    let lower = rest.to_ascii_lowercase();
    let (kind, ids_and_text) = ["over ", "left of ", "right of "]
        .into_iter()
        .find(|k| lower.starts_with(k))
        .map(|k| (k, &rest[k.len()..]))?;
    let (ids, text) = ids_and_text.split_once(':')?;
    let text = decode_entities(text.trim());
    let parts: Vec<&str> = ids.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let a = seq.participant(parts.first()?, None)?;
    let anchor = match kind {
        "left of " => Anchor::LeftOf(a),
        "right of " => Anchor::RightOf(a),
        _ => {
            let b = match parts.get(1) {
                Some(id) => seq.participant(id, None)?,
                None => a,
            };
            Anchor::Over(a.min(b), a.max(b))
        }
    };
    Some((anchor, text))
}

struct Message {
    from: usize,
    to: usize,
    text: Option<String>,
    dashed: bool,
    head: Head,
    marks: String,
}

/// `A->>B: text`, with `+`/`-` marks after the arrow.
fn message(st: &str, seq: &mut Sequence) -> Option<Message> {
    let chars: Vec<char> = st.chars().collect();
    let found = (0..chars.len()).find_map(|pos| {
        ARROWS.iter().find_map(|&(op, dashed, head)| {
            let len = op.chars().count();
            if !chars[pos..].iter().take(len).copied().eq(op.chars()) {
                return None;
            }
            // `-x` or `-)` inside a hyphenated name (`pre-x->>B`) is not an arrow.
            let after = chars.get(pos + len);
            if (op.ends_with('x') || op.ends_with(')')) && matches!(after, Some('-' | '>')) {
                return None;
            }
            Some((pos, len, dashed, head))
        })
    })?;
    let (pos, len, dashed, head) = found;
    let from_id: String = chars[..pos].iter().collect();
    let from_id = from_id.trim();
    if from_id.is_empty() {
        return None;
    }
    let after: String = chars[pos + len..].iter().collect();
    let after = after.trim_start();
    let marks: String = after.chars().take_while(|c| matches!(c, '+' | '-')).collect();
    let rest = &after[marks.len()..];
    let (to_id, text) = match rest.split_once(':') {
        Some((to, text)) => (to.trim(), Some(decode_entities(text.trim())).filter(|t| !t.is_empty())),
        None => (rest.trim(), None),
    };
    if to_id.is_empty() {
        return None;
    }
    let from = seq.participant(from_id, None)?;
    let to = seq.participant(to_id, None)?;
    Some(Message {
        from,
        to,
        text,
        dashed,
        head,
        marks,
    })
}
