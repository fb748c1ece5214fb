//! `models.generateImages()` and `models.classify()` in codemode scripts, through the binary
//! against the mock's image and classifier routes: models.json's OpenRouter `baseUrl` and key
//! reach the requests, the script gets the results, the tool result shows the image and its
//! call rows; the reference pi 1.6 runs the same script when it is installed.

use std::process::Command;

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::harness::{pi_bin, Fixture, Mock, Pi};

const SCRIPT: &str = r#"const painter = await models.getModelOfType("image", "openrouter", "google/gemini-2.5-flash-image");
const judge = await models.getModelOfType("classifier", "openrouter", "~liquid/d1-latest");
const [art, verdict] = await Promise.all([
  models.generateImages(painter, {input: [{type: "text", text: "a fox"}]}),
  models.classify(judge, {state: {message: "great"}, questions: {
    mood: {type: "choice", instructions: "Mood?", criteria: {happy: "Happy", sad: "Sad"}},
    fine: {type: "bool", instructions: "Fine?", criteria: {true: "yes", false: "no"}}}}),
]);
const fine = {fine: {type: "bool", instructions: "Fine?", criteria: {true: "yes", false: "no"}}};
const nokey = await models.classify({provider: "opencode", id: "jev-1.13"}, {state: {}, questions: fine});
const blind = await models.classify({provider: "opencode", id: "jev-1.13"}, {state: {}, questions: fine,
  images: [{type: "image", data: "aGk=", mimeType: "image/png"}]});
let bad;
try { await models.classify({provider: "openrouter", id: "google/gemini-2.5-flash-image"}, {}); } catch (e) { bad = e.message; }
for (const block of art.output) { if (block.type === "image") image(block); else text(block.text); }
return {art: [art.stopReason, art.provider, art.model, art.output.length], verdict: [verdict.stopReason, verdict.answers], bad,
  nokey: [nokey.stopReason, nokey.errorMessage, nokey.answers], blind: [blind.stopReason, blind.errorMessage]};"#;

struct Outcome {
    /// The script's returned value.
    value: Value,
    /// The text before it (the image generator's caption and the saved image's path line).
    text: String,
    /// `(name, args, status)` of the call rows.
    rows: Vec<(String, String, String)>,
    /// `(id less the tool call's, error, cost)` of the call rows.
    row_details: Vec<(String, Value, Value)>,
    /// Authorization headers of the image and classifier requests.
    auth: Vec<String>,
    /// The tool result message's `usage`: what the script's model calls cost.
    usage: Value,
    /// `get_session_stats`'s cost less what the replies cost: what the totals count beyond them.
    totals_beyond_replies: f64,
}

fn scenario(pi: impl Fn(&Fixture) -> Command) -> Outcome {
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("codemode", json!({ "code": SCRIPT })),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    let path = fx.agent.path().join("models.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["providers"]["openrouter"] = json!({"baseUrl": mock.server.base_url(), "apiKey": "or-key"});
    std::fs::write(&path, config.to_string()).unwrap();
    let mut cmd = pi(&fx);
    cmd.args(["--tools", "codemode", "-p", "go"]);
    let run = Pi::from_command(cmd).run();
    run.assert_ok();
    let requests = mock.requests();
    let auth = requests
        .iter()
        .filter(|r| r.path.ends_with("/systemone") || r.body.get("modalities").is_some())
        .map(|r| r.header("authorization").unwrap_or_default().to_string())
        .collect();
    let message = &fx.first_tool_result();
    let texts: Vec<&str> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    let all = texts.join("");
    let body = all.split_once("Output:\n").map(|(_, b)| b).unwrap_or(&all);
    let (text, value) = body.rsplit_once('\n').unwrap();
    assert!(
        message["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image"),
        "{message}"
    );
    let rows = message["details"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("args"), s("status"))
        })
        .collect();
    let row_details = message["details"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = c["id"].as_str().unwrap_or_default();
            let short = id.split_once('/').map_or(id, |(_, rest)| rest).to_string();
            (short, c["error"].clone(), c["cost"].clone())
        })
        .collect();
    let mut stats = pi(&fx);
    stats.args(["--mode", "rpc", "-c"]);
    let stats =
        crate::session16::rpc_until_answered(Pi::from_command(stats), r#"{"id":"s","type":"get_session_stats"}"#, "s");
    let session = std::fs::read_to_string(&fx.sessions()[0]).unwrap();
    let replies: f64 = session
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["message"]["role"] == "assistant")
        .filter_map(|e| e["message"]["usage"]["cost"]["total"].as_f64())
        .sum();
    Outcome {
        totals_beyond_replies: stats["data"]["cost"].as_f64().unwrap_or_default() - replies,
        usage: message["usage"].clone(),
        row_details,
        value: serde_json::from_str(value).unwrap_or_else(|e| panic!("{e}: {value}")),
        text: text.to_string(),
        rows,
        auth,
    }
}

fn ours(fx: &Fixture) -> Command {
    let mut cmd = Command::new(pi_bin());
    cmd.current_dir(&fx.proj).envs(fx.agent.env());
    cmd.env_remove("OPENROUTER_API_KEY").env_remove("OPENCODE_API_KEY");
    cmd
}

#[test]
fn scripts_generate_images_and_classify_with_the_registry_credentials() {
    let ours = scenario(ours);
    assert_eq!(ours.auth, ["Bearer or-key", "Bearer or-key"]);
    assert_eq!(
        ours.value["art"],
        json!(["stop", "openrouter", "google/gemini-2.5-flash-image", 2])
    );
    assert_eq!(ours.value["verdict"][0], "stop");
    assert_eq!(ours.value["verdict"][1]["mood"]["choice"], "happy");
    assert!(
        ours.value["verdict"][1]["fine"]["probability"].is_number(),
        "{}",
        ours.value
    );
    assert_eq!(
        ours.value["bad"],
        "\"openrouter/google/gemini-2.5-flash-image\" is an image model, not a classifier model. List the classifier models you can use with models.getAvailableOfType(\"classifier\")."
    );
    // Failures before the provider come back as results, as in 1.6.
    assert_eq!(
        ours.value["nokey"],
        json!(["error", "Provider is not configured: opencode", {}])
    );
    assert_eq!(
        ours.value["blind"],
        json!(["error", "Model opencode/jev-1.13 does not accept image input"])
    );
    // The caption, then the image with the path it was saved to, then the returned value.
    assert!(
        ours.text.starts_with("==> text 1/2 <==\nmock image\n[Image saved to ")
            && ours.text.ends_with("==> text 2/2 <=="),
        "{}",
        ours.text
    );
    let rows: Vec<(&str, &str, &str)> = ours
        .rows
        .iter()
        .map(|(n, a, s)| (n.as_str(), a.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            (
                "models.generateImages",
                "openrouter/google/gemini-2.5-flash-image",
                "ok"
            ),
            ("models.classify", "openrouter/~liquid/d1-latest", "ok"),
            ("models.classify", "opencode/jev-1.13", "error"),
            ("models.classify", "opencode/jev-1.13", "error"),
        ]
    );
    // What the calls cost is on the tool result, the sum of the rows' costs.
    let rows_cost: f64 = ours.row_details.iter().filter_map(|(_, _, cost)| cost.as_f64()).sum();
    let cost = ours.usage["cost"]["total"].as_f64().unwrap_or_default();
    assert!(cost > 0.0, "{}", ours.usage);
    assert!((cost - rows_cost).abs() < 1e-12, "{} vs rows {rows_cost}", ours.usage);
    // And the session's totals count it.
    assert!(
        (ours.totals_beyond_replies - cost).abs() < 1e-9,
        "totals beyond the replies {} vs the script's {cost}",
        ours.totals_beyond_replies
    );
}

#[test]
fn scripts_run_models_as_pi_1_6_does() {
    let Some(reference) = pi_test_support::reference_pi("scripts_run_models_as_pi_1_6_does") else {
        return;
    };
    let theirs = scenario(|fx| {
        let mut cmd = reference.command();
        cmd.current_dir(&fx.proj).envs(fx.agent.env());
        cmd.env_remove("OPENROUTER_API_KEY").env_remove("OPENCODE_API_KEY");
        cmd
    });
    let ours = scenario(ours);
    assert_eq!(ours.value, theirs.value);
    assert_eq!(ours.rows, theirs.rows);
    assert_eq!(ours.row_details, theirs.row_details);
    assert_eq!(ours.auth, theirs.auth);
    assert_eq!(ours.usage, theirs.usage);
    assert!((ours.totals_beyond_replies - theirs.totals_beyond_replies).abs() < 1e-9);
    assert_eq!(ours.text.lines().next(), theirs.text.lines().next());
}
