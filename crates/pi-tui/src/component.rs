//! Components and frames: the `Component` trait, the chunked `Frame` a render produces (cached
//! component lines are shared, not copied), `Container`, and a per-width line cache.

use std::any::Any;
use std::sync::Arc;

use crate::input::InputEvent;

/// Rendered lines shared between a component's cache and the frames that show them.
pub type Lines = Arc<[String]>;

/// Marker a focused component writes where the hardware cursor belongs (APC, zero width).
pub const CURSOR_MARKER: &str = "\x1b_pi:c\x07";

/// Lets `dyn Component` be downcast to its concrete type.
pub trait AsAny: Any {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Something that draws itself as lines of a given width and may take input.
///
/// Every line must fit in `width` columns (visible width; escape sequences are free).
pub trait Component: AsAny + Send {
    /// Append this component's lines for `width` columns to `out`. Components that keep a
    /// cache push the cached [`Lines`] so unchanged content costs nothing to diff.
    fn render(&mut self, width: usize, out: &mut Frame);

    /// Handle input; returns whether it was consumed.
    fn handle_input(&mut self, _event: &InputEvent) -> bool {
        false
    }

    /// Drop render caches (e.g. after a theme change).
    fn invalidate(&mut self) {}

    /// Whether key release events should be delivered (they are filtered otherwise).
    fn wants_key_release(&self) -> bool {
        false
    }

    /// Focus changed; a focused component shows its cursor with [`CURSOR_MARKER`].
    fn set_focused(&mut self, _focused: bool) {}

    /// A mouse report over this component's lines (fullscreen); whether it took it. Most
    /// components take none, and the report goes on to the transcript or the selection.
    fn handle_mouse(&mut self, _m: &crate::component_mouse::ComponentMouse) -> bool {
        false
    }
}

impl dyn Component {
    pub fn downcast_ref<T: Component>(&self) -> Option<&T> {
        self.as_any().downcast_ref()
    }
    pub fn downcast_mut<T: Component>(&mut self) -> Option<&mut T> {
        self.as_any_mut().downcast_mut()
    }
}

/// Render a component to a plain vector of lines (for composition and tests).
pub fn render_lines(c: &mut dyn Component, width: usize) -> Vec<String> {
    let mut f = Frame::new();
    c.render(width, &mut f);
    f.to_vec()
}

/// The lines of one render, kept as a list of shared chunks.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    chunks: Vec<Lines>,
    /// Start line of each chunk.
    offsets: Vec<usize>,
    loose: Vec<String>,
    len: usize,
}

impl Frame {
    pub fn new() -> Self {
        Self::default()
    }

    /// Append shared lines (no copy).
    pub fn push(&mut self, lines: Lines) {
        if lines.is_empty() {
            return;
        }
        self.seal();
        self.offsets.push(self.len);
        self.len += lines.len();
        self.chunks.push(lines);
    }

    /// Append one line.
    pub fn push_line(&mut self, line: impl Into<String>) {
        self.loose.push(line.into());
    }

    pub fn extend_lines(&mut self, lines: impl IntoIterator<Item = String>) {
        self.loose.extend(lines);
    }

    fn seal(&mut self) {
        if !self.loose.is_empty() {
            let lines: Lines = std::mem::take(&mut self.loose).into();
            self.offsets.push(self.len);
            self.len += lines.len();
            self.chunks.push(lines);
        }
    }

    /// Finish building (moves loose lines into a chunk).
    pub fn sealed(mut self) -> Self {
        self.seal();
        self
    }

    pub fn len(&self) -> usize {
        self.len + self.loose.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn chunks(&self) -> &[Lines] {
        &self.chunks
    }

    fn chunk_of(&self, i: usize) -> usize {
        match self.offsets.binary_search(&i) {
            Ok(c) => c,
            Err(c) => c - 1,
        }
    }

    /// Line `i` (call on a sealed frame for lines pushed with `push_line`).
    pub fn line(&self, i: usize) -> Option<&str> {
        if i >= self.len {
            return self.loose.get(i - self.len).map(String::as_str);
        }
        let c = self.chunk_of(i);
        Some(self.chunks[c][i - self.offsets[c]].as_str())
    }

    /// Lines from `start` to the end.
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = &String> {
        let (first_chunk, skip) = if start >= self.len {
            (self.chunks.len(), start - self.len)
        } else {
            let c = self.chunk_of(start);
            (c, start - self.offsets[c])
        };
        let loose_skip = start.saturating_sub(self.len);
        self.chunks[first_chunk.min(self.chunks.len())..]
            .iter()
            .enumerate()
            .flat_map(move |(k, ch)| ch.iter().skip(if k == 0 { skip } else { 0 }))
            .chain(self.loose.iter().skip(loose_skip))
    }

    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.iter_from(0)
    }

    pub fn to_vec(&self) -> Vec<String> {
        self.iter().cloned().collect()
    }

    /// Split into the first `at` lines (chunks kept shared where possible) and the rest as
    /// owned lines.
    pub fn split_tail(mut self, at: usize) -> (Frame, Vec<String>) {
        self.seal();
        if at >= self.len {
            return (self, Vec::new());
        }
        let tail: Vec<String> = self.iter_from(at).cloned().collect();
        let mut head = Frame::new();
        for (k, ch) in self.chunks.iter().enumerate() {
            let start = self.offsets[k];
            if start >= at {
                break;
            }
            if start + ch.len() <= at {
                head.push(ch.clone());
            } else {
                head.extend_lines(ch[..at - start].iter().cloned());
            }
        }
        (head.sealed(), tail)
    }

    /// Index of the first line where `self` and `other` differ (None when identical).
    /// Chunks shared by both frames at the same position are skipped without comparing.
    pub fn first_difference(&self, other: &Frame) -> Option<usize> {
        let (mut ca, mut cb) = (0usize, 0usize);
        let (mut oa, mut ob) = (0usize, 0usize);
        let mut idx = 0usize;
        loop {
            let a = self.chunks.get(ca);
            let b = other.chunks.get(cb);
            match (a, b) {
                (None, None) => return None,
                (None, Some(_)) | (Some(_), None) => return Some(idx),
                (Some(a), Some(b)) => {
                    if oa == 0 && ob == 0 && Arc::ptr_eq(a, b) {
                        idx += a.len();
                        ca += 1;
                        cb += 1;
                        continue;
                    }
                    if a[oa] != b[ob] {
                        return Some(idx);
                    }
                    idx += 1;
                    oa += 1;
                    ob += 1;
                    if oa == a.len() {
                        ca += 1;
                        oa = 0;
                    }
                    if ob == b.len() {
                        cb += 1;
                        ob = 0;
                    }
                }
            }
        }
    }

    /// For frames of equal length: index of the last differing line.
    pub fn last_difference(&self, other: &Frame) -> Option<usize> {
        if self.len != other.len {
            return Some(self.len.max(other.len).saturating_sub(1));
        }
        let (mut ca, mut cb) = (self.chunks.len(), other.chunks.len());
        // Offsets counted from the end of the current chunk.
        let (mut ra, mut rb) = (0usize, 0usize);
        let mut idx = self.len;
        while ca > 0 && cb > 0 {
            let a = &self.chunks[ca - 1];
            let b = &other.chunks[cb - 1];
            if ra == 0 && rb == 0 && Arc::ptr_eq(a, b) {
                idx -= a.len();
                ca -= 1;
                cb -= 1;
                continue;
            }
            let la = &a[a.len() - 1 - ra];
            let lb = &b[b.len() - 1 - rb];
            idx -= 1;
            if la != lb {
                return Some(idx);
            }
            ra += 1;
            rb += 1;
            if ra == a.len() {
                ca -= 1;
                ra = 0;
            }
            if rb == b.len() {
                cb -= 1;
                rb = 0;
            }
        }
        None
    }
}

/// Cached lines for one width.
#[derive(Debug, Clone, Default)]
pub struct LineCache {
    width: usize,
    lines: Option<Lines>,
}

impl LineCache {
    pub fn get(&self, width: usize) -> Option<Lines> {
        if self.width == width {
            self.lines.clone()
        } else {
            None
        }
    }

    pub fn set(&mut self, width: usize, lines: Vec<String>) -> Lines {
        let l: Lines = lines.into();
        self.width = width;
        self.lines = Some(l.clone());
        l
    }

    pub fn clear(&mut self) {
        self.lines = None;
    }
}

/// Children rendered one after another.
#[derive(Default)]
pub struct Container {
    children: Vec<Box<dyn Component>>,
}

impl Container {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, c: Box<dyn Component>) {
        self.children.push(c);
    }

    pub fn insert(&mut self, index: usize, c: Box<dyn Component>) {
        let i = index.min(self.children.len());
        self.children.insert(i, c);
    }

    pub fn remove(&mut self, index: usize) -> Option<Box<dyn Component>> {
        (index < self.children.len()).then(|| self.children.remove(index))
    }

    pub fn clear(&mut self) {
        self.children.clear();
    }

    pub fn len(&self) -> usize {
        self.children.len()
    }

    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut (dyn Component + 'static)> {
        self.children.get_mut(index).map(|b| &mut **b)
    }

    pub fn last_mut(&mut self) -> Option<&mut (dyn Component + 'static)> {
        self.children.last_mut().map(|b| &mut **b)
    }

    /// The child at `index` as its concrete type.
    pub fn child_mut<T: Component>(&mut self, index: usize) -> Option<&mut T> {
        self.children.get_mut(index)?.as_mut().downcast_mut::<T>()
    }

    pub fn children_mut(&mut self) -> &mut Vec<Box<dyn Component>> {
        &mut self.children
    }
}

impl Component for Container {
    fn render(&mut self, width: usize, out: &mut Frame) {
        for c in &mut self.children {
            c.render(width, out);
        }
    }

    fn invalidate(&mut self) {
        for c in &mut self.children {
            c.invalidate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(chunks: &[&[&str]]) -> Frame {
        let mut f = Frame::new();
        for c in chunks {
            let v: Vec<String> = c.iter().map(|s| s.to_string()).collect();
            f.push(v.into());
        }
        f
    }

    #[test]
    fn differences() {
        let shared: Lines = vec!["a".to_string(), "b".to_string()].into();
        let mut f1 = Frame::new();
        f1.push(shared.clone());
        f1.push_line("c");
        let f1 = f1.sealed();
        let mut f2 = Frame::new();
        f2.push(shared);
        f2.push_line("C");
        let f2 = f2.sealed();
        assert_eq!(f1.first_difference(&f2), Some(2));
        assert_eq!(f1.last_difference(&f2), Some(2));
        assert_eq!(f1.first_difference(&f1.clone()), None);
        // Same text in differently shaped chunks is equal.
        let a = frame(&[&["x", "y"], &["z"]]);
        let b = frame(&[&["x"], &["y", "z"]]);
        assert_eq!(a.first_difference(&b), None);
        assert_eq!(a.last_difference(&b), None);
        let c = frame(&[&["x"], &["q", "z"]]);
        assert_eq!(a.first_difference(&c), Some(1));
        assert_eq!(a.last_difference(&c), Some(1));
        let d = frame(&[&["x", "y"]]);
        assert_eq!(a.first_difference(&d), Some(2));
    }

    #[test]
    fn access_and_split() {
        let f = frame(&[&["a", "b"], &["c"], &["d", "e"]]);
        assert_eq!(f.line(3), Some("d"));
        assert_eq!(f.iter_from(1).cloned().collect::<Vec<_>>(), ["b", "c", "d", "e"]);
        let (head, tail) = f.split_tail(3);
        assert_eq!(head.to_vec(), ["a", "b", "c"]);
        assert_eq!(tail, ["d", "e"]);
        let f = frame(&[&["a", "b"], &["c"], &["d", "e"]]);
        let (head, tail) = f.split_tail(1);
        assert_eq!(head.to_vec(), ["a"]);
        assert_eq!(tail, ["b", "c", "d", "e"]);
    }
}
