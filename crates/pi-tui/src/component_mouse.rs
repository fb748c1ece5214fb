//! Mouse reports as a component sees them (rows and columns from its own top-left corner),
//! and the gestures pi 1.6's select and settings lists take: a press picks the row under the
//! pointer, a click (press and release on the same cell) activates it, the wheel moves the
//! pick a row at a time and stops at the ends. Hover does not move the pick.

use std::ops::Range;

use crate::keybindings::keybindings;
use crate::keys::{KeyEvent, KeyId};

/// What happened, for a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentMouseKind {
    /// The left button went down.
    Press,
    /// The left button came up where it went down, without moving in between.
    Click,
    WheelUp,
    WheelDown,
}

/// A mouse report in a component's own coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComponentMouse {
    pub kind: ComponentMouseKind,
    pub row: usize,
    pub column: usize,
}

impl ComponentMouse {
    pub fn new(kind: ComponentMouseKind, row: usize, column: usize) -> Self {
        ComponentMouse { kind, row, column }
    }

    /// The report for the part drawn on `rows` of this component, in that part's own rows;
    /// `None` when the pointer is elsewhere.
    pub fn within(&self, rows: &Range<usize>) -> Option<ComponentMouse> {
        rows.contains(&self.row).then(|| ComponentMouse {
            row: self.row - rows.start,
            ..*self
        })
    }

    pub fn is_wheel(&self) -> bool {
        matches!(self.kind, ComponentMouseKind::WheelUp | ComponentMouseKind::WheelDown)
    }
}

/// The first key bound to the action `id`, as a key event (`None` when it is unbound).
pub fn action_key(id: &str) -> Option<KeyEvent> {
    let keys = keybindings().keys(id);
    let first = KeyId::parse(keys.first()?)?;
    Some(KeyEvent::new(first.key, first.mods))
}

/// The keys that carry out `m` on a list of `count` items showing items `shown` (one row
/// each, from the list's first row) with item `selected` picked, by the list's own
/// `tui.select.*` actions; `None` when the list does not take the report. `activate` is the
/// action a click runs (confirm for a picker, Tab for the editor's menu). The wheel is taken
/// on any of the list's `height` rows.
pub fn list_keys(
    m: &ComponentMouse,
    selected: usize,
    shown: Range<usize>,
    count: usize,
    height: usize,
    activate: &str,
) -> Option<Vec<KeyEvent>> {
    if count == 0 || m.row >= height {
        return None;
    }
    let step = |id: &str, n: usize| -> Vec<KeyEvent> { action_key(id).map(|k| vec![k; n]).unwrap_or_default() };
    match m.kind {
        ComponentMouseKind::WheelUp => Some(step("tui.select.up", usize::from(selected > 0))),
        ComponentMouseKind::WheelDown => Some(step("tui.select.down", usize::from(selected + 1 < count))),
        ComponentMouseKind::Press | ComponentMouseKind::Click => {
            let index = shown.start + m.row;
            if !shown.contains(&index) {
                return None;
            }
            if m.kind == ComponentMouseKind::Click {
                return Some(action_key(activate).into_iter().collect());
            }
            Some(if index >= selected {
                step("tui.select.down", index - selected)
            } else {
                step("tui.select.up", selected - index)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Key;

    fn at(kind: ComponentMouseKind, row: usize) -> ComponentMouse {
        ComponentMouse::new(kind, row, 3)
    }

    #[test]
    fn a_press_moves_the_pick_to_the_row_and_a_click_confirms() {
        // Items 4..9 shown, item 6 picked: a press on the first row goes up two.
        let keys = list_keys(&at(ComponentMouseKind::Press, 0), 6, 4..9, 20, 6, "tui.select.confirm").unwrap();
        assert_eq!(keys.iter().map(|k| k.key).collect::<Vec<_>>(), [Key::Up, Key::Up]);
        let keys = list_keys(&at(ComponentMouseKind::Press, 4), 6, 4..9, 20, 6, "tui.select.confirm").unwrap();
        assert_eq!(keys.iter().map(|k| k.key).collect::<Vec<_>>(), [Key::Down, Key::Down]);
        let keys = list_keys(&at(ComponentMouseKind::Click, 2), 6, 4..9, 20, 6, "tui.select.confirm").unwrap();
        assert_eq!(keys.iter().map(|k| k.key).collect::<Vec<_>>(), [Key::Enter]);
        let keys = list_keys(&at(ComponentMouseKind::Click, 2), 6, 4..9, 20, 6, "tui.input.tab").unwrap();
        assert_eq!(keys.iter().map(|k| k.key).collect::<Vec<_>>(), [Key::Tab]);
    }

    #[test]
    fn the_scroll_line_takes_the_wheel_but_not_a_press() {
        // Row 5 is the `(n/m)` line under five items.
        assert_eq!(
            list_keys(&at(ComponentMouseKind::Press, 5), 6, 4..9, 20, 6, "tui.select.confirm"),
            None
        );
        let keys = list_keys(
            &at(ComponentMouseKind::WheelDown, 5),
            6,
            4..9,
            20,
            6,
            "tui.select.confirm",
        )
        .unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(
            list_keys(
                &at(ComponentMouseKind::WheelDown, 6),
                6,
                4..9,
                20,
                6,
                "tui.select.confirm"
            ),
            None
        );
    }

    #[test]
    fn the_wheel_stops_at_the_ends_and_an_empty_list_takes_nothing() {
        assert_eq!(
            list_keys(&at(ComponentMouseKind::WheelUp, 0), 0, 0..3, 3, 3, "tui.select.confirm"),
            Some(vec![])
        );
        assert_eq!(
            list_keys(
                &at(ComponentMouseKind::WheelDown, 0),
                2,
                0..3,
                3,
                3,
                "tui.select.confirm"
            ),
            Some(vec![])
        );
        assert_eq!(
            list_keys(
                &at(ComponentMouseKind::WheelDown, 0),
                0,
                0..0,
                0,
                1,
                "tui.select.confirm"
            ),
            None
        );
    }
}
