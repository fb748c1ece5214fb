//! What `pi config` shows and changes: resolved resources grouped by where they come from
//! (each package, the settings entries, the pi folders), and turning one on or off by
//! writing a `+path`/`-path` pattern into the right settings list.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::locations::{Locations, Scope};
use super::manager::relative_path;
use super::resolve::{Origin, ResolvedPaths, ResolvedResource, ResourceKind};
use crate::config::settings::{SettingsManager, SettingsScope};

/// One resource line of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigItem {
    pub kind: ResourceKind,
    pub resource: ResolvedResource,
    /// The short name shown (`SKILL.md` shows its folder).
    pub name: String,
}

/// The resources of one kind inside a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subgroup {
    pub kind: ResourceKind,
    pub items: Vec<ConfigItem>,
}

/// The resources of one origin and scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub label: String,
    pub scope: Scope,
    pub origin: Origin,
    pub subgroups: Vec<Subgroup>,
}

pub fn kind_label(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Extensions => "Extensions",
        ResourceKind::Skills => "Skills",
        ResourceKind::Prompts => "Prompts",
        ResourceKind::Themes => "Themes",
    }
}

fn group_label(origin: &Origin, scope: Scope) -> String {
    match (origin, scope) {
        (Origin::Package(source), _) => format!("{source} ({})", scope.as_str()),
        (Origin::Auto, Scope::User) => "User (~/.pi/agent/)".to_string(),
        (Origin::Auto, Scope::Project) => "Project (.pi/)".to_string(),
        (Origin::Settings, Scope::User) => "User settings".to_string(),
        (Origin::Settings, Scope::Project) => "Project settings".to_string(),
    }
}

fn display_name(path: &Path, kind: ResourceKind) -> String {
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let file = name(Some(path));
    let parent = name(path.parent());
    match kind {
        ResourceKind::Extensions if parent != "extensions" => format!("{parent}/{file}"),
        ResourceKind::Skills if file == "SKILL.md" => parent,
        _ => file,
    }
}

/// Packages first, user before project; inside a group the kinds in their usual order and
/// the items by name.
pub fn build_groups(resolved: &ResolvedPaths) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for kind in ResourceKind::ALL {
        for r in resolved.of(kind) {
            let idx = match groups.iter().position(|g| g.origin == r.origin && g.scope == r.scope) {
                Some(i) => i,
                None => {
                    groups.push(Group {
                        label: group_label(&r.origin, r.scope),
                        scope: r.scope,
                        origin: r.origin.clone(),
                        subgroups: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let group = &mut groups[idx];
            let sub = match group.subgroups.iter().position(|s| s.kind == kind) {
                Some(i) => i,
                None => {
                    group.subgroups.push(Subgroup {
                        kind,
                        items: Vec::new(),
                    });
                    group.subgroups.len() - 1
                }
            };
            group.subgroups[sub].items.push(ConfigItem {
                kind,
                resource: r.clone(),
                name: display_name(&r.path, kind),
            });
        }
    }
    let order = |g: &Group| {
        let package = !matches!(g.origin, Origin::Package(_));
        let project = g.scope == Scope::Project;
        let source = match &g.origin {
            Origin::Package(s) => s.clone(),
            Origin::Settings => "local".into(),
            Origin::Auto => "auto".into(),
        };
        (package, project, source)
    };
    groups.sort_by_key(order);
    for g in &mut groups {
        for s in &mut g.subgroups {
            s.items.sort_by(|a, b| a.name.cmp(&b.name));
        }
    }
    groups
}

fn settings_scope(scope: Scope) -> SettingsScope {
    match scope {
        Scope::User => SettingsScope::Global,
        Scope::Project => SettingsScope::Project,
    }
}

fn strip_prefix_marker(p: &str) -> &str {
    p.strip_prefix(['!', '+', '-']).unwrap_or(p)
}

/// `list` without any pattern for `pattern`, plus `+pattern` or `-pattern`.
fn with_override(list: &[Value], pattern: &str, enabled: bool) -> Vec<Value> {
    let mut out: Vec<Value> = list
        .iter()
        .filter(|v| v.as_str().is_none_or(|s| strip_prefix_marker(s) != pattern))
        .cloned()
        .collect();
    out.push(Value::String(format!("{}{pattern}", if enabled { '+' } else { '-' })));
    out
}

fn posix(rel: String) -> String {
    rel.replace('\\', "/")
}

/// Enable or disable one resource in the settings; returns whether anything was written.
pub fn toggle(settings: &mut SettingsManager, loc: &Locations, item: &ConfigItem, enabled: bool) -> bool {
    let r = &item.resource;
    let scope = settings_scope(r.scope);
    let map = match r.scope {
        Scope::User => settings.global_settings(),
        Scope::Project => settings.project_settings(),
    };
    match &r.origin {
        Origin::Settings | Origin::Auto => {
            let pattern = posix(relative_path(&loc.base_dir(r.scope), &r.path));
            let current = map
                .get(item.kind.key())
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let updated = with_override(&current, &pattern, enabled);
            settings.set(scope, item.kind.key(), Some(Value::Array(updated)));
            true
        }
        Origin::Package(source) => {
            let mut packages = map
                .get("packages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let Some(idx) = packages.iter().position(|p| match p {
                Value::String(s) => s == source,
                Value::Object(o) => o.get("source").and_then(Value::as_str) == Some(source),
                _ => false,
            }) else {
                return false;
            };
            let mut entry = match &packages[idx] {
                Value::Object(o) => o.clone(),
                _ => {
                    let mut o = Map::new();
                    o.insert("source".into(), Value::String(source.clone()));
                    o
                }
            };
            let base: PathBuf = if r.base_dir.as_os_str().is_empty() {
                r.path.parent().map(Path::to_path_buf).unwrap_or_default()
            } else {
                r.base_dir.clone()
            };
            let pattern = posix(relative_path(&base, &r.path));
            let current = entry
                .get(item.kind.key())
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            entry.insert(
                item.kind.key().into(),
                Value::Array(with_override(&current, &pattern, enabled)),
            );
            packages[idx] = Value::Object(entry);
            settings.set(scope, "packages", Some(Value::Array(packages)));
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::paths::Paths;
    use crate::packages::resolve::resolve_all;
    use std::fs;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mk");
        fs::write(path, text).expect("write");
    }

    #[test]
    fn groups_and_toggles_round_trip() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().canonicalize().expect("canon");
        let paths = Paths::new(root.join("agent"), root.join("proj"), root.join("home"));
        write(&paths.settings_path(), r#"{"packages": ["../pkg"]}"#);
        write(&root.join("pkg/skills/pk/SKILL.md"), "x");
        write(&root.join("agent/prompts/mine.md"), "x");
        write(&root.join("proj/.pi/prompts/proj.md"), "x");
        let mut settings = SettingsManager::load(&paths);
        let loc = Locations::new(paths.clone(), None);
        let (resolved, _) = resolve_all(&loc, &settings, None);
        let groups = build_groups(&resolved);
        let labels: Vec<&str> = groups.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(labels, ["../pkg (user)", "User (~/.pi/agent/)", "Project (.pi/)"]);
        assert_eq!(groups[0].subgroups[0].items[0].name, "pk");

        // Off and on again: the pattern is replaced, not piled up.
        let skill = groups[0].subgroups[0].items[0].clone();
        assert!(toggle(&mut settings, &loc, &skill, false));
        assert!(toggle(&mut settings, &loc, &skill, false));
        let prompt = groups[1].subgroups[0].items[0].clone();
        assert!(toggle(&mut settings, &loc, &prompt, false));
        let project = groups[2].subgroups[0].items[0].clone();
        assert!(toggle(&mut settings, &loc, &project, false));
        let global: Value = serde_json::from_str(&fs::read_to_string(paths.settings_path()).expect("r")).expect("j");
        assert_eq!(
            global,
            serde_json::json!({
                "packages": [{"source": "../pkg", "skills": ["-skills/pk/SKILL.md"]}],
                "prompts": ["-prompts/mine.md"]
            })
        );
        let project_settings: Value =
            serde_json::from_str(&fs::read_to_string(paths.project_settings_path()).expect("r")).expect("j");
        assert_eq!(project_settings, serde_json::json!({"prompts": ["-prompts/proj.md"]}));

        // The settings now disable all three.
        let settings = SettingsManager::load(&paths);
        let (resolved, _) = resolve_all(&loc, &settings, None);
        assert!(resolved.skills.iter().all(|r| !r.enabled));
        assert!(resolved.prompts.iter().all(|r| !r.enabled));
        let mut settings = settings;
        assert!(toggle(&mut settings, &loc, &skill, true));
        let (resolved, _) = resolve_all(&loc, &settings, None);
        assert!(resolved.skills[0].enabled);
    }
}
