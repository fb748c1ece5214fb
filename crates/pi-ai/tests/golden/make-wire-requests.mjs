import http from "node:http";
import fs from "node:fs";
import zlib from "node:zlib";
import { pathToFileURL } from "node:url";

// What the reference pi 1.6 sends on the wire, and makes of the reply, for the APIs whose body
// is rewritten after the `onPayload` hook (Mistral's camelCase fields, for one): each case runs
// 1.6's `streamSimple` against a local server that records the request and answers with the
// case's SSE chunks. Usage: PI_REFERENCE_DIR=<reference install> node make-wire-requests.mjs out.json
if (!process.env.PI_REFERENCE_DIR) {
  console.error("PI_REFERENCE_DIR must name the reference pi install (see scripts/test-deps)");
  process.exit(2);
}
const piAi = `${process.env.PI_REFERENCE_DIR}/node_modules/@earendil-works/pi-ai/dist/compat.js`;
const { streamSimple } = await import(pathToFileURL(piAi).href);

let reply = { status: 200, chunks: [] };
let recorded;
const server = http.createServer((req, res) => {
  const parts = [];
  req.on("data", (c) => parts.push(c));
  req.on("end", () => {
    // Codex bodies come zstd-compressed (Node 22 and later): record the JSON inside.
    let raw = Buffer.concat(parts);
    if (req.headers["content-encoding"] === "zstd") raw = zlib.zstdDecompressSync(raw);
    const body = raw.toString("utf8");
    recorded = { method: req.method, path: req.url, headers: req.headers, body: body ? JSON.parse(body) : null };
    if (reply.status && reply.status !== 200) {
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(reply.body);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const chunk of reply.chunks) res.write(chunk);
    if (reply.drop) res.destroy();
    else res.end();
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const asst = (from, content, stopReason = "toolUse") => ({ role: "assistant", content, api: from.api, provider: from.provider, model: from.model, usage, stopReason, timestamp: 5 });
const anth = { api: "anthropic-messages", provider: "anthropic", model: "claude-x" };
const mis = { api: "mistral-conversations", provider: "mistral", model: "m1" };
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
    { role: "user", content: "go", timestamp: 1 },
    asst(mis, [{ type: "thinking", thinking: "plan" }, { type: "text", text: " " }, { type: "toolCall", id: "abcdefghi", name: "read", arguments: { path: "b" } }]),
    { role: "toolResult", toolCallId: "abcdefghi", toolName: "read", content: [], isError: true, timestamp: 6 },
  ],
};

const sse = (objects) => objects.map((o) => `data: ${JSON.stringify(o)}\n\n`).concat(["data: [DONE]\n\n"]);
const chunk = (delta, finish = null, extra = {}) => ({ id: "cmpl-1", object: "chat.completion.chunk", model: "m1", choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
const mistralReplies = {
  text: sse([chunk({ role: "assistant", content: "" }), chunk({ content: "Hel" }), chunk({ content: "lo" }), chunk({}, "stop", { usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } } })]),
  thinkingTool: sse([
    chunk({ role: "assistant", content: [{ type: "thinking", thinking: [{ type: "text", text: "think" }] }] }),
    chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text: "ing" }] }] }),
    chunk({ content: [{ type: "text", text: "ok" }] }),
    chunk({ tool_calls: [{ id: "call12345", function: { name: "read", arguments: "{\"pa" }, index: 0 }] }),
    chunk({ tool_calls: [{ id: "null", function: { name: "read", arguments: "th\":\"x\"}" }, index: 0 }] }),
    chunk({}, "tool_calls", { usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } }),
  ]),
  modelLength: sse([chunk({ content: "cut" }), chunk({}, "model_length")]),
  errorFinish: sse([chunk({ content: "x" }), chunk({}, "error")]),
  noFinish: sse([chunk({ content: "x" })]),
};

const model = (extra = {}) => ({ id: "m1", name: "m1", api: "mistral-conversations", provider: "mistral", baseUrl, reasoning: false, input: ["text"], cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096, ...extra });
const cases = [];
const add = (name, m, history, opts, r) => cases.push({ name, model: m, history, opts, reply: r });
add("mistral-text", model(), histories.hello, {}, { chunks: mistralReplies.text });
add("mistral-session-cache", model(), histories.hello, { sessionId: "sess-1" }, { chunks: mistralReplies.text });
add("mistral-cache-none", model(), histories.hello, { sessionId: "sess-1", cacheRetention: "none" }, { chunks: mistralReplies.text });
add("mistral-tools-thinking", model({ reasoning: true }), histories.crossAnthropic, { reasoning: "high" }, { chunks: mistralReplies.thinkingTool });
add("mistral-vision", model({ input: ["text", "image"] }), histories.crossAnthropic, { temperature: 0.3, maxTokens: 99 }, { chunks: mistralReplies.text });
add("mistral-effort-map", model({ reasoning: true, thinkingLevelMap: { off: "none", high: "high", medium: null } }), histories.sameModel, { reasoning: "medium" }, { chunks: mistralReplies.text });
add("mistral-effort-off", model({ reasoning: true, thinkingLevelMap: { off: "none" } }), histories.sameModel, {}, { chunks: mistralReplies.text });
add("mistral-strict", model({ compat: { supportsStrictMode: true }, headers: { "X-Extra": "1" } }), histories.sameModel, {}, { chunks: mistralReplies.text });
add("mistral-model-length", model(), histories.hello, {}, { chunks: mistralReplies.modelLength });
add("mistral-error-finish", model(), histories.hello, {}, { chunks: mistralReplies.errorFinish });
add("mistral-no-finish", model(), histories.hello, {}, { chunks: mistralReplies.noFinish });
add("mistral-429", model(), histories.hello, {}, { status: 429, body: "{\"message\":\"Rate limit exceeded\"}" });
add("mistral-500", model(), histories.hello, {}, { status: 500, body: "" });
add("mistral-dropped", model(), histories.hello, {}, { chunks: [mistralReplies.text[1]], drop: true });

// Azure OpenAI Responses: the Responses stream of openai-responses behind Azure's URL and key.
const rsse = (events) => events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
const azureReplies = {
  text: rsse([
    { type: "response.created", response: { id: "resp_1", status: "in_progress" } },
    { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", content: [] } },
    { type: "response.content_part.added", output_index: 0, item_id: "msg_1", content_index: 0, part: { type: "output_text", text: "" } },
    { type: "response.output_text.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta: "Hi" },
    { type: "response.output_text.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta: " there" },
    { type: "response.output_item.done", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: "Hi there" }] } },
    { type: "response.completed", response: { id: "resp_1", status: "completed", usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12, input_tokens_details: { cached_tokens: 3 } } } },
  ]),
};
const azure = (extra = {}) => ({ id: "gpt-x", name: "gpt-x", api: "azure-openai-responses", provider: "azure", baseUrl, reasoning: false, input: ["text"], cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096, ...extra });
add("azure-text", azure(), histories.hello, {}, { chunks: azureReplies.text });
add("azure-session-reasoning", azure({ reasoning: true }), histories.crossAnthropic, { sessionId: "sess-1", reasoning: "high" }, { chunks: azureReplies.text });
add("azure-reasoning-off", azure({ reasoning: true, input: ["text", "image"] }), histories.crossAnthropic, {}, { chunks: azureReplies.text });
add("azure-cache-none", azure({ compat: { supportsStrictMode: false } }), histories.hello, { sessionId: "sess-2", cacheRetention: "none", maxTokens: 5, temperature: 0.5 }, { chunks: azureReplies.text });
add("azure-cache-long", azure(), histories.hello, { sessionId: "sess-3", cacheRetention: "long" }, { chunks: azureReplies.text });
add("azure-429", azure(), histories.hello, {}, { status: 429, body: "{\"error\":{\"message\":\"Rate limit\"}}" });
add("azure-500", azure(), histories.hello, {}, { status: 500, body: "" });

// OpenAI Codex (ChatGPT sign-in): the Responses stream at `<base>/codex/responses`, over SSE.
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
const codexToken = `${b64({ alg: "none" })}.${b64({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-42" } })}.sig`;
const codex = (extra = {}) => ({ id: "gpt-c", name: "gpt-c", api: "openai-codex-responses", provider: "openai-codex", baseUrl, reasoning: true, input: ["text", "image"], cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 }, contextWindow: 272000, maxTokens: 128000, ...extra });
const codexOpts = (extra = {}) => ({ apiKey: codexToken, transport: "sse", ...extra });
add("codex-text", codex(), histories.hello, codexOpts({ sessionId: "sess-c1" }), { chunks: azureReplies.text });
add("codex-tools-reasoning", codex(), histories.crossAnthropic, codexOpts({ sessionId: "sess-c2", reasoning: "high", temperature: 0.3 }), { chunks: azureReplies.text });
add("codex-cache-none", codex({ reasoning: false }), histories.hello, codexOpts({ sessionId: "sess-c3", cacheRetention: "none", maxTokens: 5 }), { chunks: azureReplies.text });
add("codex-base-with-codex", codex({ baseUrl: `${baseUrl}/backend-api/codex` }), histories.hello, codexOpts({}), { chunks: azureReplies.text });
add("codex-429", codex(), histories.hello, codexOpts({}), { status: 429, body: "{\"error\":{\"message\":\"Rate limit\"}}" });

// Google Vertex AI with an API key (express mode) at a custom base URL: Gemini's body and stream.
const gsse = (objects) => objects.map((o) => `data: ${JSON.stringify(o)}\r\n\r\n`);
const vertexReplies = {
  text: gsse([
    { candidates: [{ content: { parts: [{ text: "Hel" }], role: "model" } }], responseId: "r-1" },
    { candidates: [{ content: { parts: [{ text: "lo" }], role: "model" }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 }, responseId: "r-1" },
  ]),
};
const vertex = (extra = {}) => ({ id: "gemini-x", name: "gemini-x", api: "google-vertex", provider: "google-vertex", baseUrl, reasoning: false, input: ["text"], cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096, ...extra });
add("vertex-text", vertex(), histories.hello, {}, { chunks: vertexReplies.text });
add("vertex-versioned-base", vertex({ baseUrl: `${baseUrl}/v1beta1` }), histories.crossAnthropic, { temperature: 0.2 }, { chunks: vertexReplies.text });
add("vertex-429", vertex(), histories.hello, {}, { status: 429, body: "{\"error\":{\"code\":429,\"message\":\"Quota\",\"status\":\"RESOURCE_EXHAUSTED\"}}" });

// pi-messages (the Radius gateway's protocol): pi's own context out, pi's own events back.
const pusage = { input: 5, output: 3, cacheRead: 1, cacheWrite: 0, totalTokens: 9, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 } };
const piReplies = {
  tools: sse([
    { type: "start" },
    { type: "thinking_start", contentIndex: 0 },
    { type: "thinking_delta", contentIndex: 0, delta: "hmm" },
    { type: "thinking_end", contentIndex: 0, content: "hmm", contentSignature: "sig-1" },
    { type: "text_start", contentIndex: 1 },
    { type: "text_delta", contentIndex: 1, delta: "Reading" },
    { type: "text_end", contentIndex: 1, content: "Reading", contentSignature: "t-sig" },
    { type: "toolcall_start", contentIndex: 2, id: "call_1", toolName: "read" },
    { type: "toolcall_delta", contentIndex: 2, delta: "{\"path\":" },
    { type: "toolcall_delta", contentIndex: 2, delta: "\"x\"}" },
    { type: "toolcall_end", contentIndex: 2, toolCall: { type: "toolCall", id: "call_1", name: "read", arguments: { path: "x" } } },
    { type: "done", reason: "toolUse", usage: pusage, responseId: "resp-9", responseModel: "real-model" },
  ]).slice(0, -1),
  error: sse([{ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "par" }, { type: "error", reason: "error", usage: pusage, errorMessage: "upstream failed" }]),
  badIndex: sse([{ type: "start" }, { type: "text_delta", contentIndex: 3, delta: "x" }]),
  noEnd: sse([{ type: "start" }, { type: "text_start", contentIndex: 0 }]).slice(0, -1),
};
const pim = (extra = {}) => ({ id: "balanced", name: "Balanced", api: "pi-messages", provider: "radius", baseUrl, reasoning: true, input: ["text", "image"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 32000, ...extra });
add("pi-messages-tools", pim(), histories.crossAnthropic, { reasoning: "high", sessionId: "s-7", temperature: 0.4, maxTokens: 1000 }, { chunks: piReplies.tools });
add("pi-messages-error-event", pim(), histories.hello, { cacheRetention: "long" }, { chunks: piReplies.error });
add("pi-messages-bad-index", pim(), histories.hello, {}, { chunks: piReplies.badIndex });
add("pi-messages-no-terminal", pim(), histories.hello, {}, { chunks: piReplies.noEnd });
add("pi-messages-429", pim(), histories.hello, {}, { status: 429, body: "{\"error\":{\"message\":\"slow down\",\"code\":\"rate_limited\"}}" });
add("pi-messages-500", pim(), histories.hello, {}, { status: 500, body: "oops" });

const out = [];
for (const cs of cases) {
  reply = cs.reply;
  recorded = undefined;
  const context = { systemPrompt: "sys", messages: cs.history, tools };
  const s = streamSimple(cs.model, context, { apiKey: "k", maxRetries: 0, ...cs.opts });
  const events = [];
  for await (const e of s) {
    const p = { type: e.type };
    if (e.contentIndex !== undefined) p.contentIndex = e.contentIndex;
    if (e.delta !== undefined) p.delta = e.delta;
    events.push(p);
  }
  const message = await s.result();
  // The base URL is the server's; a path after it is kept as `basePath`.
  const { baseUrl: modelBase, ...modelOut } = cs.model;
  if (modelBase !== baseUrl) modelOut.basePath = modelBase.slice(baseUrl.length);
  out.push({ name: cs.name, model: modelOut, context, options: cs.opts, reply: cs.reply, request: recorded, events, message });
}
server.close();
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 1) + "\n");
console.log(out.length, "cases");
