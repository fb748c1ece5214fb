//! The profile kinds of the shared AWS config whose keys come from a service call, as the AWS
//! SDK's profile chain resolves them:
//! - SSO (`sso_session` with an `[sso-session NAME]` section, or the legacy `sso_start_url`):
//!   the token that `aws sso login` cached under `~/.aws/sso/cache/<sha1>.json` is traded for
//!   role credentials at the portal (`GET /federation/credentials`);
//! - role assumption (`role_arn` with `source_profile` or `credential_source = Environment`):
//!   STS `AssumeRole`, signed with the source's keys;
//! - web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` with `AWS_ROLE_ARN`, or a profile's
//!   `web_identity_token_file` with `role_arn`): STS `AssumeRoleWithWebIdentity`, unsigned, with
//!   the token read from the file at every call (the platform rotates it).
//!
//! Endpoints follow `AWS_ENDPOINT_URL_SSO` / `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL`,
//! else the region's service endpoint (`AWS_ENDPOINT_URL_SSO_OIDC` for the token refresh). An
//! `sso-session` token near its expiry is refreshed with the cached refresh token (OIDC
//! `CreateToken`); an expired token that cannot be refreshed is an error that says to run
//! `aws sso login`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::sigv4::{self, AwsCredentials};

/// Time allowed for one SSO or STS call.
const SERVICE_TIMEOUT: Duration = Duration::from_secs(10);

type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

fn get(env: Env<'_>, name: &str) -> Option<String> {
    env(name).filter(|v| !v.is_empty())
}

/// The endpoint of `service` (`SSO`, `STS`) for `host` in `region`.
fn endpoint(env: Env<'_>, service: &str, host: &str) -> String {
    get(env, &format!("AWS_ENDPOINT_URL_{service}"))
        .or_else(|| get(env, "AWS_ENDPOINT_URL"))
        .unwrap_or_else(|| format!("https://{host}"))
        .trim_end_matches('/')
        .to_string()
}

fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(SERVICE_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())
}

/// Lowercase hex SHA-1 (the SSO cache's file names; not a security use).
pub(super) fn sha1_hex(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, text.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A cached token this close to expiry is refreshed first, as the SDK's token provider does.
const SSO_REFRESH_WINDOW: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// The SSO access token of `cache_key` (the session name, or the legacy start URL) that
/// `aws sso login` cached. For an `sso-session` (`oidc_region` set) a token with less than five
/// minutes left is renewed with the cached refresh token through the OIDC `CreateToken` call,
/// and the renewed token is written back to the cache as the SDK writes it.
async fn sso_token(env: Env<'_>, profile: &str, cache_key: &str, oidc_region: Option<&str>) -> Result<String, String> {
    let home = get(env, "HOME").map(PathBuf::from).unwrap_or_default();
    let path = home
        .join(".aws")
        .join("sso")
        .join("cache")
        .join(format!("{}.json", sha1_hex(cache_key)));
    let login = || format!("run \"aws sso login --profile {profile}\" to sign in again");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        format!(
            "The SSO session of AWS profile {profile} has no cached token; {}",
            login()
        )
    })?;
    let json: Value = serde_json::from_str(&text).map_err(|_| {
        format!(
            "The SSO token cache of AWS profile {profile} is not valid JSON; {}",
            login()
        )
    })?;
    let token = json
        .get("accessToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let expires = json.get("expiresAt").and_then(Value::as_str).and_then(parse_time);
    let now = chrono::Utc::now();
    let valid = match (token, expires) {
        (Some(token), Some(expires)) if expires > now => Some((token.to_string(), expires)),
        _ => None,
    };
    if let Some((token, expires)) = &valid {
        if *expires - now > SSO_REFRESH_WINDOW || oidc_region.is_none() {
            return Ok(token.clone());
        }
    }
    if let Some(region) = oidc_region {
        // A failed refresh falls back to the cached token while it lasts.
        if let Ok((token, updated)) = refresh_sso_token(env, &json, region).await {
            // The cache is the CLI's; a failed write leaves the old entry, still usable.
            if let Ok(text) = serde_json::to_string_pretty(&updated) {
                let _ = std::fs::write(&path, text);
            }
            return Ok(token);
        }
    }
    valid
        .map(|(token, _)| token)
        .ok_or_else(|| format!("The SSO session of AWS profile {profile} has expired; {}", login()))
}

fn parse_time(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(&text.replace("UTC", "Z"))
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// OIDC `CreateToken` with the cache's refresh token and client registration: the new access
/// token and the cache entry updated with it.
async fn refresh_sso_token(env: Env<'_>, cache: &Value, region: &str) -> Result<(String, Value), String> {
    let field = |k: &str| cache.get(k).and_then(Value::as_str).filter(|v| !v.is_empty());
    let (Some(client_id), Some(client_secret), Some(refresh_token)) =
        (field("clientId"), field("clientSecret"), field("refreshToken"))
    else {
        return Err("no refresh token".into());
    };
    if field("registrationExpiresAt")
        .and_then(parse_time)
        .is_some_and(|at| at <= chrono::Utc::now())
    {
        return Err("the client registration expired".into());
    }
    let base = endpoint(env, "SSO_OIDC", &format!("oidc.{region}.amazonaws.com"));
    let response = client()?
        .post(format!("{base}/token"))
        .header("content-type", "application/json")
        .body(
            serde_json::json!({
                "clientId": client_id,
                "clientSecret": client_secret,
                "grantType": "refresh_token",
                "refreshToken": refresh_token,
            })
            .to_string(),
        )
        .send()
        .await
        .map_err(|e| e.without_url().to_string())?;
    if !response.status().is_success() {
        return Err(format!("CreateToken answered {}", response.status().as_u16()));
    }
    let bytes = response.bytes().await.map_err(|e| e.without_url().to_string())?;
    let answer: Value = serde_json::from_slice(&bytes).map_err(|e| format!("CreateToken sent no JSON: {e}"))?;
    let token = answer
        .get("accessToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("CreateToken returned no accessToken")?
        .to_string();
    let seconds = answer.get("expiresIn").and_then(Value::as_i64).unwrap_or(3600);
    let mut updated = cache.clone();
    if let Some(map) = updated.as_object_mut() {
        map.insert("accessToken".into(), Value::String(token.clone()));
        let expires = chrono::Utc::now() + chrono::TimeDelta::seconds(seconds);
        map.insert(
            "expiresAt".into(),
            Value::String(expires.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        );
        if let Some(next) = answer
            .get("refreshToken")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            map.insert("refreshToken".into(), Value::String(next.to_string()));
        }
    }
    Ok((token, updated))
}

/// Role credentials from the SSO portal for `profile` (its account and role), through the
/// session named by `sso_session` (`sessions` holds the `[sso-session]` sections) or the legacy
/// keys on the profile itself.
pub(super) async fn sso_credentials(
    name: &str,
    profile: &HashMap<String, String>,
    sessions: &HashMap<String, HashMap<String, String>>,
    env: Env<'_>,
) -> Result<AwsCredentials, String> {
    let (cache_key, region, oidc) = match profile.get("sso_session") {
        Some(session) => {
            let section = sessions.get(session).ok_or_else(|| {
                format!("AWS profile {name} names sso_session {session}, which the config does not define")
            })?;
            let region = section
                .get("sso_region")
                .ok_or_else(|| format!("sso-session {session} has no sso_region"))?;
            (session.clone(), region.clone(), true)
        }
        None => {
            let url = profile
                .get("sso_start_url")
                .ok_or_else(|| format!("AWS profile {name} has no sso_start_url"))?;
            let region = profile
                .get("sso_region")
                .ok_or_else(|| format!("AWS profile {name} has no sso_region"))?;
            (url.clone(), region.clone(), false)
        }
    };
    let (Some(account), Some(role)) = (profile.get("sso_account_id"), profile.get("sso_role_name")) else {
        return Err(format!(
            "AWS profile {name} needs sso_account_id and sso_role_name for SSO credentials"
        ));
    };
    let token = sso_token(env, name, &cache_key, oidc.then_some(region.as_str())).await?;
    let base = endpoint(env, "SSO", &format!("portal.sso.{region}.amazonaws.com"));
    let url = format!(
        "{base}/federation/credentials?account_id={}&role_name={}",
        sigv4::uri_encode(account),
        sigv4::uri_encode(role)
    );
    let response = client()?
        .get(&url)
        .header("x-amz-sso_bearer_token", token)
        .send()
        .await
        .map_err(|e| {
            format!(
                "SSO GetRoleCredentials failed for AWS profile {name}: {}",
                e.without_url()
            )
        })?;
    let status = response.status().as_u16();
    let body: Value = response
        .bytes()
        .await
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        let message = body.get("message").and_then(Value::as_str).unwrap_or_default();
        return Err(format!(
            "SSO GetRoleCredentials failed for AWS profile {name} ({status}){}",
            if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            }
        ));
    }
    let creds = body.get("roleCredentials");
    let field = |key: &str| {
        creds
            .and_then(|c| c.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    match (field("accessKeyId"), field("secretAccessKey")) {
        (Some(access_key_id), Some(secret_access_key)) => Ok(AwsCredentials {
            access_key_id,
            secret_access_key,
            session_token: field("sessionToken"),
        }),
        _ => Err(format!(
            "SSO GetRoleCredentials for AWS profile {name} returned no credentials"
        )),
    }
}

/// The text of the first `<tag>…</tag>` in `xml`.
fn xml_text<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(xml[start..end].trim())
}

fn form_encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", sigv4::uri_encode(k), sigv4::uri_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// STS `AssumeRole` of `profile`'s `role_arn` with `source` keys.
pub(super) async fn assume_role(
    name: &str,
    profile: &HashMap<String, String>,
    source: &AwsCredentials,
    env: Env<'_>,
) -> Result<AwsCredentials, String> {
    let role_arn = profile
        .get("role_arn")
        .ok_or_else(|| format!("AWS profile {name} has no role_arn"))?;
    let region = profile
        .get("region")
        .cloned()
        .or_else(|| get(env, "AWS_REGION"))
        .or_else(|| get(env, "AWS_DEFAULT_REGION"))
        .unwrap_or_else(|| "us-east-1".to_string());
    let session_name = profile
        .get("role_session_name")
        .cloned()
        .unwrap_or_else(|| format!("aws-sdk-js-{}", chrono::Utc::now().timestamp_millis()));
    let mut pairs = vec![
        ("Action", "AssumeRole"),
        ("Version", "2011-06-15"),
        ("RoleArn", role_arn.as_str()),
        ("RoleSessionName", session_name.as_str()),
    ];
    if let Some(id) = profile.get("external_id") {
        pairs.push(("ExternalId", id));
    }
    if let Some(seconds) = profile.get("duration_seconds") {
        pairs.push(("DurationSeconds", seconds));
    }
    let body = form_encode(&pairs);
    let base = endpoint(env, "STS", &format!("sts.{region}.amazonaws.com"));
    let url = url::Url::parse(&base).map_err(|e| format!("STS endpoint {base}: {e}"))?;
    let host = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        _ => return Err(format!("STS endpoint {base} has no host")),
    };
    let amz_date = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let mut headers = vec![
        (
            "content-type".to_string(),
            "application/x-www-form-urlencoded".to_string(),
        ),
        ("host".to_string(), host),
        ("x-amz-date".to_string(), amz_date.clone()),
    ];
    if let Some(token) = &source.session_token {
        headers.push(("x-amz-security-token".to_string(), token.clone()));
    }
    let path = if url.path().is_empty() { "/" } else { url.path() };
    let authorization = sigv4::authorization(
        &sigv4::SigningInput {
            method: "POST",
            path,
            headers: &headers,
            body: body.as_bytes(),
            region: &region,
            service: "sts",
            amz_date: &amz_date,
        },
        source,
    );
    let mut request = client()?.post(url.as_str()).body(body);
    for (k, v) in headers.iter().filter(|(k, _)| k != "host") {
        request = request.header(k, v);
    }
    let response = request
        .header("authorization", authorization)
        .send()
        .await
        .map_err(|e| format!("STS AssumeRole failed for AWS profile {name}: {}", e.without_url()))?;
    sts_credentials(
        response,
        &format!("STS AssumeRole failed for AWS profile {name}"),
        &format!("STS AssumeRole for AWS profile {name}"),
    )
    .await
}

/// The credentials of an STS answer; `failed` starts the error of a refusal, `what` names
/// the call when the answer holds no keys.
async fn sts_credentials(response: reqwest::Response, failed: &str, what: &str) -> Result<AwsCredentials, String> {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        let code = xml_text(&text, "Code").unwrap_or_default();
        let message = xml_text(&text, "Message").unwrap_or_default();
        return Err(format!(
            "{failed} ({status}){}",
            match (code.is_empty(), message.is_empty()) {
                (true, true) => String::new(),
                (false, true) => format!(": {code}"),
                (_, false) => format!(": {code} {message}").replace(":  ", ": "),
            }
        ));
    }
    match (xml_text(&text, "AccessKeyId"), xml_text(&text, "SecretAccessKey")) {
        (Some(id), Some(secret)) if !id.is_empty() && !secret.is_empty() => Ok(AwsCredentials {
            access_key_id: id.to_string(),
            secret_access_key: secret.to_string(),
            session_token: xml_text(&text, "SessionToken").map(str::to_string),
        }),
        _ => Err(format!("{what} returned no credentials")),
    }
}

/// Where a web identity comes from: the token file, the role, and an optional session name.
pub(super) struct WebIdentity<'a> {
    pub token_file: &'a str,
    pub role_arn: &'a str,
    pub session_name: Option<&'a str>,
    pub region: Option<&'a str>,
}

/// STS `AssumeRoleWithWebIdentity` (unsigned: the token is the proof).
pub(super) async fn assume_role_with_web_identity(
    identity: &WebIdentity<'_>,
    env: Env<'_>,
) -> Result<AwsCredentials, String> {
    let token = std::fs::read_to_string(identity.token_file).map_err(|e| {
        format!(
            "Could not read the web identity token file {}: {e}",
            identity.token_file
        )
    })?;
    let token = token.trim();
    if token.is_empty() {
        return Err(format!("The web identity token file {} is empty", identity.token_file));
    }
    let region = identity
        .region
        .map(str::to_string)
        .or_else(|| get(env, "AWS_REGION"))
        .or_else(|| get(env, "AWS_DEFAULT_REGION"))
        .unwrap_or_else(|| "us-east-1".to_string());
    let session_name = identity
        .session_name
        .map(str::to_string)
        .unwrap_or_else(|| format!("aws-sdk-js-session-{}", chrono::Utc::now().timestamp_millis()));
    let body = form_encode(&[
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", identity.role_arn),
        ("RoleSessionName", session_name.as_str()),
        ("WebIdentityToken", token),
    ]);
    let base = endpoint(env, "STS", &format!("sts.{region}.amazonaws.com"));
    let url = url::Url::parse(&base).map_err(|e| format!("STS endpoint {base}: {e}"))?;
    let role = identity.role_arn;
    let response = client()?
        .post(url.as_str())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("STS AssumeRoleWithWebIdentity failed for {role}: {}", e.without_url()))?;
    sts_credentials(
        response,
        &format!("STS AssumeRoleWithWebIdentity failed for {role}"),
        &format!("STS AssumeRoleWithWebIdentity for {role}"),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names_and_xml() {
        // FIPS 180 test vector: the cache file of a session named "abc".
        assert_eq!(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        let xml = "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId> AK </AccessKeyId>\
                   <SecretAccessKey>SK</SecretAccessKey></Credentials></AssumeRoleResult></AssumeRoleResponse>";
        assert_eq!(xml_text(xml, "AccessKeyId"), Some("AK"));
        assert_eq!(xml_text(xml, "SessionToken"), None);
        assert_eq!(
            form_encode(&[("RoleArn", "arn:aws:iam::1:role/x y")]),
            "RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fx%20y"
        );
    }
}
