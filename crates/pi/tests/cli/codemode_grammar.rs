//! codemode on the wire, side by side with pi 1.6: on OpenAI Responses models that take
//! grammar-constrained tools, `codemode` is declared as a custom tool with a Lark grammar, the
//! mock answers with a `custom_tool_call` whose raw input is the script, the script runs, and
//! the next request replays the call and its output as custom items. Also `models.*` in a
//! script, answered from the session's model registry.

use pi_test_support::{Api, Script, Turn};
use serde_json::{json, Value};

use crate::harness::{Fixture, Mock, Pi};

const SCRIPT: &str = "// @options: {\"timeout_ms\": 20000}\nconst t = await tools.read({path: 'hello.txt'});\nreturn \"first: \" + t.split('\\n')[0];";

/// A models.json whose one provider speaks Responses and takes grammar tools.
fn grammar_models(mock: &Mock) -> String {
    json!({"providers": {"grammar": {
        "baseUrl": mock.server.base_url_for(Api::Responses),
        "api": "openai-responses",
        "apiKey": "sk-grammar",
        "models": [{"id": "mock-model", "reasoning": false, "compat": {"supportsOpenAIGrammarTools": true}}]
    }}})
    .to_string()
}

/// A models.json whose one provider speaks Chat Completions and takes grammar tools.
fn completions_grammar_models(mock: &Mock) -> String {
    json!({"providers": {"grammar": {
        "baseUrl": mock.server.base_url_for(Api::Openai),
        "api": "openai-completions",
        "apiKey": "sk-grammar",
        "models": [{"id": "mock-model", "reasoning": false, "compat": {"supportsOpenAIGrammarTools": true}}]
    }}})
    .to_string()
}

/// The declared tools as `(type, name, format type, format syntax)`.
fn declared(body: &Value) -> Vec<(String, String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                text(&t["type"]),
                text(&t["name"]),
                text(&t["format"]["type"]),
                text(&t["format"]["syntax"]),
            )
        })
        .collect()
}

/// The input items after the user's prompt, with the script's wall time masked.
fn replayed(body: &Value) -> Vec<Value> {
    let items = body["input"].as_array().unwrap();
    let after_user = items.iter().position(|i| i["role"] == "user").unwrap() + 1;
    items[after_user..]
        .iter()
        .map(|item| {
            let mut item = item.clone();
            if let Some(output) = item["output"].as_str() {
                let masked: Vec<&str> = output
                    .lines()
                    .map(|l| {
                        if l.starts_with("Wall time ") {
                            "Wall time <T>"
                        } else {
                            l
                        }
                    })
                    .collect();
                item["output"] = json!(masked.join("\n"));
            }
            item
        })
        .collect()
}

fn run_grammar_case(fx: &Fixture, command: Option<std::process::Command>) {
    let args = ["--model", "grammar/mock-model", "--tools", "read,codemode", "-p", "go"];
    let run = match command {
        Some(mut cmd) => {
            cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
            Pi::from_command(cmd).run()
        }
        None => fx.pi(args).run(),
    };
    run.assert_ok();
    assert_eq!(run.stdout, "done\n");
}

fn grammar_mock() -> Mock {
    Mock::start(Script::sequential(vec![
        Turn::tool_call("codemode", json!({ "code": SCRIPT })),
        Turn::text("done"),
    ]))
}

#[test]
fn responses_models_with_grammar_tools_get_the_script_as_raw_text() {
    let mock = grammar_mock();
    let fx = Fixture::new(&mock);
    fx.agent.write("models.json", grammar_models(&mock)).unwrap();
    run_grammar_case(&fx, None);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(
        declared(first),
        [
            ("function".into(), "read".into(), String::new(), String::new()),
            ("custom".into(), "codemode".into(), "grammar".into(), "lark".into()),
        ]
    );
    let codemode = &first["tools"][1];
    assert_eq!(codemode["format"]["definition"], pi_codemode::SOURCE_GRAMMAR);
    assert!(codemode.get("parameters").is_none(), "{codemode}");
    assert!(codemode["description"].as_str().unwrap().contains("QuickJS"));

    let ours = replayed(&requests[1].body);
    assert_eq!(ours.len(), 2, "{ours:#?}");
    assert_eq!(
        ours[0],
        json!({"type": "custom_tool_call", "id": "ctc_mock_0_0", "call_id": "call_mock_0_0", "name": "codemode", "input": SCRIPT})
    );
    assert_eq!(ours[1]["type"], "custom_tool_call_output");
    assert_eq!(ours[1]["call_id"], "call_mock_0_0");
    assert_eq!(
        ours[1]["output"],
        "Script completed\nWall time <T>\nOutput:\n\nfirst: Hello world"
    );

    let Some(reference) =
        pi_test_support::reference_pi("responses_models_with_grammar_tools_get_the_script_as_raw_text")
    else {
        return;
    };
    let mock = grammar_mock();
    let theirs = Fixture::new(&mock);
    theirs.agent.write("models.json", grammar_models(&mock)).unwrap();
    run_grammar_case(&theirs, Some(reference.command()));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(declared(&requests[0].body), declared(first));
    let their_items = replayed(&requests[1].body);
    assert_eq!(their_items[0], ours[0]);
    // 1.6 ends a script's output with a newline of its own.
    assert_eq!(
        their_items[1]["output"].as_str().map(str::trim_end),
        ours[1]["output"].as_str()
    );
    assert_eq!(their_items[1]["type"], ours[1]["type"]);
}

/// The `codemode` tool of the first request, and the second request's replayed call, for a
/// model of `provider` that takes no grammar tools.
fn fallback_case(provider: &str, command: Option<std::process::Command>) -> (Value, Vec<Value>) {
    let mock = grammar_mock();
    let fx = Fixture::new(&mock);
    let model = format!("{provider}/mock-model");
    let args = ["--model", model.as_str(), "--tools", "read,codemode", "-p", "go"];
    let run = match command {
        Some(mut cmd) => {
            cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
            Pi::from_command(cmd).run()
        }
        None => fx.pi(args).run(),
    };
    run.assert_ok();
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let body = &requests[0].body;
    let tools = body["tools"].as_array().unwrap();
    let codemode = tools
        .iter()
        .find(|t| t["name"] == "codemode" || t["function"]["name"] == "codemode")
        .unwrap()
        .clone();
    // The description is the project's own wording of 1.6's (its facts are tested elsewhere).
    let mut codemode = codemode;
    for pointer in ["/description", "/function/description"] {
        if let Some(d) = codemode.pointer_mut(pointer) {
            *d = json!("<description>");
        }
    }
    let replayed = requests[1].body["input"]
        .as_array()
        .or(requests[1].body["messages"].as_array())
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call" || i["role"] == "assistant")
        .cloned()
        .collect();
    (codemode, replayed)
}

/// Without grammar tools the script goes as the `code` argument of a function tool declared
/// exactly as pi 1.6 declares it, on Responses and on Chat Completions.
#[test]
fn the_function_tool_fallback_is_declared_as_pi_declares_it() {
    for provider in ["mock-responses", "mock-openai"] {
        let (ours, our_calls) = fallback_case(provider, None);
        assert_eq!(ours["type"], "function", "{ours}");
        let Some(reference) = pi_test_support::reference_pi("the_function_tool_fallback_is_declared_as_pi_declares_it")
        else {
            return;
        };
        let (theirs, their_calls) = fallback_case(provider, Some(reference.command()));
        assert_eq!(ours, theirs, "{provider}");
        assert_eq!(our_calls, their_calls, "{provider}");
    }
}

#[test]
fn other_models_get_codemode_as_a_function_tool() {
    let mock = grammar_mock();
    let fx = Fixture::new(&mock);
    let run = fx
        .pi([
            "--model",
            "mock-responses/mock-model",
            "--tools",
            "read,codemode",
            "-p",
            "go",
        ])
        .run();
    run.assert_ok();
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let tools = declared(&requests[0].body);
    assert_eq!(tools[1].0, "function");
    let items = replayed(&requests[1].body);
    assert_eq!(items[0]["type"], "function_call");
    assert_eq!(items[1]["type"], "function_call_output");
}

const MODELS_SCRIPT: &str = "const chat = await models.getModelsOfType('chat', 'mock-openai');\n\
const available = await models.getAvailableOfType('chat');\n\
const one = await models.getModelOfType('chat', 'mock-anthropic', 'mock-thinker');\n\
const images = (await models.getModelsOfType('image')).length;\n\
const classifiers = (await models.getModelsOfType('classifier', 'opencode')).map(m => m.id);\n\
const jev = await models.getModelOfType('classifier', 'typesafe', 'jev-latest');\n\
const usable = (await models.getAvailableOfType('classifier')).length;\n\
const errors = [];\n\
for (const f of [() => models.getModelsOfType('video'), () => models.classify({provider: 'mock-openai', id: 'mock-model'}, {}), () => models.generateImages({provider: 'nope', id: 'x'}, {})]) {\n\
  try { await f(); } catch (e) { errors.push(e.message); }\n\
}\n\
return {chat, available: available.map(m => m.provider + '/' + m.id), one, images, classifiers, jev, usable, errors, keys: Object.keys(models)};";

fn models_run(fx: &Fixture, command: Option<std::process::Command>) {
    let args = ["--tools", "codemode", "-p", "go"];
    let run = match command {
        Some(mut cmd) => {
            cmd.args(args).current_dir(&fx.proj).envs(fx.agent.env());
            Pi::from_command(cmd).run()
        }
        None => fx.pi(args).run(),
    };
    run.assert_ok();
}

#[test]
fn scripts_list_the_session_models_as_pi_does() {
    let script = || {
        Script::sequential(vec![
            Turn::tool_call("codemode", json!({ "code": MODELS_SCRIPT })),
            Turn::text("done"),
        ])
    };
    let mock = Mock::start(script());
    let fx = Fixture::new(&mock);
    models_run(&fx, None);
    let output = |mock: &Mock| -> Value {
        let text = crate::extensions::tool_results(&mock.requests()[1].body).remove(0);
        let json = text.split_once("Output:\n").unwrap().1.trim();
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    let ours = output(&mock);
    // The mock providers' models, with the models.json fields pi 1.6 gives (and no headers).
    assert_eq!(ours["chat"].as_array().unwrap().len(), 2);
    assert_eq!(ours["chat"][0]["id"], "mock-model");
    assert_eq!(ours["chat"][0]["provider"], "mock-openai");
    assert_eq!(
        ours["available"],
        json!([
            "mock-openai/mock-model",
            "mock-openai/mock-thinker",
            "mock-anthropic/mock-model",
            "mock-anthropic/mock-thinker",
            "mock-responses/mock-model",
            "mock-responses/mock-thinker"
        ])
    );
    assert_eq!(ours["one"]["name"], "Mock Thinker");
    // pi 1.6's catalogue of image and classifier models; none is usable without its key.
    assert_eq!(ours["images"], 74);
    assert_eq!(ours["classifiers"], json!(["jev-1.13", "jev-1.13-free"]));
    assert_eq!(ours["jev"]["api"], "typesafe-system-one");
    assert_eq!(ours["jev"]["type"], "classifier");
    assert_eq!(ours["usable"], 0);
    assert_eq!(
        ours["errors"],
        json!([
            "Unknown model type \"video\". Use \"chat\", \"image\", or \"classifier\".",
            "\"mock-openai/mock-model\" is a chat model, not a classifier model. List the classifier models you can use with models.getAvailableOfType(\"classifier\").",
            "Unknown image model \"nope/x\". List the image models you can use with models.getAvailableOfType(\"image\")."
        ])
    );
    let Some(reference) = pi_test_support::reference_pi("scripts_list_the_session_models_as_pi_does") else {
        return;
    };
    let mock = Mock::start(script());
    let theirs = Fixture::new(&mock);
    models_run(&theirs, Some(reference.command()));
    let mut theirs = output(&mock);
    // The base URLs name each mock's own port.
    for list in [&mut theirs["chat"]] {
        for model in list.as_array_mut().unwrap() {
            model["baseUrl"] = json!("<mock>");
        }
    }
    theirs["one"]["baseUrl"] = json!("<mock>");
    let mut ours = ours;
    for model in ours["chat"].as_array_mut().unwrap() {
        model["baseUrl"] = json!("<mock>");
    }
    ours["one"]["baseUrl"] = json!("<mock>");
    assert_eq!(ours, theirs);
}

/// The first request's `codemode` declaration and the second request's messages after the
/// prompt (the script's wall time masked), for a Chat Completions model with grammar tools.
fn completions_grammar_case(command: Option<std::process::Command>) -> (Value, Vec<Value>) {
    let mock = grammar_mock();
    let fx = Fixture::new(&mock);
    fx.agent
        .write("models.json", completions_grammar_models(&mock))
        .unwrap();
    run_grammar_case(&fx, command);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let codemode = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["custom"]["name"] == "codemode" || t["function"]["name"] == "codemode")
        .unwrap()
        .clone();
    let messages = requests[1].body["messages"].as_array().unwrap();
    let after_user = messages.iter().position(|m| m["role"] == "user").unwrap() + 1;
    let replayed = messages[after_user..]
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(text) = m["content"].as_str() {
                let masked: Vec<&str> = text
                    .lines()
                    .map(|l| {
                        if l.starts_with("Wall time ") {
                            "Wall time <T>"
                        } else {
                            l
                        }
                    })
                    .collect();
                m["content"] = json!(masked.join("\n").trim_end());
            }
            m
        })
        .collect();
    (codemode, replayed)
}

/// Chat Completions models that take grammar tools get codemode as a `custom` tool with the
/// Lark grammar, the streamed raw input runs as the script, and the call goes back as a
/// `custom` tool call, as pi 1.6 sends them.
#[test]
fn completions_models_with_grammar_tools_get_the_script_as_raw_text() {
    let (ours, our_messages) = completions_grammar_case(None);
    assert_eq!(ours["type"], "custom", "{ours}");
    assert_eq!(ours["custom"]["format"]["type"], "grammar");
    assert_eq!(ours["custom"]["format"]["grammar"]["syntax"], "lark");
    assert_eq!(
        ours["custom"]["format"]["grammar"]["definition"],
        pi_codemode::SOURCE_GRAMMAR
    );
    assert_eq!(
        our_messages[0]["tool_calls"],
        json!([{"id": "call_mock_0_0", "type": "custom", "custom": {"name": "codemode", "input": SCRIPT}}])
    );
    assert_eq!(
        our_messages[1]["content"],
        "Script completed\nWall time <T>\nOutput:\n\nfirst: Hello world"
    );
    let Some(reference) =
        pi_test_support::reference_pi("completions_models_with_grammar_tools_get_the_script_as_raw_text")
    else {
        return;
    };
    let (mut theirs, their_messages) = completions_grammar_case(Some(reference.command()));
    // The description and the grammar are written in the project's own words.
    for pointer in ["/custom/description", "/custom/format/grammar/definition"] {
        *theirs.pointer_mut(pointer).unwrap() = ours.pointer(pointer).unwrap().clone();
    }
    assert_eq!(ours, theirs);
    assert_eq!(our_messages, their_messages);
}
