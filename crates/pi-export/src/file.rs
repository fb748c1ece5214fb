//! Exporting a session file on disk to an HTML file (`pi --export <in.jsonl> [out.html]`).

use std::path::{Path, PathBuf};

use super::{export_session_html, ExportError, ExportOptions};

/// `pi-session-<input base name without .jsonl>.html`, as pi names an export by default.
pub fn default_output_name(input: &Path) -> String {
    let base = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = base.strip_suffix(".jsonl").unwrap_or(&base);
    format!("pi-session-{stem}.html")
}

/// Exports `input` with the default options; see [`export_file_with`].
pub fn export_file(input: &Path, output: Option<&Path>, cwd: &Path) -> Result<PathBuf, ExportError> {
    export_file_with(input, output, cwd, &ExportOptions::default())
}

/// Reads the session file `input`, renders it and writes the page to `output` (relative paths
/// are taken from `cwd`; default: [`default_output_name`] in `cwd`). Returns the written path.
pub fn export_file_with(
    input: &Path,
    output: Option<&Path>,
    cwd: &Path,
    options: &ExportOptions,
) -> Result<PathBuf, ExportError> {
    let input_abs = cwd.join(input);
    if !input_abs.is_file() {
        return Err(ExportError::NotFound(input.display().to_string()));
    }
    let bytes = std::fs::read(&input_abs).map_err(|source| ExportError::Read {
        path: input.display().to_string(),
        source,
    })?;
    let html = export_session_html(&String::from_utf8_lossy(&bytes), options).map_err(|e| match e {
        ExportError::InvalidSession(why) => ExportError::InvalidSession(format!("{}: {why}", input.display())),
        ExportError::Empty => ExportError::InvalidSession(format!("{}: the session has no entries", input.display())),
        other => other,
    })?;
    let out = match output {
        Some(p) => cwd.join(p),
        None => cwd.join(default_output_name(input)),
    };
    std::fs::write(&out, html).map_err(|source| ExportError::Write {
        path: out.display().to_string(),
        source,
    })?;
    Ok(out)
}
