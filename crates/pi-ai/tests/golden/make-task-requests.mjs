import http from "node:http";
import fs from "node:fs";
import { pathToFileURL } from "node:url";

// What the reference pi 1.6 sends, and makes of the reply, for its image and classifier APIs:
// `openrouter-images` (generateImages), `typesafe-system-one`, `cloudflare-workers-ai-system-one`
// and `openai-decisions` (classify). Each case calls 1.6's own API function against a local
// server that records the request and answers with the case's JSON reply.
// Usage: PI_REFERENCE_DIR=<reference install> node make-task-requests.mjs out.json
if (!process.env.PI_REFERENCE_DIR) {
  console.error("PI_REFERENCE_DIR must name the reference pi install (see scripts/test-deps)");
  process.exit(2);
}
const api = (name) => import(pathToFileURL(`${process.env.PI_REFERENCE_DIR}/node_modules/@earendil-works/pi-ai/dist/api/${name}.js`).href);
const { generateImages } = await api("openrouter-images");
const typesafe = (await api("typesafe-system-one")).classify;
const cloudflare = (await api("cloudflare-workers-ai-system-one")).classify;
const decisions = (await api("openai-decisions")).classify;

let replies = [];
let recorded = [];
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    recorded.push({ method: req.method, path: req.url, headers: req.headers, body: body ? JSON.parse(body) : null });
    const reply = replies.shift() ?? { status: 500, body: "{}" };
    res.writeHead(reply.status, { "content-type": "application/json" });
    res.end(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;

const png = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" };
const jpeg = { type: "image", data: "/9j/4AAQ", mimeType: "image/jpeg" };
const gif = { type: "image", data: "R0lGODlh", mimeType: "image/gif" };
const cost = { input: 0.5, output: 2, cacheRead: 0.05, cacheWrite: 0 };
const imageModel = (extra = {}) => ({ type: "image", id: "img/one", name: "Img", api: "openrouter-images", provider: "openrouter", baseUrl: `${baseUrl}/api/v1`, input: ["text", "image"], output: ["image"], cost, ...extra });
const systemOne = (extra = {}) => ({ type: "classifier", id: "jev-latest", name: "Jev", api: "typesafe-system-one", provider: "typesafe", baseUrl: `${baseUrl}/v1/`, input: ["text", "image"], cost: { input: 0.042, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 64000, ...extra });
const workers = (extra = {}) => ({ type: "classifier", id: "@cf/cloudflare/clef", name: "Clef", api: "cloudflare-workers-ai-system-one", provider: "cloudflare-workers-ai", baseUrl: `${baseUrl}/client/v4/accounts/acc/ai`, input: ["text", "image"], cost: { input: 0.24, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 65536, ...extra });
const decisionModel = (extra = {}) => ({ type: "classifier", id: "gpt-6-luna", name: "Luna", api: "openai-decisions", provider: "openai", baseUrl: `${baseUrl}/v1`, input: ["text", "image"], cost: { input: 0.1, output: 0, cacheRead: 0, cacheWrite: 0, tiers: [{ inputTokensAbove: 272000, input: 0.2, output: 0, cacheRead: 0, cacheWrite: 0 }] }, contextWindow: 922000, ...extra });

const questions = {
  mood: { type: "choice", instructions: "How does the writer feel?", criteria: { happy: "glad about it", sad: "", angry: "upset" } },
  urgency: { type: "score", instructions: "How urgent is it?", criteria: ["not", "somewhat", "very"] },
  spam: { type: "bool", instructions: "Is it spam?", criteria: { true: "an advert", false: "a real message" } },
};
const state = { message: "The build broke again", thread: ["a", "b"] };
const systemOneAnswers = {
  answers: {
    mood: { type: "choice", choice: "sad", probabilities: { happy: 0.1, sad: 0.7, angry: 0.2 }, confidence: 0.8 },
    urgency: { type: "score", score: 1.5, confidence: 0.6 },
    spam: { type: "noul", noul: 0.02 },
  },
  usage: { input_tokens: 120, output_tokens: 3 },
};
const decisionAnswers = {
  answers: [
    { name: "mood", type: "choice", choice: "sad", probabilities: [{ value: "happy", probability: 0.1 }, { value: "sad", probability: 0.9 }], confidence: 0.9 },
    { name: "urgency", type: "score", score: 2, confidence: 0.5 },
    { name: "spam", type: "predicate", probability: 0.01 },
  ],
  usage: { input_tokens: 300000, output_tokens: 0 },
};

const cases = [];
const add = (name, fn, model, context, opts, replyList) => cases.push({ name, fn, model, context, opts, replies: replyList });
const ok = (body) => ({ status: 200, body });
const imageReply = {
  id: "gen-1",
  choices: [{ message: { role: "assistant", content: "Here it is", images: [{ type: "image_url", image_url: { url: "data:image/png;base64,QUJD" } }, { image_url: "data:image/webp;base64,REVG" }, { image_url: { url: "https://x/y.png" } }] } }],
  usage: { prompt_tokens: 40, completion_tokens: 1290, prompt_tokens_details: { cached_tokens: 10, cache_write_tokens: 4 } },
};
add("images-text", "images", imageModel(), { input: [{ type: "text", text: "a red fox" }] }, {}, [ok(imageReply)]);
add("images-reference-and-text-output", "images", imageModel({ output: ["image", "text"], headers: { "X-Custom": "1" } }), { input: [{ type: "text", text: "like this" }, png] }, { headers: { "X-Caller": "2" } }, [ok({ id: "gen-2", choices: [{ message: { content: "" } }] })]);
add("images-429", "images", imageModel(), { input: [{ type: "text", text: "x" }] }, {}, [{ status: 429, body: { error: { message: "Rate limited", code: 429 } } }]);

// Image replies that are not what the API promises: cut short, without choices, a choice
// without a message, JSON null.
add("images-truncated", "images", imageModel(), { input: [{ type: "text", text: "x" }] }, {}, [ok('{"id":"gen-3","choices":[{"mess')]);
add("images-no-choices", "images", imageModel(), { input: [{ type: "text", text: "x" }] }, {}, [ok({ id: "gen-4", error: { message: "model down" }, usage: { prompt_tokens: 3 } })]);
add("images-empty-choices", "images", imageModel(), { input: [{ type: "text", text: "x" }] }, {}, [ok({ id: "gen-5", choices: [] })]);
add("images-no-message", "images", imageModel(), { input: [{ type: "text", text: "x" }] }, {}, [ok({ id: "gen-6", choices: [{ index: 0 }] })]);
add("images-null", "images", imageModel(), { input: [{ type: "text", text: "x" }] }, {}, [ok("null")]);
add("typesafe-text", "typesafe", systemOne(), { state, questions }, {}, [ok(systemOneAnswers)]);
add("typesafe-assets", "typesafe", systemOne(), { state, images: [png, jpeg], questions }, {}, [ok(systemOneAnswers)]);
add("typesafe-openrouter-images", "typesafe", systemOne({ provider: "openrouter", id: "~liquid/d1-latest" }), { state: "plain", images: [png], questions: { spam: questions.spam } }, {}, [ok({ answers: { spam: { type: "noul", noul: 0.5 } } })]);
add("typesafe-bad-image", "typesafe", systemOne(), { state, images: [gif], questions }, {}, []);
add("typesafe-no-image-input", "typesafe", systemOne({ input: ["text"] }), { state, images: [png], questions }, {}, []);
add("typesafe-missing-answer", "typesafe", systemOne(), { state, questions }, {}, [ok({ answers: { mood: systemOneAnswers.answers.mood }, usage: { input_tokens: 5 } })]);
add("typesafe-400", "typesafe", systemOne(), { state, questions }, {}, [{ status: 400, body: { error: "bad questions" } }]);
add("workers-clef-images", "cloudflare", workers(), { state, images: [png, jpeg], questions }, {}, [ok({ success: true, result: { model: "@cf/cloudflare/clef", ...systemOneAnswers } })]);
add("workers-run-record", "cloudflare", workers({ id: "typesafe/jev" }), { state, images: [png], questions }, {}, [ok({ success: true, result: { state: "Completed", result: systemOneAnswers } })]);
add("workers-failed", "cloudflare", workers(), { state, questions }, {}, [ok({ success: false, errors: [{ message: "no such model" }, { message: "try again" }] })]);
add("workers-pending", "cloudflare", workers({ id: "typesafe/jev" }), { state, questions }, {}, [ok({ success: true, result: { state: "Running" } })]);
add("decisions-text", "decisions", decisionModel(), { state, questions }, {}, [ok(decisionAnswers)]);
add("decisions-images", "decisions", decisionModel(), { state: "look", images: [png, jpeg], questions: { urgency: questions.urgency } }, {}, [ok({ answers: [decisionAnswers.answers[1]] })]);
add("decisions-refusal", "decisions", decisionModel(), { state, questions: { spam: questions.spam } }, {}, [ok({ answers: [{ name: "spam", type: "refusal" }], usage: { input_tokens: 9, output_tokens: 1 } })]);
// Replies that are not the JSON expected: cut short, not JSON, not an object.
add("typesafe-truncated", "typesafe", systemOne(), { state, questions }, {}, [ok('{"answers":{"mood":{"type":"cho')]);
add("typesafe-not-json", "typesafe", systemOne(), { state, questions }, {}, [ok("<html>busy</html>")]);
add("workers-truncated", "cloudflare", workers(), { state, questions }, {}, [ok('{"success":true,"result":{"answ')]);
add("workers-not-object", "cloudflare", workers(), { state, questions }, {}, [ok("[1,2]")]);
add("decisions-truncated", "decisions", decisionModel(), { state, questions }, {}, [ok('{"answers":[{"name":"mood"')]);
add("decisions-not-object", "decisions", decisionModel(), { state, questions }, {}, [ok("null")]);
add("decisions-504", "decisions", decisionModel(), { state, questions }, {}, [{ status: 504, body: "<html>gateway</html>" }]);

const functions = { images: generateImages, typesafe, cloudflare, decisions };
const out = [];
for (const c of cases) {
  replies = [...c.replies];
  recorded = [];
  const result = await functions[c.fn](c.model, c.context, { apiKey: "key-1", maxRetries: 0, ...c.opts });
  out.push({ name: c.name, fn: c.fn, model: c.model, context: c.context, options: c.opts, replies: c.replies, requests: recorded, result });
}
server.close();
fs.writeFileSync(process.argv[2] || "task-requests.json", JSON.stringify(out, null, 1));
console.log(`${out.length} cases`);
