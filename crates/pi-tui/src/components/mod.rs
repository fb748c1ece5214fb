//! The built-in components.

mod boxed;
mod editor;
mod editor_buffer;
mod image;
mod input;
mod loader;
mod markdown;
mod markdown_ast;
mod select_list;
mod settings_list;
mod text;
mod word_motion;

pub use boxed::Boxed;
pub use editor::{Editor, EditorEvent, EditorTheme};
pub use editor_buffer::{KillRing, TextState};
pub use image::{
    encode_iterm2, encode_kitty, hyperlinks, image_cells, image_fallback, image_rows, image_size, set_hyperlinks,
    set_image_width, Capabilities, CapabilityOverrides, Image, ImageProtocol, ImageSize,
};
pub use input::{Input, InputFieldEvent};
pub use loader::{CancellableLoader, Loader, DEFAULT_FRAMES, DEFAULT_INTERVAL};
pub use markdown::{DiagramTheme, Highlighter, Markdown, MarkdownTheme};
pub use select_list::{SelectEvent, SelectItem, SelectList, SelectListTheme};
pub use settings_list::{SettingItem, SettingsEvent, SettingsList, SettingsListTheme};
pub use text::{Spacer, Text, TruncatedText};
