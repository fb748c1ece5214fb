//! Time a long streamed reply through `stream_simple` against a local server, at several
//! lengths, to show that the cost per delta does not grow with the reply.
//!
//! Run: `cargo run -p pi-ai --example stream_bench [--release] [N ...]` (default 5000 10000
//! 20000 40000 deltas). For each length it prints the time to read the raw bytes alone and the
//! time through the provider (decode, parse, accumulate, emit events), both in total and per
//! delta. Nothing here asserts; the numbers are for reading.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool on fixed inputs: a panic is a bug report

use std::time::Instant;

use pi_ai::{stream_simple, AssistantMessageEvent, Context, InputKind, Message, Model, ModelCost, StreamOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A chat-completions SSE body of `n` one-token deltas, framed as one HTTP response.
fn response_bytes(n: usize) -> Vec<u8> {
    let mut body = String::with_capacity(n * 140);
    for i in 0..n {
        body.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-b\",\"object\":\"chat.completion.chunk\",\"model\":\"bench\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok{} \"}},\"finish_reason\":null}}]}}\n\n",
            i % 1000
        ));
    }
    body.push_str("data: {\"id\":\"chatcmpl-b\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n");
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Serve `bytes` to every connection, writing in 4 KiB pieces as a streaming server would.
async fn serve(bytes: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let bytes = std::sync::Arc::new(bytes);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let bytes = bytes.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 65536];
                let mut seen = Vec::new();
                // Read the request head and its body (content-length) before answering.
                loop {
                    let Ok(n) = socket.read(&mut buf).await else { return };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    if let Some(p) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&seen[..p]).to_ascii_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse().ok())
                            .unwrap_or(0);
                        if seen.len() >= p + 4 + len {
                            break;
                        }
                    }
                }
                for piece in bytes.chunks(4096) {
                    if socket.write_all(piece).await.is_err() {
                        return;
                    }
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    format!("http://{addr}/v1")
}

fn model(base_url: String) -> Model {
    Model {
        id: "bench".into(),
        name: "bench".into(),
        api: "openai-completions".into(),
        provider: "bench".into(),
        base_url,
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 32_000,
        headers: None,
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
    }
}

async fn raw_read(url: &str) -> usize {
    let resp = pi_ai::http::client()
        .post(format!("{url}/chat/completions"))
        .body("{}")
        .send()
        .await
        .expect("send");
    resp.bytes().await.map(|b| b.len()).unwrap_or(0)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() {
        vec![5_000, 10_000, 20_000, 40_000]
    } else {
        sizes
    };
    println!(
        "{:>8} {:>12} {:>14} {:>16} {:>12}",
        "deltas", "raw ms", "provider ms", "per delta us", "text bytes"
    );
    for n in sizes {
        let url = serve(response_bytes(n)).await;
        // Warm the connection pool and the allocator once.
        raw_read(&url).await;

        let t = Instant::now();
        raw_read(&url).await;
        let raw_ms = t.elapsed().as_secs_f64() * 1e3;

        let ctx = Context {
            system_prompt: None,
            messages: vec![Message::user_text("go")],
            tools: vec![],
        };
        let opts = StreamOptions {
            api_key: Some("bench".into()),
            ..Default::default()
        };
        let t = Instant::now();
        let mut stream = stream_simple(&model(url), &ctx, opts);
        let mut deltas = 0usize;
        let mut text_len = 0usize;
        while let Some(event) = stream.next_event().await {
            match event {
                AssistantMessageEvent::TextDelta { .. } => deltas += 1,
                AssistantMessageEvent::Done { message, .. } => {
                    text_len = message.text().len();
                    break;
                }
                AssistantMessageEvent::Error { error, .. } => {
                    eprintln!("error: {:?}", error.error_message);
                    break;
                }
                _ => {}
            }
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(deltas, n, "every delta arrives");
        println!(
            "{n:>8} {raw_ms:>12.1} {ms:>14.1} {:>16.2} {text_len:>12}",
            ms * 1e3 / n as f64
        );
    }
}
