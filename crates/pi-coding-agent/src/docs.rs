//! The user documentation built into the binary, and writing it out under the agent dir.
//!
//! The system prompt and some error messages name documentation files (`docs/providers.md`,
//! `docs/extensions.md`, ...). An installed `pi` is a single binary, so the files travel inside
//! it and are written to `<agentDir>/docs/` the first time a run needs them. A stamp file holds
//! the version and a hash of the embedded set: a run whose stamp matches reads one small file
//! and writes nothing. Writing is best effort: a folder that cannot be written leaves the paths
//! where the files would be, and the run goes on without a word.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One embedded file: its path below the docs folder and its text.
#[derive(Debug, Clone, Copy)]
pub struct DocFile {
    pub path: &'static str,
    pub text: &'static str,
}

macro_rules! doc_file {
    ($path:literal) => {
        DocFile {
            path: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/", $path)),
        }
    };
}

/// Every file of the repository's `docs/` folder that ships with the binary.
pub const FILES: &[DocFile] = &[
    doc_file!("README.md"),
    doc_file!("usage.md"),
    doc_file!("settings.md"),
    doc_file!("providers.md"),
    doc_file!("models.md"),
    doc_file!("custom-provider.md"),
    doc_file!("sessions.md"),
    doc_file!("compaction.md"),
    doc_file!("rpc.md"),
    doc_file!("json.md"),
    doc_file!("extensions.md"),
    doc_file!("extension-protocol.md"),
    doc_file!("mcp.md"),
    doc_file!("codemode.md"),
    doc_file!("keybindings.md"),
    doc_file!("themes.md"),
    doc_file!("skills.md"),
    doc_file!("prompt-templates.md"),
    doc_file!("packages.md"),
    doc_file!("tui.md"),
    doc_file!("sdk.md"),
    doc_file!("examples/README.md"),
    doc_file!("examples/extensions/README.md"),
    doc_file!("examples/models.json"),
    doc_file!("examples/themes/harbor.json"),
    doc_file!("examples/prompts/review.md"),
    doc_file!("examples/skills/changelog/SKILL.md"),
    doc_file!("examples/rpc/client.py"),
    doc_file!("examples/python-extension-host/host.py"),
];

/// The stamp file inside the docs folder; its text is [`stamp`].
pub const STAMP_FILE: &str = ".pi-docs-stamp";

/// The folder below the agent dir that receives the files.
pub const DIR_NAME: &str = "docs";

/// FNV-1a over every path and text, so a changed file changes the stamp even when the
/// version number does not. Computed at compile time.
const fn content_hash(files: &[DocFile]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < files.len() {
        let parts = [files[i].path.as_bytes(), files[i].text.as_bytes()];
        let mut p = 0;
        while p < parts.len() {
            let bytes = parts[p];
            let mut j = 0;
            while j < bytes.len() {
                hash ^= bytes[j] as u64;
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
                j += 1;
            }
            // A separator, so moving text from one file to the next changes the hash.
            hash ^= 0xff;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            p += 1;
        }
        i += 1;
    }
    hash
}

const CONTENT_HASH: u64 = content_hash(FILES);

/// The stamp text: the binary's version and the hash of the embedded set.
pub fn stamp() -> String {
    format!("{} {CONTENT_HASH:016x}\n", env!("CARGO_PKG_VERSION"))
}

/// The embedded text of `path` (relative to the docs folder), if it ships.
pub fn get(path: &str) -> Option<&'static str> {
    FILES.iter().find(|f| f.path == path).map(|f| f.text)
}

/// The docs folder of an agent dir.
pub fn dir_in(agent_dir: &Path) -> PathBuf {
    agent_dir.join(DIR_NAME)
}

/// What [`write_out`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The stamp matched: nothing was written.
    UpToDate,
    /// Every file and then the stamp were written.
    Written,
}

/// Write every embedded file below `dir` unless its stamp already matches. Each file goes
/// through a temporary name and a rename, so a reader (or a second `pi` starting at the same
/// moment) never sees half a file; the stamp is written last, so an interrupted write is
/// redone by the next run. Files of ours from an older version are overwritten; other files
/// in the folder are left alone.
pub fn write_out(dir: &Path) -> io::Result<WriteOutcome> {
    let want = stamp();
    let stamp_path = dir.join(STAMP_FILE);
    if std::fs::read_to_string(&stamp_path).is_ok_and(|have| have == want) {
        return Ok(WriteOutcome::UpToDate);
    }
    for file in FILES {
        write_atomically(&dir.join(file.path), file.text.as_bytes())?;
    }
    write_atomically(&stamp_path, want.as_bytes())?;
    Ok(WriteOutcome::Written)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The docs folder of this process's agent dir, written out on the first call of the
/// process. A failure to write is ignored on purpose: the paths still name where the files
/// belong, and a later run with a writable agent dir fills them in.
pub fn installed_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = dir_in(&crate::config::paths::agent_dir());
        let _ = write_out(&dir);
        dir
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::paths::DocsPaths;
    use crate::system_prompt::{build_system_prompt, SystemPromptInput};

    /// Every `docs/NAME.md` and `examples/NAME/` that `text` mentions.
    fn named_paths(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for prefix in ["docs/", "examples/"] {
            for (at, _) in text.match_indices(prefix) {
                let rest = &text[at + prefix.len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '/' || c == '_'))
                    .unwrap_or(rest.len());
                let name = rest[..end].trim_end_matches('.');
                if !name.is_empty() {
                    out.push(format!("{prefix}{name}"));
                }
            }
        }
        out
    }

    /// A `docs/x.md` maps to the embedded `x.md`; an `examples/x/` folder must hold a file.
    fn ships(named: &str) -> bool {
        let rel = named.strip_prefix("docs/").unwrap_or(named);
        if rel.ends_with('/') {
            FILES.iter().any(|f| f.path.starts_with(rel))
        } else {
            get(rel).is_some()
        }
    }

    #[test]
    fn the_system_prompt_names_only_shipped_files() {
        let docs = DocsPaths::embedded(Path::new("/agent/D"));
        let prompt = build_system_prompt(&SystemPromptInput {
            custom_prompt: None,
            tools: &[],
            append: &[],
            context_files: &[],
            skills: &[],
            cwd: Path::new("/work"),
            docs: &docs,
            mcp_servers: None,
            edits: &crate::system_prompt::PromptEdits::default(),
        });
        let named = named_paths(&prompt);
        assert!(
            named.len() >= 10,
            "the docs block names its topics: {named:?}\n{prompt}"
        );
        let missing: Vec<_> = named.iter().filter(|n| !ships(n)).collect();
        assert!(missing.is_empty(), "named but not shipped: {missing:?}");
        assert!(prompt.contains("Main documentation: /agent/D/README.md"), "{prompt}");
        assert!(prompt.contains("Further docs: /agent/D\n"), "{prompt}");
        assert!(prompt.contains("Examples: /agent/D/examples "), "{prompt}");
        assert!(get("README.md").is_some() && ships("examples/"));
    }

    /// Messages build docs paths by joining a page name to the docs folder: every such name in
    /// the sources of this crate (this file aside) and of the terminal UI must ship.
    #[test]
    fn every_docs_join_in_the_sources_ships() {
        // The terminal UI's crate builds the same paths from this crate's docs folder.
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stack = vec![root.join("src"), root.join("../pi-interactive/src")];
        let mut names = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("read src") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("docs.rs") {
                    let text = std::fs::read_to_string(&path).expect("read source");
                    for (at, pat) in text.match_indices("docs.join(\"") {
                        let rest = &text[at + pat.len()..];
                        if let Some(end) = rest.find('"') {
                            names.push((path.clone(), rest[..end].to_string()));
                        }
                    }
                }
            }
        }
        assert!(names.iter().any(|(_, n)| n == "providers.md"), "{names:?}");
        let missing: Vec<_> = names.iter().filter(|(_, n)| get(n).is_none()).collect();
        assert!(missing.is_empty(), "named in the sources but not shipped: {missing:?}");
    }

    /// `base/rel` with `.` and `..` resolved, as a path below the docs folder.
    fn resolve_link(base: &str, rel: &str) -> String {
        let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
        for part in rel.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        let joined = parts.join("/");
        if rel.ends_with('/') {
            format!("{joined}/")
        } else {
            joined
        }
    }

    #[test]
    fn every_relative_link_points_at_a_shipped_file() {
        let mut checked = 0;
        for file in FILES.iter().filter(|f| f.path.ends_with(".md")) {
            let base = file.path.rsplit_once('/').map_or("", |(dir, _)| dir);
            for (at, _) in file.text.match_indices("](") {
                let rest = &file.text[at + 2..];
                let Some(end) = rest.find(')') else { continue };
                let target = rest[..end].split('#').next().unwrap_or_default();
                if target.is_empty() || target.contains("://") {
                    continue;
                }
                let resolved = resolve_link(base, target);
                assert!(
                    ships(&resolved),
                    "{} links to {target} ({resolved}), which does not ship",
                    file.path
                );
                checked += 1;
            }
        }
        assert!(checked > 30, "only {checked} links checked");
    }

    #[test]
    fn the_example_files_load() {
        let models = get("examples/models.json").expect("models example");
        let config = crate::config::models_json::parse(models, &|p: &str| p == "openai").expect("valid models.json");
        assert!(config
            .providers
            .iter()
            .any(|(name, p)| name == "local" && p.models.len() == 2));

        let tmp = tempfile::tempdir().expect("tmp");
        let theme_path = tmp.path().join("harbor.json");
        std::fs::write(&theme_path, get("examples/themes/harbor.json").expect("theme example")).expect("write");
        let theme = crate::resources::themes::load_theme_file(&theme_path).expect("valid theme");
        assert_eq!(theme.name, "harbor");

        let skill_path = tmp.path().join("changelog").join("SKILL.md");
        std::fs::create_dir_all(skill_path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&skill_path, get("examples/skills/changelog/SKILL.md").expect("skill")).expect("write");
        let (skill, problems) =
            crate::resources::skills::load_skill_file(&skill_path, crate::resources::ResourceScope::User);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(skill.expect("skill loads").name, "changelog");
    }

    #[test]
    fn writing_out_is_idempotent_and_versioned() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("agent").join(DIR_NAME);
        assert_eq!(write_out(&dir).expect("first"), WriteOutcome::Written);
        for file in FILES {
            let on_disk = std::fs::read_to_string(dir.join(file.path)).expect("written");
            assert_eq!(on_disk, file.text, "{}", file.path);
        }
        let stamp_text = std::fs::read_to_string(dir.join(STAMP_FILE)).expect("stamp");
        assert!(stamp_text.starts_with(env!("CARGO_PKG_VERSION")), "{stamp_text}");

        // A matching stamp means nothing is touched, not even a file edited by hand.
        std::fs::write(dir.join("usage.md"), "edited").expect("edit");
        assert_eq!(write_out(&dir).expect("second"), WriteOutcome::UpToDate);
        assert_eq!(std::fs::read_to_string(dir.join("usage.md")).expect("read"), "edited");

        // Another version's stamp rewrites every file; files that are not ours stay.
        std::fs::write(dir.join(STAMP_FILE), "0.0.1 0000000000000000\n").expect("old stamp");
        std::fs::write(dir.join("notes-of-mine.md"), "mine").expect("own file");
        assert_eq!(write_out(&dir).expect("third"), WriteOutcome::Written);
        assert_eq!(
            std::fs::read_to_string(dir.join("usage.md")).expect("read"),
            get("usage.md").expect("usage")
        );
        assert_eq!(std::fs::read_to_string(dir.join(STAMP_FILE)).expect("stamp"), stamp());
        assert!(dir.join("notes-of-mine.md").exists());
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .expect("list")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }

    #[test]
    fn an_unwritable_folder_is_an_error_value_not_a_panic() {
        let tmp = tempfile::tempdir().expect("tmp");
        // A plain file where the folder should be: fails even for root.
        let blocked = tmp.path().join(DIR_NAME);
        std::fs::write(&blocked, "in the way").expect("block");
        assert!(write_out(&blocked).is_err());
        assert_eq!(std::fs::read_to_string(&blocked).expect("kept"), "in the way");
    }

    /// A page added to the repository's `docs/` but not to [`FILES`] would be missing from an
    /// installed binary.
    #[test]
    fn every_file_of_the_docs_folder_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        let mut stack = vec![root.clone()];
        let mut missing = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("read docs") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path
                    .strip_prefix(&root)
                    .expect("below docs")
                    .to_string_lossy()
                    .replace('\\', "/");
                if get(&rel).is_none() {
                    missing.push(rel);
                }
            }
        }
        assert!(missing.is_empty(), "in docs/ but not in docs::FILES: {missing:?}");
    }

    #[test]
    fn the_hash_follows_the_content() {
        let a = [DocFile {
            path: "a.md",
            text: "xy",
        }];
        let b = [DocFile {
            path: "a.md",
            text: "xz",
        }];
        let moved = [DocFile {
            path: "a.mdx",
            text: "y",
        }];
        assert_ne!(content_hash(&a), content_hash(&b));
        assert_ne!(content_hash(&a), content_hash(&moved));
        assert_eq!(content_hash(&a), content_hash(&a));
    }

    #[test]
    fn every_embedded_file_has_text_and_a_unique_path() {
        let mut seen = std::collections::HashSet::new();
        for file in FILES {
            assert!(file.text.len() > 100, "{} is nearly empty", file.path);
            assert!(seen.insert(file.path), "{} listed twice", file.path);
        }
    }
}
