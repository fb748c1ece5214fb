//! Subcommands handled before the normal startup: `pi auth …`.

pub mod auth;
pub mod auth_credentials;
pub mod auth_login;
