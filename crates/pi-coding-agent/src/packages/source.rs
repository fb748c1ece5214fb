//! Package source strings (`npm:…`, `git:…`, protocol URLs, local paths): parsing, pinning
//! and the identity used to match, dedupe and remove packages.

use std::path::Path;

use crate::resources::discovery::resolve_resource_path;

/// An npm package: `npm:<name>[@version]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmSource {
    /// Everything after `npm:` (what `npm install` gets).
    pub spec: String,
    pub name: String,
    pub version: Option<String>,
}

/// A git repository: `git:<host>/<path>[@ref]`, `git:git@host:path[@ref]` or a protocol URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// What `git clone` gets.
    pub repo: String,
    pub host: String,
    /// The repository path below the host, without `.git`.
    pub path: String,
    pub git_ref: Option<String>,
}

/// A parsed package source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageSpec {
    Npm(NpmSource),
    Git(GitSource),
    /// A file or folder on disk, as written (relative to the settings file or the cwd).
    Local(String),
}

impl PackageSpec {
    pub fn parse(source: &str) -> PackageSpec {
        if let Some(spec) = source.strip_prefix("npm:") {
            let spec = spec.trim().to_string();
            let (name, version) = parse_npm_spec(&spec);
            return PackageSpec::Npm(NpmSource { spec, name, version });
        }
        if is_local_path(source) {
            return PackageSpec::Local(source.to_string());
        }
        match parse_git_url(source) {
            Some(git) => PackageSpec::Git(git),
            None => PackageSpec::Local(source.to_string()),
        }
    }

    /// A version or ref is given: `pi update` leaves the package alone.
    pub fn pinned(&self) -> bool {
        match self {
            PackageSpec::Npm(n) => n.version.is_some(),
            PackageSpec::Git(g) => g.git_ref.is_some(),
            PackageSpec::Local(_) => false,
        }
    }

    /// The identity of the package: the npm name, the git host and path (ref ignored, so
    /// SSH and HTTPS URLs of one repository agree), or the local path resolved against
    /// `base` (the settings file's folder, or the cwd for command-line input).
    pub fn identity(&self, base: &Path, home: &Path) -> String {
        match self {
            PackageSpec::Npm(n) => format!("npm:{}", n.name),
            PackageSpec::Git(g) => format!("git:{}/{}", g.host, g.path),
            PackageSpec::Local(p) => format!("local:{}", resolve_resource_path(p, base, home).display()),
        }
    }
}

/// Whether `value` names a local path rather than a remote source. Only a few prefixes
/// make a source remote; anything else is a path.
fn is_local_path(value: &str) -> bool {
    let t = value.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// Split `name[@version]`; a scoped name keeps its leading `@`. Malformed specs are all name.
pub fn parse_npm_spec(spec: &str) -> (String, Option<String>) {
    let (prefix, rest) = match spec.strip_prefix('@') {
        Some(rest) => ("@", rest),
        None => ("", spec),
    };
    match rest.find('@') {
        None => (spec.to_string(), None),
        Some(i) => {
            let (name, version) = (&rest[..i], &rest[i + 1..]);
            if name.is_empty() || version.is_empty() {
                (spec.to_string(), None)
            } else {
                (format!("{prefix}{name}"), Some(version.to_string()))
            }
        }
    }
}

/// `(repo, ref)`: a trailing `@ref` in the repository path is split off.
fn split_ref(url: &str) -> (String, Option<String>) {
    let split_path = |path: &str| -> Option<(String, String)> {
        let i = path.find('@')?;
        let (repo, r) = (&path[..i], &path[i + 1..]);
        (!repo.is_empty() && !r.is_empty()).then(|| (repo.to_string(), r.to_string()))
    };
    if let Some(rest) = url.strip_prefix("git@") {
        if let Some((host, path)) = rest.split_once(':') {
            if !host.is_empty() && !path.is_empty() {
                return match split_path(path) {
                    Some((p, r)) => (format!("git@{host}:{p}"), Some(r)),
                    None => (url.to_string(), None),
                };
            }
        }
    }
    if let Some((scheme, after)) = url.split_once("://") {
        let (authority, path) = after.split_once('/').unwrap_or((after, ""));
        let path = path.trim_start_matches('/');
        return match split_path(path) {
            Some((p, r)) => (format!("{scheme}://{authority}/{p}"), Some(r)),
            None => (url.to_string(), None),
        };
    }
    let Some((host, path)) = url.split_once('/') else {
        return (url.to_string(), None);
    };
    match split_path(path) {
        Some((p, r)) => (format!("{host}/{p}"), Some(r)),
        None => (url.to_string(), None),
    }
}

/// Hosts whose repository path is always `<user>/<project>` (extra segments are web pages).
const HOSTED: [&str; 2] = ["github.com", "bitbucket.org"];

/// Host and path of a repository reference without its ref, or `None`.
fn host_and_path(repo: &str) -> Option<(String, String)> {
    if let Some(rest) = repo.strip_prefix("git@") {
        let (host, path) = rest.split_once(':')?;
        return Some((host.to_string(), path.to_string()));
    }
    let lower = repo.to_ascii_lowercase();
    if ["https://", "http://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        let after = repo.split_once("://")?.1;
        let (authority, path) = after.split_once('/').unwrap_or((after, ""));
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = host_port.split(':').next().unwrap_or("").to_ascii_lowercase();
        return Some((host, path.to_string()));
    }
    None
}

fn normalize_path(host: &str, path: &str) -> String {
    let path = path.trim_start_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let path = path.strip_suffix('/').unwrap_or(path);
    if HOSTED.contains(&host) {
        let mut parts = path.split('/');
        if let (Some(user), Some(project)) = (parts.next(), parts.next()) {
            return format!("{user}/{}", project.strip_suffix(".git").unwrap_or(project));
        }
    }
    path.to_string()
}

/// Parse a git source. With `git:` every shorthand is accepted; without it only protocol
/// URLs (`https://`, `http://`, `ssh://`, `git://`).
pub fn parse_git_url(source: &str) -> Option<GitSource> {
    let trimmed = source.trim();
    let (has_prefix, url) = match trimmed.strip_prefix("git:") {
        Some(rest) => (true, rest.trim()),
        None => (false, trimmed),
    };
    let lower = url.to_ascii_lowercase();
    let is_protocol = ["https://", "http://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p));
    if !has_prefix && !is_protocol {
        return None;
    }
    let (repo, git_ref) = split_ref(url);
    let (host, path, repo) = match host_and_path(&repo) {
        Some((host, path)) => (host, path, repo),
        None => {
            // Shorthand: `host/path`, or `user/repo` for GitHub.
            let (first, rest) = repo.split_once('/')?;
            if first.contains('.') || first == "localhost" {
                (first.to_ascii_lowercase(), rest.to_string(), format!("https://{repo}"))
            } else if !first.is_empty() && !rest.is_empty() && !rest.contains('/') && !first.contains(':') {
                (
                    "github.com".to_string(),
                    repo.clone(),
                    format!("https://github.com/{repo}"),
                )
            } else {
                return None;
            }
        }
    };
    // A `#fragment` is not part of the path; on a known host it names the ref, as does a
    // GitHub `/tree/<ref>` page.
    let (path, fragment) = match path.split_once('#') {
        Some((p, f)) => (p.to_string(), Some(f.to_string()).filter(|f| !f.is_empty())),
        None => (path, None),
    };
    let hosted = HOSTED.contains(&host.as_str());
    let tree_ref = path
        .trim_start_matches('/')
        .splitn(4, '/')
        .collect::<Vec<_>>()
        .get(2..)
        .and_then(|rest| match rest {
            ["tree", r] if host == "github.com" && !r.is_empty() => Some(r.to_string()),
            _ => None,
        });
    let git_ref = git_ref.or(if hosted { fragment.or(tree_ref) } else { None });
    let path = normalize_path(&host, &path);
    if host.is_empty() || path.is_empty() || path.split('/').count() < 2 {
        return None;
    }
    Some(GitSource {
        repo,
        host,
        path,
        git_ref,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(s: &str) -> GitSource {
        match PackageSpec::parse(s) {
            PackageSpec::Git(g) => g,
            other => panic!("not git: {other:?}"),
        }
    }

    #[test]
    fn npm_specs() {
        let PackageSpec::Npm(n) = PackageSpec::parse("npm:@foo/bar@1.2.3") else {
            panic!()
        };
        assert_eq!((n.name.as_str(), n.version.as_deref()), ("@foo/bar", Some("1.2.3")));
        assert!(PackageSpec::parse("npm:@foo/bar@1.2.3").pinned());
        let PackageSpec::Npm(n) = PackageSpec::parse("npm:pkg") else {
            panic!()
        };
        assert_eq!((n.name.as_str(), n.version), ("pkg", None));
        assert!(!PackageSpec::parse("npm:pkg").pinned());
        let PackageSpec::Npm(n) = PackageSpec::parse("npm:x@file:/tmp/x.tgz") else {
            panic!()
        };
        assert_eq!((n.name.as_str(), n.version.as_deref()), ("x", Some("file:/tmp/x.tgz")));
        assert_eq!(parse_npm_spec("@scope/pkg"), ("@scope/pkg".into(), None));
    }

    #[test]
    fn git_forms() {
        let g = git("git:github.com/user/repo@v1");
        assert_eq!(g.repo, "https://github.com/user/repo");
        assert_eq!(
            (g.host.as_str(), g.path.as_str(), g.git_ref.as_deref()),
            ("github.com", "user/repo", Some("v1"))
        );
        let g = git("git:git@github.com:user/repo@v1.0.0");
        assert_eq!(g.repo, "git@github.com:user/repo");
        assert_eq!(
            (g.host.as_str(), g.path.as_str(), g.git_ref.as_deref()),
            ("github.com", "user/repo", Some("v1.0.0"))
        );
        let g = git("https://github.com/user/repo.git");
        assert_eq!(
            (g.host.as_str(), g.path.as_str(), g.git_ref),
            ("github.com", "user/repo", None)
        );
        let g = git("ssh://git@github.com/user/repo@v1");
        assert_eq!(g.repo, "ssh://git@github.com/user/repo");
        assert_eq!((g.host.as_str(), g.path.as_str()), ("github.com", "user/repo"));
        let g = git("git:example.com/a/b/c");
        assert_eq!(
            (g.host.as_str(), g.path.as_str(), g.repo.as_str()),
            ("example.com", "a/b/c", "https://example.com/a/b/c")
        );
        let g = git("git:gitlab.com/group/sub/proj");
        assert_eq!(g.path, "group/sub/proj");
        let g = git("https://github.com/user/repo/tree/main");
        assert_eq!((g.path.as_str(), g.git_ref.as_deref()), ("user/repo", Some("main")));
        let g = git("git:github.com/user/repo#v3");
        assert_eq!((g.path.as_str(), g.git_ref.as_deref()), ("user/repo", Some("v3")));
        let g = git("https://example.com/u/r#v2");
        assert_eq!((g.path.as_str(), g.git_ref), ("u/r", None));
        let g = git("ssh://git@example.com:2222/u/r.git@main");
        assert_eq!(g.repo, "ssh://git@example.com:2222/u/r.git");
        assert_eq!(
            (g.host.as_str(), g.path.as_str(), g.git_ref.as_deref()),
            ("example.com", "u/r", Some("main"))
        );
        assert_eq!(
            PackageSpec::parse("git://example.org/x/y.git"),
            PackageSpec::Local("git://example.org/x/y.git".into())
        );
        let g = git("http://127.0.0.1:8080/u/r.git");
        assert_eq!((g.host.as_str(), g.path.as_str()), ("127.0.0.1", "u/r"));
    }

    #[test]
    fn locals_and_identity() {
        assert_eq!(PackageSpec::parse("./pkg"), PackageSpec::Local("./pkg".into()));
        assert_eq!(
            PackageSpec::parse("github.com/u/r"),
            PackageSpec::Local("github.com/u/r".into())
        );
        assert_eq!(
            PackageSpec::parse("git:nohost"),
            PackageSpec::Local("git:nohost".into())
        );
        let home = Path::new("/home/me");
        let ssh = PackageSpec::parse("git:git@github.com:user/repo").identity(Path::new("/"), home);
        let https = PackageSpec::parse("https://github.com/user/repo@v2").identity(Path::new("/"), home);
        assert_eq!(ssh, https);
        assert_eq!(
            PackageSpec::parse("../pkg").identity(Path::new("/a/b"), home),
            "local:/a/pkg"
        );
        assert_eq!(PackageSpec::parse("npm:x@1").identity(Path::new("/"), home), "npm:x");
    }
}
