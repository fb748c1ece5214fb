//! pi 1.6's built-in extensions switched by the settings' `extensions` entries
//! (`-builtin:<name>`, `+builtin:<name>`, `!glob`): the user's entries decide, a matching entry
//! of a trusted project's settings overrides them, and the command line (`-e builtin:<name>`,
//! `--no-mcp`) decides over both. Seen through RPC `get_commands` (pi's `/llama` and `/mcp`),
//! compared with pi 1.6 side by side, and through the tools a request declares.

use std::path::PathBuf;

use pi_test_support::Script;
use serde_json::{json, Value};

use crate::harness::{Fixture, Mock};

/// The names of pi's own commands in the answer to `get_commands`.
fn builtin_commands(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "response" && e["id"] == "1")
        .and_then(|e| e["data"]["commands"].as_array().cloned())
        .unwrap_or_else(|| panic!("no get_commands answer: {stdout}"))
        .iter()
        .filter(|c| c["sourceInfo"]["source"] == "builtin")
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

/// User entries, project entries, extra arguments, and what is expected.
type Case<'a> = (&'a [&'a str], &'a [&'a str], &'a [&'a str], &'a [&'a str]);

/// Write the user's and the project's `extensions` entries.
fn entries(fx: &Fixture, user: &[&str], project: &[&str]) {
    fx.agent
        .write("settings.json", json!({ "extensions": user }).to_string())
        .unwrap();
    let dir = PathBuf::from(&fx.proj).join(".pi");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), json!({ "extensions": project }).to_string()).unwrap();
}

#[test]
fn settings_entries_switch_builtin_extensions_as_pi_1_6() {
    let test = "settings_entries_switch_builtin_extensions_as_pi_1_6";
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    // The expected: pi's commands left on.
    let cases: [Case; 8] = [
        (&["-builtin:mcp"], &[], &[], &["llama"]),
        (&["!builtin:*", "+builtin:mcp"], &[], &[], &["mcp"]),
        (&["+builtin:mcp", "-builtin:mcp"], &[], &[], &["llama"]),
        // A trusted project's matching entry overrides the user's; its last one wins.
        (&["-builtin:mcp"], &["+builtin:mcp"], &["--approve"], &["llama", "mcp"]),
        (
            &["-builtin:mcp"],
            &["+builtin:mcp", "!builtin:m*"],
            &["--approve"],
            &["llama"],
        ),
        (&[], &["-builtin:llama.cpp"], &["--approve"], &["mcp"]),
        // The command line decides over both.
        (
            &["-builtin:mcp"],
            &["-builtin:mcp"],
            &["--approve", "-e", "builtin:mcp"],
            &["mcp", "llama"],
        ),
        (&[], &["+builtin:mcp"], &["--approve", "--no-mcp"], &["llama"]),
    ];
    let reference = pi_test_support::reference_pi(test);
    for (user, project, extra, expected) in cases {
        entries(&fx, user, project);
        let mut args = vec!["--mode".to_string(), "rpc".to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        let ours = builtin_commands(&fx.pi(&args).stdin(input).run().stdout);
        assert_eq!(ours, expected, "user {user:?}, project {project:?}, {extra:?}");
        if let Some(reference) = &reference {
            let run = crate::extensions::reference_run(reference, &fx, &args)
                .stdin(input)
                .run();
            assert_eq!(
                ours,
                builtin_commands(&run.stdout),
                "pi 1.6: {user:?} {project:?} {extra:?}"
            );
        }
    }
}

#[test]
fn an_untrusted_projects_entries_leave_builtin_extensions_to_the_user() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    entries(&fx, &["-builtin:mcp"], &["+builtin:mcp"]);
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    let run = fx.pi(["--mode", "rpc"]).stdin(input).run();
    assert_eq!(builtin_commands(&run.stdout), ["llama"]);
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn settings_entries_switch_codemode_off_and_a_project_or_the_command_line_on_again() {
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let tools = ["--tools", "read,codemode", "-p", "hi"];
    let cases: [Case; 4] = [
        (&[], &[], &[], &["read", "codemode"]),
        (&["-builtin:codemode"], &[], &[], &["read"]),
        (
            &["-builtin:codemode"],
            &["+builtin:codemode"],
            &["--approve"],
            &["read", "codemode"],
        ),
        (
            &["-builtin:codemode"],
            &[],
            &["-e", "builtin:codemode"],
            &["read", "codemode"],
        ),
    ];
    for (i, (user, project, extra, expected)) in cases.into_iter().enumerate() {
        entries(&fx, user, project);
        let args: Vec<&str> = extra.iter().chain(tools.iter()).copied().collect();
        fx.pi(&args).run().assert_ok();
        let requests = mock.requests();
        assert_eq!(
            tool_names(&requests[i].body),
            expected,
            "user {user:?}, project {project:?}, {extra:?}"
        );
    }
}

/// The extension commands of a `get_commands` answer: name and where they come from.
fn extension_commands(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "response" && e["id"] == "1")
        .and_then(|e| e["data"]["commands"].as_array().cloned())
        .unwrap_or_else(|| panic!("no get_commands answer: {stdout}"))
        .iter()
        .filter(|c| c["source"] == "extension")
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_string(),
                c["sourceInfo"]["source"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn builtins_named_with_e_follow_the_other_e_extensions_commands() {
    let test = "builtins_named_with_e_follow_the_other_e_extensions_commands";
    let Some(env) = crate::extensions::environment(test) else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let root = PathBuf::from(fx.tmp());
    let command = |name: &str| {
        let path = root.join(format!("{name}.ts"));
        std::fs::write(
            &path,
            format!("export default function (pi: any) {{ pi.registerCommand(\"{name}\", {{ handler: async () => {{}} }}); }}\n"),
        )
        .unwrap();
        path.display().to_string()
    };
    let (a, b, s) = (command("from_a"), command("from_b"), command("from_settings"));
    entries(&fx, &[&s], &[]);
    let args = [
        "--mode",
        "rpc",
        "-e",
        "builtin:mcp",
        "-e",
        &a,
        "-e",
        "builtin:llama.cpp",
        "-e",
        &b,
    ]
    .map(str::to_string);
    let input = "{\"id\":\"1\",\"type\":\"get_commands\"}\n";
    let ours = extension_commands(&crate::extensions::pi_with(&fx, &env, &args).stdin(input).run().stdout);
    let expected = [
        ("from_a", "cli"),
        ("from_b", "cli"),
        ("mcp", "builtin"),
        ("llama", "builtin"),
        ("from_settings", "local"),
    ]
    .map(|(n, s)| (n.to_string(), s.to_string()));
    assert_eq!(ours, expected);
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let run = crate::extensions::reference_run(&reference, &fx, &args)
        .stdin(input)
        .run();
    assert_eq!(ours, extension_commands(&run.stdout));
}
