//! `Boxed`: a container that pads its children and paints a background behind them.

use crate::component::{render_lines, Component, Container, Frame, LineCache};
use crate::style::{apply_background, Color};

/// Children drawn inside padding, optionally on a background. The result is cached until
/// `invalidate` or a change through `children_mut`.
#[derive(Default)]
pub struct Boxed {
    children: Container,
    padding_x: usize,
    padding_y: usize,
    bg: Option<Color>,
    cache: LineCache,
}

impl Boxed {
    pub fn new(padding_x: usize, padding_y: usize, bg: Option<Color>) -> Self {
        Boxed {
            padding_x,
            padding_y,
            bg,
            ..Default::default()
        }
    }

    pub fn push(&mut self, c: Box<dyn Component>) {
        self.children.push(c);
        self.cache.clear();
    }

    /// Mutable access to the children (drops the cache).
    pub fn children_mut(&mut self) -> &mut Container {
        self.cache.clear();
        &mut self.children
    }

    pub fn set_background(&mut self, bg: Option<Color>) {
        self.bg = bg;
        self.cache.clear();
    }
}

impl Component for Boxed {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if let Some(l) = self.cache.get(width) {
            out.push(l);
            return;
        }
        let inner = width.saturating_sub(self.padding_x * 2).max(1);
        let pad = " ".repeat(self.padding_x);
        let body = render_lines(&mut self.children, inner);
        let mut lines = Vec::with_capacity(body.len() + 2 * self.padding_y);
        if !body.is_empty() {
            lines.extend(std::iter::repeat_n(String::new(), self.padding_y));
            lines.extend(body.into_iter().map(|l| format!("{pad}{l}")));
            lines.extend(std::iter::repeat_n(String::new(), self.padding_y));
        }
        if let Some(bg) = self.bg {
            lines = lines.iter().map(|l| apply_background(l, width, bg)).collect();
        }
        out.push(self.cache.set(width, lines));
    }

    fn invalidate(&mut self) {
        self.cache.clear();
        self.children.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::Text;

    #[test]
    fn pads_children() {
        let mut b = Boxed::new(2, 1, None);
        b.push(Box::new(Text::new("hi")));
        assert_eq!(render_lines(&mut b, 10), ["", "  hi", ""]);
        let mut b = Boxed::new(1, 0, Some(Color::Basic(4)));
        b.push(Box::new(Text::new("x")));
        assert_eq!(render_lines(&mut b, 4), ["\x1b[44m x  \x1b[49m"]);
    }
}
