//! Subcommands handled before the normal startup: `pi auth …`.

pub mod auth;
