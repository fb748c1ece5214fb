//! Configuration on disk: where pi keeps its files, settings, credentials and models.
//!
//! Startup uses these in this order (each step reads only the files it names):
//!
//! ```ignore
//! let paths = Paths::for_cwd(cwd);                       // agent dir from PI_CODING_AGENT_DIR
//! let settings = SettingsManager::load(&paths);          // global + project settings.json
//! let session_dir = paths::resolve_session_dir(cli.session_dir.as_deref(), settings.session_dir(), &paths);
//! let migrated = auth::migrate_legacy_credentials(&paths.agent_dir);
//! let auth = AuthStorage::open(paths.auth_path(), pi_ai::env_api_key);
//! let mut registry = ModelRegistry::new(pi_ai::models::builtin_models(), auth, Some(paths.models_path()));
//! let (scoped, warnings) = model_resolver::resolve_model_scope(&patterns, &registry.available());
//! let cli = model_resolver::resolve_cli_model(provider, model, registry.all(), DEFAULT_MODEL_PER_PROVIDER, &usable, false, None);
//! ```

pub mod agent_files;
pub mod auth;
#[cfg(test)]
mod fuzz_tests;
pub mod locked_file;
pub mod login_session;
pub mod model_reference;
pub mod model_registry;
pub mod model_resolver;
pub mod models_json;
pub mod models_store;
pub mod models_store_refresh;
pub mod oauth;
pub mod offline;
pub mod paths;
pub mod provider_names;
pub mod radius_catalog;
pub mod settings;
pub mod trust;

pub use auth::{AuthStorage, Credential};
pub use model_registry::ModelRegistry;
pub use paths::Paths;
pub use settings::SettingsManager;
