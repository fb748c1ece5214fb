//! Extension behaviour outside the terminal UI compared with pi 1.6 side by side: where RPC
//! `get_commands` says each extension command comes from (settings, folders, packages, pi's
//! own `/llama` and `/mcp`), the UI requests of `session_shutdown` handlers reaching the RPC
//! client, `ctx.ui.theme` colouring in print mode, and `ctx.modelRegistry.complete` against a
//! Cloudflare endpoint whose account id comes from the stored login.

use std::path::PathBuf;

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::extensions::{environment, fixture, pi_with, reference_run};
use crate::harness::{Fixture, Mock};

/// The `commands` of the answer to request `1`.
fn commands(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "response" && e["id"] == "1")
        .and_then(|e| e["data"]["commands"].as_array().cloned())
        .unwrap_or_else(|| panic!("no get_commands answer: {stdout}"))
}

fn command_file(name: &str) -> String {
    format!(
        "export default function (pi: any) {{ pi.registerCommand(\"{name}\", {{ description: \"from {name}\", handler: async () => {{}} }}); }}\n"
    )
}

#[test]
fn rpc_get_commands_names_settings_folder_package_and_builtin_sources_as_pi_1_6() {
    let test = "rpc_get_commands_names_settings_folder_package_and_builtin_sources_as_pi_1_6";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let root = PathBuf::from(fx.tmp());
    let write = |path: PathBuf, text: String| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let package = root.join("pkg");
    write(
        package.join("package.json"),
        json!({"name": "demo-pkg", "version": "1.0.0", "pi": {"extensions": ["./extensions"]}}).to_string(),
    );
    write(package.join("extensions/p.ts"), command_file("from_package"));
    write(root.join("extra/s.ts"), command_file("from_settings"));
    write(
        PathBuf::from(fx.agent_path()).join("extensions/a.ts"),
        command_file("from_folder"),
    );
    fx.agent
        .write(
            "settings.json",
            json!({"packages": [package.display().to_string()],
                   "extensions": [root.join("extra/s.ts").display().to_string()]})
            .to_string(),
        )
        .unwrap();
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    let args = ["--mode".to_string(), "rpc".to_string()];
    let ours = commands(&pi_with(&fx, &env, &args).stdin(input).run().stdout);
    let names: Vec<&str> = ours.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["from_settings", "from_folder", "from_package", "llama", "mcp"]);
    assert_eq!(ours[0]["sourceInfo"]["source"], "local");
    assert_eq!(ours[0]["sourceInfo"]["scope"], "user");
    assert_eq!(
        ours[2]["sourceInfo"],
        json!({"path": package.join("extensions/p.ts").display().to_string(),
               "source": package.display().to_string(), "scope": "user", "origin": "package",
               "baseDir": package.display().to_string()})
    );
    assert_eq!(ours[4]["sourceInfo"]["path"], "builtin:mcp");
    // `--no-mcp` and `-ne` leave pi's own commands out.
    let args_off = ["--mode", "rpc", "--no-mcp"].map(str::to_string);
    let no_mcp = commands(&pi_with(&fx, &env, &args_off).stdin(input).run().stdout);
    assert!(no_mcp.iter().all(|c| c["name"] != "mcp"), "{no_mcp:?}");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = commands(&reference_run(&reference, &fx, &args).stdin(input).run().stdout);
    assert_eq!(ours, theirs);
    let theirs = commands(&reference_run(&reference, &fx, &args_off).stdin(input).run().stdout);
    assert_eq!(no_mcp, theirs);
}

/// The `setTitle` requests an RPC run sent, in order.
fn titles(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "extension_ui_request" && e["method"] == "setTitle")
        .filter_map(|e| e["title"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_session_shutdown_handlers_title_reaches_the_rpc_client() {
    let test = "a_session_shutdown_handlers_title_reaches_the_rpc_client";
    let Some(env) = environment(test) else { return };
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let spinner = reference
        .coding_agent()
        .join("examples/extensions/titlebar-spinner.ts")
        .display()
        .to_string();
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let args = ["--mode".to_string(), "rpc".to_string(), "-e".to_string(), spinner];
    // Input ends at once: the only title is the one `session_shutdown` sets.
    let ours = titles(&pi_with(&fx, &env, &args).stdin("").run().stdout);
    assert_eq!(ours, ["π - proj"]);
    let theirs = titles(&reference_run(&reference, &fx, &args).stdin("").run().stdout);
    assert_eq!(ours, theirs);
}

#[test]
fn the_theme_colours_extension_text_in_print_mode_as_pi_1_6() {
    let test = "the_theme_colours_extension_text_in_print_mode_as_pi_1_6";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let args = ["-e", &fixture("theme_colours.ts"), "-p", "hi"].map(str::to_string);
    let log = |mut pi: crate::harness::Pi, name: &str| {
        let path = fx.root.path().join(name);
        pi.cmd.env("THEME_LOG", &path);
        pi.run().assert_ok();
        std::fs::read_to_string(path).unwrap()
    };
    let ours = log(pi_with(&fx, &env, &args), "ours.log");
    assert!(ours.contains("fg accent \"\\u001b[38;5;5mx\\u001b[39m\"\n"), "{ours}");
    // Styles stay plain without a terminal on stdout.
    assert!(ours.ends_with("styles [\"b\",\"i\",\"u\"]\n"), "{ours}");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    assert_eq!(ours, log(reference_run(&reference, &fx, &args), "theirs.log"));
}

#[test]
fn an_extensions_completion_fills_the_cloudflare_account_id_of_the_stored_login() {
    let test = "an_extensions_completion_fills_the_cloudflare_account_id_of_the_stored_login";
    let Some(env) = environment(test) else { return };
    let run = |reference: Option<&pi_test_support::ReferencePi>| {
        let mock = Mock::start(Script::sequential(vec![Turn::text("pong"), Turn::text("hello")]));
        let fx = Fixture::new(&mock);
        let path = fx.agent.path().join("models.json");
        let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        config["providers"]["cloudflare-workers-ai"] = json!({
            "baseUrl": format!("{}/client/v4/accounts/{{CLOUDFLARE_ACCOUNT_ID}}/ai/v1", mock.server.url()),
        });
        std::fs::write(&path, config.to_string()).unwrap();
        let login = json!({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-key",
            "env": {"CLOUDFLARE_ACCOUNT_ID": "stored7"}}});
        fx.agent.write("auth.json", login.to_string()).unwrap();
        let args = [
            "-e",
            &fixture("complete_once.ts"),
            "--model",
            "cloudflare-workers-ai/@cf/moonshotai/kimi-k2.7-code",
            "-p",
            "hi",
        ]
        .map(str::to_string);
        let mut pi = match reference {
            Some(r) => reference_run(r, &fx, &args),
            None => pi_with(&fx, &env, &args),
        };
        let log = fx.root.path().join("complete.log");
        pi.cmd
            .env("COMPLETE_LOG", &log)
            .env_remove("CLOUDFLARE_API_KEY")
            .env_remove("CLOUDFLARE_ACCOUNT_ID");
        pi.run().assert_ok();
        let paths: Vec<String> = mock.requests().into_iter().map(|r| r.path).collect();
        (paths, std::fs::read_to_string(log).unwrap())
    };
    let ours = run(None);
    assert_eq!(ours.0, ["/client/v4/accounts/stored7/ai/v1/chat/completions"; 2]);
    assert_eq!(ours.1, "stop pong\n");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    assert_eq!(ours, run(Some(&reference)));
}

/// A settings entry is relative to its own scope's folder: the project's `.pi` for the
/// project file, the agent folder for the user's; and both scopes' entries load.
#[test]
fn project_and_user_settings_entries_load_from_their_own_folders() {
    let test = "project_and_user_settings_entries_load_from_their_own_folders";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let write = |path: PathBuf, text: String| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let agent = PathBuf::from(fx.agent_path());
    write(fx.proj.join(".pi/mine/p.ts"), command_file("from_project"));
    write(
        fx.proj.join(".pi/settings.json"),
        json!({"extensions": ["mine/p.ts"]}).to_string(),
    );
    write(agent.join("extra/u.ts"), command_file("from_user"));
    fx.agent
        .write("settings.json", json!({"extensions": ["extra/u.ts"]}).to_string())
        .unwrap();
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    // `--approve`: the project's settings count only for a trusted project.
    let args = ["--mode", "rpc", "--approve", "--no-mcp"].map(str::to_string);
    let ours = commands(&pi_with(&fx, &env, &args).stdin(input).run().stdout);
    let names: Vec<&str> = ours.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["from_project", "from_user", "llama"]);
    assert_eq!(ours[0]["sourceInfo"]["scope"], "project");
    assert_eq!(ours[1]["sourceInfo"]["scope"], "user");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = commands(&reference_run(&reference, &fx, &args).stdin(input).run().stdout);
    assert_eq!(ours, theirs);
}

/// Install `demo-npm` (one command) where a `-e npm:demo-npm` run finds it without a network:
/// the temporary npm folder under `root`.
fn preinstall_npm_package(root: &std::path::Path) {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(b"npm-");
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let package = root.join(hash).join("node_modules/demo-npm");
    std::fs::create_dir_all(package.join("extensions")).unwrap();
    std::fs::write(
        package.join("package.json"),
        json!({"name": "demo-npm", "version": "1.0.0", "pi": {"extensions": ["./extensions/n.ts"]}}).to_string(),
    )
    .unwrap();
    std::fs::write(package.join("extensions/n.ts"), command_file("from_npm")).unwrap();
}

/// A `-e npm:` package is one of the command line's extensions: labelled `cli` as pi 1.6 labels
/// it, and loaded in the command line's order (before a later `-e` file and the settings').
#[test]
fn an_e_npm_packages_commands_are_cli_ones_in_the_command_lines_order() {
    let test = "an_e_npm_packages_commands_are_cli_ones_in_the_command_lines_order";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let root = PathBuf::from(fx.tmp());
    let file = root.join("a.ts");
    std::fs::write(&file, command_file("from_file")).unwrap();
    let settings = root.join("s.ts");
    std::fs::write(&settings, command_file("from_settings")).unwrap();
    fx.agent
        .write(
            "settings.json",
            json!({"extensions": [settings.display().to_string()]}).to_string(),
        )
        .unwrap();
    // Installed where both pis keep `-e` packages (the agent folder, whatever TMPDIR says):
    // neither needs a network.
    let temp = root.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    preinstall_npm_package(&fx.agent.path().join("tmp/extensions/npm"));
    let args = ["--mode", "rpc", "-e", "npm:demo-npm", "-e", &file.display().to_string()].map(str::to_string);
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    let labels = |commands: Vec<Value>| -> Vec<(String, String, String)> {
        commands
            .iter()
            .filter(|c| c["sourceInfo"]["source"] != "builtin")
            .map(|c| {
                let field = |v: &Value| v.as_str().unwrap_or_default().to_string();
                (
                    field(&c["name"]),
                    field(&c["sourceInfo"]["source"]),
                    field(&c["sourceInfo"]["scope"]),
                )
            })
            .collect()
    };
    let mut pi = pi_with(&fx, &env, &args);
    pi.cmd.env("TMPDIR", &temp);
    let ours = labels(commands(&pi.stdin(input).run().stdout));
    let expected = [
        ("from_npm", "cli", "temporary"),
        ("from_file", "cli", "temporary"),
        ("from_settings", "local", "user"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(ours, expected);
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = labels(commands(
        &reference_run(&reference, &fx, &args).stdin(input).run().stdout,
    ));
    assert_eq!(ours, theirs);
}

/// Outside the terminal UI pi 1.6's default theme has no panel backgrounds (the selection and
/// search matches included: the terminal reported no colours), each token exists only in its
/// own slot, and `style()` opens the colours before the attributes.
#[test]
fn the_themes_slots_outside_the_terminal_ui_are_pi_1_6s() {
    let test = "the_themes_slots_outside_the_terminal_ui_are_pi_1_6s";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = |mut pi: crate::harness::Pi, name: &str| {
        let path = fx.root.path().join(name);
        pi.cmd.env("THEME_LOG", &path);
        pi.run().assert_ok();
        std::fs::read_to_string(path).unwrap()
    };
    let args = ["-e", &fixture("theme_slots.ts"), "-p", "hi"].map(str::to_string);
    let ours = log(pi_with(&fx, &env, &args), "ours.log");
    assert!(
        ours.contains("bg selectedBg \"\\u001b[49my\\u001b[49m\" \"\\u001b[49m\"\n"),
        "{ours}"
    );
    assert!(ours.contains("bg searchMatchBg \"\\u001b[49my\\u001b[49m\""), "{ours}");
    assert!(
        ours.contains("bg of a foreground throws Unknown theme color: accent\n"),
        "{ours}"
    );
    assert!(
        ours.contains("style \"\\u001b[38;5;5m\\u001b[49ms\\u001b[49m\\u001b[39m\"\n"),
        "{ours}"
    );
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    assert_eq!(ours, log(reference_run(&reference, &fx, &args), "theirs.log"));
}

/// A plain `+path` entry of the settings' `extensions` only keeps a file found some other way
/// (a folder entry, the `extensions/` folder): alone it loads nothing, as in pi 1.6.
#[test]
fn a_plus_path_settings_entry_loads_nothing_by_itself() {
    let test = "a_plus_path_settings_entry_loads_nothing_by_itself";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let root = PathBuf::from(fx.tmp());
    let write = |path: PathBuf, text: String| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(root.join("alone/x.ts"), command_file("forced_alone"));
    write(root.join("listed/y.ts"), command_file("forced_listed"));
    write(
        PathBuf::from(fx.agent_path()).join("extensions/z.ts"),
        command_file("forced_in_folder"),
    );
    let plus = |p: PathBuf| format!("+{}", p.display());
    fx.agent
        .write(
            "settings.json",
            json!({"extensions": [
                plus(root.join("alone/x.ts")),
                root.join("listed").display().to_string(),
                plus(root.join("listed/y.ts")),
                plus(PathBuf::from(fx.agent_path()).join("extensions/z.ts")),
            ]})
            .to_string(),
        )
        .unwrap();
    let args = ["--mode", "rpc"].map(str::to_string);
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    let names = |commands: Vec<Value>| -> Vec<String> {
        commands
            .iter()
            .filter(|c| c["sourceInfo"]["source"] != "builtin")
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect()
    };
    let ours = names(commands(&pi_with(&fx, &env, &args).stdin(input).run().stdout));
    assert_eq!(ours, ["forced_listed", "forced_in_folder"]);
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let theirs = names(commands(
        &reference_run(&reference, &fx, &args).stdin(input).run().stdout,
    ));
    assert_eq!(ours, theirs);
}

/// `ctx.ui.theme` has pi 1.6's shape outside the terminal UI: `mode` names the colour depth,
/// which the environment decides (256 colours unless the terminal is known for 24-bit ones),
/// `colors` holds frozen colour objects for every token; the built-in `dark` theme then writes
/// its RGB colours in that depth. The system theme's colours are pi 1.6's exactly; the `dark`
/// palette is our own, so there only the shape and the depth are compared.
#[test]
fn the_themes_mode_and_colour_objects_are_pi_1_6s() {
    let test = "the_themes_mode_and_colour_objects_are_pi_1_6s";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let log = |mut pi: crate::harness::Pi, name: &str, colorterm: &str| {
        let path = fx.root.path().join(name);
        pi.cmd
            .env("THEME_LOG", &path)
            .env("COLORTERM", colorterm)
            .env("TERM", "xterm-256color")
            .env_remove("PI_TRUE_COLOR");
        for var in [
            "TERM_PROGRAM",
            "WT_SESSION",
            "TMUX",
            "KITTY_WINDOW_ID",
            "WEZTERM_PANE",
            "ITERM_SESSION_ID",
        ] {
            pi.cmd.env_remove(var);
        }
        pi.run().assert_ok();
        std::fs::read_to_string(path).unwrap()
    };
    let shape = |text: &str| -> String {
        text.lines()
            .filter(|l| !l.starts_with("color "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let reference = pi_test_support::reference_pi(test);
    for (settings, colorterm) in [
        ("{}", ""),
        ("{}", "truecolor"),
        (r#"{"theme":"dark"}"#, ""),
        (r#"{"theme":"dark"}"#, "truecolor"),
    ] {
        fx.agent.write("settings.json", settings).unwrap();
        for mode in [&["-p", "hi"][..], &["--mode", "json", "hi"]] {
            let mut args = vec!["-e".to_string(), fixture("theme_shape.ts")];
            args.extend(mode.iter().map(|s| s.to_string()));
            let ours = log(pi_with(&fx, &env, &args), "ours.log", colorterm);
            let depth = if colorterm.is_empty() { "256color" } else { "truecolor" };
            assert!(ours.starts_with(&format!("mode \"{depth}\" {depth} ")), "{ours}");
            assert!(ours.contains("colors 56 frozen true true\n"), "{ours}");
            if settings != "{}" {
                let bits = if colorterm.is_empty() { "256" } else { "24" };
                assert!(ours.contains(&format!("depth fg {bits}\ndepth bg {bits}\n")), "{ours}");
            }
            let Some(reference) = &reference else { continue };
            let theirs = log(reference_run(reference, &fx, &args), "theirs.log", colorterm);
            if settings == "{}" {
                assert_eq!(ours, theirs, "{settings} {colorterm:?} {mode:?}");
            } else {
                assert_eq!(shape(&ours), shape(&theirs), "{settings} {colorterm:?} {mode:?}");
            }
        }
    }
}
