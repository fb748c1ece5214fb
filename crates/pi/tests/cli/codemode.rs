//! codemode in sessions, through the binary against the mock LLM: the tool declared with
//! `--tools`, the declared tools' descriptions saying what a script call resolves to (as pi
//! 1.6 sends them), scripts calling built-in tools and an MCP server from npm
//! (`@modelcontextprotocol/server-everything`) through the normal pipeline, the result
//! format, the store across calls, and `-ne` turning the built-in off.

use pi_test_support::{Script, Turn};
use serde_json::{json, Value};

use crate::extensions::tool_results;
use crate::harness::{Fixture, Mock};

fn tool_named<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
        .map(|t| &t["function"])
}

fn names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// The tools the system prompt lists (`- name: snippet` lines of `<tools>`) and how many rules
/// it has: what must agree with pi 1.6 whatever the wording.
fn prompt_shape(system: &str) -> (Vec<String>, usize) {
    let section = |tag: &str| {
        let open = format!("<{tag}>\n");
        let start = system.find(&open).map(|i| i + open.len()).unwrap_or(0);
        let end = system[start..].find(&format!("</{tag}>")).map_or(start, |i| start + i);
        system[start..end].to_string()
    };
    let tools = section("tools")
        .lines()
        .filter_map(|l| {
            l.strip_prefix("- ")
                .and_then(|l| l.split_once(':'))
                .map(|(n, _)| n.to_string())
        })
        .collect();
    let rules = section("rules").lines().filter(|l| l.starts_with("- ")).count();
    (tools, rules)
}

fn codemode(code: &str) -> Turn {
    Turn::tool_call("codemode", json!({ "code": code }))
}

/// The script's output: the result text after the header.
fn output(result: &str) -> &str {
    assert!(
        result.starts_with("Script completed\nWall time ") || result.starts_with("Script failed\nWall time "),
        "{result}"
    );
    result
        .split_once("Output:\n")
        .map(|(_, rest)| rest.trim_start_matches('\n'))
        .unwrap_or(result)
}

#[test]
fn a_script_calls_builtin_tools_and_the_model_sees_only_its_output() {
    let mock = Mock::start(Script::sequential(vec![
        codemode(
            "const a = await tools.read({path: 'hello.txt'});\n\
             const b = await tools.bash({command: 'echo hi; exit 3'});\n\
             console.log('log', 1);\n\
             text(a.split('\\n')[0]);\n\
             let e; try { await tools.nope({}); } catch (x) { e = x.message; }\n\
             return {out: b.output, code: b.exit_code, e, names: ALL_TOOLS.map(t => t.name)};",
        ),
        codemode("store('k', {n: 1});\nawait tools.read({});"),
        codemode("store('k', 2); return load('k');"),
        codemode("return load('k');"),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    let run = fx.pi(["--tools", "read,bash,codemode", "-p", "go"]).run();
    run.assert_ok();
    assert_eq!(run.stdout, "done\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);
    let first = &requests[0].body;
    assert_eq!(names(first), ["read", "bash", "codemode"]);
    // pi 1.6 tells the model what a script call of a declared tool resolves to.
    let read = tool_named(first, "read").unwrap()["description"].as_str().unwrap();
    assert!(
        read.ends_with("\n\nCodemode: `tools.read(args)` resolves to `string | { data: string; mimeType: string; note: string; type: \"image\"; }`."),
        "{read}"
    );
    let bash = tool_named(first, "bash").unwrap()["description"].as_str().unwrap();
    assert!(
        bash.ends_with("resolves to `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`."),
        "{bash}"
    );
    let cm = tool_named(first, "codemode").unwrap();
    assert_eq!(
        cm["parameters"],
        json!({"type": "object", "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}}, "required": ["code"]})
    );
    let description = cm["description"].as_str().unwrap();
    assert!(
        description.contains("QuickJS") && description.contains("\n\nGlobals:\n- "),
        "{description}"
    );
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("- codemode: Run JavaScript that calls other tools"),
        "{system}"
    );
    assert!(system.contains("- Use codemode to batch independent tool calls (Promise.allSettled)"));

    let results = tool_results(&requests[1].body);
    assert_eq!(
        output(&results[0]),
        "==> text 1/2 <==\nHello world\n==> text 2/2 <==\n{\"out\":\"hi\\n\",\"code\":3,\"e\":\"tools.nope does not exist. Available: read, bash. ALL_TOOLS lists every tool; searchTools(query) finds tools by topic. Check for a member with \\\"nope\\\" in tools.\",\"names\":[\"read\",\"bash\"]}\n<console_output>\nlog 1\n</console_output>"
    );
    // A failed nested call rejects with the pipeline's validation error; the script fails and
    // its store write is dropped.
    let failed = &tool_results(&requests[2].body)[1];
    assert!(failed.starts_with("Script failed\n"), "{failed}");
    assert!(
        output(failed).starts_with("Script error:\nError: Validation failed for tool \"read\":\n  - path: "),
        "{failed}"
    );
    assert!(
        failed.ends_with("Tool calls made before the failure (they are not undone): read (error)"),
        "{failed}"
    );
    assert_eq!(output(&tool_results(&requests[3].body)[2]), "2");
    assert_eq!(
        output(&tool_results(&requests[4].body)[3]),
        "2",
        "the store lasts across calls"
    );
    // The successful writes are session entries.
    let session = std::fs::read_to_string(&fx.sessions()[0]).unwrap();
    let stores: Vec<Value> = session
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["customType"] == "codemode-store")
        .collect();
    assert_eq!(stores.len(), 1, "{session}");
    assert_eq!(stores[0]["data"], json!({"set": {"k": 2}, "delete": []}));
}

#[test]
fn codemode_is_registered_inactive_and_gone_with_no_extensions() {
    let mock = Mock::start(Script::sequential(vec![
        Turn::text("a"),
        Turn::text("b"),
        Turn::text("c"),
    ]));
    let fx = Fixture::new(&mock);
    fx.pi(["-p", "hi"]).run().assert_ok();
    fx.pi(["-ne", "--tools", "read,codemode", "-p", "hi"]).run().assert_ok();
    fx.pi(["-ne", "-e", "builtin:codemode", "--tools", "read,codemode", "-p", "hi"])
        .run()
        .assert_ok();
    let requests = mock.requests();
    assert_eq!(
        names(&requests[2].body),
        ["read", "codemode"],
        "-e builtin:codemode turns it on again"
    );
    assert_eq!(names(&requests[0].body), ["read", "bash", "edit", "write"]);
    assert_eq!(names(&requests[1].body), ["read"], "-ne turns builtin:codemode off");
    let read = tool_named(&requests[1].body, "read").unwrap()["description"]
        .as_str()
        .unwrap();
    assert!(!read.contains("Codemode:"));
}

#[test]
fn mcp_tools_with_codemode_exposure_are_reached_from_scripts() {
    let Some((node, script)) = crate::mcp_session::everything() else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![
        codemode(
            "const ns = await describeNamespace('everything');\n\
             const r = await tools.mcp__everything__echo({message: 'from script'});\n\
             const found = await searchTools('echo', {limit: 1});\n\
             const results = await Promise.all(Array.from({length: 3}, (_, i) => tools.mcp__everything__echo({message: 'n' + i})));\n\
             return {tools: ns.tools.slice(0, 1), name: ns.name, instructions: typeof ns.instructions, desc: ns.description, r, found: found.map(f => f.name), n: results.map(x => x.content[0].text)};",
        ),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    std::fs::write(
        fx.agent.path().join("mcp.json"),
        serde_json::to_string_pretty(&json!({"mcpServers": {"everything": {
            "command": node.display().to_string(),
            "args": [script.display().to_string(), "stdio"],
            "description": "Reference test server."
        }}}))
        .unwrap(),
    )
    .unwrap();
    let run = fx.pi(["-p", "go"]).run();
    run.assert_ok();
    let requests = mock.requests();
    let first = &requests[0].body;
    // Default exposure: the MCP tools are not declared, codemode is, and the prompt lists the server.
    assert_eq!(names(first), ["read", "bash", "edit", "write", "codemode"]);
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("<mcp_servers>\nMCP servers whose tools are not declared to you. Call the tools of `codemode` servers from codemode scripts.\n- mcp__everything (codemode): Reference test server.\n</mcp_servers>"),
        "{system}"
    );
    let result = &tool_results(&requests[1].body)[0];
    assert_eq!(
        output(result),
        "{\"tools\":[\"mcp__everything__echo\"],\"name\":\"mcp__everything\",\"instructions\":\"string\",\"desc\":\"Reference test server.\",\"r\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: from script\"}]},\"found\":[\"mcp__everything__echo\"],\"n\":[\"Echo: n0\",\"Echo: n1\",\"Echo: n2\"]}"
    );
}

#[test]
fn an_extension_tool_call_handler_blocks_a_nested_call() {
    let Some(env) = crate::extensions::environment("an_extension_tool_call_handler_blocks_a_nested_call") else {
        return;
    };
    let mock = Mock::start(Script::sequential(vec![
        codemode(
            "const r = await Promise.allSettled([tools.bash({command: 'echo ran > ran.txt'}), tools.read({path: 'hello.txt'})]);\n\
             return r.map(x => x.status === 'fulfilled' ? 'ok' : x.reason.message);",
        ),
        Turn::text("ok"),
    ]));
    let fx = Fixture::new(&mock);
    let glue = crate::extensions::fixture("glue.ts");
    let run = crate::extensions::pi_with(
        &fx,
        &env,
        ["-e", glue.as_str(), "--tools", "read,bash,codemode", "-p", "go"],
    )
    .run();
    run.assert_ok();
    assert!(!fx.proj.join("ran.txt").exists(), "the blocked nested command ran");
    let results = tool_results(&mock.requests()[1].body);
    assert_eq!(output(&results[0]), "[\"bash is off in this project\",\"ok\"]");
}

#[test]
fn mode_only_lists_the_tools_in_the_codemode_description_instead_of_declaring_them() {
    let mock = Mock::start(Script::sequential(vec![
        codemode("return (await tools.read({path: 'hello.txt'})).split('\\n')[0];"),
        Turn::text("done"),
    ]));
    let fx = Fixture::new(&mock);
    fx.agent
        .write(
            "settings.json",
            r#"{"codemode": {"mode": "only", "inlineBudget": 3000}}"#,
        )
        .unwrap();
    let run = fx.pi(["--tools", "read,bash,codemode", "-p", "go"]).run();
    run.assert_ok();
    let requests = mock.requests();
    assert_eq!(names(&requests[0].body), ["codemode"]);
    // The tools scripts call leave the prompt's tool list and rules with their declarations.
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert_eq!(prompt_shape(system), (vec!["codemode".to_string()], 3), "{system}");
    if let Some(reference) = pi_test_support::reference_pi("mode_only_lists_the_tools_in_the_codemode_description") {
        let mock = Mock::start(Script::sequential(vec![Turn::text("done")]));
        let theirs = Fixture::new(&mock);
        theirs
            .agent
            .write("settings.json", r#"{"codemode": {"mode": "only"}}"#)
            .unwrap();
        let mut cmd = reference.command();
        cmd.args(["--tools", "read,bash,codemode", "-p", "go"])
            .current_dir(&theirs.proj)
            .envs(theirs.agent.env());
        crate::harness::Pi::from_command(cmd).run().assert_ok();
        let body = &mock.requests()[0].body;
        assert_eq!(names(body), ["codemode"]);
        let their_system = body["messages"][0]["content"].as_str().unwrap();
        assert_eq!(prompt_shape(their_system), prompt_shape(system), "{their_system}");
    }
    let description = tool_named(&requests[0].body, "codemode").unwrap()["description"]
        .as_str()
        .unwrap();
    assert!(
        description.contains("\n\nNested tools:\n\n### `read`\n"),
        "{description}"
    );
    assert!(description.contains("\n\n### `bash`\n"), "{description}");
    assert!(
        description.contains("declare const tools: { bash(args: {"),
        "{description}"
    );
    assert_eq!(output(&tool_results(&requests[1].body)[0]), "Hello world");
}
