//! The working indicator as extensions shape it (`ctx.ui.setWorkingMessage`,
//! `setWorkingVisible`, `setWorkingIndicator`): the message, whether it shows at all, and
//! the spinner frames (drawn as given) with their interval. Kept for the life of the
//! extension runtime, so every run's indicator has them, as in pi 1.6.

use std::time::{Duration, Instant};

use pi_tui::components::{Loader, DEFAULT_FRAMES, DEFAULT_INTERVAL};
use serde_json::Value;

/// pi's message while the agent works.
pub const DEFAULT_WORKING_MESSAGE: &str = "Working";

/// Custom spinner frames (empty: no spinner) and their interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indicator {
    pub frames: Vec<String>,
    pub interval: Duration,
}

impl Indicator {
    /// pi-tui's `WorkingIndicatorOptions` as the host sent them (`{frames?, intervalMs?}`);
    /// `None` for pi's default spinner.
    pub fn from_options(options: &Value) -> Option<Indicator> {
        let options = options.as_object()?;
        let frames = match options.get("frames").and_then(Value::as_array) {
            Some(frames) => frames
                .iter()
                .map(|f| f.as_str().unwrap_or_default().to_string())
                .collect(),
            None => DEFAULT_FRAMES.iter().map(|f| f.to_string()).collect(),
        };
        let interval = options
            .get("intervalMs")
            .and_then(Value::as_f64)
            .filter(|ms| *ms > 0.0)
            .map_or(DEFAULT_INTERVAL, |ms| Duration::from_millis(ms as u64));
        Some(Indicator { frames, interval })
    }
}

#[derive(Debug, Clone)]
pub struct Working {
    pub message: Option<String>,
    pub visible: bool,
    pub indicator: Option<Indicator>,
    /// The text of the indicator shown now, to tell it from the other statuses (retry,
    /// compaction) that use the same line.
    shown: Option<String>,
    last_frame: Instant,
}

impl Default for Working {
    fn default() -> Self {
        Working {
            message: None,
            visible: true,
            indicator: None,
            shown: None,
            last_frame: Instant::now(),
        }
    }
}

impl Working {
    pub fn text(&self) -> String {
        self.message
            .clone()
            .unwrap_or_else(|| DEFAULT_WORKING_MESSAGE.to_string())
    }

    /// The indicator for a run, with the frames an extension gave (drawn as they are).
    pub fn loader(&mut self, spinner: pi_tui::Style, message: pi_tui::Style) -> Loader {
        let text = self.text();
        let mut loader = Loader::new(text.clone(), spinner, message);
        if let Some(ind) = &self.indicator {
            loader.set_indicator(ind.frames.clone(), ind.interval);
        }
        self.shown = Some(text);
        loader
    }

    /// Whether `status` is this indicator (not another status on the same line).
    pub fn is_shown(&self, status: Option<&Loader>) -> bool {
        status.is_some_and(|l| self.shown.as_deref() == Some(l.message()))
    }

    /// Note the new text of the indicator on screen.
    pub fn retext(&mut self, loader: &mut Loader) {
        let text = self.text();
        loader.set_message(text.clone());
        self.shown = Some(text);
    }

    /// Whether the next spinner frame is due (frames go at the indicator's own interval).
    pub fn frame_due(&mut self, interval: Duration) -> bool {
        if self.last_frame.elapsed() < interval {
            return false;
        }
        self.last_frame = Instant::now();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn indicator_options_read_as_pi_tui_does() {
        assert_eq!(Indicator::from_options(&Value::Null), None, "undefined: pi's spinner");
        let hidden = Indicator::from_options(&json!({"frames": []})).expect("options");
        assert!(hidden.frames.is_empty());
        assert_eq!(hidden.interval, DEFAULT_INTERVAL);
        let pulse = Indicator::from_options(&json!({"frames": ["a", "b"], "intervalMs": 120})).expect("options");
        assert_eq!(pulse.frames, ["a", "b"]);
        assert_eq!(pulse.interval, Duration::from_millis(120));
        let zero = Indicator::from_options(&json!({"intervalMs": 0})).expect("options");
        assert_eq!(zero.frames.len(), DEFAULT_FRAMES.len(), "no frames: the default ones");
        assert_eq!(zero.interval, DEFAULT_INTERVAL);
    }

    #[test]
    fn the_indicator_keeps_its_message_and_frames_across_runs() {
        let mut w = Working {
            message: Some("Busy (custom)".into()),
            indicator: Indicator::from_options(&json!({"frames": ["●"]})),
            ..Working::default()
        };
        let style = pi_tui::Style::default();
        let loader = w.loader(style, style);
        assert_eq!(loader.inline_text(), "● Busy (custom)");
        assert!(!loader.is_animated(), "one frame does not animate");
        assert!(w.is_shown(Some(&loader)));
        let other = Loader::new("Retrying (1/3) in 2s...", style, style);
        assert!(!w.is_shown(Some(&other)));
        let again = w.loader(style, style);
        assert_eq!(again.inline_text(), "● Busy (custom)");
    }
}
