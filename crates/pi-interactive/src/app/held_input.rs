//! Input that waits while the editor's provider applies a completion in the background (an
//! extension's `applyCompletion`, one host round trip): the keys typed meanwhile are held and
//! handed on after the completion is in, so none is lost or lands before it.

use std::time::{Duration, Instant};

use pi_tui::InputEvent;

use super::App;

/// A completion that has not come by then is given up on, and the held keys go on.
const HOLD_LIMIT: Duration = Duration::from_secs(6);

impl App {
    /// Whether input must wait now.
    pub fn holds_input(&mut self) -> bool {
        if !self.view.editor.is_applying() {
            self.held_since = None;
            return false;
        }
        let since = *self.held_since.get_or_insert_with(Instant::now);
        if since.elapsed() > HOLD_LIMIT {
            self.view.editor.stop_applying();
            self.held_since = None;
            return false;
        }
        true
    }

    pub fn has_held_input(&self) -> bool {
        !self.held_input.is_empty()
    }

    pub fn hold_input(&mut self, ev: InputEvent) {
        self.held_input.push_back(ev);
    }

    /// The oldest held event, once input no longer waits.
    pub fn next_held_input(&mut self) -> Option<InputEvent> {
        if self.holds_input() {
            return None;
        }
        self.held_input.pop_front()
    }
}
