//! The sidebar's session tree: every branch with each entry's first line; entries on the active
//! branch link into the main view, the others are listed dimmed.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::render::{entry_summary, escape};
use super::{str_field, SessionDoc};

enum Work {
    /// Emit entries starting here, following single children; a fork opens one list per child.
    Chain(usize),
    Raw(&'static str),
}

pub(crate) fn tree_html(doc: &SessionDoc, path: &[usize], labels: &HashMap<String, String>) -> String {
    let by_id = doc.index_by_id();
    let n = doc.entries.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, e) in doc.entries.iter().enumerate() {
        if str_field(e, "id").is_none() {
            continue;
        }
        match str_field(e, "parentId").and_then(|p| by_id.get(p).copied()) {
            Some(p) if p != i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    let summaries: Vec<Option<(&str, String)>> = doc.entries.iter().map(entry_summary).collect();
    // Entries without a line of their own (labels, names, tool results) are skipped and their
    // children take their place.
    let visible_from = |start: &[usize]| {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = start.iter().rev().copied().collect();
        while let Some(c) = stack.pop() {
            if summaries[c].is_some() {
                out.push(c);
            } else {
                stack.extend(children[c].iter().rev());
            }
        }
        out
    };
    let on_path: HashSet<usize> = path.iter().copied().collect();
    let leaf = path.iter().rev().copied().find(|i| summaries[*i].is_some());
    let total = summaries.iter().filter(|s| s.is_some()).count();
    let off = summaries
        .iter()
        .enumerate()
        .filter(|(i, s)| s.is_some() && !on_path.contains(i))
        .count();

    let mut out = format!(
        "<details class=\"tree-box\" open><summary>Session tree <span class=\"count\">({total} entries, {off} on other branches)</span></summary>\
<input class=\"filter js-only\" id=\"tree-filter\" type=\"search\" placeholder=\"Filter\" aria-label=\"Filter the tree\">\
<ul class=\"tree\">"
    );
    let mut work: Vec<Work> = visible_from(&roots).into_iter().rev().map(Work::Chain).collect();
    while let Some(w) = work.pop() {
        let mut node = match w {
            Work::Raw(s) => {
                out.push_str(s);
                continue;
            }
            Work::Chain(i) => i,
        };
        loop {
            node_html(&mut out, doc, node, &summaries, &on_path, leaf, labels);
            let kids = visible_from(&children[node]);
            match kids.len() {
                0 => break,
                1 => node = kids[0],
                _ => {
                    for k in kids.into_iter().rev() {
                        work.push(Work::Raw("</ul></li>"));
                        work.push(Work::Chain(k));
                        work.push(Work::Raw("<li class=\"branch\"><ul>"));
                    }
                    break;
                }
            }
        }
    }
    out.push_str("</ul></details>");
    out
}

fn node_html(
    out: &mut String,
    doc: &SessionDoc,
    i: usize,
    summaries: &[Option<(&str, String)>],
    on_path: &HashSet<usize>,
    leaf: Option<usize>,
    labels: &HashMap<String, String>,
) {
    let Some((role, text)) = &summaries[i] else {
        return;
    };
    let id = str_field(&doc.entries[i], "id").unwrap_or("");
    let class = if leaf == Some(i) {
        "node leaf"
    } else if on_path.contains(&i) {
        "node"
    } else {
        "node off"
    };
    let label = labels
        .get(id)
        .map(|l| format!("<span class=\"lbl\">{}</span>", escape(l)))
        .unwrap_or_default();
    let inner = format!("{label}<span class=\"role\">{role}:</span> {}", escape(text));
    if on_path.contains(&i) {
        let _ = write!(
            out,
            "<li class=\"{class}\"><a href=\"#e-{}\">{inner}</a></li>",
            escape(id)
        );
    } else {
        let _ = write!(
            out,
            "<li class=\"{class}\" title=\"not on the active branch\">{inner}</li>"
        );
    }
}
