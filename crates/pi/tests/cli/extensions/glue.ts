// A test extension for the CLI: a tool the model calls, a tool_call guard on bash, an input
// rewrite and a system prompt addition.
import { Type } from "typebox";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "shout",
		label: "Shout",
		description: "Repeat the text in upper case",
		parameters: Type.Object({ text: Type.String() }),
		async execute(_id, params) {
			return { content: [{ type: "text", text: `SHOUTED ${params.text.toUpperCase()}` }], details: {} };
		},
	});
	pi.on("tool_call", (event) => {
		if (event.toolName === "bash") return { block: true, reason: "bash is off in this project" };
		return undefined;
	});
	pi.on("input", (event) => {
		if (event.text.startsWith("rewrite:")) return { action: "transform", text: `rewritten ${event.text.slice(8)}` };
		return { action: "continue" };
	});
	pi.on("before_agent_start", (event) => {
		return { systemPrompt: `${event.systemPrompt}\nGLUE-RULE: answer briefly.` };
	});
}
