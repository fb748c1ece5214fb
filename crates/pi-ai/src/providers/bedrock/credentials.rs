//! Where a Bedrock request goes and how it authenticates, decided as pi 1.6 configures the AWS
//! SDK: a bearer token (`AWS_BEARER_TOKEN_BEDROCK` or a stored key), or SigV4 credentials from
//! the environment's keys, a profile of the shared `credentials`/`config` files (static keys or
//! `credential_process`), or the ECS container endpoint; the region from an inference-profile
//! ARN, `AWS_REGION`/`AWS_DEFAULT_REGION`, the endpoint, the profile, else `us-east-1`.
//!
//! SSO profiles and role assumption (`role_arn` with `source_profile` or
//! `credential_source = Environment`) call the SSO portal or STS (`profile_services`). Not
//! supported (a clear error instead): web identity tokens.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::sigv4::AwsCredentials;
use crate::types::Model;

/// The ECS task metadata endpoint that relative container credential URIs are under.
const ECS_CREDENTIALS_HOST: &str = "http://169.254.170.2";
/// Time allowed for the container endpoint or a credential process.
const CREDENTIAL_TIMEOUT: Duration = Duration::from_secs(10);

/// How requests authenticate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BedrockAuth {
    /// `Authorization: Bearer <token>` (Bedrock API keys).
    Bearer(String),
    /// SigV4-signed with these credentials.
    Signed(AwsCredentials),
}

/// The resolved target of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The endpoint base (no trailing slash).
    pub endpoint: String,
    pub region: String,
    pub auth: BedrockAuth,
}

/// Environment lookups (empty counts as unset).
pub type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

fn get(env: Env<'_>, name: &str) -> Option<String> {
    env(name).filter(|v| !v.is_empty())
}

/// The key pi reports for Bedrock configured through ambient credentials rather than a key.
fn is_marker(key: &str) -> bool {
    let key = key.trim();
    key.is_empty() || (key.starts_with('<') && key.ends_with('>'))
}

/// Resolve endpoint, region and credentials for `model`. `api_key` is the call's key (a stored
/// bearer token) or the ambient-credentials marker.
pub async fn resolve(model: &Model, api_key: &str, env: Env<'_>) -> Result<Target, String> {
    let profile_name = get(env, "AWS_PROFILE");
    let files = ProfileFiles::load(env);
    let profile = files.profile(profile_name.as_deref().unwrap_or("default"));
    let (endpoint, region) = endpoint_and_region(model, env, profile_name.is_some(), profile.get("region"));
    let auth = resolve_auth(api_key, env, profile_name.as_deref(), &profile, &files).await?;
    Ok(Target { endpoint, region, auth })
}

/// Endpoint and region: pi pins the model's standard endpoint only when neither a region nor
/// an ambient `AWS_PROFILE` is configured; otherwise the region's own endpoint is used.
fn endpoint_and_region(
    model: &Model,
    env: Env<'_>,
    has_profile: bool,
    profile_region: Option<&String>,
) -> (String, String) {
    let configured = get(env, "AWS_REGION").or_else(|| get(env, "AWS_DEFAULT_REGION"));
    let standard = standard_endpoint_region(&model.base_url);
    let explicit = standard.is_none() || (configured.is_none() && !has_profile);
    let region = arn_region(&model.id)
        .or(configured)
        .or_else(|| standard.clone().filter(|_| explicit))
        .or_else(|| profile_region.cloned())
        .unwrap_or_else(|| "us-east-1".to_string());
    let endpoint = if explicit {
        model.base_url.trim_end_matches('/').to_string()
    } else {
        let suffix = if region.starts_with("cn-") {
            "amazonaws.com.cn"
        } else {
            "amazonaws.com"
        };
        format!("https://bedrock-runtime.{region}.{suffix}")
    };
    (endpoint, region)
}

/// The region of an inference-profile ARN (`arn:aws:bedrock:<region>:...`).
fn arn_region(model_id: &str) -> Option<String> {
    let rest = model_id.strip_prefix("arn:")?;
    let mut parts = rest.split(':');
    let partition = parts.next()?;
    let service = parts.next()?;
    let region = parts.next()?;
    let valid = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    (partition.starts_with("aws") && service == "bedrock" && valid(region)).then(|| region.to_string())
}

/// The region of a standard `bedrock-runtime[-fips].<region>.amazonaws.com[.cn]` URL.
fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let url = url::Url::parse(base_url).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    let host = host.strip_suffix(".cn").unwrap_or(&host);
    let rest = host.strip_suffix(".amazonaws.com")?;
    let region = rest
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| rest.strip_prefix("bedrock-runtime."))?;
    (!region.is_empty() && !region.contains('.')).then(|| region.to_string())
}

async fn resolve_auth(
    api_key: &str,
    env: Env<'_>,
    profile_name: Option<&str>,
    profile: &HashMap<String, String>,
    files: &ProfileFiles,
) -> Result<BedrockAuth, String> {
    if get(env, "AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1") {
        // Proxies that need no authentication still get a well-formed signature.
        return Ok(BedrockAuth::Signed(AwsCredentials {
            access_key_id: "dummy-access-key".into(),
            secret_access_key: "dummy-secret-key".into(),
            session_token: None,
        }));
    }
    if !is_marker(api_key) {
        return Ok(BedrockAuth::Bearer(api_key.trim().to_string()));
    }
    if let Some(token) = get(env, "AWS_BEARER_TOKEN_BEDROCK") {
        return Ok(BedrockAuth::Bearer(token));
    }
    if let (Some(id), Some(secret)) = (get(env, "AWS_ACCESS_KEY_ID"), get(env, "AWS_SECRET_ACCESS_KEY")) {
        return Ok(BedrockAuth::Signed(AwsCredentials {
            access_key_id: id,
            secret_access_key: secret,
            session_token: get(env, "AWS_SESSION_TOKEN"),
        }));
    }
    if let Some(creds) = profile_credentials(profile_name.unwrap_or("default"), profile, files, env, 0).await? {
        return Ok(BedrockAuth::Signed(creds));
    }
    // The SDK's chain: the environment's web identity after the profile, before the container.
    if let (Some(token_file), Some(role_arn)) = (get(env, "AWS_WEB_IDENTITY_TOKEN_FILE"), get(env, "AWS_ROLE_ARN")) {
        let session_name = get(env, "AWS_ROLE_SESSION_NAME");
        let identity = super::profile_services::WebIdentity {
            token_file: &token_file,
            role_arn: &role_arn,
            session_name: session_name.as_deref(),
            region: None,
        };
        return super::profile_services::assume_role_with_web_identity(&identity, env)
            .await
            .map(BedrockAuth::Signed);
    }
    if let Some(creds) = container_credentials(env).await? {
        return Ok(BedrockAuth::Signed(creds));
    }
    Err(match profile_name {
        Some(name) => format!("Could not load credentials for AWS profile {name}"),
        None => "Could not load credentials from any providers".to_string(),
    })
}

/// How many `source_profile` hops a role chain may take (the SDK refuses cycles; a bound
/// stops them here).
const MAX_ROLE_CHAIN: usize = 5;

/// Keys from a profile: static, a `credential_process`, SSO, or an assumed role whose source
/// is another profile or the environment; `Ok(None)` when the profile has none of them.
fn profile_credentials<'a>(
    name: &'a str,
    profile: &'a HashMap<String, String>,
    files: &'a ProfileFiles,
    env: Env<'a>,
    depth: usize,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Option<AwsCredentials>, String>> + Send + 'a>> {
    Box::pin(async move {
        let assumes_from_source = profile.contains_key("source_profile") || profile.contains_key("credential_source");
        if let (Some(role), Some(token_file), false) = (
            profile.get("role_arn"),
            profile.get("web_identity_token_file"),
            assumes_from_source,
        ) {
            let identity = super::profile_services::WebIdentity {
                token_file,
                role_arn: role,
                session_name: profile.get("role_session_name").map(String::as_str),
                region: profile.get("region").map(String::as_str),
            };
            return super::profile_services::assume_role_with_web_identity(&identity, env)
                .await
                .map(Some);
        }
        if let Some(role) = profile.get("role_arn") {
            let source = match (profile.get("source_profile"), profile.get("credential_source")) {
                (Some(source), _) if depth < MAX_ROLE_CHAIN => {
                    let source_profile = files.profile(source);
                    // A profile that is its own source holds the keys the role is assumed with.
                    let resolved = if source == name {
                        static_keys(&source_profile)
                    } else {
                        profile_credentials(source, &source_profile, files, env, depth + 1).await?
                    };
                    resolved.ok_or_else(|| format!("Could not load credentials for AWS profile {source}"))?
                }
                (Some(_), _) => return Err(format!("AWS profile {name}: the source_profile chain is too long")),
                (None, Some(kind)) if kind == "Environment" => environment_keys(env).ok_or_else(|| {
                    format!("AWS profile {name} assumes {role} from the environment, which has no keys")
                })?,
                (None, Some(kind)) => {
                    return Err(format!("AWS profile {name}: credential_source {kind} is not supported"))
                }
                (None, None) => {
                    return Err(format!(
                        "AWS profile {name} has role_arn but neither source_profile nor credential_source"
                    ))
                }
            };
            return super::profile_services::assume_role(name, profile, &source, env)
                .await
                .map(Some);
        }
        if let Some(keys) = static_keys(profile) {
            return Ok(Some(keys));
        }
        if let Some(command) = profile.get("credential_process") {
            return run_credential_process(name, command).await.map(Some);
        }
        if profile.contains_key("sso_session") || profile.contains_key("sso_start_url") {
            return super::profile_services::sso_credentials(name, profile, &files.sso_sessions, env)
                .await
                .map(Some);
        }
        Ok(None)
    })
}

fn static_keys(profile: &HashMap<String, String>) -> Option<AwsCredentials> {
    let (id, secret) = (profile.get("aws_access_key_id")?, profile.get("aws_secret_access_key")?);
    Some(AwsCredentials {
        access_key_id: id.clone(),
        secret_access_key: secret.clone(),
        session_token: profile.get("aws_session_token").cloned(),
    })
}

fn environment_keys(env: Env<'_>) -> Option<AwsCredentials> {
    Some(AwsCredentials {
        access_key_id: get(env, "AWS_ACCESS_KEY_ID")?,
        secret_access_key: get(env, "AWS_SECRET_ACCESS_KEY")?,
        session_token: get(env, "AWS_SESSION_TOKEN"),
    })
}

/// Run a profile's `credential_process` and read its JSON (`AccessKeyId`, `SecretAccessKey`,
/// `SessionToken`).
async fn run_credential_process(profile: &str, command: &str) -> Result<AwsCredentials, String> {
    let run = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(CREDENTIAL_TIMEOUT, run)
        .await
        .map_err(|_| format!("credential_process of AWS profile {profile} timed out"))?
        .map_err(|e| format!("credential_process of AWS profile {profile} could not start: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "credential_process of AWS profile {profile} failed ({})",
            output.status
        ));
    }
    let json: Value = serde_json::from_slice(&output.stdout)
        .map_err(|_| format!("credential_process of AWS profile {profile} did not print JSON"))?;
    credentials_from_json(&json, "SessionToken")
        .ok_or_else(|| format!("credential_process of AWS profile {profile} printed no AccessKeyId/SecretAccessKey"))
}

fn credentials_from_json(json: &Value, token_field: &str) -> Option<AwsCredentials> {
    let field = |k: &str| {
        json.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(AwsCredentials {
        access_key_id: field("AccessKeyId")?,
        secret_access_key: field("SecretAccessKey")?,
        session_token: field(token_field),
    })
}

/// Credentials of the ECS/EKS container endpoint, when the environment names one.
async fn container_credentials(env: Env<'_>) -> Result<Option<AwsCredentials>, String> {
    let url = match (
        get(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
        get(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    ) {
        (Some(relative), _) => format!("{ECS_CREDENTIALS_HOST}{relative}"),
        (None, Some(full)) => full,
        (None, None) => return Ok(None),
    };
    let mut request = crate::http::client().get(&url).timeout(CREDENTIAL_TIMEOUT);
    let token = match get(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
        Some(path) => std::fs::read_to_string(path).ok().map(|t| t.trim().to_string()),
        None => get(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    };
    if let Some(token) = token {
        request = request.header("authorization", token);
    }
    let response = request
        .send()
        .await
        .map_err(|_| "Could not reach the container credentials endpoint".to_string())?;
    if !response.status().is_success() {
        return Err(format!(
            "The container credentials endpoint answered {}",
            response.status().as_u16()
        ));
    }
    let body = response
        .bytes()
        .await
        .map_err(|_| "Could not read the container credentials".to_string())?;
    let json: Value =
        serde_json::from_slice(&body).map_err(|_| "The container credentials endpoint sent no JSON".to_string())?;
    credentials_from_json(&json, "Token")
        .map(Some)
        .ok_or_else(|| "The container credentials endpoint sent no AccessKeyId/SecretAccessKey".to_string())
}

/// The shared `credentials` and `config` files, parsed.
#[derive(Debug, Default)]
struct ProfileFiles {
    credentials: HashMap<String, HashMap<String, String>>,
    config: HashMap<String, HashMap<String, String>>,
    /// The config file's `[sso-session NAME]` sections, by name.
    sso_sessions: HashMap<String, HashMap<String, String>>,
}

impl ProfileFiles {
    fn load(env: Env<'_>) -> Self {
        let home = get(env, "HOME").map(PathBuf::from);
        let path = |var: &str, file: &str| {
            get(env, var)
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".aws").join(file)))
        };
        let read = |p: Option<PathBuf>| p.and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default();
        let config_text = read(path("AWS_CONFIG_FILE", "config"));
        ProfileFiles {
            credentials: parse_ini(&read(path("AWS_SHARED_CREDENTIALS_FILE", "credentials")), false),
            config: parse_ini(&config_text, true),
            sso_sessions: parse_sections(&config_text, "sso-session "),
        }
    }

    /// A profile's settings: the config file's, overridden by the credentials file's.
    fn profile(&self, name: &str) -> HashMap<String, String> {
        let mut out = self.config.get(name).cloned().unwrap_or_default();
        out.extend(self.credentials.get(name).cloned().unwrap_or_default());
        out
    }
}

/// The config file's sections of one kind (`[sso-session NAME]`), by name.
fn parse_sections(text: &str, kind: &str) -> HashMap<String, HashMap<String, String>> {
    let marked: String = text
        .lines()
        .map(|line| {
            let trimmed = line.trim();
            match trimmed.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                // Renamed so the credentials-file reading (every section kept) picks it up.
                Some(section) => match section.trim().strip_prefix(kind) {
                    Some(name) => format!("[{}]\n", name.trim()),
                    None => "[\u{0}]\n".to_string(),
                },
                None => format!("{line}\n"),
            }
        })
        .collect();
    let mut sections = parse_ini(&marked, false);
    sections.remove("\u{0}");
    sections
}

/// INI sections to key/value maps. In the config file sections are `[profile NAME]` (and
/// `[default]`); other section kinds (`[sso-session x]`, `[services x]`) are skipped.
fn parse_ini(text: &str, config_file: bool) -> HashMap<String, HashMap<String, String>> {
    let mut out: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let section = section.trim();
            current = if !config_file || section == "default" {
                Some(section.to_string())
            } else {
                section.strip_prefix("profile ").map(|n| n.trim().to_string())
            };
            continue;
        }
        let (Some(name), Some((key, value))) = (&current, line.split_once('=')) else {
            continue;
        };
        out.entry(name.clone())
            .or_default()
            .insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(id: &str, base: &str) -> Model {
        serde_json::from_value(json!({
            "id": id, "name": id, "api": "bedrock-converse-stream", "provider": "amazon-bedrock",
            "baseUrl": base, "reasoning": false, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 1000, "maxTokens": 100,
        }))
        .unwrap()
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    const STANDARD: &str = "https://bedrock-runtime.us-east-1.amazonaws.com";

    #[test]
    fn regions_and_endpoints_follow_pi() {
        let m = model("anthropic.claude", STANDARD);
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case] = &[
            (&[], STANDARD, "us-east-1"),
            (
                &[("AWS_REGION", "eu-west-1")],
                "https://bedrock-runtime.eu-west-1.amazonaws.com",
                "eu-west-1",
            ),
            (
                &[("AWS_DEFAULT_REGION", "cn-north-1")],
                "https://bedrock-runtime.cn-north-1.amazonaws.com.cn",
                "cn-north-1",
            ),
        ];
        for (env, endpoint, region) in cases {
            let env = env_of(env);
            assert_eq!(
                endpoint_and_region(&m, &env, false, None),
                (endpoint.to_string(), region.to_string())
            );
        }
        // An ambient profile: its region, at that region's endpoint.
        let env = env_of(&[]);
        let region = "ap-south-1".to_string();
        assert_eq!(endpoint_and_region(&m, &env, true, Some(&region)).1, "ap-south-1");
        // A custom endpoint is kept; an ARN names the region.
        let arn = model(
            "arn:aws:bedrock:us-west-2:1:application-inference-profile/x",
            "http://127.0.0.1:9/",
        );
        let env = env_of(&[("AWS_REGION", "eu-west-1")]);
        assert_eq!(
            endpoint_and_region(&arn, &env, false, None),
            ("http://127.0.0.1:9".to_string(), "us-west-2".to_string())
        );
    }

    #[tokio::test]
    async fn credential_sources_in_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("credentials"),
            "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = filesecret\n\n[work]\naws_access_key_id=WORK\naws_secret_access_key=ws\naws_session_token=wt\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("config"),
            "[profile proc]\ncredential_process = printf '{\"Version\":1,\"AccessKeyId\":\"PROC\",\"SecretAccessKey\":\"ps\",\"SessionToken\":\"pt\"}'\nregion = sa-east-1\n[profile sso]\nsso_session = corp\n",
        )
        .unwrap();
        let creds = dir.path().join("credentials").display().to_string();
        let config = dir.path().join("config").display().to_string();
        let base = [
            ("AWS_SHARED_CREDENTIALS_FILE", creds.as_str()),
            ("AWS_CONFIG_FILE", config.as_str()),
        ];
        let m = model("anthropic.claude", STANDARD);
        let run = |extra: &[(&str, &str)], key: &str| {
            let mut pairs = base.to_vec();
            pairs.extend_from_slice(extra);
            let env = env_of(&pairs);
            let m = m.clone();
            let key = key.to_string();
            async move { resolve(&m, &key, &env).await }
        };
        let key_of = |t: Target| match t.auth {
            BedrockAuth::Signed(c) => (c.access_key_id, c.session_token),
            BedrockAuth::Bearer(b) => (format!("bearer {b}"), None),
        };
        assert_eq!(
            key_of(run(&[], "<authenticated>").await.unwrap()),
            ("FILEKEY".into(), None)
        );
        assert_eq!(
            key_of(run(&[("AWS_PROFILE", "work")], "").await.unwrap()),
            ("WORK".into(), Some("wt".into()))
        );
        let proc = run(&[("AWS_PROFILE", "proc")], "").await.unwrap();
        assert_eq!(proc.region, "sa-east-1");
        assert_eq!(key_of(proc), ("PROC".into(), Some("pt".into())));
        assert_eq!(
            key_of(
                run(
                    &[
                        ("AWS_ACCESS_KEY_ID", "ENV"),
                        ("AWS_SECRET_ACCESS_KEY", "s"),
                        ("AWS_PROFILE", "work")
                    ],
                    ""
                )
                .await
                .unwrap()
            ),
            ("ENV".into(), None)
        );
        assert_eq!(
            key_of(run(&[("AWS_BEARER_TOKEN_BEDROCK", "tok")], "").await.unwrap()),
            ("bearer tok".into(), None)
        );
        assert_eq!(
            key_of(run(&[], "stored-key").await.unwrap()),
            ("bearer stored-key".into(), None)
        );
        let sso = run(&[("AWS_PROFILE", "sso")], "").await.unwrap_err();
        assert!(sso.contains("sso_session corp"), "{sso}");
        let missing = run(&[("AWS_PROFILE", "nope")], "").await.unwrap_err();
        assert_eq!(missing, "Could not load credentials for AWS profile nope");
    }

    /// A loopback SSO portal and STS: role credentials for the cached token, and an
    /// assumed role for a request signed with the source's keys.
    async fn aws_services() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let n = stream.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if data.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let request = String::from_utf8_lossy(&data).to_string();
                log.lock().unwrap().push(request.clone());
                let lower = request.to_ascii_lowercase();
                let (status, body) = if request.starts_with("GET /federation/credentials?account_id=111&role_name=Dev ")
                {
                    if lower.contains("x-amz-sso_bearer_token: sso-token") {
                        (200, r#"{"roleCredentials":{"accessKeyId":"SSOKEY","secretAccessKey":"ssosecret","sessionToken":"ssotoken","expiration":4102444800000}}"#.to_string())
                    } else {
                        (401, r#"{"message":"Session token not found or invalid"}"#.to_string())
                    }
                } else if request.starts_with("POST /token ") {
                    // OIDC CreateToken: the cached refresh token buys a new access token.
                    if request.contains(r#""grantType":"refresh_token""#)
                        && request.contains(r#""refreshToken":"refresh-1""#)
                    {
                        (200, r#"{"accessToken":"sso-token","expiresIn":3600,"refreshToken":"refresh-2","tokenType":"Bearer"}"#.to_string())
                    } else {
                        (400, r#"{"error":"invalid_grant"}"#.to_string())
                    }
                } else if request.starts_with("POST / ") && request.contains("Action=AssumeRoleWithWebIdentity") {
                    // Unsigned, with the token from the file.
                    if lower.contains("authorization:") || !request.contains("WebIdentityToken=web-token-1") {
                        (403, "<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>bad token</Message></Error></ErrorResponse>".to_string())
                    } else {
                        let session = request
                            .split("RoleSessionName=")
                            .nth(1)
                            .and_then(|r| r.split('&').next())
                            .unwrap_or_default()
                            .to_string();
                        (200, format!("<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>WEBKEY</AccessKeyId><SecretAccessKey>ws</SecretAccessKey><SessionToken>{session}</SessionToken></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"))
                    }
                } else if request.starts_with("POST / ") && request.contains("Action=AssumeRole") {
                    let role = request
                        .split("RoleArn=")
                        .nth(1)
                        .and_then(|r| r.split('&').next())
                        .unwrap_or_default()
                        .to_string();
                    let signer = lower
                        .split("credential=")
                        .nth(1)
                        .and_then(|c| c.split('/').next())
                        .unwrap_or_default()
                        .to_uppercase();
                    (200, format!("<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ROLE-{signer}</AccessKeyId><SecretAccessKey>rs</SecretAccessKey><SessionToken>{role}</SessionToken></Credentials></AssumeRoleResult></AssumeRoleResponse>"))
                } else {
                    (404, "<ErrorResponse><Error><Code>NotFound</Code><Message>no route</Message></Error></ErrorResponse>".to_string())
                };
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        });
        (url, seen)
    }

    #[tokio::test]
    async fn sso_sessions_and_assumed_roles_through_loopback_services() {
        let (url, seen) = aws_services().await;
        let home = tempfile::tempdir().unwrap();
        let aws = home.path().join(".aws");
        std::fs::create_dir_all(aws.join("sso/cache")).unwrap();
        std::fs::write(
            aws.join("config"),
            "[profile sso]\nsso_session = corp\nsso_account_id = 111\nsso_role_name = Dev\nregion = eu-west-1\n\
             [sso-session corp]\nsso_region = eu-west-1\nsso_start_url = https://corp.awsapps.com/start\n\
             [profile src]\naws_access_key_id = SRCKEY\naws_secret_access_key = srcsecret\n\
             [profile role]\nrole_arn = arn:aws:iam::222:role/Admin\nsource_profile = src\nexternal_id = ext-1\n\
             [profile ssorole]\nrole_arn = arn:aws:iam::333:role/X\nsource_profile = sso\n\
             [profile envrole]\nrole_arn = arn:aws:iam::444:role/E\ncredential_source = Environment\n\
             [profile loop]\nrole_arn = arn:aws:iam::555:role/L\nsource_profile = loop2\n\
             [profile loop2]\nrole_arn = arn:aws:iam::555:role/L\nsource_profile = loop\n",
        )
        .unwrap();
        let cache = aws
            .join("sso/cache")
            .join(format!("{}.json", super::super::profile_services::sha1_hex("corp")));
        let write_token = |expires: &str| {
            std::fs::write(
                &cache,
                format!(r#"{{"accessToken":"sso-token","expiresAt":"{expires}","region":"eu-west-1"}}"#),
            )
            .unwrap()
        };
        write_token("2099-01-01T00:00:00Z");
        let home_text = home.path().display().to_string();
        let config_text = aws.join("config").display().to_string();
        let run = |pairs: Vec<(&'static str, String)>| {
            let mut all = pairs;
            all.push(("HOME", home_text.clone()));
            all.push(("AWS_CONFIG_FILE", config_text.clone()));
            all.push(("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent".into()));
            all.push(("AWS_ENDPOINT_URL", url.clone()));
            async move {
                let env = move |k: &str| all.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
                resolve(
                    &model("m", "https://bedrock-runtime.us-east-1.amazonaws.com"),
                    "<authenticated>",
                    &env,
                )
                .await
            }
        };
        let signed = |t: Target| match t.auth {
            BedrockAuth::Signed(c) => (c.access_key_id, c.session_token),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            signed(run(vec![("AWS_PROFILE", "sso".into())]).await.unwrap()),
            ("SSOKEY".into(), Some("ssotoken".into()))
        );
        assert_eq!(
            signed(run(vec![("AWS_PROFILE", "role".into())]).await.unwrap()),
            (
                "ROLE-SRCKEY".into(),
                Some("arn%3Aaws%3Aiam%3A%3A222%3Arole%2FAdmin".into())
            )
        );
        let sts = seen.lock().unwrap().last().unwrap().clone();
        assert!(
            sts.contains("ExternalId=ext-1") && sts.contains("RoleSessionName=aws-sdk-js-"),
            "{sts}"
        );
        // A role whose source is an SSO profile: the SSO keys sign the STS call, with their token.
        assert_eq!(
            signed(run(vec![("AWS_PROFILE", "ssorole".into())]).await.unwrap()).0,
            "ROLE-SSOKEY"
        );
        let sts = seen.lock().unwrap().last().unwrap().to_ascii_lowercase();
        assert!(sts.contains("x-amz-security-token: ssotoken"), "{sts}");
        // credential_source = Environment: without keys in the environment there is nothing
        // to assume the role with (with keys, the environment's keys come first, as in the SDK).
        let no_keys = run(vec![("AWS_PROFILE", "envrole".into())]).await.unwrap_err();
        assert!(no_keys.contains("from the environment, which has no keys"), "{no_keys}");
        let looped = run(vec![("AWS_PROFILE", "loop".into())]).await.unwrap_err();
        assert!(looped.contains("too long"), "{looped}");
        // Web identity from the environment, and from a profile; a bad token is STS's error.
        let token_file = home.path().join("web-token");
        std::fs::write(&token_file, "web-token-1\n").unwrap();
        let token_path = token_file.display().to_string();
        let web = run(vec![
            ("AWS_WEB_IDENTITY_TOKEN_FILE", token_path.clone()),
            ("AWS_ROLE_ARN", "arn:aws:iam::666:role/Web".into()),
            ("AWS_ROLE_SESSION_NAME", "ci-run".into()),
            ("AWS_PROFILE", "absent".into()),
        ])
        .await
        .unwrap();
        assert_eq!(signed(web), ("WEBKEY".into(), Some("ci-run".into())));
        let sts = seen.lock().unwrap().last().unwrap().clone();
        assert!(sts.contains("RoleArn=arn%3Aaws%3Aiam%3A%3A666%3Arole%2FWeb"), "{sts}");
        let mut config = std::fs::read_to_string(aws.join("config")).unwrap();
        config.push_str(&format!(
            "[profile web]\nrole_arn = arn:aws:iam::777:role/W\nweb_identity_token_file = {token_path}\n"
        ));
        std::fs::write(aws.join("config"), config).unwrap();
        let web = signed(run(vec![("AWS_PROFILE", "web".into())]).await.unwrap());
        assert_eq!(web.0, "WEBKEY");
        assert!(web.1.unwrap().starts_with("aws-sdk-js-session-"));
        std::fs::write(&token_file, "stale").unwrap();
        let refused = run(vec![("AWS_PROFILE", "web".into())]).await.unwrap_err();
        assert!(
            refused.contains("AssumeRoleWithWebIdentity failed") && refused.contains("InvalidIdentityToken"),
            "{refused}"
        );
        // An expired token with a refresh token and a live client registration is renewed,
        // and the cache rewritten with the new token.
        std::fs::write(
            &cache,
            r#"{"accessToken":"old-token","expiresAt":"2001-01-01T00:00:00Z","region":"eu-west-1",
                "refreshToken":"refresh-1","clientId":"cid","clientSecret":"csecret",
                "registrationExpiresAt":"2099-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        assert_eq!(
            signed(run(vec![("AWS_PROFILE", "sso".into())]).await.unwrap()).0,
            "SSOKEY"
        );
        let renewed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
        assert_eq!(renewed["accessToken"], "sso-token");
        assert_eq!(renewed["refreshToken"], "refresh-2");
        assert_eq!(renewed["clientId"], "cid");
        let expires = chrono::DateTime::parse_from_rfc3339(renewed["expiresAt"].as_str().unwrap()).unwrap();
        assert!(expires > chrono::Utc::now());
        // A refresh the OIDC service refuses leaves the expired session an error.
        std::fs::write(
            &cache,
            r#"{"accessToken":"old-token","expiresAt":"2001-01-01T00:00:00Z","refreshToken":"revoked",
                "clientId":"cid","clientSecret":"csecret"}"#,
        )
        .unwrap();
        let refused = run(vec![("AWS_PROFILE", "sso".into())]).await.unwrap_err();
        assert!(refused.contains("has expired"), "{refused}");
        // An expired token says how to sign in again, and names no token.
        write_token("2001-01-01T00:00:00Z");
        let expired = run(vec![("AWS_PROFILE", "sso".into())]).await.unwrap_err();
        assert!(
            expired.contains("aws sso login --profile sso") && !expired.contains("sso-token"),
            "{expired}"
        );
    }
}
