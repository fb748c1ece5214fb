//! Static text components: wrapped `Text` (padding, background), one-line `TruncatedText`,
//! and `Spacer`.

use crate::component::{Component, Frame, LineCache};
use crate::style::{apply_background, Color};
use crate::width::{truncate_to_width, wrap_text};

/// Word-wrapped text with optional padding and background; rendered once per width.
#[derive(Debug, Clone, Default)]
pub struct Text {
    text: String,
    padding_x: usize,
    padding_y: usize,
    bg: Option<Color>,
    cache: LineCache,
}

impl Text {
    pub fn new(text: impl Into<String>) -> Self {
        Text {
            text: text.into(),
            ..Default::default()
        }
    }

    #[must_use]
    pub fn with_padding(mut self, x: usize, y: usize) -> Self {
        self.padding_x = x;
        self.padding_y = y;
        self
    }

    #[must_use]
    pub fn with_background(mut self, bg: Color) -> Self {
        self.bg = Some(bg);
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        let t = text.into();
        if t != self.text {
            self.text = t;
            self.cache.clear();
        }
    }

    pub fn set_background(&mut self, bg: Option<Color>) {
        self.bg = bg;
        self.cache.clear();
    }

    fn build(&self, width: usize) -> Vec<String> {
        if self.text.trim().is_empty() {
            return Vec::new();
        }
        let inner = width.saturating_sub(self.padding_x * 2).max(1);
        let pad = " ".repeat(self.padding_x);
        let mut lines = Vec::new();
        let blank = String::new();
        for _ in 0..self.padding_y {
            lines.push(blank.clone());
        }
        for l in wrap_text(&self.text, inner) {
            lines.push(format!("{pad}{l}"));
        }
        for _ in 0..self.padding_y {
            lines.push(blank.clone());
        }
        if let Some(bg) = self.bg {
            lines = lines.iter().map(|l| apply_background(l, width, bg)).collect();
        }
        lines
    }
}

impl Component for Text {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let lines = match self.cache.get(width) {
            Some(l) => l,
            None => {
                let built = self.build(width);
                self.cache.set(width, built)
            }
        };
        out.push(lines);
    }

    fn invalidate(&mut self) {
        self.cache.clear();
    }
}

/// One line cut to the width with an ellipsis.
#[derive(Debug, Clone, Default)]
pub struct TruncatedText {
    text: String,
    padding_x: usize,
}

impl TruncatedText {
    pub fn new(text: impl Into<String>) -> Self {
        TruncatedText {
            text: text.into(),
            padding_x: 0,
        }
    }

    #[must_use]
    pub fn with_padding(mut self, x: usize) -> Self {
        self.padding_x = x;
        self
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
    }
}

impl Component for TruncatedText {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let first = self.text.split('\n').next().unwrap_or("");
        let inner = width.saturating_sub(self.padding_x * 2);
        let pad = " ".repeat(self.padding_x);
        out.push_line(format!("{pad}{}", truncate_to_width(first, inner, "...")));
    }
}

/// `n` empty lines.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spacer(pub usize);

impl Component for Spacer {
    fn render(&mut self, _width: usize, out: &mut Frame) {
        for _ in 0..self.0 {
            out.push_line(String::new());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::render_lines;

    #[test]
    fn text_wraps_and_pads() {
        let mut t = Text::new("hello wide world").with_padding(1, 1);
        assert_eq!(render_lines(&mut t, 12), ["", " hello wide", " world", ""]);
        assert!(render_lines(&mut Text::new("  "), 10).is_empty());
    }

    #[test]
    fn text_is_cached_per_width() {
        let mut t = Text::new("abc");
        let mut f1 = Frame::new();
        t.render(10, &mut f1);
        let mut f2 = Frame::new();
        t.render(10, &mut f2);
        assert!(std::sync::Arc::ptr_eq(&f1.chunks()[0], &f2.chunks()[0]));
        t.set_text("abd");
        let mut f3 = Frame::new();
        t.render(10, &mut f3);
        assert!(!std::sync::Arc::ptr_eq(&f1.chunks()[0], &f3.chunks()[0]));
    }

    #[test]
    fn truncated() {
        let mut t = TruncatedText::new("a very long line\nsecond");
        assert_eq!(render_lines(&mut t, 8), ["a ver..."]);
        assert_eq!(render_lines(&mut Spacer(2), 8), ["", ""]);
    }
}
