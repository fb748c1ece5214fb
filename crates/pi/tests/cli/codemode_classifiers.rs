//! The Cloudflare Workers AI and OpenAI Decisions classifiers run end to end from a codemode
//! script, through the binary against the mock: the Cloudflare account id fills the endpoint
//! from the environment, models.json's provider `compat` changes how a classifier sends
//! images (and the model a script lists), and models.json's `baseUrl` and key reach Decisions.
//! The reference pi 1.6 runs the same script when it is installed; the requests (path, body,
//! the headers that matter) and the script's value must be the same.

use std::process::Command;

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::harness::{pi_bin, Fixture, Mock, Pi};

const SCRIPT: &str = r#"const questions = {
  mood: {type: "choice", instructions: "Mood?", criteria: {happy: "Happy", sad: ""}},
  level: {type: "score", instructions: "Level?", criteria: ["low", "mid", "high"]},
  fine: {type: "bool", instructions: "Fine?", criteria: {true: "yes", false: "no"}}};
const png = {type: "image", data: "iVBORw0KGgo=", mimeType: "image/png"};
const clef = await models.getModelOfType("classifier", "cloudflare-workers-ai", "@cf/cloudflare/clef");
const jev = await models.getModelOfType("classifier", "cloudflare-workers-ai", "typesafe/jev");
const luna = await models.getModelOfType("classifier", "openai", "gpt-6-luna");
const brief = (r) => [r.api, r.provider, r.model, r.stopReason, r.answers, r.usage ?? null, r.errorMessage ?? null];
const a = await models.classify(clef, {state: {message: "great"}, questions, images: [png]});
const b = await models.classify(jev, {state: {text: "plain"}, questions});
const c = await models.classify(luna, {state: {message: "great"}, questions, images: [png]});
return {clef: [clef.baseUrl, clef.compat], luna: luna.baseUrl, results: [a, b, c].map(brief)};"#;

/// One classifier request: its path, body and the headers that matter.
type Sent = (String, Value, Vec<(String, String)>);

/// What a run sent and got.
struct Outcome {
    /// The script's returned value, the mock's port written as `PORT`.
    value: Value,
    /// `(path, body, headers that matter)` of the classifier requests, in order.
    requests: Vec<Sent>,
}

/// Headers a classifier request is judged by (the transport's own are left out).
fn meaningful(headers: &[(String, String)]) -> Vec<(String, String)> {
    let mut kept: Vec<(String, String)> = headers
        .iter()
        .filter(|(name, _)| {
            matches!(
                name.as_str(),
                "authorization" | "content-type" | "typesafe-danger-zone-images"
            )
        })
        .cloned()
        .collect();
    kept.sort();
    kept
}

fn scenario(pi: impl FnOnce(&Fixture) -> Command) -> Outcome {
    let mock = Mock::start(Script::sequential(vec![
        Turn::tool_call("codemode", json!({ "code": SCRIPT })),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    let root = mock.server.url();
    let path = fx.agent.path().join("models.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["providers"]["cloudflare-workers-ai"] = json!({
        "baseUrl": format!("{root}/client/v4/accounts/{{CLOUDFLARE_ACCOUNT_ID}}/ai"),
        "compat": {"imageInput": "state-image-urls", "sendImageOptInHeader": true},
    });
    config["providers"]["openai"] = json!({"baseUrl": format!("{root}/v1"), "apiKey": "oa-key"});
    std::fs::write(&path, config.to_string()).unwrap();
    let mut cmd = pi(&fx);
    cmd.env("CLOUDFLARE_API_KEY", "cf-key")
        .env("CLOUDFLARE_ACCOUNT_ID", "acct42")
        .env_remove("OPENAI_API_KEY");
    cmd.args(["--tools", "codemode", "-p", "go"]);
    let run = Pi::from_command(cmd).run();
    run.assert_ok();
    let port = root.rsplit(':').next().unwrap().to_string();
    let requests = mock
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/run") || r.path.ends_with("/decisions"))
        .map(|r| (r.path.clone(), r.body.clone(), meaningful(&r.headers)))
        .collect();
    let text: String = fx.first_tool_result()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    let returned = text.rsplit_once('\n').map_or(text.as_str(), |(_, last)| last);
    let value: Value = serde_json::from_str(&returned.replace(&port, "PORT")).unwrap_or_else(|e| panic!("{e}: {text}"));
    Outcome { value, requests }
}

fn ours(fx: &Fixture) -> Command {
    fx.command(Command::new(pi_bin()))
}

#[test]
fn cloudflare_and_decisions_classify_with_models_json_applied() {
    let outcome = scenario(ours);
    let paths: Vec<&str> = outcome.requests.iter().map(|(p, _, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/client/v4/accounts/acct42/ai/run",
            "/client/v4/accounts/acct42/ai/run",
            "/v1/decisions"
        ]
    );
    // models.json's compat wins over Clef's catalogue `images`: the image goes before the
    // state as an `image_url` part, with the opt-in header.
    let (_, clef_body, clef_headers) = &outcome.requests[0];
    assert_eq!(clef_body["model"], "@cf/cloudflare/clef");
    assert_eq!(
        clef_body["input"]["state"],
        json!([{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}, {"message": "great"}])
    );
    assert!(clef_body["input"].get("images").is_none(), "{clef_body}");
    assert_eq!(clef_body["input"]["questions"]["fine"]["type"], "noul");
    assert!(clef_headers.contains(&("typesafe-danger-zone-images".into(), "true".into())));
    assert!(clef_headers.contains(&("authorization".into(), "Bearer cf-key".into())));
    let (_, luna_body, luna_headers) = &outcome.requests[2];
    assert_eq!(luna_body["questions"][2]["type"], "predicate");
    assert!(luna_headers.contains(&("authorization".into(), "Bearer oa-key".into())));

    let value = &outcome.value;
    assert_eq!(
        value["clef"],
        json!(["http://127.0.0.1:PORT/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai", {"imageInput": "state-image-urls", "sendImageOptInHeader": true}])
    );
    for (i, (api, model)) in [
        ("cloudflare-workers-ai-system-one", "@cf/cloudflare/clef"),
        ("cloudflare-workers-ai-system-one", "typesafe/jev"),
        ("openai-decisions", "gpt-6-luna"),
    ]
    .into_iter()
    .enumerate()
    {
        let result = &value["results"][i];
        assert_eq!(result[0], api);
        assert_eq!(result[2], model);
        assert_eq!(result[3], "stop", "{result}");
        assert_eq!(result[4]["mood"]["choice"], "happy", "{result}");
        assert_eq!(result[4]["fine"], json!({"type": "bool", "probability": 0.5}));
        assert_eq!(result[5]["input"], 42, "{result}");
    }
}

#[test]
fn cloudflare_and_decisions_classify_as_pi_1_6_does() {
    let Some(reference) = pi_test_support::reference_pi("cloudflare_and_decisions_classify_as_pi_1_6_does") else {
        return;
    };
    let theirs = scenario(|fx| fx.command(reference.command()));
    let ours = scenario(ours);
    assert_eq!(ours.requests.len(), theirs.requests.len());
    for ((our_path, our_body, our_headers), (their_path, their_body, their_headers)) in
        ours.requests.iter().zip(&theirs.requests)
    {
        assert_eq!(our_path, their_path);
        // As text: the key order is part of the request.
        assert_eq!(our_body.to_string(), their_body.to_string(), "{our_path}");
        assert_eq!(our_headers, their_headers, "{our_path}");
    }
    assert_eq!(ours.value, theirs.value);
}
