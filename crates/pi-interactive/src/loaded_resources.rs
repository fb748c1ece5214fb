//! The loaded-resources listing under the startup header, as pi 1.6 shows it unless
//! `quietStartup` hides it: `[Context]`, `[Skills]`, `[Prompts]` and `[Extensions]`, each a
//! one-line list, or (while tool output is expanded) grouped by scope (project, user, path)
//! with full paths and packages under their source. `[Extension issues]` follows, shown
//! even under `quietStartup`: each issue under its extension's file, named with where the
//! extension came from as pi 1.6 names it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::theme::UiTheme;
use pi_coding_agent::resources::loader::Resources;
use pi_coding_agent::resources::{PackageScope, ResourceScope};

/// One listed resource: its file, its scope group, the package it came with, and what the
/// expanded listing shows for it.
struct Item {
    path: PathBuf,
    group: Group,
    package: Option<String>,
    shown: String,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Project,
    User,
    Path,
}

impl Group {
    fn name(self) -> &'static str {
        match self {
            Group::Project => "project",
            Group::User => "user",
            Group::Path => "path",
        }
    }
}

/// A scope's group and package source.
fn placed(scope: &ResourceScope) -> (Group, Option<String>) {
    match scope {
        ResourceScope::User => (Group::User, None),
        ResourceScope::Project => (Group::Project, None),
        ResourceScope::Path => (Group::Path, None),
        ResourceScope::Package(origin) => {
            let group = match origin.scope {
                PackageScope::User => Group::User,
                PackageScope::Project => Group::Project,
                _ => Group::Path,
            };
            let package =
                (origin.source.starts_with("npm:") || origin.source.starts_with("git:")).then(|| origin.source.clone());
            (group, package)
        }
    }
}

/// Text compared the way the listing sorts (case left aside first).
fn sort_key(s: &str) -> (String, String) {
    (s.to_lowercase(), s.to_string())
}

/// A path with the home folder written `~`.
fn home_short(p: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// What the listing needs to know beside the resources.
pub struct Listing<'a> {
    pub theme: &'a UiTheme,
    pub resources: &'a Resources,
    /// Loaded extensions' files with where they came from (a package's, for those that came
    /// with one).
    pub extensions: Vec<(PathBuf, ResourceScope)>,
    pub cwd: &'a Path,
    pub home: Option<PathBuf>,
    /// The loaded extensions found in the `extensions/` folders of the agent folder or the
    /// project (pi 1.6 names them `auto (user)`, `auto (project)` in issues).
    pub auto_discovered: Vec<PathBuf>,
    /// Problems with the extensions: pi 1.6's `[Extension issues]` section.
    pub issues: Vec<Issue>,
    /// Whether the listing itself is shown (not under `quietStartup`); the issues always are.
    pub details: bool,
}

/// One entry of `[Extension issues]`: the extension's file, what is wrong, and whether it is
/// an error (a load failure) rather than a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub path: String,
    pub message: String,
    pub error: bool,
}

impl Listing<'_> {
    /// The sections as text (empty when nothing is loaded); `expanded`: the grouped form.
    pub fn text(&self, expanded: bool) -> String {
        if !self.details {
            return self.issues_text().map(|t| format!("{t}\n")).unwrap_or_default();
        }
        let t = self.theme;
        let home = self.home.as_deref();
        let mut out: Vec<String> = Vec::new();
        let mut section = |name: &str, body: String| {
            out.push(format!("{}\n{body}", t.paint("mdHeading", &format!("[{name}]"))));
        };
        let compact = |mut labels: Vec<String>, sort: bool| {
            if sort {
                labels.sort_by_key(|l| sort_key(l));
            }
            t.paint("dim", &format!("  {}", labels.join(", ")))
        };

        let context = &self.resources.context_files;
        let has_context = !context.is_empty();
        if has_context {
            let body = if expanded {
                context
                    .iter()
                    .map(|f| t.paint("dim", &format!("  {}", home_short(&f.path, home))))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                compact(
                    context
                        .iter()
                        .map(|f| match f.path.strip_prefix(self.cwd) {
                            Ok(rel) => rel.display().to_string(),
                            Err(_) => home_short(&f.path, home),
                        })
                        .collect(),
                    false,
                )
            };
            section("Context", body);
        }

        let skills = &self.resources.skills.skills;
        if !skills.is_empty() {
            let body = if expanded {
                let items = skills
                    .iter()
                    .map(|s| {
                        let (group, package) = placed(&s.scope);
                        let shown = match (&package, &s.scope) {
                            (Some(_), ResourceScope::Package(o)) => package_path(&s.file_path, &o.base_dir, home),
                            _ => home_short(&s.file_path, home),
                        };
                        Item {
                            path: s.file_path.clone(),
                            group,
                            package,
                            shown,
                        }
                    })
                    .collect();
                grouped(t, items)
            } else {
                compact(skills.iter().map(|s| s.name.clone()).collect(), true)
            };
            section("Skills", body);
        }

        let templates = &self.resources.templates.templates;
        if !templates.is_empty() {
            let body = if expanded {
                let items = templates
                    .iter()
                    .map(|p| {
                        let (group, package) = placed(&p.scope);
                        Item {
                            path: p.file_path.clone(),
                            group,
                            package,
                            shown: format!("/{}", p.name),
                        }
                    })
                    .collect();
                grouped(t, items)
            } else {
                compact(templates.iter().map(|p| format!("/{}", p.name)).collect(), true)
            };
            section("Prompts", body);
        }

        if !self.extensions.is_empty() {
            let body = if expanded {
                let items = self
                    .extensions
                    .iter()
                    .map(|(path, scope)| {
                        let (group, package) = placed(scope);
                        let shown = match (&package, scope) {
                            (Some(_), ResourceScope::Package(o)) => package_path(path, &o.base_dir, home),
                            _ => home_short(path, home),
                        };
                        Item {
                            path: path.clone(),
                            group,
                            package,
                            shown: without_index(&shown).to_string(),
                        }
                    })
                    .collect();
                grouped(t, items)
            } else {
                compact(extension_labels(&self.extensions, home), true)
            };
            section("Extensions", body);
        }
        out.extend(self.issues_text());
        if out.is_empty() {
            return String::new();
        }
        // A blank line before the context files, as pi spaces them from the header.
        let lead = if has_context { "\n" } else { "" };
        format!("{lead}{}\n", out.join("\n\n"))
    }
}

impl Listing<'_> {
    /// `[Extension issues]` with its lines, when there are any: each issue's extension, then
    /// the message under it, in the error colour for a load failure.
    fn issues_text(&self) -> Option<String> {
        if self.issues.is_empty() {
            return None;
        }
        let t = self.theme;
        let lines: Vec<String> = self
            .issues
            .iter()
            .flat_map(|issue| {
                let token = if issue.error { "error" } else { "warning" };
                // A message of several lines (a syntax error and where it is) keeps its colour
                // on each; only its first line is indented, as pi 1.6 prints it.
                let message = format!("    {}", issue.message);
                std::iter::once(t.paint(token, &format!("  {}", self.issue_source(&issue.path))))
                    .chain(message.split('\n').map(|l| t.paint(token, l)).collect::<Vec<_>>())
            })
            .collect();
        Some(format!(
            "{}\n{}",
            t.paint("warning", "[Extension issues]"),
            lines.join("\n")
        ))
    }

    /// An extension's file with where it came from, as pi 1.6 names it in warnings:
    /// `auto (user) ~/.pi/agent/extensions/x.ts` for one found in the agent folder's
    /// `extensions/` (`auto (project)` in the project's), `user`/`project` for one the
    /// settings name, `path (temp) /tmp/x.ts` for one given on the command line,
    /// `npm:pkg (user) extensions/x.ts` for an npm or git package's, and a local package's
    /// source with its scope before the whole path. A file that did not load is named by its
    /// path alone.
    fn issue_source(&self, path: &str) -> String {
        let home = self.home.as_deref();
        let file = Path::new(path);
        let scope = self.extensions.iter().find(|(p, _)| p == file).map(|(_, s)| s);
        let auto = self.auto_discovered.iter().any(|p| p == file);
        match scope {
            Some(ResourceScope::User) if auto => format!("auto (user) {}", home_short(file, home)),
            Some(ResourceScope::Project) if auto => format!("auto (project) {}", home_short(file, home)),
            Some(ResourceScope::User) => format!("user {}", home_short(file, home)),
            Some(ResourceScope::Project) => format!("project {}", home_short(file, home)),
            // What `-e` named by a local path reads as a plain path given for this run.
            Some(ResourceScope::Package(origin))
                if origin.scope == PackageScope::Temporary
                    && !origin.source.starts_with("npm:")
                    && !origin.source.starts_with("git:") =>
            {
                format!("path (temp) {}", home_short(file, home))
            }
            Some(ResourceScope::Package(origin)) => {
                let scope = match origin.scope {
                    PackageScope::User => " (user)",
                    PackageScope::Project => " (project)",
                    _ => " (temp)",
                };
                let packaged = origin.source.starts_with("npm:") || origin.source.starts_with("git:");
                let shown = match file.strip_prefix(&origin.base_dir) {
                    Ok(rel) if packaged && !rel.as_os_str().is_empty() => rel.display().to_string(),
                    _ => home_short(file, home),
                };
                format!("{}{scope} {shown}", origin.source)
            }
            Some(ResourceScope::Path) => format!("path (temp) {}", home_short(file, home)),
            None => home_short(file, home),
        }
    }
}

/// A package's file relative to the package's folder.
fn package_path(file: &Path, base: &Path, home: Option<&Path>) -> String {
    match file.strip_prefix(base) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => home_short(file, home),
    }
}

/// An extension's path without a trailing `/index.ts` or `/index.js`.
fn without_index(p: &str) -> &str {
    p.strip_suffix("/index.ts")
        .or_else(|| p.strip_suffix("/index.js"))
        .unwrap_or(p)
}

/// The label of an npm or git package's extension: the package (`@scope/name`, or the git
/// repository's path), and after a colon the file below the package's `extensions/` folder
/// (none for the package's own `index.ts`; a folder's `index.ts` is named by its folder).
fn package_label(path: &Path, source: &str, base: &Path, home: Option<&Path>) -> String {
    use pi_coding_agent::packages::source::PackageSpec;
    let package = match PackageSpec::parse(source) {
        PackageSpec::Git(git) if !git.path.is_empty() => git.path,
        _ => source
            .strip_prefix("npm:")
            .filter(|s| !s.is_empty())
            .unwrap_or(source)
            .to_string(),
    };
    let short = package_path(path, base, home);
    let inner = short.strip_prefix("extensions/").unwrap_or(&short);
    let (dir, file) = inner.rsplit_once('/').unwrap_or(("", inner));
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    if stem != "index" {
        format!("{package}:{inner}")
    } else if dir.is_empty() {
        package
    } else {
        format!("{package}:{dir}")
    }
}

/// Short names for extensions: a package's by [`package_label`], the others by the fewest
/// trailing path parts that tell them apart from each other (a folder's `index.ts` is named
/// by its folder).
fn extension_labels(extensions: &[(PathBuf, ResourceScope)], home: Option<&Path>) -> Vec<String> {
    let (packaged, plain): (Vec<_>, Vec<_>) = extensions.iter().partition(|(_, scope)| placed(scope).1.is_some());
    let mut labels = path_labels(&plain, home);
    labels.extend(packaged.iter().filter_map(|(path, scope)| match scope {
        ResourceScope::Package(o) => Some(package_label(path, &o.source, &o.base_dir, home)),
        _ => None,
    }));
    labels
}

/// The fewest trailing path parts that tell each extension apart from the others.
fn path_labels(extensions: &[&(PathBuf, ResourceScope)], home: Option<&Path>) -> Vec<String> {
    let parts: Vec<Vec<String>> = extensions
        .iter()
        .map(|(p, _)| {
            let shown = home_short(p, home);
            let mut segs: Vec<String> = shown
                .split('/')
                .filter(|s| !s.is_empty() && *s != "~")
                .map(str::to_string)
                .collect();
            if segs.len() > 1 && segs.last().is_some_and(|l| l == "index.ts" || l == "index.js") {
                segs.pop();
            }
            segs
        })
        .collect();
    let tail = |segs: &[String], n: usize| segs[segs.len().saturating_sub(n)..].join("/");
    parts
        .iter()
        .enumerate()
        .map(|(i, segs)| {
            (1..=segs.len())
                .map(|n| (n, tail(segs, n)))
                .find(|(n, cand)| {
                    parts
                        .iter()
                        .enumerate()
                        .all(|(j, other)| j == i || tail(other, *n) != *cand)
                })
                .map_or_else(|| segs.join("/"), |(_, cand)| cand)
        })
        .collect()
}

/// One scope's files, and its packages' files by package source.
type ScopeGroup = (Vec<Item>, BTreeMap<String, Vec<Item>>);

/// The expanded form: each scope group with its files, then its packages with theirs.
fn grouped(t: &UiTheme, items: Vec<Item>) -> String {
    let mut groups: BTreeMap<Group, ScopeGroup> = BTreeMap::new();
    for item in items {
        let g = groups.entry(item.group).or_default();
        match item.package.clone() {
            Some(source) => g.1.entry(source).or_default().push(item),
            None => g.0.push(item),
        }
    }
    let by_path = |a: &Item, b: &Item| sort_key(&a.path.to_string_lossy()).cmp(&sort_key(&b.path.to_string_lossy()));
    let mut lines = Vec::new();
    for (group, (mut paths, packages)) in groups {
        lines.push(format!("  {}", t.paint("accent", group.name())));
        paths.sort_by(by_path);
        lines.extend(paths.iter().map(|i| t.paint("dim", &format!("    {}", i.shown))));
        let mut packages: Vec<_> = packages.into_iter().collect();
        packages.sort_by_key(|(source, _)| sort_key(source));
        for (source, mut items) in packages {
            lines.push(format!("    {}", t.paint("mdLink", &source)));
            items.sort_by(by_path);
            lines.extend(items.iter().map(|i| t.paint("dim", &format!("      {}", i.shown))));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_labels_use_the_fewest_parts_that_differ() {
        let exts = vec![
            (
                PathBuf::from("/home/u/.pi/agent/extensions/hello.ts"),
                ResourceScope::User,
            ),
            (PathBuf::from("/work/a/tools/index.ts"), ResourceScope::Path),
            (PathBuf::from("/work/b/tools/index.ts"), ResourceScope::Path),
        ];
        assert_eq!(
            extension_labels(&exts, Some(Path::new("/home/u"))),
            ["hello.ts", "a/tools", "b/tools"]
        );
    }

    #[test]
    fn package_extensions_are_named_by_their_package_as_pi_names_them() {
        use pi_coding_agent::resources::PackageOrigin;
        let package = |source: &str, base: &str| {
            ResourceScope::Package(PackageOrigin {
                source: source.to_string(),
                scope: PackageScope::User,
                base_dir: PathBuf::from(base),
            })
        };
        let git = package("git:github.com/acme/pi-tools", "/a/git/github.com/acme/pi-tools");
        let npm = package("npm:@acme/kit@1.2.0", "/n/node_modules/@acme/kit");
        let local = package("../pkg", "/t/pkg");
        let exts = vec![
            (
                PathBuf::from("/a/git/github.com/acme/pi-tools/extensions/hello.ts"),
                git.clone(),
            ),
            (
                PathBuf::from("/a/git/github.com/acme/pi-tools/extensions/multi/index.ts"),
                git,
            ),
            (PathBuf::from("/n/node_modules/@acme/kit/index.ts"), npm.clone()),
            (PathBuf::from("/n/node_modules/@acme/kit/lib/extra.js"), npm),
            // A local package is named by its path, as other files are.
            (PathBuf::from("/t/pkg/extensions/hello.ts"), local.clone()),
            (PathBuf::from("/t/pkg/extensions/multi/index.ts"), local),
            (
                PathBuf::from("/home/u/ex/examples/extensions/hello.ts"),
                ResourceScope::Path,
            ),
        ];
        let theme = UiTheme::fallback();
        let resources = Resources::default();
        let listing = Listing {
            theme: &theme,
            resources: &resources,
            extensions: exts,
            cwd: Path::new("/work"),
            home: Some(PathBuf::from("/home/u")),
            auto_discovered: Vec::new(),
            issues: Vec::new(),
            details: true,
        };
        let plain = |s: String| pi_tui::strip_ansi(&s).to_string();
        assert_eq!(
            plain(listing.text(false)),
            "[Extensions]\n  @acme/kit@1.2.0, @acme/kit@1.2.0:lib/extra.js, acme/pi-tools:hello.ts, \
             acme/pi-tools:multi, examples/extensions/hello.ts, multi, pkg/extensions/hello.ts\n"
        );
        assert_eq!(
            plain(listing.text(true)),
            "[Extensions]\n  user\n    /t/pkg/extensions/hello.ts\n    /t/pkg/extensions/multi\n    \
             git:github.com/acme/pi-tools\n      extensions/hello.ts\n      extensions/multi\n    \
             npm:@acme/kit@1.2.0\n      index.ts\n      lib/extra.js\n  path\n    ~/ex/examples/extensions/hello.ts\n"
        );
    }

    #[test]
    fn paths_show_home_as_a_tilde_and_drop_index_files() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(home_short(Path::new("/home/u/x/y.ts"), home), "~/x/y.ts");
        assert_eq!(home_short(Path::new("/tmp/y.ts"), home), "/tmp/y.ts");
        assert_eq!(without_index("~/ext/index.ts"), "~/ext");
    }

    #[test]
    fn collapsed_and_expanded_sections_follow_pi() {
        let theme = UiTheme::fallback();
        let resources = Resources::default();
        let listing = Listing {
            theme: &theme,
            resources: &resources,
            extensions: vec![
                (PathBuf::from("/tmp/e/zeta.ts"), ResourceScope::Path),
                (
                    PathBuf::from("/home/u/.pi/agent/extensions/alpha.ts"),
                    ResourceScope::User,
                ),
            ],
            cwd: Path::new("/work"),
            home: Some(PathBuf::from("/home/u")),
            auto_discovered: Vec::new(),
            issues: Vec::new(),
            details: true,
        };
        let plain = |s: String| pi_tui::strip_ansi(&s).to_string();
        assert_eq!(plain(listing.text(false)), "[Extensions]\n  alpha.ts, zeta.ts\n");
        assert_eq!(
            plain(listing.text(true)),
            "[Extensions]\n  user\n    ~/.pi/agent/extensions/alpha.ts\n  path\n    /tmp/e/zeta.ts\n"
        );
        let empty = Listing {
            extensions: Vec::new(),
            ..listing
        };
        assert_eq!(empty.text(false), "");
    }

    #[test]
    fn issues_name_each_extension_by_where_it_came_from_as_pi_does() {
        use pi_coding_agent::resources::PackageOrigin;
        let package = |source: &str, scope: PackageScope, base: &str| {
            ResourceScope::Package(PackageOrigin {
                source: source.to_string(),
                scope,
                base_dir: PathBuf::from(base),
            })
        };
        let exts = vec![
            (
                PathBuf::from("/home/u/.pi/agent/extensions/auto.ts"),
                ResourceScope::User,
            ),
            (PathBuf::from("/w/p/.pi/extensions/local.ts"), ResourceScope::Project),
            (PathBuf::from("/home/u/shared/listed.ts"), ResourceScope::User),
            (PathBuf::from("/w/listed.ts"), ResourceScope::Project),
            (PathBuf::from("/tmp/cli.ts"), ResourceScope::Path),
            (
                PathBuf::from("/tmp/dir/extensions/d.ts"),
                package("/tmp/dir", PackageScope::Temporary, "/tmp/dir"),
            ),
            (
                PathBuf::from("/pk/extensions/k.ts"),
                package("../pk", PackageScope::User, "/pk"),
            ),
            (
                PathBuf::from("/n/node_modules/kit/extensions/x.ts"),
                package("npm:kit", PackageScope::Project, "/n/node_modules/kit"),
            ),
        ];
        let theme = UiTheme::fallback();
        let resources = Resources::default();
        let warn = |path: &str| Issue {
            path: path.to_string(),
            message: "m".to_string(),
            error: false,
        };
        let mut issues: Vec<Issue> = exts.iter().map(|(p, _)| warn(&p.display().to_string())).collect();
        issues.insert(
            0,
            Issue {
                path: "/home/u/.pi/agent/extensions/broken.ts".into(),
                message: "Failed to load extension: boom".into(),
                error: true,
            },
        );
        let listing = Listing {
            theme: &theme,
            resources: &resources,
            extensions: exts,
            cwd: Path::new("/w/p"),
            home: Some(PathBuf::from("/home/u")),
            auto_discovered: vec![
                PathBuf::from("/home/u/.pi/agent/extensions/auto.ts"),
                PathBuf::from("/w/p/.pi/extensions/local.ts"),
            ],
            issues,
            details: false,
        };
        let plain = pi_tui::strip_ansi(&listing.text(false)).to_string();
        let named: Vec<&str> = plain.lines().skip(1).step_by(2).collect();
        assert_eq!(
            named,
            [
                "  ~/.pi/agent/extensions/broken.ts",
                "  auto (user) ~/.pi/agent/extensions/auto.ts",
                "  auto (project) /w/p/.pi/extensions/local.ts",
                "  user ~/shared/listed.ts",
                "  project /w/listed.ts",
                "  path (temp) /tmp/cli.ts",
                "  path (temp) /tmp/dir/extensions/d.ts",
                "  ../pk (user) /pk/extensions/k.ts",
                "  npm:kit (project) extensions/x.ts",
            ],
            "{plain}"
        );
        // Under quietStartup only the issues show.
        assert!(plain.starts_with("[Extension issues]\n"), "{plain}");
        assert!(!plain.contains("[Extensions]"), "{plain}");
        assert!(listing
            .text(false)
            .contains(&theme.paint("error", "    Failed to load extension: boom")));
    }
}
