import { pathToFileURL } from "node:url";

// The reference pi's pi-ai: PI_REFERENCE_DIR is its install folder (scripts/test-deps sets it
// up; .ci/run exports it). 1.6 keeps the old streamSimple entry point under `compat`.
if (!process.env.PI_REFERENCE_DIR) {
  console.error("PI_REFERENCE_DIR must name the reference pi install (see scripts/test-deps)");
  process.exit(2);
}
const piAi = `${process.env.PI_REFERENCE_DIR}/node_modules/@earendil-works/pi-ai/dist/compat.js`;
const { streamSimple } = await import(pathToFileURL(piAi).href);
import fs from "node:fs";

const base = (api, extra={}) => ({id:"m1",name:"m1",api,provider:"mock",baseUrl:"http://127.0.0.1:9/v1",reasoning:false,input:["text"],cost:{input:0,output:0,cacheRead:0,cacheWrite:0},contextWindow:128000,maxTokens:4096, ...extra});
const usage = {input:1,output:1,cacheRead:0,cacheWrite:0,totalTokens:2,cost:{input:0,output:0,cacheRead:0,cacheWrite:0,total:0}};
const asst = (from, content, stopReason="toolUse") => ({role:"assistant", content, api:from.api, provider:from.provider, model:from.model, usage, stopReason, timestamp:5});
const anth = {api:"anthropic-messages", provider:"anthropic", model:"claude-x"};
const oai = {api:"openai-responses", provider:"openai", model:"gpt-x"};
const img = {type:"image", data:"QUJD", mimeType:"image/png"};

const histories = {
  crossAnthropic: [
    {role:"user", content:[{type:"text",text:"hi"}, img], timestamp:1},
    asst(anth, [{type:"thinking",thinking:"deep thought",thinkingSignature:"sigA"},{type:"thinking",thinking:"[Reasoning redacted]",thinkingSignature:"opaque",redacted:true},{type:"text",text:"calling"},{type:"toolCall",id:"toolu_01/abc+x",name:"read",arguments:{path:"a"}}]),
    {role:"toolResult", toolCallId:"toolu_01/abc+x", toolName:"read", content:[{type:"text",text:"file"}, img], isError:false, timestamp:6},
    asst(anth, [{type:"text",text:"partial"}], "aborted"),
    {role:"user", content:"next", timestamp:7},
  ],
  crossResponses: [
    {role:"user", content:"go", timestamp:1},
    asst(oai, [{type:"thinking",thinking:"",thinkingSignature:"{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[]}"},{type:"text",text:"ok",textSignature:"{\"v\":1,\"id\":\"msg_abc\"}"},{type:"toolCall",id:"call_Ab1|fc_" + "x".repeat(80),name:"bash",arguments:{command:"ls"}},{type:"toolCall",id:"call_2|fc_2",name:"read",arguments:{path:"b"}}]),
    {role:"toolResult", toolCallId:"call_Ab1|fc_" + "x".repeat(80), toolName:"bash", content:[img], isError:false, timestamp:6},
    {role:"user", content:[{type:"text",text:"more"}], timestamp:7},
  ],
};
const tools = [{name:"read", description:"Read", parameters:{type:"object",properties:{path:{type:"string"}},required:["path"]}}];

const cases = [];
const add = (name, model, hist, opts={}) => cases.push({name, model, history: hist, opts});
for (const api of ["openai-completions","openai-responses"]) {
  for (const [h, msgs] of Object.entries(histories)) {
    add(`${api}-${h}-text`, base(api), msgs);
    add(`${api}-${h}-vision-reasoning`, base(api,{input:["text","image"],reasoning:true}), msgs, {reasoning:"medium"});
    add(`${api}-${h}-openai-provider`, base(api,{provider:"openai",input:["text","image"]}), msgs);
  }
}
const c = "openai-completions";
add("zai", base(c,{provider:"zai",baseUrl:"https://api.z.ai/api/coding/paas/v4",reasoning:true}), histories.crossAnthropic, {reasoning:"high"});
add("qwen-chat", base(c,{reasoning:true,compat:{thinkingFormat:"qwen-chat-template"}}), histories.crossAnthropic, {reasoning:"low"});
add("openrouter-anthropic", base(c,{provider:"openrouter",id:"anthropic/claude",baseUrl:"https://openrouter.ai/api/v1",reasoning:true,compat:{openRouterRouting:{only:["anthropic"]}}}), histories.crossAnthropic, {reasoning:"off"});
add("compat-flags", base(c,{reasoning:true,input:["text","image"],compat:{requiresToolResultName:true,requiresAssistantAfterToolResult:true,requiresThinkingAsText:true,supportsStore:false,supportsDeveloperRole:false,maxTokensField:"max_tokens",supportsStrictMode:false,supportsUsageInStreaming:false}}), histories.crossAnthropic, {reasoning:"high"});
add("same-model-thinking-as-text", base(c,{provider:"anthropic",api:c,id:"claude-x",reasoning:true,compat:{requiresThinkingAsText:true}}), histories.crossAnthropic);
add("deepseek", base(c,{provider:"deepseek",baseUrl:"https://api.deepseek.com",reasoning:true,thinkingLevelMap:{xhigh:"max"}}), histories.crossResponses, {reasoning:"xhigh"});
add("vercel", base(c,{baseUrl:"https://ai-gateway.vercel.sh/v1",compat:{vercelGatewayRouting:{only:["a"],order:["b","a"]}}}), histories.crossResponses, {temperature:1, maxTokens:77});
add("openai-cache-key", base(c,{provider:"openai",baseUrl:"https://api.openai.com/v1"}), histories.crossResponses, {sessionId:"sess-1"});
add("long-retention", base(c,{}), histories.crossResponses, {sessionId:"sess-1", cacheRetention:"long"});
add("small-window", base(c,{contextWindow:6000}), histories.crossAnthropic);
add("together", base(c,{provider:"together",baseUrl:"https://api.together.xyz/v1",reasoning:true}), histories.crossResponses, {reasoning:"low"});
add("string-thinking", base(c,{reasoning:true,compat:{thinkingFormat:"string-thinking"}}), histories.crossResponses);
add("chat-template", base(c,{reasoning:true,compat:{thinkingFormat:"chat-template",supportsThinkingTokenBudget:true,chatTemplateKwargs:{enable_thinking:{$var:"thinking.enabled"},budget:{$var:"thinking.budget",omitWhenOff:true},effort:{},fixed:3}}}), histories.crossResponses, {reasoning:"medium"});
add("strict-mode-and-priority", base(c,{compat:{supportsStrictMode:true,vllmPriority:5,requiresNonNullAssistantContent:true}}), histories.crossResponses);
add("openai-developer-role", base(c,{provider:"openai",baseUrl:"https://api.openai.com/v1",reasoning:true}), histories.crossResponses, {reasoning:"high", sessionId:"x".repeat(80)});
const r = "openai-responses";
add("resp-gpt5-off", base(r,{provider:"openai",reasoning:true,thinkingLevelMap:{off:null,xhigh:"xhigh"}}), histories.crossResponses);
add("resp-off-mapped", base(r,{reasoning:true,thinkingLevelMap:{off:"minimal"}}), histories.crossResponses, {reasoning:"off"});
add("resp-copilot-off", base(r,{provider:"github-copilot",reasoning:true}), histories.crossResponses);
add("resp-xhigh", base(r,{reasoning:true,thinkingLevelMap:{xhigh:"xhigh"}}), histories.crossResponses, {reasoning:"xhigh", sessionId:"s2", cacheRetention:"long"});
add("resp-none-retention", base(r,{}), histories.crossResponses, {sessionId:"s3", cacheRetention:"none"});
add("resp-same-model-other-id", base(r,{provider:"openai",id:"gpt-y"}), histories.crossResponses);
add("resp-no-developer-role", base(r,{reasoning:true,compat:{supportsDeveloperRole:false,supportsStrictMode:true}}), histories.crossResponses, {reasoning:"low"});
add("resp-xai", base(r,{provider:"xai",reasoning:true}), histories.crossResponses);
add("resp-explicit-cache", base(r,{compat:{supportsExplicitPromptCacheMode:true,supportsMaxOutputTokens:false}}), histories.crossResponses, {sessionId:"s4", cacheRetention:"long"});
add("resp-small-window", base(r,{contextWindow:4200}), histories.crossResponses);

const out = [];
for (const cs of cases) {
  let body;
  const ctx = {systemPrompt:"sys", messages: cs.history, tools};
  const s = streamSimple(cs.model, ctx, {apiKey:"k", maxRetries:0, ...cs.opts, onPayload:(p)=>{ body = JSON.parse(JSON.stringify(p)); return undefined; }});
  await s.result();
  out.push({name: cs.name, model: cs.model, context: ctx, options: cs.opts, body});
}
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 1));
console.log(out.length, "cases");
