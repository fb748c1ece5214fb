//! The built-in components.

mod boxed;
mod loader;
mod select_list;
mod settings_list;
mod text;

pub use boxed::Boxed;
pub use loader::{Loader, DEFAULT_FRAMES, DEFAULT_INTERVAL};
pub use select_list::{SelectEvent, SelectItem, SelectList, SelectListTheme};
pub use settings_list::{SettingItem, SettingsEvent, SettingsList, SettingsListTheme};
pub use text::{Spacer, Text, TruncatedText};
