//! pi's packages load in the host only when an extension uses them: naming one in an import
//! (which jiti turns into an awaited module object) costs nothing.

use std::fs;
use std::path::Path;

use pi_extensions::ToolCall;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// A package folder whose evaluation records its name in `globalThis.__piLoaded`.
fn stand_in(root: &Path, name: &str, exports: &[(&str, &str)], body: &str) -> std::io::Result<()> {
    let dir = root.join("node_modules/@earendil-works").join(name);
    fs::create_dir_all(&dir)?;
    let map: serde_json::Map<String, Value> = exports
        .iter()
        .map(|(subpath, file)| ((*subpath).to_string(), json!({ "import": format!("./{file}") })))
        .collect();
    let manifest =
        json!({ "name": format!("@earendil-works/{name}"), "version": "1.6.0", "type": "module", "exports": map });
    fs::write(dir.join("package.json"), manifest.to_string())?;
    for (_, file) in exports {
        fs::write(
            dir.join(file),
            format!("(globalThis.__piLoaded ??= []).push({name:?});\n{body}\n"),
        )?;
    }
    Ok(())
}

#[tokio::test]
async fn packages_named_at_load_time_are_evaluated_on_first_use() -> TestResult {
    let Some((node, real_modules)) = environment("lazy packages") else {
        return Ok(());
    };
    // jiti and typebox are the real ones; pi's three packages are stand-ins that say when they
    // are evaluated.
    let modules = tempfile::tempdir()?;
    let node_modules = modules.path().join("node_modules");
    fs::create_dir_all(&node_modules)?;
    for name in ["jiti", "typebox"] {
        let real = real_modules.ancestors().find_map(|dir| {
            let candidate = if dir.ends_with("node_modules") {
                dir.join(name)
            } else {
                dir.join("node_modules").join(name)
            };
            candidate.is_dir().then_some(candidate)
        });
        let real = real.ok_or_else(|| format!("{name} not found from {}", real_modules.display()))?;
        std::os::unix::fs::symlink(real, node_modules.join(name))?;
    }
    stand_in(
        modules.path(),
        "pi-tui",
        &[(".", "index.js")],
        "export function matchesKey(data, key) { return data === key; }",
    )?;
    stand_in(
        modules.path(),
        "pi-ai",
        &[(".", "index.js"), ("./compat", "compat.js")],
        "export const complete = () => undefined;",
    )?;
    stand_in(modules.path(), "pi-agent-core", &[(".", "index.js")], "export {};")?;

    let file = fixture("lazy-imports.ts");
    let setup = setup(node, modules.path().to_path_buf(), &[&file])?;
    let runner = start(&setup).await?;
    assert!(
        runner.registrations().errors.is_empty(),
        "{:?}",
        runner.registrations().errors
    );
    let call = ToolCall {
        call_id: "lazy-1".into(),
        name: "loaded_packages".into(),
        params: json!({}),
    };
    let result = runner.call_tool(call, None, &CancellationToken::new()).await?;
    assert!(!result.is_error, "{:?}", result.content);
    let text = result.content[0]["text"].as_str().ok_or("no text")?;
    let seen: Value = serde_json::from_str(text)?;
    // pi-ai's `Type` (TypeBox's) served the schema without evaluating pi-ai; pi-tui was
    // evaluated by the first call that used it.
    assert_eq!(
        seen,
        json!({ "atLoad": [], "before": [], "matched": false, "after": ["pi-tui"] })
    );
    runner.shutdown().await;
    Ok(())
}
