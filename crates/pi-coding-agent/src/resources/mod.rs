//! Resources loaded from the agent dir and the project: context files, skills, prompt
//! templates and themes.

pub mod context_files;
pub mod discovery;
pub mod frontmatter;
pub mod loader;
pub mod oklab;
pub mod prompt_templates;
pub mod skills;
pub mod sources;
pub mod system_theme;
pub mod theme_color;
pub mod themes;

use std::path::PathBuf;

/// How serious a resource problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    Warning,
    Error,
    /// Two resources share a name; the first one found wins.
    Collision,
}

/// A problem found while loading a resource. The resource is skipped or loaded anyway,
/// as the message says; nothing is printed here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub message: String,
    pub path: PathBuf,
    /// For collisions: the path of the resource that won.
    pub winner: Option<PathBuf>,
}

impl Diagnostic {
    pub fn warning(message: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Warning,
            message: message.into(),
            path: path.into(),
            winner: None,
        }
    }

    pub fn collision(message: impl Into<String>, loser: impl Into<PathBuf>, winner: impl Into<PathBuf>) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Collision,
            message: message.into(),
            path: loser.into(),
            winner: Some(winner.into()),
        }
    }
}

/// Where a discovered resource came from; shown next to its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceScope {
    /// The agent dir or `~/.agents`.
    User,
    /// The project's `.pi/` or an `.agents/` dir in the cwd or its ancestors.
    Project,
    /// A path given on the command line or in settings.
    Path,
    /// A pi package configured in the user or project settings.
    Package(PackageOrigin),
}

/// Where a package was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageScope {
    User,
    Project,
    /// `-e <source>`: this run only.
    Temporary,
}

/// Which package a resource came from (what RPC `sourceInfo` reports for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageOrigin {
    /// The source as written in the settings (`npm:…`, `git:…`, a path).
    pub source: String,
    /// Which settings configured it, or `-e` for this run.
    pub scope: PackageScope,
    /// The package's root folder.
    pub base_dir: PathBuf,
}
