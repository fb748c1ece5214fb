//! `Loader`: a spinner and a message. The caller drives the animation with `tick()` at
//! `interval()` and re-renders.

use std::time::Duration;

use crate::component::{Component, Frame};
use crate::style::Style;
use crate::width::truncate_to_width;

/// The default braille spinner.
pub const DEFAULT_FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(80);

/// A blank line, then ` <spinner> <message>`.
#[derive(Debug, Clone)]
pub struct Loader {
    frames: Vec<String>,
    interval: Duration,
    frame: usize,
    message: String,
    spinner_style: Style,
    message_style: Style,
}

impl Loader {
    pub fn new(message: impl Into<String>, spinner_style: Style, message_style: Style) -> Self {
        Loader {
            frames: DEFAULT_FRAMES.iter().map(|s| s.to_string()).collect(),
            interval: DEFAULT_INTERVAL,
            frame: 0,
            message: message.into(),
            spinner_style,
            message_style,
        }
    }

    pub fn set_message(&mut self, message: impl Into<String>) {
        self.message = message.into();
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// Custom frames (empty hides the spinner) and interval (zero keeps the default).
    pub fn set_indicator(&mut self, frames: Vec<String>, interval: Duration) {
        self.frames = frames;
        self.interval = if interval.is_zero() { DEFAULT_INTERVAL } else { interval };
        self.frame = 0;
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Whether the spinner animates at all.
    pub fn is_animated(&self) -> bool {
        self.frames.len() > 1
    }

    /// The spinner frame and the message on one line, unstyled (for a border to carry).
    pub fn inline_text(&self) -> String {
        match self.frames.get(self.frame).filter(|f| !f.is_empty()) {
            Some(frame) => format!("{frame} {}", self.message),
            None => self.message.clone(),
        }
    }

    /// Advance one frame.
    pub fn tick(&mut self) {
        if !self.frames.is_empty() {
            self.frame = (self.frame + 1) % self.frames.len();
        }
    }
}

impl Component for Loader {
    fn render(&mut self, width: usize, out: &mut Frame) {
        out.push_line(String::new());
        let frame = self.frames.get(self.frame).map_or("", String::as_str);
        let indicator = if frame.is_empty() {
            String::new()
        } else {
            format!("{} ", self.spinner_style.paint(frame))
        };
        let line = format!(" {indicator}{}", self.message_style.paint(&self.message));
        out.push_line(truncate_to_width(&line, width, "..."));
    }
}

/// A loader that Escape (the `tui.select.cancel` keys) cancels; the flag can be shared with
/// the work being waited for.
#[derive(Debug, Clone)]
pub struct CancellableLoader {
    pub loader: Loader,
    cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl CancellableLoader {
    pub fn new(loader: Loader) -> Self {
        CancellableLoader {
            loader,
            cancelled: Default::default(),
        }
    }

    /// Set once the user cancelled.
    pub fn cancel_flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.cancelled.clone()
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Component for CancellableLoader {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.loader.render(width, out);
    }

    fn handle_input(&mut self, event: &crate::input::InputEvent) -> bool {
        if let crate::input::InputEvent::Key(k) = event {
            if crate::keybindings::keybindings().matches(k, "tui.select.cancel") {
                self.cancelled.store(true, std::sync::atomic::Ordering::SeqCst);
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::render_lines;

    #[test]
    fn spins() {
        let mut l = Loader::new("Working...", Style::new(), Style::new());
        assert_eq!(render_lines(&mut l, 40), ["", " ⠋ Working..."]);
        l.tick();
        assert_eq!(render_lines(&mut l, 40)[1], " ⠙ Working...");
        l.set_indicator(vec![], Duration::ZERO);
        assert_eq!(render_lines(&mut l, 40)[1], " Working...");
    }

    #[test]
    fn escape_cancels() {
        let mut c = CancellableLoader::new(Loader::new("x", Style::new(), Style::new()));
        let flag = c.cancel_flag();
        let key = |s: &str| crate::input::InputEvent::Key(crate::keys::parse_key(s, false).expect("key"));
        assert!(!c.handle_input(&key("a")));
        assert!(c.handle_input(&key("\x1b")));
        assert!(flag.load(std::sync::atomic::Ordering::SeqCst));
    }
}
