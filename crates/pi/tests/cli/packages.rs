//! The package subcommands of the binary (`install`, `remove`, `update`, `list`, `config`)
//! with local, git and npm sources, their error messages and exit codes, and package
//! resources reaching a session.

use std::path::{Path, PathBuf};
use std::process::Command;

use pi_test_support::{require, Script};
use serde_json::Value;

use crate::harness::{Fixture, Mock, Run};

fn setup() -> (Mock, Fixture) {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    (mock, fx)
}

/// Save a decision to trust the fixture project: once `-l` has written `.pi/settings.json`,
/// the project has files of its own, and the commands here cannot ask.
fn trust_project(fx: &Fixture) {
    let decision = serde_json::json!({ fx.proj.display().to_string(): true });
    fx.agent.write("trust.json", decision.to_string()).unwrap();
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A package folder with a skill and a prompt template.
fn make_package(dir: &Path) {
    write(
        &dir.join("skills/hello/SKILL.md"),
        "---\nname: hello\ndescription: Says hello from a package\n---\nSay hello.\n",
    );
    write(
        &dir.join("prompts/greet.md"),
        "---\ndescription: greet someone\n---\nGreet $1 warmly\n",
    );
}

fn settings(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn pi(fx: &Fixture, args: &[&str]) -> Run {
    fx.pi(args).run()
}

/// The last user text the model got, and the whole request body as text.
fn last_request(mock: &Mock) -> (String, String) {
    let requests = mock.requests();
    let body = &requests.last().expect("a request").body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        })
        .unwrap_or_default();
    (user, body.to_string())
}

#[test]
fn local_package_install_list_use_remove() {
    let (mock, fx) = setup();
    let pkg = fx.root.path().canonicalize().unwrap().join("pkg");
    make_package(&pkg);

    let run = pi(&fx, &["install", "../pkg"]);
    run.assert_ok();
    assert_eq!(run.stdout, "Installing ../pkg...\nInstalled ../pkg\n");
    let global = settings(&fx.agent.path().join("settings.json"));
    let stored = global["packages"][0].as_str().unwrap().to_string();
    // Stored relative to the agent dir, pointing at the same folder.
    assert!(!Path::new(&stored).is_absolute(), "{stored}");
    assert_eq!(fx.agent.path().join(&stored).canonicalize().unwrap(), pkg);
    // Installing it again (spelled differently) adds nothing.
    pi(&fx, &["install", pkg.to_str().unwrap()]).assert_ok();
    assert_eq!(
        settings(&fx.agent.path().join("settings.json"))["packages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let run = pi(&fx, &["list"]);
    run.assert_ok();
    assert_eq!(
        run.stdout,
        format!("User packages:\n  {stored}\n    {}\n", pkg.display())
    );

    // The package's prompt template and skill reach the session.
    pi(&fx, &["-p", "/greet Bob"]).assert_ok();
    let (user, body) = last_request(&mock);
    assert_eq!(user, "Greet Bob warmly");
    assert!(
        body.contains("<name>hello</name>"),
        "skill missing from the system prompt"
    );

    // RPC clients see where they came from.
    let run = fx
        .pi(["--mode", "rpc"])
        .stdin("{\"id\":\"1\",\"type\":\"get_commands\"}\n")
        .run();
    let response = run
        .events()
        .into_iter()
        .find(|e| e["id"] == "1")
        .expect("a get_commands response");
    let commands = response["data"]["commands"].as_array().unwrap();
    let info = |name: &str| {
        commands
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {commands:?}"))["sourceInfo"]
            .clone()
    };
    assert_eq!(
        info("greet"),
        serde_json::json!({
            "path": pkg.join("prompts/greet.md").display().to_string(),
            "source": stored,
            "scope": "user",
            "origin": "package",
            "baseDir": pkg.display().to_string(),
        })
    );
    assert_eq!(info("skill:hello")["origin"], "package");

    let run = pi(&fx, &["config"]);
    run.assert_ok();
    assert!(
        run.stdout
            .contains(&format!("[x] {}", pkg.join("prompts/greet.md").display())),
        "{}",
        run.stdout
    );

    let run = pi(&fx, &["remove", "../pkg"]);
    run.assert_ok();
    assert_eq!(run.stdout, "Removing ../pkg...\nRemoved ../pkg\n");
    assert_eq!(
        settings(&fx.agent.path().join("settings.json"))["packages"],
        serde_json::json!([])
    );
    let run = pi(&fx, &["list"]);
    assert_eq!(run.stdout, "No packages installed.\n");
    // A second removal finds nothing.
    let run = pi(&fx, &["uninstall", "../pkg"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "No matching package found for ../pkg\n");
}

#[test]
fn project_install_and_filters() {
    let (mock, fx) = setup();
    trust_project(&fx);
    let pkg = fx.root.path().canonicalize().unwrap().join("pkg");
    make_package(&pkg);
    let run = pi(&fx, &["install", "../pkg", "-l"]);
    run.assert_ok();
    let project_settings = fx.proj.join(".pi/settings.json");
    assert_eq!(
        settings(&project_settings)["packages"],
        serde_json::json!(["../../pkg"])
    );
    let run = pi(&fx, &["list"]);
    assert_eq!(
        run.stdout,
        format!("Project packages:\n  ../../pkg\n    {}\n", pkg.display())
    );

    // The object form: no prompt templates from this package.
    write(
        &project_settings,
        r#"{"packages": [{"source": "../../pkg", "prompts": []}]}"#,
    );
    let run = pi(&fx, &["list"]);
    assert_eq!(
        run.stdout,
        format!("Project packages:\n  ../../pkg (filtered)\n    {}\n", pkg.display())
    );
    pi(&fx, &["-p", "/greet Bob"]).assert_ok();
    let (user, body) = last_request(&mock);
    assert_eq!(user, "/greet Bob");
    assert!(body.contains("<name>hello</name>"));
    let run = pi(&fx, &["config"]);
    assert!(
        run.stdout
            .contains(&format!("[ ] {}", pkg.join("prompts/greet.md").display())),
        "{}",
        run.stdout
    );

    let run = pi(&fx, &["remove", "../pkg", "--local"]);
    run.assert_ok();
    assert_eq!(settings(&project_settings)["packages"], serde_json::json!([]));
}

#[test]
fn extension_flag_brings_package_resources_for_one_run() {
    let (mock, fx) = setup();
    let pkg = fx.root.path().canonicalize().unwrap().join("pkg");
    make_package(&pkg);
    pi(&fx, &["-e", "../pkg", "-p", "/greet Eve"]).assert_ok();
    assert_eq!(last_request(&mock).0, "Greet Eve warmly");
    // Nothing was written to the settings.
    assert!(!fx.agent.path().join("settings.json").exists());
    let run = fx
        .pi(["-e", "../pkg", "--mode", "rpc"])
        .stdin("{\"id\":\"1\",\"type\":\"get_commands\"}\n")
        .run();
    let response = run.events().into_iter().find(|e| e["id"] == "1").expect("a response");
    let greet = response["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "greet")
        .cloned()
        .expect("greet");
    assert_eq!(greet["sourceInfo"]["scope"], "temporary");
    assert_eq!(greet["sourceInfo"]["source"], "../pkg");
    // Without it, the template is unknown.
    pi(&fx, &["-p", "/greet Eve"]).assert_ok();
    assert_eq!(last_request(&mock).0, "/greet Eve");
}

const UPDATE_USAGE: &str = "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]";

#[test]
fn usage_errors() {
    let (_mock, fx) = setup();
    let cases: &[(&[&str], &str)] = &[
        (&["install"], "Missing install source.\nUsage: pi install <source> [-l]\n"),
        (&["remove"], "Missing remove source.\nUsage: pi remove <source> [-l]\n"),
        (
            &["update", "-l"],
            "Unknown option -l for \"update\".\nUse \"pi --help\" or \"pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]\".\n",
        ),
        (&["list", "-x"], "Unknown option -x for \"list\".\nUse \"pi --help\" or \"pi list\".\n"),
        (&["install", "a", "b"], "Unexpected argument b.\nUsage: pi install <source> [-l]\n"),
        (
            &["update", "--extension"],
            "Missing value for --extension.\nUsage: pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]\n",
        ),
        (
            &["update", "npm:a", "--self"],
            "positional update targets cannot be combined with --self, --extensions, or --all\nUsage: pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]\n",
        ),
        (
            &["update", "--extension", "npm:a", "--extensions"],
            "--extension cannot be combined with --self, --extensions, or --all\nUsage: pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]\n",
        ),
        (&["update", "npm:nope"], "Error: No matching package found for npm:nope\n"),
        (
            &["update", "--all", "--models"],
            &format!("--all cannot be combined with --self, --extensions, --models, or --extension\nUsage: {UPDATE_USAGE}\n"),
        ),
        (
            &["update", "--models", "npm:a"],
            &format!("--models cannot be combined with a positional source\nUsage: {UPDATE_USAGE}\n"),
        ),
    ];
    for (args, stderr) in cases {
        let run = pi(&fx, args);
        assert_eq!(
            (run.code, run.stderr.as_str(), run.stdout.as_str()),
            (1, *stderr, ""),
            "{args:?}"
        );
    }
    let run = pi(&fx, &["install", "./missing"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!("Error: Path does not exist: {}\n", fx.proj.join("missing").display())
    );

    for cmd in ["install", "remove", "update", "list"] {
        let run = pi(&fx, &[cmd, "--help"]);
        run.assert_ok();
        assert!(run.stdout.starts_with("Usage:\n  pi "), "{cmd}: {}", run.stdout);
    }
    assert!(pi(&fx, &["uninstall", "-h"]).stdout.contains("pi remove <source> [-l]"));
}

/// Offline there is no version to update to; a bare `pi update` is pi only (1.6) and says
/// how to update the packages, `--all` does both, `--models` rereads the catalogs.
#[test]
fn self_update_fails_clearly_offline() {
    let (_mock, fx) = setup();
    let run = pi(&fx, &["update", "--self"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert_eq!(run.stderr, "Error: Could not determine latest pi version.\n");
    let run = pi(&fx, &["update"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "Extensions are skipped. Run pi update --extensions to update extensions.\n"
    );
    assert_eq!(run.stderr, "Error: Could not determine latest pi version.\n");
    let run = pi(&fx, &["update", "--all"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "Skipped package updates (offline mode)\n");
    let run = pi(&fx, &["update", "--extensions"]);
    run.assert_ok();
    assert_eq!(run.stdout, "Skipped package updates (offline mode)\n");
    let run = pi(&fx, &["update", "--models"]);
    run.assert_ok();
    assert_eq!(run.stdout, "Model catalogs refreshed\n");
    // A bad models.json does not stop the refresh (pi 1.6 reports success too).
    fx.agent.write("models.json", "{not json").unwrap();
    let run = pi(&fx, &["update", "--models"]);
    run.assert_ok();
    assert_eq!(run.stdout, "Model catalogs refreshed\n");
    // PI_OFFLINE does not stop a refresh the user asked for: with a key and no network the
    // catalogue request fails, as 1.6's does ("fetch failed"), and nothing is stored.
    let mut cmd = fx.pi(["update", "--models"]);
    cmd.cmd.env("ANTHROPIC_API_KEY", "sk-test");
    let run = cmd.run();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("Error: Could not refresh model catalogs: anthropic: fetch failed"),
        "{}",
        run.stderr
    );
    assert!(!fx.agent.path().join("models-store.json").exists());
}

/// A catalogue server that answers every request from `reply` and records the request heads.
fn catalogue_server(
    reply: impl Fn(&str) -> String + Send + 'static,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let answer = reply(&head.to_ascii_lowercase());
            log.lock().unwrap().push(head);
            let _ = (&stream).write_all(answer.as_bytes());
        }
    });
    (url, seen)
}

/// `pi update --models` stores pi.dev's catalogue of each configured provider in
/// models-store.json (revalidating with its etag), and every later start merges it in, offline
/// too: a model only the fetched catalogue has is listed and usable.
#[test]
fn update_models_stores_the_catalogue_and_later_runs_use_it() {
    let (_mock, fx) = setup();
    let model = serde_json::json!({
        "id": "claude-catalogue-9", "name": "Claude Catalogue 9", "api": "anthropic-messages",
        "provider": "anthropic", "baseUrl": "https://api.anthropic.com", "reasoning": true,
        "input": ["text", "image"], "cost": {"input": 1, "output": 5, "cacheRead": 0.1, "cacheWrite": 1.25},
        "contextWindow": 500000, "maxTokens": 64000
    });
    let body = serde_json::json!({ "models": [model] }).to_string();
    let (url, seen) = catalogue_server(move |head| {
        if !head.starts_with("get /api/models/providers/anthropic?types=chat%2cimage%2cclassifier ") {
            return "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into();
        }
        if head.contains("if-none-match: \"v1\"") {
            return "HTTP/1.1 304 Not Modified\r\nconnection: close\r\n\r\n".into();
        }
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\netag: \"v1\"\r\n\
             last-modified: Fri, 01 Jan 2027 00:00:00 GMT\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    });
    let update = || {
        let mut cmd = fx.pi(["update", "--models"]);
        cmd.cmd
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("PI_MODEL_CATALOG_URL", &url);
        cmd.run()
    };
    let run = update();
    run.assert_ok();
    assert_eq!(run.stdout, "Model catalogs refreshed\n");
    let read_store = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(fx.agent.path().join("models-store.json")).unwrap()).unwrap()
    };
    let store = read_store();
    let entry = &store["anthropic"];
    assert_eq!(entry["etag"], "\"v1\"");
    assert_eq!(entry["lastModified"], 1_798_761_600_000_i64);
    assert_eq!(entry["models"][0]["id"], "claude-catalogue-9");
    assert_eq!(entry["models"][0]["provider"], "anthropic");
    let first_check = entry["checkedAt"].as_i64().unwrap();
    let heads = seen.lock().unwrap().clone();
    assert!(
        heads[0].to_ascii_lowercase().contains("user-agent: pi/"),
        "{}",
        heads[0]
    );

    // Forced again: revalidated with the etag, the models kept, the check time moved.
    std::thread::sleep(std::time::Duration::from_millis(5));
    update().assert_ok();
    let store = read_store();
    assert_eq!(store["anthropic"]["models"][0]["id"], "claude-catalogue-9");
    assert!(store["anthropic"]["checkedAt"].as_i64().unwrap() > first_check);
    assert!(seen.lock().unwrap().last().unwrap().contains("if-none-match: \"v1\""));

    // A later run, offline, lists the fetched model beside the built-ins.
    let mut list = fx.pi(["--list-models", "claude-catalogue"]);
    list.cmd.env("ANTHROPIC_API_KEY", "sk-test");
    let run = list.run();
    run.assert_ok();
    assert!(run.stdout.contains("claude-catalogue-9"), "{}", run.stdout);
}

/// RPC mode refreshes the configured providers' catalogues in the background, as 1.6 does:
/// the mode answers before the refresh ends, the result lands in models-store.json, a fresh
/// catalogue is not fetched again, and `PI_OFFLINE` stops it.
#[test]
fn rpc_mode_refreshes_catalogues_in_the_background_unless_offline() {
    use std::io::Write;
    let (_mock, fx) = setup();
    let body = serde_json::json!({ "models": [{
        "id": "claude-background-1", "name": "Claude Background 1", "api": "anthropic-messages",
        "provider": "anthropic", "baseUrl": "https://api.anthropic.com", "reasoning": false,
        "input": ["text"], "cost": {"input": 1, "output": 5, "cacheRead": 0.1, "cacheWrite": 1.25},
        "contextWindow": 200000, "maxTokens": 8000
    }]})
    .to_string();
    let (url, seen) = catalogue_server(move |head| {
        if !head.starts_with("get /api/models/providers/anthropic?") {
            return "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into();
        }
        // Slow enough that a startup waiting for it would show.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\netag: \"b1\"\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    });
    let store = fx.agent.path().join("models-store.json");
    let rpc = |offline: bool| {
        let mut cmd = fx.pi(["--mode", "rpc"]);
        cmd.cmd
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("PI_MODEL_CATALOG_URL", &url)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        if !offline {
            cmd.cmd.env_remove("PI_OFFLINE");
        }
        let mut child = cmd.cmd.spawn().unwrap();
        let started = std::time::Instant::now();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, r#"{{"type":"get_state","id":"s1"}}"#).unwrap();
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        assert!(line.contains("\"s1\""), "{line}");
        let answered = started.elapsed();
        // Keep the process up until the refresh had its chance. pi creates the store as `{}` at
        // start (as 1.6 does) and writes it under a lock, so wait for a fetched catalogue in it.
        let written = || catalogues(&store) > 0;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !offline && !written() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(stdin);
        child.wait().unwrap();
        answered
    };

    let answered = rpc(true);
    assert!(seen.lock().unwrap().is_empty(), "offline: nothing fetched");
    assert_eq!(catalogues(&store), 0, "offline: no catalogue stored");
    let _ = answered;

    let answered = rpc(false);
    assert!(
        answered < std::time::Duration::from_millis(1500),
        "the first answer waited for the refresh: {answered:?}"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap();
    assert_eq!(stored["anthropic"]["models"][0]["id"], "claude-background-1");

    // Checked moments ago: the next start does not fetch again.
    rpc(false);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// How many providers' catalogues models-store.json holds (0 when it is missing or `{}`).
fn catalogues(store: &Path) -> usize {
    std::fs::read_to_string(store)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|value| value.as_object().map(|o| o.len()))
        .unwrap_or(0)
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare repository `<root>/bare/u/r.git` holding a package, and the git settings that make
/// `https://example.com/` mean `<root>/bare/` (so `git:example.com/u/r` clones it offline).
fn bare_repo(root: &Path) -> (PathBuf, Vec<(String, String)>) {
    let work = root.join("gitwork");
    make_package(&work);
    git(root, &["init", "-q", work.to_str().unwrap()]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "init"]);
    let bare = root.join("bare/u/r.git");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    git(
        root,
        &["clone", "-q", "--bare", work.to_str().unwrap(), bare.to_str().unwrap()],
    );
    let env = vec![
        ("GIT_CONFIG_COUNT".to_string(), "1".to_string()),
        (
            "GIT_CONFIG_KEY_0".to_string(),
            format!("url.{}/.insteadOf", root.join("bare").display()),
        ),
        ("GIT_CONFIG_VALUE_0".to_string(), "https://example.com/".to_string()),
    ];
    (work, env)
}

#[test]
fn git_package_install_use_update_remove() {
    if require::tool("git", "installs a package from a git repository").is_none() {
        return;
    }
    let (mock, fx) = setup();
    trust_project(&fx);
    let root = fx.root.path().canonicalize().unwrap();
    let (work, env) = bare_repo(&root);
    let run_with = |args: &[&str], offline: bool| {
        let mut p = fx.pi(args);
        p.cmd.envs(env.iter().map(|(k, v)| (k, v)));
        if !offline {
            p.cmd.env_remove("PI_OFFLINE");
        }
        p.run()
    };

    let run = run_with(&["install", "git:example.com/u/r", "-l"], true);
    run.assert_ok();
    assert!(
        run.stdout.ends_with("Installed git:example.com/u/r\n"),
        "{}",
        run.stdout
    );
    let clone = fx.proj.join(".pi/git/example.com/u/r");
    assert!(clone.join("prompts/greet.md").is_file());
    assert_eq!(
        std::fs::read_to_string(fx.proj.join(".pi/git/.gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );
    assert_eq!(
        settings(&fx.proj.join(".pi/settings.json"))["packages"],
        serde_json::json!(["git:example.com/u/r"])
    );
    let run = run_with(&["list"], true);
    assert_eq!(
        run.stdout,
        format!("Project packages:\n  git:example.com/u/r\n    {}\n", clone.display())
    );
    run_with(&["-p", "/greet Ann"], true).assert_ok();
    assert_eq!(last_request(&mock).0, "Greet Ann warmly");

    // A new commit upstream arrives with `pi update <source>`; offline nothing is fetched.
    write(
        &work.join("prompts/later.md"),
        "---\ndescription: later\n---\nLater $1\n",
    );
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "two"]);
    git(
        &work,
        &["push", "-q", root.join("bare/u/r.git").to_str().unwrap(), "HEAD:main"],
    );
    run_with(&["update", "--extensions"], true).assert_ok();
    assert!(!clone.join("prompts/later.md").exists());
    // The ssh spelling names the same package.
    let run = run_with(&["update", "git:git@example.com:u/r"], false);
    run.assert_ok();
    assert!(
        run.stdout.ends_with("Updated git:git@example.com:u/r\n"),
        "{}",
        run.stdout
    );
    assert!(clone.join("prompts/later.md").is_file());

    // `-e` clones into the agent folder's `tmp/extensions`, as pi 1.6 does (not TMPDIR).
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut p = fx.pi(["-e", "git:example.com/u/r", "-p", "/later Kim"]);
    p.cmd
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("TMPDIR", &tmp)
        .env_remove("PI_OFFLINE");
    p.run().assert_ok();
    assert_eq!(last_request(&mock).0, "Later Kim");
    assert!(!tmp.join("pi-extensions").exists());
    let temp_root = fx.agent.path().join("tmp/extensions");
    assert!(temp_root.join("git-example.com").is_dir());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&temp_root).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    // Missing clones are restored at startup, but not offline.
    std::fs::remove_dir_all(fx.proj.join(".pi/git")).unwrap();
    run_with(&["-p", "/greet Ann"], true).assert_ok();
    assert_eq!(last_request(&mock).0, "/greet Ann");
    assert!(!clone.exists());
    run_with(&["-p", "/greet Ann"], false).assert_ok();
    assert_eq!(last_request(&mock).0, "Greet Ann warmly");
    assert!(clone.is_dir());

    let run = run_with(&["remove", "git:example.com/u/r", "-l"], true);
    run.assert_ok();
    assert!(!clone.exists());
    assert!(!fx.proj.join(".pi/git/example.com").exists());
    assert_eq!(
        settings(&fx.proj.join(".pi/settings.json"))["packages"],
        serde_json::json!([])
    );
}

#[test]
fn npm_package_from_a_local_tarball() {
    if require::tool("npm", "packs and installs a package from a tarball").is_none() {
        return;
    }
    let (mock, fx) = setup();
    trust_project(&fx);
    let root = fx.root.path().canonicalize().unwrap();
    let src = root.join("tinypkg");
    make_package(&src);
    write(
        &src.join("package.json"),
        r#"{"name": "pi-tiny-test-pkg", "version": "1.0.0", "pi": {"prompts": ["./prompts"], "skills": ["./skills"]}}"#,
    );
    let npm_env = [
        ("npm_config_cache", root.join("npm-cache").display().to_string()),
        ("npm_config_prefix", root.join("npm-global").display().to_string()),
        ("npm_config_offline", "true".to_string()),
        ("npm_config_audit", "false".to_string()),
        ("npm_config_fund", "false".to_string()),
        ("npm_config_update_notifier", "false".to_string()),
    ];
    let pack = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination", root.to_str().unwrap()])
        .current_dir(&src)
        .envs(npm_env.iter().map(|(k, v)| (*k, v)))
        .output()
        .unwrap();
    if !pack.status.success() {
        let why = format!("npm pack failed: {}", String::from_utf8_lossy(&pack.stderr));
        require::missing::<()>("a working npm", &why);
        return;
    }
    let tarball = root.join("pi-tiny-test-pkg-1.0.0.tgz");
    let source = format!("npm:pi-tiny-test-pkg@file:{}", tarball.display());
    let run_pi = |args: &[&str]| {
        let mut p = fx.pi(args);
        p.cmd.envs(npm_env.iter().map(|(k, v)| (*k, v)));
        p.run()
    };

    let run = run_pi(&["install", &source, "-l"]);
    run.assert_ok();
    assert!(run.stdout.ends_with(&format!("Installed {source}\n")), "{}", run.stdout);
    let installed = fx.proj.join(".pi/npm/node_modules/pi-tiny-test-pkg");
    assert!(installed.join("prompts/greet.md").is_file());
    let run = run_pi(&["list"]);
    assert_eq!(
        run.stdout,
        format!("Project packages:\n  {source}\n    {}\n", installed.display())
    );
    run_pi(&["-p", "/greet Zed"]).assert_ok();
    assert_eq!(last_request(&mock).0, "Greet Zed warmly");

    // Removal goes by the package name.
    let run = run_pi(&["remove", "npm:pi-tiny-test-pkg", "-l"]);
    run.assert_ok();
    assert!(!installed.exists());
    assert_eq!(
        settings(&fx.proj.join(".pi/settings.json"))["packages"],
        serde_json::json!([])
    );

    // A user install goes to npm's global prefix (here a scratch one).
    run_pi(&["install", &source]).assert_ok();
    let global = root.join("npm-global/lib/node_modules/pi-tiny-test-pkg");
    assert!(global.join("package.json").is_file());
    let run = run_pi(&["list"]);
    assert_eq!(
        run.stdout,
        format!("User packages:\n  {source}\n    {}\n", global.display())
    );
    // Startup finds it without running npm (a stand-in npm on PATH would leave a mark).
    let shim = root.join("shim");
    write(
        &shim.join("npm"),
        &format!("#!/bin/sh\ntouch {}\nexit 1\n", root.join("npm-ran").display()),
    );
    std::fs::set_permissions(shim.join("npm"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", shim.display(), std::env::var("PATH").unwrap_or_default());
    let mut p = fx.pi(["-p", "/greet Yan"]);
    p.cmd.envs(npm_env.iter().map(|(k, v)| (*k, v))).env("PATH", path);
    p.run().assert_ok();
    assert_eq!(last_request(&mock).0, "Greet Yan warmly");
    assert!(!root.join("npm-ran").exists(), "startup ran npm");
    run_pi(&["uninstall", "npm:pi-tiny-test-pkg"]).assert_ok();
    assert!(!global.exists());
}

/// `pi config` on a terminal: space turns the selected resource off (written at once), escape
/// closes with exit code 0.
#[test]
fn config_screen_toggles_a_resource() {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    let (_mock, fx) = setup();
    let pkg = fx.root.path().canonicalize().unwrap().join("pkg");
    make_package(&pkg);
    pi(&fx, &["install", "../pkg", "-l"]).assert_ok();

    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap().into_string().unwrap();
    let slave = std::fs::OpenOptions::new().read(true).write(true).open(&name).unwrap();
    let mut child = Command::new("setsid")
        .arg("--ctty")
        .arg(crate::harness::pi_bin())
        .arg("config")
        .current_dir(&fx.proj)
        .envs(fx.agent.env())
        .env("TERM", "xterm-256color")
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave)
        .spawn()
        .unwrap();
    let mut master = std::fs::File::from(master);
    let mut reader = master.try_clone().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut screen = String::new();
    let wait_for = |screen: &mut String, what: &str| {
        let start = Instant::now();
        while !screen.contains(what) {
            assert!(start.elapsed() < Duration::from_secs(10), "no {what:?} in {screen:?}");
            if let Ok(b) = rx.recv_timeout(Duration::from_millis(50)) {
                screen.push_str(&String::from_utf8_lossy(&b));
            }
        }
    };
    wait_for(&mut screen, "Resource Configuration");
    wait_for(&mut screen, "hello");
    master.write_all(b" ").unwrap();
    wait_for(&mut screen, "[ ]");
    master.write_all(b"\x1b").unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "pi config did not close");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        settings(&fx.proj.join(".pi/settings.json"))["packages"],
        serde_json::json!([{"source": "../../pkg", "skills": ["-skills/hello/SKILL.md"]}])
    );
}

#[test]
fn pinned_git_package_is_left_alone_by_update() {
    if require::tool("git", "installs a package from a git repository").is_none() {
        return;
    }
    let (_mock, fx) = setup();
    let root = fx.root.path().canonicalize().unwrap();
    let (work, env) = bare_repo(&root);
    let run_online = |args: &[&str]| {
        let mut p = fx.pi(args);
        p.cmd.envs(env.iter().map(|(k, v)| (k, v))).env_remove("PI_OFFLINE");
        p.run()
    };
    run_online(&["install", "git:example.com/u/r@main"]).assert_ok();
    let clone = fx.agent.path().join("git/example.com/u/r");
    assert!(clone.join("prompts/greet.md").is_file());
    assert_eq!(
        std::fs::read_to_string(fx.agent.path().join("git/.gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );
    write(&work.join("prompts/more.md"), "More\n");
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "two"]);
    git(
        &work,
        &["push", "-q", root.join("bare/u/r.git").to_str().unwrap(), "HEAD:main"],
    );
    let run = run_online(&["update", "--extensions"]);
    run.assert_ok();
    assert_eq!(run.stdout, "Updated packages\n");
    assert!(!clone.join("prompts/more.md").exists());
    // The same repository by its https URL is the same package.
    let run = run_online(&["remove", "https://example.com/u/r"]);
    run.assert_ok();
    assert!(!clone.exists());
    assert!(!fx.agent.path().join("git/example.com").exists());
}

#[test]
fn npm_command_setting_is_honoured() {
    let (_mock, fx) = setup();
    trust_project(&fx);
    let log = fx.root.path().join("npm-args.log");
    let settings_json = serde_json::json!({
        "npmCommand": ["sh", "-c", format!("echo \"$@\" >> {}", log.display()), "npm"]
    });
    fx.agent.write("settings.json", settings_json.to_string()).unwrap();
    let run = pi(&fx, &["install", "npm:@scope/thing@2.0.0", "-l"]);
    run.assert_ok();
    let prefix = fx.proj.join(".pi/npm");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("install @scope/thing@2.0.0 --prefix {}\n", prefix.display())
    );
    assert!(prefix.join("package.json").is_file());
    assert_eq!(
        settings(&fx.proj.join(".pi/settings.json"))["packages"],
        serde_json::json!(["npm:@scope/thing@2.0.0"])
    );
    // Nothing landed where the package should be, so no path is listed.
    assert_eq!(
        pi(&fx, &["list"]).stdout,
        "Project packages:\n  npm:@scope/thing@2.0.0\n"
    );
    pi(&fx, &["remove", "npm:@scope/thing", "-l"]).assert_ok();
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .ends_with(&format!("uninstall @scope/thing --prefix {}\n", prefix.display())));
    // A failing npm is an error with the command line.
    fx.agent
        .write("settings.json", r#"{"npmCommand": ["sh", "-c", "exit 3", "npm"]}"#)
        .unwrap();
    let run = pi(&fx, &["install", "npm:x", "-l"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "Error: sh -c exit 3 npm install x --prefix {} failed with code 3\n",
            prefix.display()
        )
    );
}
