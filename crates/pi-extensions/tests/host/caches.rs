//! The host's on-disk caches (jiti's transpiled files, Node's compiled code under
//! `<agentDir>/extension-host/cache`): an edited extension is transpiled again, and a cache
//! that is corrupt or cannot be written only costs time.

use std::fs;
use std::path::Path;

use pi_extensions::ExtensionRunner;

use crate::support::*;

/// An extension whose one tool's description says `version`.
fn write_extension(path: &Path, version: &str) -> std::io::Result<()> {
    fs::write(
        path,
        format!(
            "import {{ Type }} from \"typebox\";\n\
             export default function (pi: any) {{\n\
             \tpi.registerTool({{ name: \"which\", description: \"{version}\", parameters: Type.Object({{}}),\n\
             \t\tasync execute() {{ return {{ content: [{{ type: \"text\", text: \"{version}\" }}], details: {{}} }}; }} }});\n\
             }}\n"
        ),
    )
}

fn description(runner: &ExtensionRunner) -> Option<String> {
    let registrations = runner.registrations();
    registrations.extensions.first()?.tools.first()?.description.clone()
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn an_edited_extension_is_transpiled_again() -> TestResult {
    let Some((node, modules)) = environment("transpile cache") else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("which.ts");
    write_extension(&file, "first")?;
    let setup = setup(node, modules, &[&file])?;
    let runner = start(&setup).await?;
    assert_eq!(description(&runner).as_deref(), Some("first"));
    let cache = setup.config.agent_dir.join("extension-host/cache/jiti");
    assert!(!files_under(&cache).is_empty(), "the transpiled file is cached");

    // Same length, so only the content tells the versions apart.
    write_extension(&file, "again")?;
    runner.reload(None, false, None).await?;
    assert_eq!(description(&runner).as_deref(), Some("again"), "/reload sees the edit");
    runner.shutdown().await;

    let runner = start(&setup).await?;
    assert_eq!(
        description(&runner).as_deref(),
        Some("again"),
        "a new host sees the edit"
    );
    runner.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_corrupt_or_unwritable_cache_only_costs_time() -> TestResult {
    let Some((node, modules)) = environment("broken cache") else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("which.ts");
    write_extension(&file, "cached")?;
    let setup = setup(node.clone(), modules.clone(), &[&file])?;
    start(&setup).await?.shutdown().await;

    // Every cached file overwritten with garbage (jiti's; Node's too where Node 22 made some).
    let cache = setup.config.agent_dir.join("extension-host/cache");
    let cached = files_under(&cache);
    assert!(!cached.is_empty(), "the transpiled file is cached");
    for path in &cached {
        fs::write(path, b"\0garbage{{")?;
    }
    let runner = start(&setup).await?;
    assert!(
        runner.registrations().errors.is_empty(),
        "{:?}",
        runner.registrations().errors
    );
    assert_eq!(description(&runner).as_deref(), Some("cached"));
    runner.shutdown().await;

    // The cache folder cannot be made: a file is in its place.
    let unwritable = setup_with_file_for_cache(node, modules, &file)?;
    let runner = start(&unwritable).await?;
    assert!(
        runner.registrations().errors.is_empty(),
        "{:?}",
        runner.registrations().errors
    );
    assert_eq!(description(&runner).as_deref(), Some("cached"));
    runner.shutdown().await;
    Ok(())
}

fn setup_with_file_for_cache(
    node: std::path::PathBuf,
    modules: std::path::PathBuf,
    file: &Path,
) -> Result<Setup, std::io::Error> {
    let setup = setup(node, modules, &[file])?;
    let root = setup.config.agent_dir.join("extension-host");
    fs::create_dir_all(&root)?;
    fs::write(root.join("cache"), "not a folder")?;
    Ok(setup)
}
