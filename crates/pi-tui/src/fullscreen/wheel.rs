//! How many lines one wheel event scrolls: a fixed count, or (`auto`) one line per notch
//! that grows with the speed of a spin, as pi 1.6 does it.

use std::time::Instant;

/// Events closer than this are one notch split up (some terminals send a few per notch) or a
/// high-resolution source: one line each, no acceleration.
const BURST_GAP_MS: f64 = 5.0;
/// A longer pause ends a gesture: the next event starts again at one line.
const GESTURE_GAP_MS: f64 = 200.0;
/// The mean gap between events that moves one line per event; faster spins move more.
const REFERENCE_GAP_MS: f64 = 100.0;
/// The most lines one event moves in `auto`.
const MAX_AUTO_LINES: f64 = 6.0;

/// How far one wheel event scrolls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WheelStep {
    /// One line per notch, up to 6 while the wheel spins fast (one line per event where the
    /// terminal already accelerates: a local macOS terminal).
    Auto,
    Lines(usize),
}

/// Turns wheel events into line counts.
#[derive(Debug, Clone)]
pub(super) struct WheelAccel {
    pub step: WheelStep,
    /// False where the terminal already accelerates the wheel itself.
    accelerate: bool,
    last: Option<(Instant, i8)>,
    mean_gap: Option<f64>,
    /// The fraction of a line left over from the previous event.
    carry: f64,
}

impl Default for WheelAccel {
    fn default() -> Self {
        WheelAccel {
            step: WheelStep::Auto,
            accelerate: !terminal_accelerates_wheel(),
            last: None,
            mean_gap: None,
            carry: 0.0,
        }
    }
}

/// A local macOS terminal hands over wheel and trackpad motion the system already sped up,
/// one event per line; elsewhere (and over SSH, where the client is unknown) an event is a notch.
fn terminal_accelerates_wheel() -> bool {
    cfg!(target_os = "macos")
        && ["SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"]
            .iter()
            .all(|v| std::env::var_os(v).is_none())
}

impl WheelAccel {
    pub fn set_step(&mut self, step: WheelStep) {
        self.step = step;
        self.last = None;
        self.mean_gap = None;
        self.carry = 0.0;
    }

    /// The lines an event in `direction` (-1 up, 1 down) at `now` moves (at least 1).
    pub fn next(&mut self, direction: i8, now: Instant) -> usize {
        match self.step {
            WheelStep::Lines(n) => return n.clamp(1, 100),
            WheelStep::Auto if !self.accelerate => return 1,
            WheelStep::Auto => {}
        }
        let gap = self
            .last
            .filter(|&(_, d)| d == direction)
            .map(|(t, _)| now.saturating_duration_since(t).as_secs_f64() * 1000.0)
            .filter(|&g| g <= GESTURE_GAP_MS);
        self.last = Some((now, direction));
        let Some(gap) = gap else {
            self.mean_gap = None;
            self.carry = 0.0;
            return 1;
        };
        if gap < BURST_GAP_MS {
            return 1;
        }
        let mean = self.mean_gap.map_or(gap, |m| (m + gap) / 2.0);
        self.mean_gap = Some(mean);
        let lines = (REFERENCE_GAP_MS / mean).clamp(1.0, MAX_AUTO_LINES) + self.carry;
        let whole = lines.floor();
        self.carry = lines - whole;
        whole as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn accel() -> WheelAccel {
        WheelAccel {
            accelerate: true,
            ..WheelAccel::default()
        }
    }

    fn spin(a: &mut WheelAccel, gaps_ms: &[u64], direction: i8) -> Vec<usize> {
        let mut now = Instant::now();
        gaps_ms
            .iter()
            .map(|&g| {
                now += Duration::from_millis(g);
                a.next(direction, now)
            })
            .collect()
    }

    #[test]
    fn a_burst_moves_a_line_per_event_and_a_fast_spin_speeds_up() {
        // Events in one write (no gap) are a burst: one line each, never more.
        assert_eq!(spin(&mut accel(), &[0, 0, 0, 0, 0], 1), vec![1; 5]);
        // Notches 100 ms apart move one line, 50 ms two, 20 ms five.
        assert_eq!(spin(&mut accel(), &[0, 100, 100, 100], 1), vec![1, 1, 1, 1]);
        assert_eq!(spin(&mut accel(), &[0, 50, 50, 50], 1), vec![1, 2, 2, 2]);
        assert_eq!(spin(&mut accel(), &[0, 20, 20, 20], 1), vec![1, 5, 5, 5]);
        // Never more than six.
        assert_eq!(spin(&mut accel(), &[0, 6, 6], 1), vec![1, 6, 6]);
    }

    #[test]
    fn a_pause_or_a_turn_of_direction_starts_again_at_one_line() {
        let mut a = accel();
        assert_eq!(spin(&mut a, &[0, 20, 20, 300, 20], 1), vec![1, 5, 5, 1, 5]);
        assert_eq!(spin(&mut a, &[20], -1), vec![1]);
    }

    #[test]
    fn fractions_carry_over_and_a_fixed_step_is_fixed() {
        // 100/40 = 2.5 lines: 2, then 3 with the carried half.
        assert_eq!(spin(&mut accel(), &[0, 40, 40, 40], 1), vec![1, 2, 3, 2]);
        let mut a = accel();
        a.set_step(WheelStep::Lines(3));
        assert_eq!(spin(&mut a, &[0, 20, 20], 1), vec![3, 3, 3]);
        a.set_step(WheelStep::Lines(0));
        assert_eq!(spin(&mut a, &[0], 1), vec![1]);
        let mut local_mac = WheelAccel {
            accelerate: false,
            ..WheelAccel::default()
        };
        assert_eq!(spin(&mut local_mac, &[0, 20, 20], 1), vec![1, 1, 1]);
    }
}
