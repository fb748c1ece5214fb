import { pathToFileURL } from "node:url";
import fs from "node:fs";

// Two Codex requests of one session with the reference pi 1.6's own pi-ai (`streamSimple`), the
// second continuing the first (a tool call, then its result), against a server the caller runs:
// `tests/codex_websocket.rs` starts the mock, runs this, runs the same requests through our
// provider against a second mock, and compares what both mocks recorded.
// Usage: PI_REFERENCE_DIR=<reference install> node codex-websocket.mjs <baseUrl> <transport> <out.json>
const [baseUrl, transport, out] = process.argv.slice(2);
if (!process.env.PI_REFERENCE_DIR || !out) {
  console.error("usage: PI_REFERENCE_DIR=<dir> node codex-websocket.mjs <baseUrl> <transport> <out.json>");
  process.exit(2);
}
const piAi = `${process.env.PI_REFERENCE_DIR}/node_modules/@earendil-works/pi-ai/dist/compat.js`;
const { streamSimple } = await import(pathToFileURL(piAi).href);

const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
const token = `${b64({ alg: "none" })}.${b64({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-ws" } })}.sig`;
const model = {
  id: "gpt-c", name: "gpt-c", api: "openai-codex-responses", provider: "openai-codex", baseUrl,
  reasoning: true, input: ["text", "image"], cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 },
  contextWindow: 272000, maxTokens: 128000,
};
const tools = [{ name: "read", description: "Read", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
const options = { apiKey: token, sessionId: "sess-ws", transport, reasoning: "high" };

async function run(messages) {
  const stream = streamSimple(model, { systemPrompt: "sys", messages, tools }, options);
  let final;
  for await (const event of stream) {
    if (event.type === "done") final = event.message;
    if (event.type === "error") final = event.error;
  }
  return final;
}

const messages = [{ role: "user", content: "read a", timestamp: 1 }];
const first = await run(messages);
messages.push(first);
for (const block of first.content) {
  if (block.type === "toolCall") {
    messages.push({ role: "toolResult", toolCallId: block.id, toolName: block.name, content: [{ type: "text", text: "file" }], isError: false, timestamp: 2 });
  }
}
const second = await run(messages);
// What a session's dispose does: its cached socket is closed.
const resources = `${process.env.PI_REFERENCE_DIR}/node_modules/@earendil-works/pi-ai/dist/session-resources.js`;
const { cleanupSessionResources } = await import(pathToFileURL(resources).href);
cleanupSessionResources("sess-ws");
await new Promise((resolve) => setTimeout(resolve, 300));
fs.writeFileSync(out, JSON.stringify({ first, second }, null, 1));
process.exit(0);
