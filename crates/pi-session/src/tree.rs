//! The tree view of a session: every entry as a node with its children and label.

use std::collections::HashMap;

use crate::entry::Entry;
use crate::ids;

/// One node; `children` index into [`SessionTree::nodes`], oldest first.
#[derive(Debug, Clone)]
pub struct TreeNode<'a> {
    pub entry: &'a Entry,
    pub children: Vec<usize>,
    pub label: Option<&'a str>,
    pub label_timestamp: Option<&'a str>,
}

/// All entries as a forest. Node `i` is entry `i` of the session (file order). Entries whose
/// parent is null, themselves or missing are roots; so is the first entry of a parent cycle,
/// so every entry appears exactly once.
#[derive(Debug, Clone)]
pub struct SessionTree<'a> {
    pub nodes: Vec<TreeNode<'a>>,
    pub roots: Vec<usize>,
}

/// The latest label of an entry and when it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub label: String,
    pub timestamp: String,
}

pub(crate) fn build<'a>(
    entries: &'a [Entry],
    by_id: &HashMap<String, usize>,
    labels: &'a HashMap<String, Label>,
) -> SessionTree<'a> {
    let mut nodes: Vec<TreeNode<'a>> = entries
        .iter()
        .map(|entry| {
            let label = labels.get(&entry.id);
            TreeNode {
                entry,
                children: Vec::new(),
                label: label.map(|l| l.label.as_str()),
                label_timestamp: label.map(|l| l.timestamp.as_str()),
            }
        })
        .collect();
    let mut parent_of: Vec<Option<usize>> = vec![None; entries.len()];
    let mut roots = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let parent = entry
            .parent_id
            .as_ref()
            .filter(|p| **p != entry.id)
            .and_then(|p| by_id.get(p).copied())
            // An id used twice: only the indexed entry is a parent.
            .filter(|&p| p != i);
        match parent {
            Some(p) => {
                nodes[p].children.push(i);
                parent_of[i] = Some(p);
            }
            None => roots.push(i),
        }
    }
    // Entries in a parent cycle are reachable from no root: break each cycle at its first
    // entry in file order.
    let mut seen = vec![false; entries.len()];
    mark(&nodes, &roots, &mut seen);
    for i in 0..entries.len() {
        if !seen[i] {
            if let Some(p) = parent_of[i].take() {
                nodes[p].children.retain(|&c| c != i);
            }
            roots.push(i);
            mark(&nodes, &[i], &mut seen);
        }
    }
    let times: Vec<i64> = entries
        .iter()
        .map(|e| ids::iso_to_ms(&e.timestamp).unwrap_or(0))
        .collect();
    for node in &mut nodes {
        node.children.sort_by_key(|&c| times[c]);
    }
    SessionTree { nodes, roots }
}

fn mark(nodes: &[TreeNode<'_>], from: &[usize], seen: &mut [bool]) {
    let mut stack: Vec<usize> = from.to_vec();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        stack.extend(nodes[i].children.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryKind;

    fn entry(id: &str, parent: Option<&str>, ts: &str) -> Entry {
        Entry {
            id: id.into(),
            parent_id: parent.map(str::to_string),
            timestamp: ts.into(),
            kind: EntryKind::SessionInfo {
                name: None,
                extra: Default::default(),
            },
        }
    }

    #[test]
    fn children_are_ordered_by_time_not_file_position() {
        let entries = vec![
            entry("r", None, "2026-01-01T00:00:00.000Z"),
            entry("late", Some("r"), "2026-01-01T00:00:09.000Z"),
            entry("early", Some("r"), "2026-01-01T00:00:01.000Z"),
        ];
        let by_id = entries.iter().enumerate().map(|(i, e)| (e.id.clone(), i)).collect();
        let labels = HashMap::from([(
            "late".to_string(),
            Label {
                label: "L".into(),
                timestamp: "x".into(),
            },
        )]);
        let tree = build(&entries, &by_id, &labels);
        assert_eq!(tree.roots, vec![0]);
        assert_eq!(tree.nodes[0].children, vec![2, 1]);
        assert_eq!(tree.nodes[1].label, Some("L"));
        assert_eq!(tree.nodes[2].label, None);
    }
}
