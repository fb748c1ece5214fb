//! Uploading a bug report to pi's report service, as pi 1.6 does: the report's files as one
//! `multipart/form-data` POST to `<gateway>/v1/bug-reports` (the Radius gateway,
//! `PI_RADIUS_GATEWAY` or `https://radius.pi.dev`), signed with the Radius token when there is
//! one. The service answers `{"ok": true, "bug_report": {"id": …}}`; anything else is an error
//! naming its `description` / `error`, the status text, or the transport failure.

use std::time::Duration;

use serde_json::Value;

use crate::bug_report::{files, Bundle};

/// The gateway reports go to (`PI_RADIUS_GATEWAY`, normalised, else Radius' own).
pub fn gateway() -> String {
    let configured = std::env::var("PI_RADIUS_GATEWAY").ok().filter(|v| !v.trim().is_empty());
    pi_oauth::normalize_gateway_url(configured.as_deref().unwrap_or(pi_oauth::DEFAULT_RADIUS_GATEWAY))
}

/// The gateway's host, as the delivery question names it.
pub fn gateway_host(gateway: &str) -> String {
    let rest = gateway.split_once("://").map_or(gateway, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest).to_string()
}

/// A boundary that does not occur in the parts (the report's JSON never holds it).
fn boundary(parts: &[crate::bug_report::ReportFile]) -> String {
    let mut n: u64 = std::process::id().into();
    loop {
        let b = format!("----pi-bug-report-{n:016x}");
        if !parts.iter().any(|p| p.data.contains(&b)) {
            return b;
        }
        n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    }
}

/// The body and content type of the upload.
fn form(bundle: &Bundle) -> Result<(Vec<u8>, String), String> {
    let parts = files(bundle).map_err(|e| e.to_string())?;
    let b = boundary(&parts);
    let mut body = Vec::new();
    for part in &parts {
        body.extend_from_slice(
            format!(
                "--{b}\r\nContent-Disposition: form-data; name=\"{n}\"; filename=\"{n}\"\r\nContent-Type: {t}\r\n\r\n",
                n = part.name,
                t = part.content_type
            )
            .as_bytes(),
        );
        body.extend_from_slice(part.data.as_bytes());
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{b}--\r\n").as_bytes());
    Ok((body, format!("multipart/form-data; boundary={b}")))
}

/// Upload `bundle` to `gateway`; the report's id on success, else the error to show.
pub async fn upload(bundle: &Bundle, gateway: &str, token: Option<&str>) -> Result<String, String> {
    let fail = |detail: &str| format!("Bug report upload failed: {detail}");
    let (body, content_type) = form(bundle).map_err(|e| fail(&e))?;
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .timeout(Duration::from_secs(120))
        .build()
        .map_err(|e| fail(&e.to_string()))?;
    let mut request = client
        .post(format!("{gateway}/v1/bug-reports"))
        .header(reqwest::header::CONTENT_TYPE, content_type)
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| fail(&transport_error(&e)))?;
    let status = response.status();
    let json: Option<Value> = response
        .bytes()
        .await
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let id = json
        .as_ref()
        .filter(|j| j.get("ok") == Some(&Value::Bool(true)))
        .and_then(|j| j.pointer("/bug_report/id"))
        .and_then(Value::as_str);
    if let (true, Some(id)) = (status.is_success(), id) {
        return Ok(id.to_string());
    }
    let detail = json
        .as_ref()
        .filter(|j| j.get("ok") != Some(&Value::Bool(true)))
        .and_then(|j| {
            ["description", "error"]
                .iter()
                .find_map(|k| j.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        })
        .map(str::to_string);
    let detail = detail
        .or_else(|| status.canonical_reason().map(str::to_string))
        .unwrap_or_else(|| status.as_u16().to_string());
    Err(fail(&detail))
}

/// A transport failure in words: the error and its causes (a refused connection says so).
fn transport_error(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_named_from_the_gateway() {
        assert_eq!(gateway_host("https://radius.pi.dev"), "radius.pi.dev");
        assert_eq!(gateway_host("http://127.0.0.1:9/x"), "127.0.0.1:9");
    }
}
