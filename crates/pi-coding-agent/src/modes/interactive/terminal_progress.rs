//! `showTerminalProgress` (/settings → Terminal progress): the terminal's tab-bar progress
//! indicator (OSC 9;4), on while a turn or a compaction runs and off when it ends, as pi 1.6
//! sets it (repeated every second while on, which some terminals need to keep it). Follows
//! the session's events; the screen loop writes what it reports.

use std::time::{Duration, Instant};

use super::events::UiEvent;

#[derive(Debug, Default)]
pub struct TerminalProgress {
    enabled: bool,
    /// On once every change in `due` is written.
    shown: bool,
    /// Changes not written yet, in order (a run shorter than a frame still shows).
    due: Vec<bool>,
    /// When "on" was last written.
    last_on: Option<Instant>,
}

/// How often pi 1.6 says "on" again while it lasts.
const KEEPALIVE: Duration = Duration::from_secs(1);

impl TerminalProgress {
    /// The setting changed (or was read at startup). Turning it off clears a shown indicator.
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
        if !on {
            self.set(false);
        }
    }

    fn set(&mut self, on: bool) {
        if on != self.shown {
            self.shown = on;
            self.due.push(on);
        }
    }

    pub fn on_event(&mut self, ev: &UiEvent) {
        if !self.enabled {
            return;
        }
        match ev {
            UiEvent::AgentStart | UiEvent::AssistantStart | UiEvent::CompactionStart { .. } => self.set(true),
            UiEvent::AgentEnd | UiEvent::CompactionEnd { .. } => self.set(false),
            _ => {}
        }
    }

    /// The changes to write now, oldest first (with "on" again when it is due to be repeated).
    pub fn take(&mut self) -> Vec<bool> {
        let mut out = std::mem::take(&mut self.due);
        let now = Instant::now();
        if out.is_empty() && self.shown && self.last_on.is_some_and(|t| now.duration_since(t) >= KEEPALIVE) {
            out.push(true);
        }
        if out.last() == Some(&true) {
            self.last_on = Some(now);
        }
        out
    }

    /// Whether the indicator is on (to clear it at exit).
    pub fn shown(&self) -> bool {
        self.shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_during_a_run_off_after_only_when_enabled() {
        let mut p = TerminalProgress::default();
        p.on_event(&UiEvent::AgentStart);
        assert!(p.take().is_empty());
        p.set_enabled(true);
        p.on_event(&UiEvent::AgentStart);
        p.on_event(&UiEvent::AssistantStart);
        assert_eq!(p.take(), [true]);
        assert!(p.take().is_empty());
        p.on_event(&UiEvent::AgentEnd);
        assert_eq!(p.take(), [false]);
        // A run that starts and ends between two frames still shows.
        p.on_event(&UiEvent::AgentStart);
        p.on_event(&UiEvent::AgentEnd);
        assert_eq!(p.take(), [true, false]);
        // Turned off while shown: cleared.
        p.on_event(&UiEvent::AgentStart);
        p.set_enabled(false);
        assert_eq!(p.take(), [true, false]);
        assert!(!p.shown());
    }
}
