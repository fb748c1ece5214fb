//! pi-tui: the terminal library (line-diff renderer, keys, components); depends on no other pi crate.
//!
//! The pieces, and how an application strings them together:
//!
//! - [`Terminal`] puts the tty in raw mode (bracketed paste on, kitty keyboard query sent) and
//!   restores it on `stop`, drop or panic. Bytes from [`spawn_stdin_reader`] go through an
//!   [`InputParser`], which yields [`InputEvent`]s: keys ([`KeyEvent`], matched against ids like
//!   `ctrl+c` or through [`Keybindings`]), pastes, and terminal replies. On
//!   `InputEvent::KittyFlags` call [`Terminal::enable_kitty`] and
//!   [`InputParser::set_kitty_active`]; with no reply after ~150 ms call
//!   [`Terminal::enable_fallback_keys`]. When `has_pending()` stays true ~10 ms, `flush()`.
//! - The application owns its component tree (anything implementing [`Component`]) and calls
//!   [`Tui::render`] with the root and the terminal as the writer after each change; the
//!   [`Renderer`] underneath writes only from the first changed line, inside synchronized
//!   output, and redraws fully only on resize or a change above the visible screen.
//!   Finished content should be cached ([`LineCache`], as `Text`/`Markdown` do) so a frame
//!   costs what changed, not the length of the history.
//! - Fullscreen ([`Tui::set_fullscreen`], after [`Terminal::enter_fullscreen`]): the
//!   application hands [`Tui::render_fullscreen`] the transcript and the dock (editor,
//!   footer...) separately; [`Fullscreen`] keeps the transcript's scroll position, the mouse
//!   selection and flashes, and an [`AltScreen`] rewrites only the rows that changed. The
//!   top overlay takes the editor's place in the dock.
//! - [`Tui::show_overlay`] draws a component (e.g. a `SelectList`) over the bottom of the
//!   screen and routes input to it ([`Tui::handle_input`]).
//! - Components live in [`components`]: `Text`, `TruncatedText`, `Spacer`, `Boxed`,
//!   `Markdown`, `Editor`, `Input`, `SelectList`, `SettingsList`, `Loader`, `Image`.

pub mod ansi;
pub mod autocomplete;
mod code_classes;
pub mod component;
pub mod component_mouse;
pub mod components;
pub mod file_suggest;
pub mod fullscreen;
pub mod fuzzy;
mod go_heads;
pub mod highlight;
pub mod input;
mod java_heads;
mod jsx_tags;
pub mod keybindings;
pub mod keys;
pub mod kitty;
mod line_langs;
pub mod mermaid;
pub mod program_status;
pub mod renderer;
pub mod screen;
pub mod style;
pub mod terminal;
mod ts_heads;
pub mod tui;
pub mod width;

pub use ansi::{hyperlink, strip_ansi};
pub use component::{render_lines, Component, Container, Frame, LineCache, Lines, CURSOR_MARKER};
pub use component_mouse::{ComponentMouse, ComponentMouseKind};
pub use fullscreen::{
    Fullscreen, MouseAction, ScrollbarMode, SearchKey, Viewport, WheelStep, JUMP_PILL, SEARCH_PLACEHOLDER,
};
pub use input::{InputEvent, InputParser, MouseEvent, MouseKind};
pub use keybindings::{keybindings, set_keybindings, KeybindingDef, Keybindings, TUI_KEYBINDINGS};
pub use keys::{parse_key, Key, KeyEvent, KeyEventKind, KeyId, Modifiers};
pub use renderer::{FrameStats, Renderer};
pub use screen::AltScreen;
pub use style::{apply_background, is_truecolor, set_truecolor, Color, Style};
pub use terminal::{read_stdin_for, restore_now, spawn_resize_watcher, spawn_stdin_reader, terminal_size, Terminal};
pub use tui::{Anchor, Margin, OverlayId, OverlayOptions, ScreenParts, SizeValue, Tui};
pub use width::{pad_to_width, slice_columns, truncate_to_width, visible_width, wrap_text};
