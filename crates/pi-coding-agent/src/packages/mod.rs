//! pi packages: bundles of skills, prompt templates, themes and extensions installed from
//! npm, git or a local path, the `pi install/remove/update/list/config` subcommands, and the
//! package resources that enter resource discovery at startup.

pub mod cli;
pub mod config_cmd;
pub mod config_groups;
pub mod config_view;
pub mod files;
pub mod install;
pub mod locations;
pub mod manager;
pub mod process;
pub mod resolve;
pub mod self_update;
pub mod source;
pub mod updates;

use std::path::PathBuf;

use crate::config::paths::Paths;
use crate::config::settings::SettingsManager;
use crate::resources::{PackageOrigin, PackageScope, ResourceScope};

pub use locations::{Locations, Scope};
pub use manager::PackageManager;
pub use resolve::{ResolvedPaths, ResourceKind};
pub use source::PackageSpec;

/// A package operation that failed; the message is what pi prints after `Error: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PackageError(String);

impl PackageError {
    pub fn new(message: impl Into<String>) -> Self {
        PackageError(message.into())
    }
}

/// `PI_OFFLINE` is `1`, `true` or `yes`: nothing is installed or fetched.
pub fn is_offline() -> bool {
    crate::config::offline::offline(crate::config::offline::NetworkUse::Downloads)
}

/// The enabled skill, prompt and theme files of the configured packages, each with the
/// package it came from.
#[derive(Debug, Clone, Default)]
pub struct PackageResources {
    /// Extension entry files or folders, for the extension runner's discovery.
    pub extensions: Vec<(PathBuf, ResourceScope)>,
    pub skills: Vec<(PathBuf, ResourceScope)>,
    pub prompts: Vec<(PathBuf, ResourceScope)>,
    pub themes: Vec<(PathBuf, ResourceScope)>,
    /// Installs that failed (the packages are skipped).
    pub problems: Vec<PackageError>,
}

/// The package resources for a session. With `install_missing`, packages not on disk yet are
/// installed first (never offline), their tools' output going to stderr. Without packages
/// in the settings this touches nothing.
pub fn package_resources(paths: &Paths, settings: &SettingsManager, install_missing: bool) -> PackageResources {
    let configured =
        settings.global_settings().contains_key("packages") || settings.project_settings().contains_key("packages");
    if !configured {
        return PackageResources::default();
    }
    let loc = Locations::new(paths.clone(), settings.npm_command());
    let install = install_missing.then_some(process::Output::Stderr);
    let (resolved, problems) = resolve::resolve_packages(&loc, settings, install);
    PackageResources::from_resolved(&resolved, problems)
}

/// The resources of `-e` sources for this run (installed into the temp folder when missing,
/// never offline).
pub fn temporary_package_resources(paths: &Paths, settings: &SettingsManager, sources: &[String]) -> PackageResources {
    if sources.is_empty() {
        return PackageResources::default();
    }
    let loc = Locations::new(paths.clone(), settings.npm_command());
    let (resolved, problems) = resolve::resolve_temporary(&loc, sources, Some(process::Output::Stderr));
    PackageResources::from_resolved(&resolved, problems)
}

impl PackageResources {
    fn from_resolved(resolved: &ResolvedPaths, problems: Vec<PackageError>) -> Self {
        let of = |kind: ResourceKind| -> Vec<(PathBuf, ResourceScope)> {
            resolved
                .of(kind)
                .iter()
                .filter(|r| r.enabled)
                .filter_map(|r| match &r.origin {
                    resolve::Origin::Package(source) => Some((
                        r.path.clone(),
                        ResourceScope::Package(PackageOrigin {
                            source: source.clone(),
                            scope: match (r.temporary, r.scope) {
                                (true, _) => PackageScope::Temporary,
                                (false, Scope::Project) => PackageScope::Project,
                                (false, Scope::User) => PackageScope::User,
                            },
                            base_dir: r.base_dir.clone(),
                        }),
                    )),
                    _ => None,
                })
                .collect()
        };
        PackageResources {
            extensions: of(ResourceKind::Extensions),
            skills: of(ResourceKind::Skills),
            prompts: of(ResourceKind::Prompts),
            themes: of(ResourceKind::Themes),
            problems,
        }
    }
}
