import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { pathToFileURL } from "node:url";

// What the reference pi 1.6 sends to Amazon Bedrock's ConverseStream and makes of its binary
// event stream: each case runs 1.6's `streamSimple` (AWS SDK v3 underneath) against a local
// server that records the request and answers with the case's frames (`application/
// vnd.amazon.eventstream`, encoded here). Frames are stored base64-encoded.
// Usage: PI_REFERENCE_DIR=<reference install> node make-bedrock-requests.mjs out.json
if (!process.env.PI_REFERENCE_DIR) {
  console.error("PI_REFERENCE_DIR must name the reference pi install (see scripts/test-deps)");
  process.exit(2);
}
const piAi = `${process.env.PI_REFERENCE_DIR}/node_modules/@earendil-works/pi-ai/dist/compat.js`;
const { streamSimple } = await import(pathToFileURL(piAi).href);

// No AWS files of the machine may leak in: a fresh home, and only the variables a case sets.
const home = fs.mkdtempSync(path.join(os.tmpdir(), "bedrock-golden-"));
for (const k of Object.keys(process.env)) if (k.startsWith("AWS_")) delete process.env[k];
process.env.HOME = home;
process.env.AWS_CONFIG_FILE = path.join(home, "config");
process.env.AWS_SHARED_CREDENTIALS_FILE = path.join(home, "credentials");

function header(name, value) {
  const n = Buffer.from(name);
  const v = Buffer.from(value);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(v.length);
  return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), len, v]);
}
function frame(headers, payload) {
  const h = Buffer.concat(Object.entries(headers).map(([k, v]) => header(k, v)));
  const p = Buffer.from(payload);
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(12 + h.length + p.length + 4, 0);
  prelude.writeUInt32BE(h.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(zlib.crc32(prelude));
  const body = Buffer.concat([prelude, preludeCrc, h, p]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([body, crc]);
}
const ev = (type, obj) =>
  frame({ ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, JSON.stringify(obj));
const exc = (type, message) =>
  frame({ ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" }, JSON.stringify({ message }));

let reply = { status: 200, frames: [] };
let recorded;
let attempts = 0;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    attempts += 1;
    recorded = { method: req.method, path: req.url, headers: req.headers, rawBody: body, body: body ? JSON.parse(body) : null };
    if (reply.status && reply.status !== 200) {
      res.writeHead(reply.status, { "content-type": "application/json", ...(reply.headers || {}) });
      res.end(reply.body);
      return;
    }
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "req-1" });
    for (const f of reply.frames) res.write(f);
    // Let the frames reach the client before the connection goes.
    if (reply.drop) setTimeout(() => res.destroy(), 50);
    else res.end();
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const asst = (from, content, stopReason = "toolUse") => ({ role: "assistant", content, api: from.api, provider: from.provider, model: from.model, usage, stopReason, timestamp: 5 });
const anth = { api: "anthropic-messages", provider: "anthropic", model: "claude-x" };
const self = { api: "bedrock-converse-stream", provider: "amazon-bedrock", model: "anthropic.claude-sonnet-4-5-20250929-v1:0" };
const img = { type: "image", data: "QUJD", mimeType: "image/png" };
const tools = [{ name: "read", description: "Read", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
const histories = {
  hello: [{ role: "user", content: "hi", timestamp: 1 }],
  crossAnthropic: [
    { role: "user", content: [{ type: "text", text: "hi" }, img], timestamp: 1 },
    asst(anth, [{ type: "thinking", thinking: "deep thought", thinkingSignature: "sigA" }, { type: "text", text: "calling" }, { type: "toolCall", id: "toolu_01/abc+x", name: "read", arguments: { path: "a" } }]),
    { role: "toolResult", toolCallId: "toolu_01/abc+x", toolName: "read", content: [{ type: "text", text: "file" }, img], isError: false, timestamp: 6 },
    { role: "user", content: "next", timestamp: 7 },
  ],
  sameModel: [
    { role: "user", content: [{ type: "text", text: "  " }], timestamp: 1 },
    asst(self, [{ type: "thinking", thinking: "plan", thinkingSignature: "sig-1" }, { type: "text", text: " " }, { type: "toolCall", id: "tooluse_1", name: "read", arguments: { path: "b", "": 1 } }]),
    { role: "toolResult", toolCallId: "tooluse_1", toolName: "read", content: [], isError: true, timestamp: 6 },
    { role: "toolResult", toolCallId: "tooluse_2", toolName: "read", content: [{ type: "text", text: "two" }], isError: false, timestamp: 7 },
  ],
};

const meta = (extra = {}) => ev("metadata", { usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15, ...extra }, metrics: { latencyMs: 5 } });
const replies = {
  text: [
    ev("messageStart", { role: "assistant" }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hel" } }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "lo" } }),
    ev("contentBlockStop", { contentBlockIndex: 0 }),
    ev("messageStop", { stopReason: "end_turn" }),
    meta({ cacheReadInputTokens: 4, cacheWriteInputTokens: 2 }),
  ],
  thinkingTool: [
    ev("messageStart", { role: "assistant" }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "think" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "ing" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "SIG" } } }),
    ev("contentBlockStop", { contentBlockIndex: 0 }),
    ev("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "ok" } }),
    ev("contentBlockStop", { contentBlockIndex: 1 }),
    ev("contentBlockStart", { contentBlockIndex: 2, start: { toolUse: { toolUseId: "tooluse_9", name: "read" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: "{\"pa" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: "th\":\"x\"}" } } }),
    ev("contentBlockStop", { contentBlockIndex: 2 }),
    ev("messageStop", { stopReason: "tool_use" }),
    meta(),
  ],
  redacted: [
    ev("messageStart", { role: "assistant" }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "AAEC" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: "AwQ=" } } }),
    ev("contentBlockStop", { contentBlockIndex: 0 }),
    ev("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "done" } }),
    ev("messageStop", { stopReason: "end_turn" }),
    meta(),
  ],
  maxTokens: [ev("messageStart", { role: "assistant" }), ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "cut" } }), ev("messageStop", { stopReason: "max_tokens" }), meta()],
  guardrail: [ev("messageStart", { role: "assistant" }), ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x" } }), ev("messageStop", { stopReason: "guardrail_intervened" }), meta()],
  noStop: [ev("messageStart", { role: "assistant" }), ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x" } })],
  throttled: [ev("messageStart", { role: "assistant" }), ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "par" } }), exc("throttlingException", "Too many tokens, please wait")],
  streamError: [ev("messageStart", { role: "assistant" }), exc("modelStreamErrorException", "model broke")],
};

const claude = (extra = {}) => ({ id: "anthropic.claude-sonnet-4-5-20250929-v1:0", name: "Claude Sonnet 4.5", api: "bedrock-converse-stream", provider: "amazon-bedrock", baseUrl, reasoning: true, input: ["text", "image"], cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, contextWindow: 200000, maxTokens: 64000, ...extra });
const keys = { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_REGION: "eu-west-1" };
const cases = [];
const add = (name, m, history, opts, env, r) => cases.push({ name, model: m, history, opts, env, reply: r });
add("bedrock-text", claude({ reasoning: false }), histories.hello, {}, keys, { frames: replies.text });
add("bedrock-session-token", claude(), histories.hello, { temperature: 0.5, maxTokens: 100 }, { ...keys, AWS_SESSION_TOKEN: "FwoGZXIvYXdzEXAMPLE" }, { frames: replies.text });
add("bedrock-thinking-tools", claude(), histories.crossAnthropic, { reasoning: "high" }, keys, { frames: replies.thinkingTool });
add("bedrock-same-model", claude(), histories.sameModel, { reasoning: "low", cacheRetention: "long" }, keys, { frames: replies.text });
add("bedrock-adaptive", claude({ id: "us.anthropic.claude-opus-4-6-v1", name: "Claude Opus 4.6" }), histories.hello, { reasoning: "xhigh" }, keys, { frames: replies.text });
add("bedrock-opus-5", claude({ id: "us.anthropic.claude-opus-5-5", name: "Claude Opus 5.5" }), histories.hello, { reasoning: "medium" }, keys, { frames: replies.text });
add("bedrock-cache-none", claude({ reasoning: false }), histories.crossAnthropic, { cacheRetention: "none" }, keys, { frames: replies.text });
add("bedrock-nova", claude({ id: "amazon.nova-pro-v1:0", name: "Nova Pro", reasoning: false }), histories.crossAnthropic, {}, { ...keys, AWS_REGION: "" , AWS_DEFAULT_REGION: "ap-south-1" }, { frames: replies.text });
add("bedrock-gpt-oss", claude({ id: "openai.gpt-oss-120b-1:0", name: "gpt-oss-120b" }), histories.hello, { reasoning: "xhigh" }, keys, { frames: replies.redacted });
add("bedrock-gpt", claude({ id: "openai.gpt-5.6", name: "GPT-5.6", thinkingLevelMap: { high: "high", medium: "medium-ish" } }), histories.hello, { reasoning: "medium" }, keys, { frames: replies.redacted });
add("bedrock-strict", claude({ reasoning: false, compat: { supportsStrictMode: true }, headers: { "X-Extra": "1" } }), histories.hello, {}, keys, { frames: replies.text });
add("bedrock-arn-region", claude({ id: "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/abc", name: "Profile Claude Sonnet 4.5", reasoning: false }), histories.hello, {}, keys, { frames: replies.text });
add("bedrock-bearer", claude({ reasoning: false }), histories.hello, {}, { AWS_BEARER_TOKEN_BEDROCK: "bedrock-api-key-123", AWS_REGION: "us-east-2" }, { frames: replies.text });
add("bedrock-max-tokens", claude({ reasoning: false }), histories.hello, {}, keys, { frames: replies.maxTokens });
add("bedrock-guardrail", claude({ reasoning: false }), histories.hello, {}, keys, { frames: replies.guardrail });
add("bedrock-no-stop", claude({ reasoning: false }), histories.hello, {}, keys, { frames: replies.noStop });
add("bedrock-stream-throttled", claude({ reasoning: false }), histories.hello, {}, keys, { frames: replies.throttled });
add("bedrock-stream-error", claude({ reasoning: false }), histories.hello, {}, keys, { frames: replies.streamError });
add("bedrock-429", claude({ reasoning: false }), histories.hello, {}, keys, { status: 429, headers: { "x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/" }, body: "{\"message\":\"Too many requests, please wait before trying again.\"}" });
add("bedrock-400", claude({ reasoning: false }), histories.hello, {}, keys, { status: 400, headers: { "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" }, body: "{\"message\":\"prompt is too long: 250000 tokens > 200000 maximum\"}" });
add("bedrock-500", claude({ reasoning: false }), histories.hello, {}, keys, { status: 500, body: "" });
add("bedrock-dropped", claude({ reasoning: false }), histories.hello, {}, keys, { frames: replies.text.slice(0, 2), drop: true });

const out = [];
for (const cs of cases) {
  reply = cs.reply;
  recorded = undefined;
  attempts = 0;
  for (const k of Object.keys(process.env)) if (k.startsWith("AWS_")) delete process.env[k];
  process.env.AWS_CONFIG_FILE = path.join(home, "config");
  process.env.AWS_SHARED_CREDENTIALS_FILE = path.join(home, "credentials");
  process.env.AWS_BEDROCK_FORCE_HTTP1 = "1";
  for (const [k, v] of Object.entries(cs.env)) if (v) process.env[k] = v;
  const context = { systemPrompt: "sys", messages: cs.history, tools };
  const s = streamSimple(cs.model, context, { maxRetries: 0, ...cs.opts });
  const events = [];
  for await (const e of s) {
    const p = { type: e.type };
    if (e.contentIndex !== undefined) p.contentIndex = e.contentIndex;
    if (e.delta !== undefined) p.delta = e.delta;
    events.push(p);
  }
  const message = await s.result();
  const { baseUrl: _base, ...modelOut } = cs.model;
  const { frames, ...replyOut } = cs.reply;
  if (frames) replyOut.frames = frames.map((f) => f.toString("base64"));
  out.push({ name: cs.name, model: modelOut, context, options: cs.opts, env: cs.env, reply: replyOut, request: recorded, attempts, events, message });
}
server.close();
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 1) + "\n");
console.log(out.length, "cases");
