//! What the terminal is told about the program (OSC 7501), followed from the session's
//! events: working during a run or a compaction (with the session's name), blocked while a
//! dialog waits for the user, then done, failed (the first line of the error) or idle after
//! an abort. Prompts and model output are never part of a report. With
//! `terminal.showTerminalProgress` on, the tab's progress indicator (OSC 9;4) shows while a
//! run or a compaction goes on.

use pi_tui::program_status::{ProgramState, ProgramStatus};

use super::events::UiEvent;

/// The name reports carry.
const APP_NAME: &str = "pi";

/// How the last run or manual compaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Idle,
    Done,
    Error(String),
}

/// Follows the session and says when the report changes.
#[derive(Debug)]
pub struct ProgramStatusReporter {
    run_active: bool,
    compacting: bool,
    run_result: Outcome,
    resting: Outcome,
    /// A dialog waits: its kind (`question`, `permission`, `auth`, or an extension's own)
    /// and what it asks.
    blocked: Option<(String, Option<String>)>,
    /// The session's name (`None` inside: not looked up yet).
    session_name: Option<Option<String>>,
    last: Option<ProgramStatus>,
    /// The progress indicator as last sent.
    progress: bool,
}

impl Default for ProgramStatusReporter {
    fn default() -> Self {
        ProgramStatusReporter {
            run_active: false,
            compacting: false,
            run_result: Outcome::Done,
            resting: Outcome::Idle,
            blocked: None,
            session_name: None,
            last: None,
            progress: false,
        }
    }
}

fn first_line(text: Option<&str>) -> String {
    text.and_then(|t| t.lines().next())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .unwrap_or("Error")
        .to_string()
}

impl ProgramStatusReporter {
    pub fn on_event(&mut self, ev: &UiEvent) {
        match ev {
            UiEvent::AgentStart => {
                self.run_active = true;
                self.run_result = Outcome::Done;
            }
            UiEvent::AssistantEnd(m) => {
                self.run_result = if m.stop_reason == pi_ai::StopReason::Error {
                    Outcome::Error(first_line(m.error_message.as_deref()))
                } else {
                    Outcome::Done
                };
            }
            UiEvent::CompactionStart { .. } => self.compacting = true,
            UiEvent::CompactionEnd { error, .. } => {
                self.compacting = false;
                if let Some(e) = error {
                    let failed = Outcome::Error(first_line(Some(e)));
                    if self.run_active {
                        self.run_result = failed;
                    } else {
                        self.resting = failed;
                    }
                }
            }
            UiEvent::Settled { aborted } => {
                self.run_active = false;
                self.resting = if *aborted {
                    Outcome::Idle
                } else {
                    self.run_result.clone()
                };
            }
            _ => {}
        }
    }

    pub fn has_name(&self) -> bool {
        self.session_name.is_some()
    }

    pub fn set_session_name(&mut self, name: Option<String>) {
        self.session_name = Some(name);
    }

    /// A dialog waits for the user (or no longer does).
    pub fn set_blocked(&mut self, blocked: Option<(&str, Option<String>)>) {
        self.blocked = blocked.map(|(kind, message)| (kind.to_string(), message));
    }

    fn current(&self) -> ProgramStatus {
        let session_name = self.session_name.as_ref().and_then(Option::as_deref);
        let mut status = if let Some((kind, message)) = &self.blocked {
            let mut s = ProgramStatus::new(ProgramState::Blocked);
            s.kind = Some(kind.clone());
            s.message = message.clone();
            s
        } else if self.compacting {
            let mut s = ProgramStatus::new(ProgramState::Working);
            s.message = Some("Compacting context".into());
            s
        } else if self.run_active {
            ProgramStatus::new(ProgramState::Working)
        } else {
            match &self.resting {
                Outcome::Idle => ProgramStatus::new(ProgramState::Idle),
                Outcome::Done => ProgramStatus::new(ProgramState::Done),
                Outcome::Error(e) => {
                    let mut s = ProgramStatus::new(ProgramState::Error);
                    s.message = Some(e.clone());
                    s
                }
            }
        };
        if matches!(status.state, ProgramState::Working | ProgramState::Done) && status.message.is_none() {
            status.message = session_name.map(str::to_string);
        }
        status.app = Some(APP_NAME.into());
        status
    }

    /// Whether the progress indicator should now be on (`enabled`: the setting) or off, when
    /// that differs from what was last sent.
    pub fn take_progress(&mut self, enabled: bool) -> Option<bool> {
        let on = enabled && (self.run_active || self.compacting);
        (on != std::mem::replace(&mut self.progress, on)).then_some(on)
    }

    /// The report to send, when it differs from the last one sent.
    pub fn take_report(&mut self) -> Option<ProgramStatus> {
        let now = self.current();
        if self.last.as_ref() == Some(&now) {
            return None;
        }
        self.last = Some(now.clone());
        Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(stop: pi_ai::StopReason, error: Option<&str>) -> UiEvent {
        let m = pi_ai::AssistantMessage {
            stop_reason: stop,
            error_message: error.map(str::to_string),
            ..Default::default()
        };
        UiEvent::AssistantEnd(Box::new(m))
    }

    fn state(r: &mut ProgramStatusReporter) -> Option<(ProgramState, Option<String>)> {
        r.set_session_name(Some("demo".into()));
        r.take_report().map(|s| (s.state, s.message))
    }

    #[test]
    fn a_run_goes_from_idle_to_working_to_done_and_repeats_nothing() {
        let mut r = ProgramStatusReporter::default();
        assert_eq!(state(&mut r), Some((ProgramState::Idle, None)));
        assert_eq!(state(&mut r), None, "unchanged");
        r.on_event(&UiEvent::AgentStart);
        assert_eq!(state(&mut r), Some((ProgramState::Working, Some("demo".into()))));
        r.on_event(&assistant(pi_ai::StopReason::Stop, None));
        r.on_event(&UiEvent::Settled { aborted: false });
        assert_eq!(state(&mut r), Some((ProgramState::Done, Some("demo".into()))));
    }

    #[test]
    fn progress_is_on_through_a_run_or_a_compaction_when_the_setting_asks() {
        let mut r = ProgramStatusReporter::default();
        assert_eq!(r.take_progress(true), None, "off to begin with");
        r.on_event(&UiEvent::AgentStart);
        assert_eq!(r.take_progress(false), None, "the setting is off");
        assert_eq!(r.take_progress(true), Some(true));
        assert_eq!(r.take_progress(true), None);
        r.on_event(&UiEvent::Settled { aborted: false });
        assert_eq!(r.take_progress(true), Some(false));
        r.on_event(&UiEvent::CompactionStart {
            overflow: false,
            manual: true,
        });
        assert_eq!(r.take_progress(true), Some(true));
        // The setting turned off meanwhile: the indicator goes.
        assert_eq!(r.take_progress(false), Some(false));
    }

    #[test]
    fn errors_aborts_compactions_and_dialogs() {
        let mut r = ProgramStatusReporter::default();
        r.on_event(&UiEvent::AgentStart);
        r.on_event(&assistant(
            pi_ai::StopReason::Error,
            Some("429 Too Many Requests\nretry later"),
        ));
        r.on_event(&UiEvent::Settled { aborted: false });
        assert_eq!(
            state(&mut r),
            Some((ProgramState::Error, Some("429 Too Many Requests".into())))
        );
        r.on_event(&UiEvent::AgentStart);
        r.on_event(&UiEvent::Settled { aborted: true });
        assert_eq!(state(&mut r), Some((ProgramState::Idle, None)));
        r.on_event(&UiEvent::CompactionStart {
            overflow: false,
            manual: true,
        });
        assert_eq!(
            state(&mut r),
            Some((ProgramState::Working, Some("Compacting context".into())))
        );
        r.set_blocked(Some(("question", None)));
        assert_eq!(state(&mut r), Some((ProgramState::Blocked, None)));
        // A sign-in says which provider it waits for.
        r.set_blocked(Some(("auth", Some("Log in to Anthropic".into()))));
        let report = r.take_report().expect("changed");
        assert_eq!(report.kind.as_deref(), Some("auth"));
        assert_eq!(report.message.as_deref(), Some("Log in to Anthropic"));
        r.set_blocked(None);
        r.on_event(&UiEvent::CompactionEnd {
            error: None,
            usage: None,
            summary: None,
        });
        assert_eq!(state(&mut r), Some((ProgramState::Idle, None)));
    }
}
