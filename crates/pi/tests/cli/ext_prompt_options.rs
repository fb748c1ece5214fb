//! `before_agent_start` handlers editing pi 1.6's `systemPromptOptions` in place
//! (`extensions/prompt_options.ts`): each edit must show in the request's system prompt and
//! tool list (except `hiddenTools`, which pi 1.6 does not take from handlers), ours and pi 1.6's side by side against the mock. The prompts' words are each
//! pi's own, so what is compared is which edits show and the tools declared.

use pi_test_support::Script;
use serde_json::{json, Value};

use crate::extensions::{environment, fixture, pi_with, reference_run};
use crate::harness::{Fixture, Mock, Pi};

const SKILL: &str = "---\nname: demo-skill\ndescription: A demo skill the extension removes\n---\nBody.\n";

fn system_prompt(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system" || m["role"] == "developer")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        })
        .collect()
}

/// Which edits the request's prompt shows, the tools it declares, and the handler's log.
fn record(pi: Pi, mock: &Mock, log: &std::path::Path) -> Value {
    let mut pi = pi;
    pi.cmd.env("OPTIONS_LOG", log);
    pi.run().assert_ok();
    let body = mock.requests().last().map(|r| r.body.clone()).unwrap_or_default();
    let prompt = system_prompt(&body);
    let has = |text: &str| prompt.contains(text);
    let tools: Vec<String> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    json!({
        "log": std::fs::read_to_string(log).unwrap_or_default().lines().collect::<Vec<_>>(),
        "section": has("<house_rules>\nAnswer like a lighthouse keeper.\n</house_rules>"),
        "promptGuideline": has("- Guideline from the extension"),
        "append": has("Appended by the extension"),
        "snippet": has("- read: Read files (snippet from the extension)"),
        "toolGuideline": has("- Bash guideline from the extension"),
        "contextFile": has("/virtual/EXTENSION.md") && has("Context from the extension"),
        "skillListed": has("demo-skill"),
        "hiddenListed": has("- edit:"),
        "unselectedListed": has("- write:"),
        "tools": tools,
    })
}

fn fixture_with_skill(mock: &Mock) -> Fixture {
    let fx = Fixture::new(mock);
    fx.agent.write("skills/demo-skill/SKILL.md", SKILL).unwrap();
    fx
}

#[test]
fn system_prompt_options_edits_shape_the_runs_prompt_as_in_pi_1_6() {
    let test = "system_prompt_options_edits_shape_the_runs_prompt_as_in_pi_1_6";
    let Some(env) = environment(test) else { return };
    let args: Vec<String> = ["-e", &fixture("prompt_options.ts"), "-p", "hello"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    // Without the extension the skill is listed (so removing it is a change).
    let mock = Mock::start(Script::echo());
    let fx = fixture_with_skill(&mock);
    pi_with(&fx, &env, ["-p", "hello"]).run().assert_ok();
    let plain = system_prompt(&mock.requests()[0].body);
    assert!(plain.contains("demo-skill"), "{plain}");
    assert!(plain.contains("- edit:"), "{plain}");

    let ours = record(pi_with(&fx, &env, &args), &mock, &fx.root.path().join("ours.log"));
    for edit in [
        "section",
        "promptGuideline",
        "append",
        "snippet",
        "toolGuideline",
        "contextFile",
    ] {
        assert_eq!(ours[edit], true, "{edit} not applied:\n{ours:#}");
    }
    for gone in ["skillListed", "unselectedListed"] {
        assert_eq!(ours[gone], false, "{gone}:\n{ours:#}");
    }
    // `hiddenTools` is pi's own list: 1.6 sets it again after the handlers, so `edit` stays.
    assert_eq!(ours["hiddenListed"], true, "{ours:#}");
    assert!(!ours["tools"].to_string().contains("\"write\""), "{ours:#}");
    let Some(reference) = pi_test_support::reference_pi(test) else {
        return;
    };
    let mock = Mock::start(Script::echo());
    let fx = fixture_with_skill(&mock);
    let theirs = record(
        reference_run(&reference, &fx, &args),
        &mock,
        &fx.root.path().join("theirs.log"),
    );
    assert_eq!(ours, theirs, "ours:\n{ours:#}\npi 1.6:\n{theirs:#}");
}
