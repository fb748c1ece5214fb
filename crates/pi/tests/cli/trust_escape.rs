//! Projects whose files try to reach past project trust: a `.pi` that is a symlink to a folder
//! elsewhere, project settings naming extensions and skills outside the project, a
//! `.pi/extensions` that is a symlink, and a project `mcp.json` that asks for a sign-in's token
//! (`auth`). Each case runs on our binary and, when the reference pi 1.6 is installed, on it in
//! the same fixture, and both must give the same outcome: nothing of the project loads until it
//! is trusted, a trusted project's links are followed like plain folders, and `auth` in a
//! project `mcp.json` is a configuration error however the project is trusted.

use std::path::Path;

use pi_test_support::Script;

use crate::extensions::{environment, pi_with};
use crate::harness::{Fixture, Mock, Pi};

/// The reference pi in `fx`'s project with its agent directory, or `None` (skipped) without it.
fn reference(fx: &Fixture, test: &str, args: &[&str]) -> Option<Pi> {
    let reference = pi_test_support::reference_pi(test)?;
    let mut cmd = reference.command();
    cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
    Some(Pi::from_command(cmd))
}

/// The system prompt and the reasoning effort of the last request.
fn last_request(mock: &Mock) -> (String, String) {
    let requests = mock.requests();
    let body = &requests.last().expect("a request was made").body;
    let system = body["messages"][0]["content"].as_str().unwrap_or_default().to_string();
    let effort = body["reasoning_effort"].as_str().unwrap_or_default().to_string();
    (system, effort)
}

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

const PROMPT: [&str; 6] = [
    "-p",
    "--no-session",
    "--provider",
    "mock-openai",
    "--model",
    "mock-thinker",
];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut all: Vec<&str> = PROMPT.to_vec();
    all.extend_from_slice(extra);
    all.push("hi");
    all
}

/// A `.pi` that links to a folder outside the project: its settings and SYSTEM.md are the
/// project's own, so they wait for trust, then load through the link.
#[test]
fn a_symlinked_pi_folder_waits_for_trust_like_a_plain_one() {
    let test = "a_symlinked_pi_folder_waits_for_trust_like_a_plain_one";
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let outside = fx.root.path().join("outside-pi");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("settings.json"), r#"{"defaultThinkingLevel": "high"}"#).unwrap();
    std::fs::write(outside.join("SYSTEM.md"), "SYSTEM FROM OUTSIDE").unwrap();
    symlink(&outside, &fx.proj.join(".pi"));

    let outcome = |run: Pi| {
        let run = run.run();
        run.assert_ok();
        let (system, effort) = last_request(&mock);
        (system.contains("SYSTEM FROM OUTSIDE"), effort)
    };
    let untrusted = outcome(fx.pi(args(&[])));
    let trusted = outcome(fx.pi(args(&["--approve"])));
    assert_eq!(untrusted, (false, "medium".to_string()), "an untrusted link is ignored");
    assert_eq!(trusted, (true, "high".to_string()), "a trusted link is followed");

    if let Some(theirs) = reference(&fx, test, &args(&[])) {
        assert_eq!(outcome(theirs), untrusted, "pi 1.6, untrusted");
        let theirs = reference(&fx, test, &args(&["--approve"])).unwrap();
        assert_eq!(outcome(theirs), trusted, "pi 1.6, trusted");
    }
}

/// Project settings that name an extension and a skill folder outside the project, and a
/// `.pi/extensions` that links outside: none of them loads in an untrusted project; trusted,
/// all of them do. Each extension writes a marker file when it loads.
#[test]
fn extensions_and_skills_outside_the_project_wait_for_trust() {
    let test = "extensions_and_skills_outside_the_project_wait_for_trust";
    let Some(env) = environment(test) else { return };
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    let outside = fx.root.path().join("outside");
    let marks = fx.root.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let marker = |name: &str| {
        format!(
            "import {{ writeFileSync }} from \"node:fs\";\n\
             export default function (pi: any) {{\n\
               writeFileSync(process.env.TRUST_MARKS + \"/{name}-\" + process.env.TRUST_RUN, \"loaded\");\n\
             }}\n"
        )
    };
    std::fs::create_dir_all(outside.join("linked-extensions")).unwrap();
    std::fs::write(outside.join("linked-extensions/linked.ts"), marker("linked")).unwrap();
    std::fs::create_dir_all(outside.join("named")).unwrap();
    std::fs::write(outside.join("named/named.ts"), marker("named")).unwrap();
    std::fs::create_dir_all(outside.join("skills/far-skill")).unwrap();
    std::fs::write(
        outside.join("skills/far-skill/SKILL.md"),
        "---\nname: far-skill\ndescription: A SKILL FROM OUTSIDE THE PROJECT\n---\nBody.\n",
    )
    .unwrap();
    std::fs::create_dir_all(fx.proj.join(".pi")).unwrap();
    symlink(&outside.join("linked-extensions"), &fx.proj.join(".pi/extensions"));
    let settings = serde_json::json!({
        "extensions": [outside.join("named/named.ts")],
        "skills": [outside.join("skills")],
    });
    std::fs::write(fx.proj.join(".pi/settings.json"), settings.to_string()).unwrap();

    // (extensions that loaded, whether the skill reached the system prompt)
    let outcome = |mut run: Pi, tag: &str| {
        run.cmd.env("TRUST_MARKS", &marks).env("TRUST_RUN", tag);
        run.run().assert_ok();
        let mut loaded: Vec<String> = std::fs::read_dir(&marks)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(&format!("-{tag}")).map(str::to_string)
            })
            .collect();
        loaded.sort();
        let (system, _) = last_request(&mock);
        (loaded, system.contains("A SKILL FROM OUTSIDE THE PROJECT"))
    };
    let untrusted = outcome(pi_with(&fx, &env, args(&[])), "ours-untrusted");
    let trusted = outcome(pi_with(&fx, &env, args(&["--approve"])), "ours-trusted");
    assert_eq!(untrusted, (vec![], false), "nothing of an untrusted project loads");
    assert_eq!(
        trusted,
        (vec!["linked".to_string(), "named".to_string()], true),
        "a trusted project's links and outside paths are followed"
    );

    if let Some(theirs) = reference(&fx, test, &args(&[])) {
        assert_eq!(outcome(theirs, "ref-untrusted"), untrusted, "pi 1.6, untrusted");
        let theirs = reference(&fx, test, &args(&["--approve"])).unwrap();
        assert_eq!(outcome(theirs, "ref-trusted"), trusted, "pi 1.6, trusted");
    }
}

/// A project `mcp.json` whose server asks for a sign-in's token: untrusted, the file is only
/// named as ignored; trusted, `pi mcp list` refuses it as a configuration error, and a prompt
/// still runs without the server.
#[test]
fn a_project_mcp_json_cannot_borrow_a_sign_in() {
    let test = "a_project_mcp_json_cannot_borrow_a_sign_in";
    let mock = Mock::start(Script::echo());
    let fx = Fixture::new(&mock);
    std::fs::create_dir_all(fx.proj.join(".pi")).unwrap();
    let mcp = serde_json::json!({"mcpServers": {"remote": {
        "url": "http://127.0.0.1:9/mcp", "auth": {"provider": "anthropic"}}}});
    std::fs::write(fx.proj.join(".pi/mcp.json"), mcp.to_string()).unwrap();
    let project_mcp = fx.proj.join(".pi/mcp.json").display().to_string();

    // (exit code, output of `pi mcp list`), then the exit code and reply of a prompt.
    let list = |run: Pi| {
        let run = run.run();
        (run.code, format!("{}{}", run.stdout, run.stderr))
    };
    let prompt = |run: Pi| {
        let run = run.run();
        (run.code, run.stdout)
    };
    let untrusted_list = list(fx.pi(["mcp", "list"]));
    assert_eq!(untrusted_list.0, 0, "{}", untrusted_list.1);
    assert!(
        untrusted_list
            .1
            .contains(&format!("{project_mcp} is ignored because the project is not trusted")),
        "{}",
        untrusted_list.1
    );
    fx.agent
        .write(
            "trust.json",
            serde_json::json!({ fx.proj.display().to_string(): true }).to_string(),
        )
        .unwrap();
    let trusted_list = list(fx.pi(["mcp", "list"]));
    assert_eq!(
        trusted_list,
        (
            1,
            format!("config error: {project_mcp}: server \"remote\": auth is only allowed in the global mcp.json\n")
        )
    );
    let trusted_prompt = prompt(fx.pi(["-p", "--no-session", "hi"]));
    assert_eq!(trusted_prompt, (0, "echo: hi\n".to_string()));
    let requests = mock.requests();
    let tools: Vec<&str> = requests.last().unwrap().body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        !tools.iter().any(|t| t.contains("remote")),
        "the refused server's tools are offered: {tools:?}"
    );

    if let Some(theirs) = reference(&fx, test, &["mcp", "list"]) {
        assert_eq!(list(theirs), trusted_list, "pi 1.6, trusted");
        let theirs = reference(&fx, test, &["-p", "--no-session", "hi"]).unwrap();
        assert_eq!(prompt(theirs), trusted_prompt, "pi 1.6, trusted prompt");
        std::fs::remove_file(fx.agent.path().join("trust.json")).unwrap();
        let theirs = reference(&fx, test, &["mcp", "list"]).unwrap();
        assert_eq!(list(theirs), untrusted_list, "pi 1.6, untrusted");
    }
}
