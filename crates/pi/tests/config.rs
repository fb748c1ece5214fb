//! Integration tests of the configuration layer on real temporary folders: settings and auth
//! files shared between processes, models.json in the registry, resource discovery edge
//! cases, and the system prompt against the TypeScript pi's golden captures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pi_ai::{InputKind, Model, ModelCost, ThinkingLevel};
use pi_coding_agent::config::auth::{AuthStorage, Credential, OAuthRefresher};
use pi_coding_agent::config::model_registry::ModelRegistry;
use pi_coding_agent::config::model_resolver::{resolve_cli_model, DEFAULT_MODEL_PER_PROVIDER};
use pi_coding_agent::config::paths::{DocsPaths, Paths};
use pi_coding_agent::config::settings::{SettingsManager, SettingsScope};
use pi_coding_agent::resources::context_files::load_context_files;
use pi_coding_agent::resources::prompt_templates::{expand_prompt_template, load_prompt_templates, TemplateSources};
use pi_coding_agent::resources::skills::{expand_skill_command, load_skills, SkillSources};
use pi_coding_agent::resources::themes::{load_themes, ThemeSources};
use pi_coding_agent::resources::{DiagnosticKind, ResourceScope};
use pi_coding_agent::system_prompt::{build_system_prompt, SystemPromptInput, ToolPrompt};
use serde_json::{json, Value};

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(path, text).expect("write");
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).expect("read")).expect("json")
}

struct Env {
    _tmp: tempfile::TempDir,
    paths: Paths,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().expect("tmp");
    let agent = tmp.path().join("agent");
    let home = tmp.path().join("home");
    let cwd = tmp.path().join("proj");
    for d in [&agent, &home, &cwd] {
        fs::create_dir_all(d).expect("mkdir");
    }
    Env {
        paths: Paths::new(agent, cwd, home),
        _tmp: tmp,
    }
}

// ----- settings.json -------------------------------------------------------------------

#[test]
fn settings_merge_project_over_global_and_keep_unknown_keys_on_write() {
    let e = env();
    write(
        &e.paths.settings_path(),
        r#"{"futureKey": {"a": 1}, "compaction": {"enabled": false, "reserveTokens": 100}, "theme": "dark"}"#,
    );
    write(
        &e.paths.project_settings_path(),
        r#"{"compaction": {"reserveTokens": 200}, "theme": "light"}"#,
    );
    let mut s = SettingsManager::load(&e.paths);
    assert!(!s.compaction().enabled);
    assert_eq!(s.compaction().reserve_tokens, 200);
    assert_eq!(s.theme(), Some("light"));

    // Another process adds a key meanwhile; our write must not drop it.
    let mut on_disk = read_json(&e.paths.settings_path());
    on_disk["addedElsewhere"] = json!(true);
    on_disk["compaction"]["keepRecentTokens"] = json!(5);
    fs::write(e.paths.settings_path(), serde_json::to_string(&on_disk).expect("ser")).expect("write");

    s.set_compaction_enabled(true);
    s.set_default_model_and_provider("openai", "gpt-5.4");
    let file = read_json(&e.paths.settings_path());
    assert_eq!(file["futureKey"], json!({"a": 1}));
    assert_eq!(file["addedElsewhere"], json!(true));
    assert_eq!(
        file["compaction"],
        json!({"enabled": true, "reserveTokens": 100, "keepRecentTokens": 5})
    );
    assert_eq!(file["defaultProvider"], json!("openai"));
    assert_eq!(file["defaultModel"], json!("gpt-5.4"));
    // Pretty JSON with two-space indent, like pi.
    assert!(fs::read_to_string(e.paths.settings_path())
        .expect("read")
        .contains("\n  \"futureKey\": {\n    \"a\": 1\n  }"));
    // The project file is untouched by global setters.
    assert_eq!(
        read_json(&e.paths.project_settings_path()),
        json!({"compaction": {"reserveTokens": 200}, "theme": "light"})
    );
    assert!(s.drain_errors().is_empty());
}

#[test]
fn settings_with_parse_errors_warn_and_are_never_written() {
    let e = env();
    let broken = "{\"theme\": \"dark\", oops}";
    write(&e.paths.settings_path(), broken);
    let mut s = SettingsManager::load(&e.paths);
    let errors = s.drain_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].scope, SettingsScope::Global);
    assert_eq!(s.theme(), None);
    s.set_theme("light");
    assert_eq!(s.theme(), Some("light"));
    assert_eq!(fs::read_to_string(e.paths.settings_path()).expect("read"), broken);
    // Project writes still work.
    s.set(SettingsScope::Project, "skills", Some(json!(["x"])));
    assert_eq!(read_json(&e.paths.project_settings_path()), json!({"skills": ["x"]}));
}

#[test]
fn settings_legacy_keys_are_migrated_on_load_and_write() {
    let e = env();
    write(
        &e.paths.settings_path(),
        r#"{"queueMode": "all", "retry": {"maxDelayMs": 999}}"#,
    );
    let mut s = SettingsManager::load(&e.paths);
    assert_eq!(s.steering_mode().as_str(), "all");
    assert_eq!(s.provider_retry().max_retry_delay_ms, 999);
    s.set_quiet_startup(true);
    assert_eq!(
        read_json(&e.paths.settings_path()),
        json!({"retry": {"provider": {"maxRetryDelayMs": 999}}, "steeringMode": "all", "quietStartup": true})
    );
}

#[test]
fn settings_session_dir_expands_tilde() {
    let e = env();
    write(&e.paths.settings_path(), r#"{"sessionDir": "~/sessions-here"}"#);
    let s = SettingsManager::load(&e.paths);
    assert_eq!(s.session_dir(), Some(e.paths.home.join("sessions-here")));
}

const RACE_ENV: &str = "PI_TEST_SETTINGS_RACE_FILE";
const RACE_PREFIX_ENV: &str = "PI_TEST_SETTINGS_RACE_PREFIX";
const RACE_WRITES: usize = 40;

/// Runs only as a child process of `settings_writes_from_two_processes_do_not_lose_keys`.
#[test]
fn settings_race_child() {
    let (Ok(file), Ok(prefix)) = (std::env::var(RACE_ENV), std::env::var(RACE_PREFIX_ENV)) else {
        return;
    };
    let file = PathBuf::from(file);
    let project = file.with_file_name("unused-project-settings.json");
    let mut s = SettingsManager::from_files(file, project);
    for i in 0..RACE_WRITES {
        s.set(SettingsScope::Global, &format!("{prefix}{i}"), Some(json!(i)));
        s.set_nested(SettingsScope::Global, "shared", &format!("{prefix}{i}"), Some(json!(i)));
    }
    assert!(s.drain_errors().is_empty());
}

#[test]
fn settings_writes_from_two_processes_do_not_lose_keys() {
    let e = env();
    let file = e.paths.settings_path();
    write(&file, r#"{"keep": "me"}"#);
    let exe = std::env::current_exe().expect("exe");
    let children: Vec<_> = ["a", "b"]
        .iter()
        .map(|prefix| {
            Command::new(&exe)
                .args(["--exact", "settings_race_child", "--test-threads=1"])
                .env(RACE_ENV, &file)
                .env(RACE_PREFIX_ENV, prefix)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn child")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("wait").success());
    }
    let result = read_json(&file);
    assert_eq!(result["keep"], json!("me"));
    for prefix in ["a", "b"] {
        for i in 0..RACE_WRITES {
            let key = format!("{prefix}{i}");
            assert_eq!(result[&key], json!(i), "lost top-level {key}");
            assert_eq!(result["shared"][&key], json!(i), "lost nested {key}");
        }
    }
    assert!(!file.with_file_name("settings.json.lock").exists());
}

// ----- auth.json -----------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn auth_file_is_private_merged_and_keeps_unknown_entries() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    let path = e.paths.agent_dir.join("nested/auth.json");
    let mut auth = AuthStorage::open(path.clone(), |_| None);
    assert!(!path.exists(), "reading must not create the file");
    auth.set("anthropic", Credential::api_key("sk-1"));
    assert_eq!(fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o600);
    assert_eq!(
        fs::metadata(path.parent().expect("dir"))
            .expect("meta")
            .permissions()
            .mode()
            & 0o777,
        0o700
    );

    // Another process stores something we do not know about.
    let mut on_disk = read_json(&path);
    on_disk["future"] = json!({"type": "passkey", "blob": [1, 2]});
    fs::write(&path, serde_json::to_string_pretty(&on_disk).expect("ser")).expect("write");

    auth.set("openai", Credential::api_key("OPENAI_ENV_NAME"));
    auth.remove("anthropic");
    let file = read_json(&path);
    assert_eq!(
        file,
        json!({"future": {"type": "passkey", "blob": [1, 2]}, "openai": {"type": "api_key", "key": "OPENAI_ENV_NAME"}})
    );
    auth.set_env(|n| (n == "OPENAI_ENV_NAME").then(|| "resolved-from-env".to_string()));
    // pi 1.6: a plain key is a literal; `$NAME` reads the variable.
    assert_eq!(auth.api_key("openai", true).as_deref(), Some("OPENAI_ENV_NAME"));
    auth.set("openai", Credential::api_key("$OPENAI_ENV_NAME"));
    assert_eq!(auth.api_key("openai", true).as_deref(), Some("resolved-from-env"));
}

#[test]
fn auth_with_parse_error_is_not_overwritten() {
    let e = env();
    let path = e.paths.auth_path();
    write(&path, "{not json");
    let mut auth = AuthStorage::open(path.clone(), |_| None);
    assert_eq!(auth.drain_errors().len(), 1);
    auth.set("x", Credential::api_key("k"));
    assert_eq!(fs::read_to_string(&path).expect("read"), "{not json");
}

struct CountingRefresher;

impl OAuthRefresher for CountingRefresher {
    fn knows(&self, provider: &str) -> bool {
        provider == "anthropic"
    }
    fn refresh(&self, _provider: &str, credential: &Credential) -> Result<Credential, String> {
        let Credential::OAuth { refresh, extra, .. } = credential else {
            return Err("not oauth".into());
        };
        Ok(Credential::OAuth {
            refresh: refresh.clone(),
            access: "fresh-access".into(),
            expires: 2_000_000,
            extra: extra.clone(),
        })
    }
}

#[test]
fn expired_oauth_is_refreshed_under_the_lock_and_saved() {
    let e = env();
    let path = e.paths.auth_path();
    write(
        &path,
        r#"{"anthropic": {"type": "oauth", "refresh": "r", "access": "old", "expires": 1000000, "accountId": "acc"}}"#,
    );
    let mut auth = AuthStorage::open(path.clone(), |_| None);
    auth.set_oauth_refresher(Box::new(CountingRefresher));
    // More than five minutes left: the stored token is used.
    auth.set_clock(|| 699_000);
    assert_eq!(auth.api_key("anthropic", true).as_deref(), Some("old"));
    // Less than five minutes left: refreshed before it expires.
    auth.set_clock(|| 701_000);
    assert_eq!(auth.api_key("anthropic", true).as_deref(), Some("fresh-access"));
    assert_eq!(
        read_json(&path)["anthropic"],
        json!({"type": "oauth", "refresh": "r", "access": "fresh-access", "expires": 2000000, "accountId": "acc"})
    );
}

// ----- models.json + registry --------------------------------------------------------

fn model(provider: &str, id: &str, api: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: format!("https://{provider}.example"),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 1.0,
            output: 2.0,
            cache_read: 0.1,
            cache_write: 0.2,
            tiers: Vec::new(),
        },
        context_window: 200_000,
        max_tokens: 32_000,
        headers: None,
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
    }
}

fn builtins() -> Vec<Model> {
    vec![
        model("anthropic", "claude-opus-4-7", "anthropic-messages"),
        model("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
        model("openai", "gpt-5.4", "openai-responses"),
    ]
}

/// A models.json Radius gateway has the models its gateway listed (models-store.json, else the
/// `gatewayConfig` a login of an older pi kept), its own `models` upserted over them, its
/// `modelOverrides` and `compat` applied; a gateway of a built-in id loses the built-ins.
#[test]
fn registry_gives_a_radius_gateway_its_fetched_models() {
    let e = env();
    write(
        &e.paths.models_path(),
        r#"{"providers": {
          "corp": {"baseUrl": "https://gw.example/v1", "oauth": "radius", "compat": {"supportsStore": false},
                   "modelOverrides": {"gw-a": {"name": "A (team)"}},
                   "models": [{"id": "gw-b", "name": "B mine", "contextWindow": 1000}, {"id": "extra"}]},
          "old": {"baseUrl": "https://old.example/v1", "oauth": "radius"},
          "unfetched": {"baseUrl": "https://new.example/v1", "oauth": "radius", "models": [{"id": "no-api-yet"}]},
          "openai": {"baseUrl": "https://gw2.example/v1", "oauth": "radius"}
        }}"#,
    );
    let gateway_model = |provider: &str, id: &str| {
        json!({"id": id, "name": id, "api": "pi-messages", "provider": provider,
               "baseUrl": "https://served.example/v1", "reasoning": false, "input": ["text"],
               "cost": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0},
               "contextWindow": 10, "maxTokens": 5})
    };
    write(
        &e.paths.agent_dir.join("models-store.json"),
        &json!({"corp": {"models": [gateway_model("corp", "gw-a"), gateway_model("corp", "gw-b")], "checkedAt": 1}})
            .to_string(),
    );
    let legacy = json!({"old": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1,
    "gatewayConfig": {"baseUrl": "https://legacy.example/v1", "models": [
        {"id": "l1", "name": "L1", "reasoning": true, "input": ["text"], "cost": {}, "contextWindow": 9, "maxTokens": 3}
    ]}}});
    let auth = AuthStorage::in_memory(legacy.as_object().unwrap().clone(), |_| None);
    let reg = ModelRegistry::new(builtins(), auth, Some(e.paths.models_path()));
    assert_eq!(reg.error(), None);
    let ids: Vec<(&str, &str)> = reg.all().iter().map(|m| (m.provider.as_str(), m.id.as_str())).collect();
    assert_eq!(
        ids,
        [
            ("anthropic", "claude-opus-4-7"),
            ("anthropic", "claude-sonnet-4-5"),
            ("corp", "gw-a"),
            ("corp", "gw-b"),
            ("corp", "extra"),
            ("old", "l1")
        ]
    );
    let a = reg.find("corp", "gw-a").unwrap();
    assert_eq!((a.name.as_str(), a.api.as_str()), ("A (team)", "pi-messages"));
    assert_eq!(a.base_url, "https://served.example/v1", "the gateway's URL is kept");
    assert_eq!(a.compat, Some(json!({"supportsStore": false})));
    let b = reg.find("corp", "gw-b").unwrap();
    assert_eq!((b.name.as_str(), b.context_window), ("B mine", 1000));
    let extra = reg.find("corp", "extra").unwrap();
    assert_eq!(extra.api, "pi-messages", "the api of the gateway's models");
    assert_eq!(
        extra.base_url, "https://gw.example/v1",
        "a listed model takes the provider's URL"
    );
    let l1 = reg.find("old", "l1").unwrap();
    assert_eq!(
        (l1.api.as_str(), l1.base_url.as_str()),
        ("pi-messages", "https://legacy.example/v1")
    );
    assert_eq!(
        reg.radius_gateways("https://radius.example"),
        [
            ("corp".to_string(), "https://gw.example".to_string()),
            ("old".to_string(), "https://old.example".to_string()),
            ("unfetched".to_string(), "https://new.example".to_string()),
            ("openai".to_string(), "https://gw2.example".to_string())
        ]
    );
}

#[test]
fn registry_merges_models_json_and_reports_availability() {
    let e = env();
    write(
        &e.paths.models_path(),
        r#"{
  // local server
  "providers": {
    "local": {
      "baseUrl": "http://127.0.0.1:1234/v1",
      "api": "openai-completions",
      "apiKey": "$LOCAL_KEY_VAR",
      "headers": {"x-team": "!printf team-a"},
      "compat": {"supportsStore": false},
      "models": [
        {"id": "qwen", "reasoning": true, "headers": {"x-model": "m"}},
        {"id": "tiny", "contextWindow": 4096, "input": ["text"], "compat": {"maxTokensField": "max_tokens"}},
      ],
    },
    "anthropic": {
      "baseUrl": "https://proxy.example/anthropic",
      "modelOverrides": {
        "claude-opus-4-7": {"name": "Opus (proxy)", "cost": {"input": 9}, "thinkingLevelMap": {"xhigh": "max"}},
        "no-such-model": {"name": "ignored"}
      },
      "models": [{"id": "claude-custom"}]
    }
  }
}"#,
    );
    let auth = AuthStorage::in_memory(Default::default(), |p| (p == "openai").then(|| "sk-env".to_string()));
    let mut reg = ModelRegistry::new(builtins(), auth, Some(e.paths.models_path()));
    assert_eq!(reg.error(), None);

    let opus = reg.find("anthropic", "claude-opus-4-7").expect("opus");
    assert_eq!(opus.name, "Opus (proxy)");
    assert_eq!(opus.base_url, "https://proxy.example/anthropic");
    assert_eq!(opus.cost.input, 9.0);
    assert_eq!(opus.cost.output, 2.0);
    assert_eq!(
        opus.thinking_level_map.as_ref().and_then(|m| m.get("xhigh")),
        Some(&json!("max"))
    );
    // A custom model under a built-in provider inherits its api; the provider baseUrl wins.
    let custom = reg.find("anthropic", "claude-custom").expect("custom");
    assert_eq!(custom.api, "anthropic-messages");
    assert_eq!(custom.base_url, "https://proxy.example/anthropic");
    let tiny = reg.find("local", "tiny").expect("tiny");
    assert_eq!(
        (tiny.context_window, tiny.max_tokens, tiny.reasoning),
        (4096, 16384, false)
    );
    assert_eq!(
        tiny.compat,
        Some(json!({"supportsStore": false, "maxTokensField": "max_tokens"}))
    );
    assert_eq!(reg.all().len(), 6);

    // Available: openai (env key); not anthropic, and not local while the variable its
    // models.json apiKey names is unset (as pi 1.6 counts a `$VAR` key).
    let available = |reg: &ModelRegistry| -> Vec<String> {
        reg.available()
            .iter()
            .map(|m| format!("{}/{}", m.provider, m.id))
            .collect()
    };
    assert_eq!(available(&reg), vec!["openai/gpt-5.4"]);

    // Request auth resolves the env-var name, the header command and the model header.
    reg.auth_mut()
        .set_env(|n| (n == "LOCAL_KEY_VAR").then(|| "local-secret".to_string()));
    assert_eq!(available(&reg), vec!["openai/gpt-5.4", "local/qwen", "local/tiny"]);
    let qwen = reg.find("local", "qwen").expect("qwen");
    let req = reg.request_auth(&qwen).expect("auth");
    assert_eq!(req.api_key.as_deref(), Some("local-secret"));
    assert_eq!(
        req.headers,
        vec![
            ("x-team".to_string(), "team-a".to_string()),
            ("x-model".to_string(), "m".to_string())
        ]
    );

    // The runtime key wins over everything.
    reg.auth_mut().set_runtime_api_key("local", "from-cli");
    assert_eq!(
        reg.request_auth(&qwen).expect("auth").api_key.as_deref(),
        Some("from-cli")
    );
}

/// Start-up builds only the providers it needs; whatever it gets that way must be what the
/// full list says: overrides, custom models replacing or joining a built-in provider, custom
/// providers and extension-only providers (listed last).
#[test]
fn registry_lookups_before_the_full_list_agree_with_it() {
    let e = env();
    write(
        &e.paths.models_path(),
        r#"{"providers": {
  "anthropic": {
    "baseUrl": "https://proxy.example/anthropic",
    "modelOverrides": {"claude-opus-4-7": {"name": "Opus (proxy)"}},
    "models": [{"id": "claude-opus-4-7", "name": "Opus replaced"}, {"id": "claude-extra"}]
  },
  "local": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "tiny"}]}
}}"#,
    );
    let extension = pi_coding_agent::config::models_json::from_value(&json!({"providers": {
        "ext-only": {"baseUrl": "http://127.0.0.1:2/v1", "api": "openai-completions", "apiKey": "x",
                     "models": [{"id": "e1"}]}
    }}))
    .expect("extension config")
    .providers;
    let keyed = |p: &str| matches!(p, "anthropic" | "openai").then(|| "sk".to_string());
    let registry = || {
        let auth = AuthStorage::in_memory(Default::default(), keyed);
        let mut reg = ModelRegistry::from_catalogue(auth, Some(e.paths.models_path()));
        reg.set_extension_providers(extension.clone());
        reg
    };
    let lazy = registry();
    let lazy_available = lazy.available();
    let lazy_finds: Vec<Option<Model>> = [
        ("anthropic", "claude-opus-4-7"),
        ("anthropic", "claude-extra"),
        ("anthropic", "claude-haiku-4-5"),
        ("local", "tiny"),
        ("ext-only", "e1"),
        ("openai", "no-such-model"),
    ]
    .iter()
    .map(|(p, id)| lazy.find(p, id))
    .collect();

    let full = registry();
    let all = full.all();
    let from_all = |p: &str, id: &str| all.iter().find(|m| m.provider == p && m.id == id).cloned();
    assert_eq!(lazy_finds[0].as_ref().map(|m| m.name.as_str()), Some("Opus replaced"));
    assert_eq!(lazy_finds[0], from_all("anthropic", "claude-opus-4-7"));
    assert_eq!(lazy_finds[1], from_all("anthropic", "claude-extra"));
    assert_eq!(lazy_finds[2], from_all("anthropic", "claude-haiku-4-5"));
    assert!(
        lazy_finds[2].is_some(),
        "a built-in model is found without the full list"
    );
    assert_eq!(lazy_finds[3], from_all("local", "tiny"));
    assert_eq!(lazy_finds[4], from_all("ext-only", "e1"));
    assert_eq!(lazy_finds[5], None);
    assert_eq!(all.last().map(|m| m.provider.as_str()), Some("ext-only"));
    let expected: Vec<Model> = all
        .iter()
        .filter(|m| full.provider_has_auth(&m.provider))
        .cloned()
        .collect();
    assert_eq!(lazy_available, expected);
    assert_eq!(full.available(), expected);
    assert!(expected.iter().any(|m| m.provider == "local"));
    assert!(expected.iter().any(|m| m.provider == "openai"));
}

#[test]
fn registry_keeps_builtins_when_models_json_is_bad() {
    let e = env();
    write(
        &e.paths.models_path(),
        r#"{"providers": {"x": {"apiKey": "k", "api": "a", "models": [{"id": "m"}]},
                           "y": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "models": [{"id": "kept"}]}}}"#,
    );
    let auth = AuthStorage::in_memory(Default::default(), |_| None);
    let reg = ModelRegistry::new(builtins(), auth, Some(e.paths.models_path()));
    // As pi 1.6: the broken provider is named and left out, the others still apply.
    assert_eq!(
        reg.error(),
        Some("Provider \"x\": Provider x: \"baseUrl\" is required when defining custom models.")
    );
    assert_eq!(reg.all().len(), 4);
    assert!(reg.find("y", "kept").is_some());
    assert!(reg.find("x", "m").is_none());

    // A file that fails the schema is still ignored as a whole.
    write(&e.paths.models_path(), r#"{"providers": {"y": {"baseUrl": 5}}}"#);
    let auth = AuthStorage::in_memory(Default::default(), |_| None);
    let reg = ModelRegistry::new(builtins(), auth, Some(e.paths.models_path()));
    assert!(
        reg.error().is_some_and(|e| e.starts_with("Invalid models.json schema")),
        "{:?}",
        reg.error()
    );
    assert_eq!(reg.all().len(), 3);
}

#[test]
fn cli_model_resolution_uses_all_models() {
    let auth = AuthStorage::in_memory(Default::default(), |_| None);
    let reg = ModelRegistry::new(builtins(), auth, None);
    assert!(reg.available().is_empty());
    let r = resolve_cli_model(
        None,
        Some("anthropic/sonnet:high"),
        reg.all(),
        DEFAULT_MODEL_PER_PROVIDER,
        &|p| reg.provider_has_auth(p),
        false,
        None,
    );
    assert_eq!(r.model.map(|m| m.id).as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(r.thinking_level, Some(ThinkingLevel::High));
}

// ----- skills (the edge cases of pi's skill tests) -----------------------------------

fn skill(dir: &Path, rel: &str, front: &str, body: &str) -> PathBuf {
    let path = dir.join(rel);
    write(&path, &format!("---\n{front}\n---\n{body}\n"));
    path
}

#[test]
fn skill_frontmatter_rules_and_diagnostics() {
    let e = env();
    let root = e.paths.skills_dir();
    skill(
        &root,
        "valid-skill/SKILL.md",
        "name: valid-skill\ndescription: A valid skill.",
        "Body.",
    );
    skill(&root, "missing-description/SKILL.md", "name: missing-description", "x");
    skill(
        &root,
        "invalid-name-chars/SKILL.md",
        "name: Invalid_Name\ndescription: d",
        "x",
    );
    skill(&root, "name-mismatch/SKILL.md", "name: other-name\ndescription: d", "x");
    let long = "a".repeat(65);
    skill(&root, &format!("{long}/SKILL.md"), "description: d", "x");
    skill(&root, "consecutive--hyphens/SKILL.md", "description: d", "x");
    skill(&root, "-edge-/SKILL.md", "description: d", "x");
    skill(
        &root,
        "multiline-description/SKILL.md",
        "description: |\n  First line.\n  Second line.",
        "x",
    );
    skill(
        &root,
        "unknown-field/SKILL.md",
        "description: d\nlicense: MIT\nallowed-tools: [read]\nmetadata:\n  x: 1\nwhatever: 3",
        "x",
    );
    skill(&root, "invalid-yaml/SKILL.md", "name: [unclosed\ndescription: d", "x");
    write(&root.join("no-frontmatter/SKILL.md"), "# Just a heading\n");
    skill(
        &root,
        "disable-model-invocation/SKILL.md",
        "description: d\ndisable-model-invocation: true",
        "x",
    );
    skill(&root, "nested/child-skill/SKILL.md", "description: nested child", "x");
    // A folder with SKILL.md is a skill root: deeper SKILL.md files are not loaded.
    skill(&root, "root-skill-preferred/SKILL.md", "description: root", "x");
    skill(&root, "root-skill-preferred/inner/SKILL.md", "description: inner", "x");
    // Top-level .md files in pi's own skills folder are skills too.
    skill(&root, "top-level.md", "name: root\ndescription: file skill", "x");
    // Ignored folders are not searched.
    write(&root.join(".gitignore"), "ignored-skill/\n");
    skill(&root, "ignored-skill/SKILL.md", "description: d", "x");
    skill(&root, ".hidden/SKILL.md", "description: d", "x");
    skill(&root, "node_modules/dep/SKILL.md", "description: d", "x");

    let loaded = load_skills(&e.paths, &SkillSources::default());
    let mut names: Vec<&str> = loaded.skills.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    let mut expected = vec![
        "-edge-",
        "Invalid_Name",
        "child-skill",
        "consecutive--hyphens",
        "disable-model-invocation",
        "multiline-description",
        "other-name",
        "root",
        "root-skill-preferred",
        "unknown-field",
        "valid-skill",
        long.as_str(),
    ];
    expected.sort_unstable();
    assert_eq!(names, expected);

    let diag = |needle: &str| loaded.diagnostics.iter().any(|d| d.message.contains(needle));
    assert!(diag("description is required"));
    assert!(diag(
        "name \"Invalid_Name\" does not match parent directory \"invalid-name-chars\""
    ));
    assert!(diag(
        "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
    ));
    assert!(diag(
        "name \"other-name\" does not match parent directory \"name-mismatch\""
    ));
    assert!(diag("name exceeds 64 characters (65)"));
    assert!(diag("name must not contain consecutive hyphens"));
    assert!(diag("name must not start or end with a hyphen"));
    assert!(loaded
        .diagnostics
        .iter()
        .any(|d| d.path.ends_with("invalid-yaml/SKILL.md") && d.kind == DiagnosticKind::Warning));
    // The "root" top-level file skill's name differs from its folder.
    assert!(diag("name \"root\" does not match parent directory \"skills\""));

    let multi = loaded.find("multiline-description").expect("multi");
    assert_eq!(multi.description, "First line.\nSecond line.\n");
    assert!(
        loaded
            .find("disable-model-invocation")
            .expect("dmi")
            .disable_model_invocation
    );
    assert_eq!(loaded.find("valid-skill").expect("valid").scope, ResourceScope::User);
}

#[test]
fn skill_collisions_first_wins_and_agents_dirs() {
    let e = env();
    let first = e.paths.cwd.join("first");
    let second = e.paths.cwd.join("second");
    skill(&first, "calendar/SKILL.md", "description: first calendar", "x");
    skill(&second, "calendar/SKILL.md", "description: second calendar", "x");
    // .agents/skills: only SKILL.md folders, never top-level .md files; stops at the git root.
    fs::create_dir_all(e.paths.cwd.join(".git")).expect("git");
    skill(
        &e.paths.cwd,
        ".agents/skills/agent-skill/SKILL.md",
        "description: from .agents",
        "x",
    );
    skill(
        &e.paths.cwd,
        ".agents/skills/loose.md",
        "description: not a skill here",
        "x",
    );
    skill(
        e.paths.cwd.parent().expect("parent"),
        ".agents/skills/outside/SKILL.md",
        "description: beyond git root",
        "x",
    );
    // Project skills come before user skills.
    skill(&e.paths.cwd, ".pi/skills/shared/SKILL.md", "description: project", "x");
    skill(&e.paths.skills_dir(), "shared/SKILL.md", "description: user", "x");
    skill(
        &e.paths.home,
        ".agents/skills/home-skill/SKILL.md",
        "description: home",
        "x",
    );

    let sources = SkillSources {
        cli_paths: vec!["first".into(), "second".into(), "missing-dir".into()],
        ..Default::default()
    };
    let loaded = load_skills(&e.paths, &sources);
    assert_eq!(loaded.find("calendar").expect("calendar").description, "first calendar");
    let collision = loaded
        .diagnostics
        .iter()
        .find(|d| d.kind == DiagnosticKind::Collision && d.message == "name \"calendar\" collision")
        .expect("collision");
    assert!(collision.path.starts_with(&second));
    assert!(collision.winner.as_ref().expect("winner").starts_with(&first));
    assert!(loaded
        .diagnostics
        .iter()
        .any(|d| d.message == "Skill path does not exist"));
    assert!(loaded.find("agent-skill").is_some());
    assert!(loaded.find("loose").is_none());
    assert!(loaded.find("outside").is_none());
    assert_eq!(loaded.find("shared").expect("shared").description, "project");
    assert_eq!(loaded.find("home-skill").expect("home").scope, ResourceScope::User);

    // --no-skills keeps the CLI paths only.
    let only_cli = load_skills(
        &e.paths,
        &SkillSources {
            cli_paths: vec!["first".into()],
            no_defaults: true,
            ..Default::default()
        },
    );
    let names: Vec<&str> = only_cli.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["calendar"]);
}

#[test]
fn settings_filters_exclude_auto_discovered_skills() {
    let e = env();
    skill(&e.paths.skills_dir(), "keep/SKILL.md", "description: d", "x");
    skill(&e.paths.skills_dir(), "drop/SKILL.md", "description: d", "x");
    let sources = SkillSources {
        global_entries: vec!["!drop".into()],
        ..Default::default()
    };
    let loaded = load_skills(&e.paths, &sources);
    let names: Vec<&str> = loaded.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["keep"]);
}

#[test]
fn skill_command_expansion() {
    let e = env();
    let path = skill(
        &e.paths.skills_dir(),
        "deploy/SKILL.md",
        "description: Deploys",
        "\nRun ./scripts/go.sh\n\n",
    );
    let loaded = load_skills(&e.paths, &SkillSources::default());
    let out = expand_skill_command("/skill:deploy  to prod", &loaded.skills)
        .expect("ok")
        .expect("expanded");
    assert_eq!(
        out,
        format!(
            "<skill name=\"deploy\" location=\"{}\">\nReferences are relative to {}.\n\nRun ./scripts/go.sh\n</skill>\n\nto prod",
            path.display(),
            path.parent().expect("dir").display()
        )
    );
    assert_eq!(expand_skill_command("/skill:unknown x", &loaded.skills), Ok(None));
    assert_eq!(expand_skill_command("plain", &loaded.skills), Ok(None));
}

// ----- prompt templates ----------------------------------------------------------------

#[test]
fn prompt_templates_discovery_descriptions_and_collisions() {
    let e = env();
    write(
        &e.paths.prompts_dir().join("review.md"),
        "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1 carefully.\n",
    );
    write(
        &e.paths.prompts_dir().join("long.md"),
        &format!("\n\n{}\n", "x".repeat(70)),
    );
    write(
        &e.paths.prompts_dir().join("sub/nested.md"),
        "not loaded: not recursive",
    );
    write(&e.paths.prompts_dir().join("notes.txt"), "not markdown");
    write(&e.paths.cwd.join(".pi/prompts/review.md"), "Project review of $@");
    let loaded = load_prompt_templates(&e.paths, &TemplateSources::default());
    let names: Vec<(&str, &str)> = loaded
        .templates
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    let long_desc = format!("{}...", "x".repeat(60));
    assert_eq!(
        names,
        vec![("review", "Project review of $@"), ("long", long_desc.as_str())]
    );
    assert_eq!(loaded.templates[0].source_label(), "(project)");
    assert_eq!(loaded.templates[1].source_label(), "(user)");
    let collision = loaded
        .diagnostics
        .iter()
        .find(|d| d.kind == DiagnosticKind::Collision)
        .expect("collision");
    assert_eq!(collision.message, "name \"/review\" collision");
    assert_eq!(
        expand_prompt_template("/review a.rs \"b c\"", &loaded.templates),
        "Project review of a.rs b c"
    );
}

// ----- themes -------------------------------------------------------------------------

#[test]
fn custom_themes_load_and_bad_ones_are_diagnosed() {
    let e = env();
    let colors: serde_json::Map<String, Value> = pi_coding_agent::resources::themes::THEME_TOKENS
        .iter()
        .map(|t| (t.to_string(), json!("base")))
        .collect();
    write(
        &e.paths.themes_dir().join("ocean.json"),
        &serde_json::to_string(&json!({"name": "ocean", "vars": {"base": "#112233"}, "colors": colors})).expect("ser"),
    );
    write(
        &e.paths.themes_dir().join("broken.json"),
        "{\"name\": \"broken\", \"colors\": {}}",
    );
    write(&e.paths.themes_dir().join("garbage.json"), "not json");
    let loaded = load_themes(&e.paths, &ThemeSources::default());
    assert_eq!(loaded.themes.len(), 1);
    assert_eq!(loaded.themes[0].name, "ocean");
    assert_eq!(loaded.diagnostics.len(), 2);
    assert!(loaded
        .diagnostics
        .iter()
        .any(|d| d.message.contains("Missing required color tokens")));
    assert!(loaded
        .diagnostics
        .iter()
        .any(|d| d.message.starts_with("Failed to parse theme")));
}

// ----- system prompt vs. the golden captures -------------------------------------------

/// The system prompts the TypeScript pi 1.6.0 sent (prose masked, structure kept).
fn golden_dir() -> PathBuf {
    pi_test_support::golden_16().join("extracted")
}

/// The structure of a prompt: section tags kept, tool names kept, prose reduced to a marker,
/// so two prompts with the same ingredients in the same sections compare equal.
fn skeleton(prompt: &str) -> Vec<String> {
    let is_tag = |l: &str| {
        let inner = l.strip_prefix("</").or_else(|| l.strip_prefix('<'));
        inner
            .and_then(|i| i.strip_suffix('>'))
            // `<masked>` is the golden's stand-in for prose, not a tag.
            .is_some_and(|n| n != "masked" && !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
    };
    let mut out = Vec::new();
    let mut section = String::from("preamble");
    for line in prompt.lines() {
        let marker = if is_tag(line) {
            if !line.starts_with("</") {
                section = line.trim_matches(|c| c == '<' || c == '>').to_string();
            }
            line.to_string()
        } else if line.is_empty() {
            "-".to_string()
        } else if section == "tools" && line.starts_with("- ") {
            format!("tool {}", line[2..].split(':').next().unwrap_or(""))
        } else if line.starts_with("- ") {
            format!("{section} bullet")
        } else if section == "cwd" {
            line.replace("<TMP>", "/home/user")
        } else {
            format!("{section} line")
        };
        out.push(marker);
    }
    out
}

/// (case name, custom prompt, append texts, context files)
type GoldenCase<'a> = (
    &'a str,
    Option<&'a str>,
    &'a [String],
    &'a [pi_coding_agent::resources::context_files::ContextFile],
);

fn our_tools() -> Vec<ToolPrompt> {
    vec![
        ToolPrompt::new(
            "read",
            "Show a file's contents",
            &["Read files with read, not cat or sed."],
        ),
        ToolPrompt::new("bash", "Run a shell command", &["PI_* variables describe the session."]),
        ToolPrompt::new(
            "edit",
            "Replace exact text in a file, several places per call if needed",
            &["e1", "e2"],
        ),
        ToolPrompt::new(
            "write",
            "Create or overwrite a file",
            &["Use write for new files or full rewrites."],
        ),
    ]
}

#[test]
fn system_prompt_structure_matches_golden_cases() {
    let golden = golden_dir();
    let docs = DocsPaths::under(Path::new("/opt/pi"));
    let tools = our_tools();
    let proj = Path::new("/home/user/proj");
    let agents = vec![pi_coding_agent::resources::context_files::ContextFile {
        path: proj.join("AGENTS.md"),
        content: "# Project rules\n\nAlways answer in haiku.\n".into(),
    }];
    let appended = vec!["APPENDED LINE".to_string()];
    let cases: Vec<GoldenCase<'_>> = vec![
        ("agents-md", None, &[], &agents),
        ("agents-md-disabled", None, &[], &[]),
        ("append-system-prompt", None, &appended, &[]),
        ("system-prompt", Some("You are a test system prompt."), &[], &[]),
    ];
    for (case, custom, append, ctx) in cases {
        let text = fs::read_to_string(golden.join(format!("system-prompt.{case}.txt"))).expect("golden");
        let expected = text.split_once('\n').map(|x| x.1).unwrap_or("");
        let ours = build_system_prompt(&SystemPromptInput {
            custom_prompt: custom,
            tools: &tools,
            append,
            context_files: ctx,
            skills: &[],
            cwd: proj,
            docs: &docs,
            mcp_servers: None,
            edits: &pi_coding_agent::system_prompt::PromptEdits::default(),
        });
        assert_eq!(
            skeleton(&ours),
            skeleton(expected),
            "case {case}\n--- ours ---\n{ours}\n--- golden ---\n{expected}"
        );
        if custom.is_some() || case == "append-system-prompt" {
            // Verbatim user text and the tail lines are identical, not just similar.
            let tail = |p: &str| p.lines().rev().take(3).map(str::to_string).collect::<Vec<_>>();
            let norm = |v: Vec<String>| {
                v.into_iter()
                    .map(|l| l.replace("<TMP>", "/home/user"))
                    .collect::<Vec<_>>()
            };
            assert_eq!(norm(tail(&ours)), norm(tail(expected)), "case {case}");
        }
    }
}

#[test]
fn context_files_feed_the_prompt_like_the_golden_agents_md_case() {
    let e = env();
    write(
        &e.paths.cwd.join("AGENTS.md"),
        "# Project rules\n\nAlways answer in haiku.\n",
    );
    let (files, _) = load_context_files(&e.paths.agent_dir, &e.paths.cwd);
    let docs = DocsPaths::under(Path::new("/opt/pi"));
    let prompt = build_system_prompt(&SystemPromptInput {
        custom_prompt: None,
        tools: &our_tools(),
        append: &[],
        context_files: &files,
        skills: &[],
        cwd: &e.paths.cwd,
        docs: &docs,
        mcp_servers: None,
        edits: &pi_coding_agent::system_prompt::PromptEdits::default(),
    });
    let expected_tail = format!(
        "<project_instructions path=\"{}\">\n# Project rules\n\nAlways answer in haiku.\n\n</project_instructions>\n</project_context>\n\n<cwd>\n{}\n</cwd>",
        e.paths.cwd.join("AGENTS.md").display(),
        e.paths.cwd.display()
    );
    assert!(prompt.ends_with(&expected_tail), "{prompt}");
}
