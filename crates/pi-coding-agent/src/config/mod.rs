//! Configuration on disk: where pi keeps its files, settings, credentials and models.

pub mod auth;
pub mod locked_file;
pub mod model_registry;
pub mod model_resolver;
pub mod models_json;
pub mod paths;
pub mod settings;
