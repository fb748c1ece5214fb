//! pi-tui: the terminal library (line-diff renderer, keys, components); depends on no other pi crate.

pub mod ansi;
pub mod autocomplete;
pub mod component;
pub mod components;
pub mod fuzzy;
pub mod highlight;
pub mod input;
pub mod keybindings;
pub mod keys;
pub mod renderer;
pub mod style;
pub mod terminal;
pub mod tui;
pub mod width;

pub use component::{render_lines, Component, Container, Frame, LineCache, Lines, CURSOR_MARKER};
pub use input::{InputEvent, InputParser};
pub use keybindings::{keybindings, set_keybindings, KeybindingDef, Keybindings, TUI_KEYBINDINGS};
pub use keys::{parse_key, Key, KeyEvent, KeyEventKind, KeyId, Modifiers};
pub use renderer::{FrameStats, Renderer};
pub use style::{apply_background, Color, Style};
pub use terminal::{spawn_resize_watcher, spawn_stdin_reader, terminal_size, Terminal};
pub use tui::{Anchor, Margin, OverlayId, OverlayOptions, SizeValue, Tui};
pub use width::{pad_to_width, slice_columns, truncate_to_width, visible_width, wrap_text};
