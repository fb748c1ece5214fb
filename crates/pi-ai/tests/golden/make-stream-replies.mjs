import http from "node:http";
import fs from "node:fs";
import { pathToFileURL } from "node:url";

// The reference pi's pi-ai: PI_REFERENCE_DIR is its install folder (scripts/test-deps sets it
// up; .ci/run exports it). 1.6 keeps the old streamSimple entry point under `compat`.
if (!process.env.PI_REFERENCE_DIR) {
  console.error("PI_REFERENCE_DIR must name the reference pi install (see scripts/test-deps)");
  process.exit(2);
}
const piAi = `${process.env.PI_REFERENCE_DIR}/node_modules/@earendil-works/pi-ai/dist/compat.js`;
const { streamSimple } = await import(pathToFileURL(piAi).href);

const cc = (delta, finish=null, extra={}) => `data: ${JSON.stringify({id:"chatcmpl-9",object:"chat.completion.chunk",model:"m1",choices:[{index:0,delta,finish_reason:finish}], ...extra})}\n\n`;
const ccRaw = (o) => `data: ${JSON.stringify(o)}\n\n`;
const DONE = "data: [DONE]\n\n";
const usage = (p,c,cached=0,write=0) => ccRaw({id:"chatcmpl-9",choices:[],usage:{prompt_tokens:p,completion_tokens:c,total_tokens:p+c,prompt_tokens_details:{cached_tokens:cached, cache_write_tokens:write}}});
const ev = (type, o={}) => `event: ${type}\ndata: ${JSON.stringify({type, ...o})}\n\n`;
const completed = (status="completed", extra={}) => ev("response.completed",{response:{id:"resp_9",status,usage:{input_tokens:50,output_tokens:10,total_tokens:60,input_tokens_details:{cached_tokens:20}}, ...extra}});
const msgItem = (id, text, phase) => ({type:"message",id,role:"assistant",status:"completed",content:[{type:"output_text",text,annotations:[]}], ...(phase?{phase}:{})});

const cases = [
 ["cc-text-usage","openai-completions",[cc({role:"assistant",content:"Hi"}),cc({content:" there"}),cc({},"stop"),usage(100,7,40,10),DONE]],
 ["cc-reasoning-tools","openai-completions",[cc({reasoning_content:"think "}),cc({reasoning_content:"more"}),cc({content:"Doing"}),
   cc({tool_calls:[{index:0,id:"c1",type:"function",function:{name:"read",arguments:""}}]}),
   cc({tool_calls:[{index:1,id:"c2",type:"function",function:{name:"bash",arguments:"{\"command\":"}}]}),
   cc({tool_calls:[{index:0,function:{arguments:"{\"path\":\"x\"}"}}]}),
   cc({tool_calls:[{index:1,function:{arguments:"\"ls\"}"}}]}),
   cc({content:" and more text"}),
   cc({},"tool_calls"),usage(10,5),DONE]],
 ["cc-reasoning-field","openai-completions",[cc({reasoning:"r1",reasoning_content:""}),cc({reasoning:"r2",reasoning_content:"dup"}),cc({content:"A"}),cc({},"stop"),DONE]],
 ["cc-content-filter","openai-completions",[cc({content:"bad"}),cc({},"content_filter"),usage(3,1),DONE]],
 ["cc-length","openai-completions",[cc({content:"long"}),cc({},"length"),DONE]],
 ["cc-choice-usage","openai-completions",[cc({content:"x"}),ccRaw({id:"chatcmpl-9",choices:[{index:0,delta:{},finish_reason:"stop",usage:{prompt_tokens:9,completion_tokens:2,prompt_cache_hit_tokens:4}}]}),DONE]],
 ["cc-reasoning-details","openai-completions",[cc({tool_calls:[{index:0,id:"tc_1",type:"function",function:{name:"read",arguments:"{}"}}]}),cc({reasoning_details:[{type:"reasoning.encrypted",id:"tc_1",data:"ENC",format:"x"}]}),cc({},"tool_calls"),DONE]],
 ["cc-no-index","openai-completions",[cc({tool_calls:[{id:"a1",type:"function",function:{name:"read",arguments:"{\"pa"}}]}),cc({tool_calls:[{id:"a1",function:{arguments:"th\":1}"}}]}),cc({},"tool_calls"),DONE]],
 ["cc-response-model","openai-completions",[ccRaw({id:"chatcmpl-7",model:"real-model-2",choices:[{index:0,delta:{content:"hey"},finish_reason:"stop"}]}),DONE]],
 ["cc-unknown-finish","openai-completions",[cc({content:"x"}),cc({},"weird_reason"),DONE]],
 ["cc-error-chunk","openai-completions",[cc({content:"x"}),ccRaw({error:{message:{detail:"structured"},code:500}})]],
 ["rs-full","openai-responses",[ev("response.created",{response:{id:"resp_9"}}),
   ev("response.output_item.added",{item:{type:"reasoning",id:"rs_9",summary:[]}}),
   ev("response.reasoning_summary_part.added",{part:{type:"summary_text",text:""}}),
   ev("response.reasoning_summary_text.delta",{delta:"First"}),
   ev("response.reasoning_summary_part.done",{part:{type:"summary_text",text:"First"}}),
   ev("response.reasoning_summary_part.added",{part:{type:"summary_text",text:""}}),
   ev("response.reasoning_summary_text.delta",{delta:"Second"}),
   ev("response.reasoning_summary_part.done",{part:{type:"summary_text",text:"Second"}}),
   ev("response.output_item.done",{item:{type:"reasoning",id:"rs_9",summary:[{type:"summary_text",text:"First"},{type:"summary_text",text:"Second"}],encrypted_content:"gAAA"}}),
   ev("response.output_item.added",{item:{type:"message",id:"msg_9",role:"assistant",content:[]}}),
   ev("response.content_part.added",{part:{type:"output_text",text:""}}),
   ev("response.output_text.delta",{delta:"Ans"}),
   ev("response.output_text.delta",{delta:"wer"}),
   ev("response.output_item.done",{item:msgItem("msg_9","Answer","final_answer")}),
   ev("response.output_item.added",{item:{type:"function_call",id:"fc_9",call_id:"call_9",name:"read",arguments:""}}),
   ev("response.function_call_arguments.delta",{delta:"{\"path\""}),
   ev("response.function_call_arguments.done",{arguments:"{\"path\":\"z\"}"}),
   ev("response.output_item.done",{item:{type:"function_call",id:"fc_9",call_id:"call_9",name:"read",arguments:"{\"path\":\"z\"}"}}),
   completed()]],
 ["rs-refusal","openai-responses",[ev("response.output_item.added",{item:{type:"message",id:"msg_r",content:[]}}),ev("response.content_part.added",{part:{type:"refusal",refusal:""}}),ev("response.refusal.delta",{delta:"No."}),
   ev("response.output_item.done",{item:{type:"message",id:"msg_r",content:[{type:"refusal",refusal:"No."}]}}),completed()]],
 ["rs-failed","openai-responses",[ev("response.created",{response:{id:"resp_f"}}),ev("response.failed",{response:{id:"resp_f",status:"failed",error:{code:"server_error",message:"It broke"}}})]],
 ["rs-failed-incomplete","openai-responses",[ev("response.failed",{response:{status:"failed",incomplete_details:{reason:"max_output_tokens"}}})]],
 ["rs-failed-empty","openai-responses",[ev("response.failed",{response:{status:"failed"}})]],
 ["rs-incomplete","openai-responses",[ev("response.output_item.added",{item:{type:"message",id:"m",content:[]}}),ev("response.content_part.added",{part:{type:"output_text",text:""}}),ev("response.output_text.delta",{delta:"cut"}),completed("incomplete")]],
 ["rs-args-at-done","openai-responses",[ev("response.output_item.added",{item:{type:"function_call",id:"fc_1",call_id:"c_1",name:"bash"}}),ev("response.output_item.done",{item:{type:"function_call",id:"fc_1",call_id:"c_1",name:"bash",arguments:"{\"command\":\"pwd\"}"}}),completed()]],
 ["rs-reasoning-text","openai-responses",[ev("response.output_item.added",{item:{type:"reasoning",id:"rs_t"}}),ev("response.reasoning_text.delta",{delta:"raw "}),ev("response.reasoning_text.delta",{delta:"thoughts"}),
   ev("response.output_item.done",{item:{type:"reasoning",id:"rs_t",summary:[],content:[{type:"reasoning_text",text:"raw thoughts"}]}}),completed()]],
 ["rs-error-nocode","openai-responses",[ev("response.output_item.added",{item:{type:"message",id:"m",content:[]}}),ev("error",{message:"bad"})]],
 ["rs-flex","openai-responses",[ev("response.output_item.added",{item:{type:"message",id:"m",content:[]}}),ev("response.content_part.added",{part:{type:"output_text",text:""}}),ev("response.output_text.delta",{delta:"x"}),ev("response.output_item.done",{item:msgItem("m","x")}),completed("completed",{service_tier:"flex"})]],
 ["rs-cancelled","openai-responses",[completed("cancelled")]],
];

let current;
const server = http.createServer((req,res)=>{ req.on("data",()=>{}); req.on("end",()=>{ res.writeHead(200,{"content-type":"text/event-stream"}); for (const c of current) res.write(c); res.end(); }); });
await new Promise(r=>server.listen(0,"127.0.0.1",r));
const port = server.address().port;
const out = [];
for (const [name, api, sse] of cases) {
  current = sse;
  const model = {id:"m1",name:"m1",api,provider:"mock",baseUrl:`http://127.0.0.1:${port}/v1`,reasoning:false,input:["text"],cost:{input:3,output:15,cacheRead:0.3,cacheWrite:3.75},contextWindow:1000,maxTokens:100};
  const s = streamSimple(model, {messages:[{role:"user",content:"hi",timestamp:1}]}, {apiKey:"k", maxRetries:0});
  const events = [];
  for await (const e of s) {
    const p = {type:e.type};
    if (e.contentIndex !== undefined) p.contentIndex = e.contentIndex;
    if (e.delta !== undefined) p.delta = e.delta;
    events.push(p);
  }
  const msg = await s.result();
  const m = JSON.parse(JSON.stringify(msg)); delete m.timestamp;
  out.push({name, api, model, sse, events, message: m});
}
server.close();
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 1));
console.log(out.length);
