//! Where a flowchart's nodes go: ranks along the flow (longest path from the sources, edges
//! that close a cycle set aside), one placeholder per rank an edge skips, an order within each
//! rank by the parents' order, and cross positions that sit each node at the centre of its
//! parents (then parents at the centre of their children) without overlapping.
//!
//! Positions are in abstract coordinates: `main` runs along the flow (down or right), `cross`
//! across it; [`super::draw`] turns them into rows and columns.

use super::parse::{Direction, Flowchart};
use crate::width::visible_width;

/// A placed box: a node, or a placeholder a long edge passes through.
#[derive(Debug, Clone)]
pub struct Slot {
    /// The node, or `None` for a placeholder.
    pub node: Option<usize>,
    pub rank: usize,
    pub main: usize,
    pub main_size: usize,
    /// May be negative while placing; zero or more once laid out.
    pub cross: isize,
    pub cross_size: usize,
}

impl Slot {
    pub fn cross_mid(&self) -> isize {
        self.cross + (self.cross_size / 2) as isize
    }
}

/// One edge as a chain of slots, first to last (placeholders between).
#[derive(Debug, Clone)]
pub struct Route {
    pub edge: usize,
    pub slots: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Layout {
    pub slots: Vec<Slot>,
    /// Edges that follow the flow.
    pub routes: Vec<Route>,
    /// Edges that close a cycle (drawn around the side), by edge index.
    pub back: Vec<usize>,
    /// Where each rank starts along the flow, and its size.
    pub ranks: Vec<(usize, usize)>,
}

/// Box size of a node: (along the flow, across it).
fn node_size(label: &str, direction: Direction) -> (usize, usize) {
    let w = visible_width(label) + 4;
    match direction {
        Direction::Down => (3, w),
        Direction::Right => (w, 3),
    }
}

pub fn layout(chart: &Flowchart) -> Layout {
    let n = chart.nodes.len();
    let (forward, back) = split_back_edges(chart);
    let rank = ranks(n, &forward, chart);
    // Slots: the nodes, then one placeholder per skipped rank of each long edge.
    let mut slots: Vec<Slot> = (0..n)
        .map(|i| {
            let (m, c) = node_size(&chart.nodes[i].label, chart.direction);
            Slot {
                node: Some(i),
                rank: rank[i],
                main: 0,
                main_size: m,
                cross: 0,
                cross_size: c,
            }
        })
        .collect();
    let mut routes = Vec::new();
    for &e in &forward {
        let edge = &chart.edges[e];
        let mut chain = vec![edge.from];
        for r in rank[edge.from] + 1..rank[edge.to] {
            slots.push(Slot {
                node: None,
                rank: r,
                main: 0,
                main_size: 0,
                cross: 0,
                cross_size: 1,
            });
            chain.push(slots.len() - 1);
        }
        chain.push(edge.to);
        routes.push(Route { edge: e, slots: chain });
    }
    let rank_count = slots.iter().map(|s| s.rank + 1).max().unwrap_or(0);
    let order = order_ranks(&slots, &routes, rank_count);
    let ranks = place_main(&mut slots, &routes, &order, chart);
    place_cross(&mut slots, &routes, &order, chart);
    Layout {
        slots,
        routes,
        back,
        ranks,
    }
}

/// Forward edges (a DAG) and the edges that close a cycle, found by a depth-first walk in
/// node order; self-loops count as closing one.
fn split_back_edges(chart: &Flowchart) -> (Vec<usize>, Vec<usize>) {
    let n = chart.nodes.len();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, e) in chart.edges.iter().enumerate() {
        out[e.from].push(i);
    }
    // 0 unseen, 1 on the walk's path, 2 done.
    let mut state = vec![0u8; n];
    let mut back = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some((v, next)) = stack.last_mut() {
            let v = *v;
            if let Some(&e) = out[v].get(*next) {
                *next += 1;
                let to = chart.edges[e].to;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => back.push(e),
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    let forward = (0..chart.edges.len()).filter(|e| !back.contains(e)).collect();
    (forward, back)
}

/// Each node's rank: the longest path to it from a node nothing points at.
fn ranks(n: usize, forward: &[usize], chart: &Flowchart) -> Vec<usize> {
    let mut indegree = vec![0usize; n];
    for &e in forward {
        indegree[chart.edges[e].to] += 1;
    }
    let mut rank = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).rev().collect();
    while let Some(v) = ready.pop() {
        for &e in forward.iter().filter(|&&e| chart.edges[e].from == v) {
            let to = chart.edges[e].to;
            rank[to] = rank[to].max(rank[v] + 1);
            indegree[to] -= 1;
            if indegree[to] == 0 {
                ready.push(to);
            }
        }
    }
    rank
}

/// The slots of each rank in drawing order: the first rank as written, each next one by the
/// mean position of its parents (ties as written).
fn order_ranks(slots: &[Slot], routes: &[Route], rank_count: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); rank_count];
    for (i, s) in slots.iter().enumerate() {
        order[s.rank].push(i);
    }
    let mut position = vec![0.0f64; slots.len()];
    for (p, &s) in order.first().map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
        position[s] = p as f64;
    }
    for rank in order.iter_mut().skip(1) {
        let key = |s: usize| -> f64 {
            let parents: Vec<f64> = routes
                .iter()
                .flat_map(|rt| rt.slots.windows(2))
                .filter(|w| w[1] == s)
                .map(|w| position[w[0]])
                .collect();
            if parents.is_empty() {
                f64::MAX
            } else {
                parents.iter().sum::<f64>() / parents.len() as f64
            }
        };
        let mut keyed: Vec<(f64, usize)> = rank.iter().map(|&s| (key(s), s)).collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        *rank = keyed.into_iter().map(|(_, s)| s).collect();
        for (p, &s) in rank.iter().enumerate() {
            position[s] = p as f64;
        }
    }
    order
}

/// Rows (down) or columns (right) between ranks: room for the edge and, going right, its label.
fn rank_gap(chart: &Flowchart, routes: &[Route], slots: &[Slot], rank: usize) -> usize {
    match chart.direction {
        Direction::Down => 2,
        Direction::Right => {
            let label = routes
                .iter()
                .filter(|rt| slots[rt.slots[0]].rank <= rank && slots[*rt.slots.last().unwrap_or(&0)].rank > rank)
                .filter_map(|rt| chart.edges[rt.edge].label.as_deref())
                .map(visible_width)
                .max()
                .unwrap_or(0);
            (label + 3).max(4)
        }
    }
}

/// Main-axis positions: each rank as deep as its largest box; placeholders span the rank.
fn place_main(slots: &mut [Slot], routes: &[Route], order: &[Vec<usize>], chart: &Flowchart) -> Vec<(usize, usize)> {
    let mut ranks = Vec::with_capacity(order.len());
    let mut at = 0;
    for (r, members) in order.iter().enumerate() {
        let size = members.iter().map(|&s| slots[s].main_size).max().unwrap_or(1).max(1);
        for &s in members {
            slots[s].main = at;
            if slots[s].node.is_none() {
                slots[s].main_size = size;
            }
        }
        ranks.push((at, size));
        at += size + rank_gap(chart, routes, slots, r);
    }
    ranks
}

/// The free space after a slot before the next one across: room for a label written after
/// an arrow going down.
fn gap_after(slot: usize, slots: &[Slot], routes: &[Route], chart: &Flowchart) -> usize {
    let base = if slots[slot].node.is_some() { 3 } else { 2 };
    if chart.direction != Direction::Down {
        return if slots[slot].node.is_some() { 1 } else { 0 };
    }
    let label = routes
        .iter()
        .filter(|rt| rt.slots.get(1) == Some(&slot))
        .filter_map(|rt| chart.edges[rt.edge].label.as_deref())
        .map(visible_width)
        .max();
    match label {
        Some(w) => {
            let s = &slots[slot];
            let end = s.cross_size / 2 + 2 + w;
            base.max(end.saturating_sub(s.cross_size) + 1)
        }
        None => base,
    }
}

/// Cross-axis positions: a pass along the flow puts each slot at the centre of its parents,
/// a pass back puts parents at the centre of their children; slots in a rank never overlap.
fn place_cross(slots: &mut [Slot], routes: &[Route], order: &[Vec<usize>], chart: &Flowchart) {
    let links: Vec<(usize, usize)> = routes
        .iter()
        .flat_map(|rt| rt.slots.windows(2).map(|w| (w[0], w[1])))
        .collect();
    // Packed first.
    for members in order {
        let mut at = 0isize;
        for &s in members {
            slots[s].cross = at;
            at += (slots[s].cross_size + gap_after(s, slots, routes, chart)) as isize;
        }
    }
    let passes: [(bool, Vec<usize>); 2] = [
        (true, (1..order.len()).collect()),
        (false, (0..order.len().saturating_sub(1)).rev().collect()),
    ];
    for (down, ranks) in passes {
        for r in ranks {
            let desired: Vec<Option<f64>> = order[r]
                .iter()
                .map(|&s| {
                    let near: Vec<f64> = links
                        .iter()
                        .filter_map(|&(a, b)| match (down, a == s, b == s) {
                            (true, _, true) => Some(a),
                            (false, true, _) => Some(b),
                            _ => None,
                        })
                        .map(|o| slots[o].cross_mid() as f64)
                        .collect();
                    // Whole-cell middles, as the lines are drawn: a line leaves a parent's middle
                    // and enters this slot's middle in the same column when they line up.
                    (!near.is_empty()).then(|| {
                        (near.iter().sum::<f64>() / near.len() as f64).round() - (slots[s].cross_size / 2) as f64
                    })
                })
                .collect();
            if desired.iter().all(Option::is_none) {
                continue;
            }
            spread(slots, &order[r], &desired, routes, chart);
        }
    }
    // No negative positions: everything moves right by the same amount.
    let min = slots.iter().map(|s| s.cross).min().unwrap_or(0);
    for s in slots.iter_mut() {
        s.cross -= min;
    }
}

/// Put a rank's slots as near their desired starts as order and gaps allow: runs that would
/// overlap move together, centred on what their members want (pool adjacent violators).
fn spread(slots: &mut [Slot], members: &[usize], desired: &[Option<f64>], routes: &[Route], chart: &Flowchart) {
    // Slots with no wish keep their distance from the one before.
    let mut want = Vec::with_capacity(members.len());
    for (k, &s) in members.iter().enumerate() {
        let w = desired[k].unwrap_or_else(|| match k {
            0 => slots[s].cross as f64,
            _ => {
                let p = members[k - 1];
                want[k - 1] + (slots[p].cross_size + gap_after(p, slots, routes, chart)) as f64
            }
        });
        want.push(w);
    }
    // Offsets of each slot from the start of a run if packed tight.
    struct Run {
        first: usize,
        len: usize,
        start: f64,
    }
    let mut offset = vec![0.0f64; members.len()];
    let mut runs: Vec<Run> = Vec::new();
    for k in 0..members.len() {
        runs.push(Run {
            first: k,
            len: 1,
            start: want[k],
        });
        offset[k] = 0.0;
        while runs.len() > 1 {
            let last = &runs[runs.len() - 1];
            let prev = &runs[runs.len() - 2];
            let prev_end_k = prev.first + prev.len - 1;
            let p = members[prev_end_k];
            let prev_end =
                prev.start + offset[prev_end_k] + (slots[p].cross_size + gap_after(p, slots, routes, chart)) as f64;
            if prev_end <= last.start + 1e-9 {
                break;
            }
            // Merge: the last run follows the previous one tightly; the start is the mean of
            // what each member wants minus its offset.
            let (first, len) = (prev.first, prev.len + last.len);
            let base = prev_end - prev.start;
            for o in offset.iter_mut().skip(last.first).take(last.len) {
                *o += base;
            }
            runs.pop();
            let start = (first..first + len).map(|j| want[j] - offset[j]).sum::<f64>() / len as f64;
            if let Some(run) = runs.last_mut() {
                run.len = len;
                run.start = start;
            }
        }
    }
    // Whole cells (the caller moves everything right of zero at the end).
    for run in &runs {
        for j in run.first..run.first + run.len {
            slots[members[j]].cross = (run.start + offset[j]).round() as isize;
        }
    }
    // Rounding may not push a slot into the previous one.
    for k in 1..members.len() {
        let p = members[k - 1];
        let min = slots[p].cross + (slots[p].cross_size + gap_after(p, slots, routes, chart)) as isize;
        if slots[members[k]].cross < min {
            slots[members[k]].cross = min;
        }
    }
}
