// A provider that streams itself (`streamSimple`): it echoes what it was given, calls `bash`
// when asked to, and waits for the abort signal when the prompt says "wait".
import fs from "node:fs";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

function textOf(message: any): string {
	if (!message) return "";
	if (typeof message.content === "string") return message.content;
	return (message.content ?? [])
		.filter((part: any) => part.type === "text")
		.map((part: any) => part.text)
		.join("");
}

export default function (pi: ExtensionAPI) {
	pi.registerProvider("echo-llm", {
		baseUrl: "http://127.0.0.1:9",
		apiKey: "echo-key",
		api: "echo-api",
		models: [
			{
				id: "echo-1",
				name: "Echo One",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 100000,
				maxTokens: 1000,
			},
		],
		streamSimple(model: any, context: any, options: any) {
			const stream = createAssistantMessageEventStream();
			const output: any = {
				role: "assistant",
				content: [],
				api: model.api,
				provider: model.provider,
				model: model.id,
				usage: {
					input: 3,
					output: 5,
					cacheRead: 0,
					cacheWrite: 0,
					totalTokens: 8,
					cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
				},
				stopReason: "stop",
				timestamp: Date.now(),
			};
			const last = context.messages[context.messages.length - 1];
			const prompt = textOf(last);
			(async () => {
				stream.push({ type: "start", partial: output });
				if (last?.role === "user" && prompt.includes("wait")) {
					await new Promise((resolve) => options.signal?.addEventListener("abort", resolve, { once: true }));
					if (process.env.PROVIDER_LOG) fs.writeFileSync(process.env.PROVIDER_LOG, "aborted\n");
					output.stopReason = "aborted";
					output.errorMessage = "Request was aborted";
					stream.push({ type: "error", reason: "aborted", error: output });
					stream.end();
					return;
				}
				if (last?.role === "user" && prompt.includes("call")) {
					const call = { type: "toolCall", id: "call-1", name: "bash", arguments: {} as any };
					output.content.push(call);
					stream.push({ type: "toolcall_start", contentIndex: 0, partial: output });
					stream.push({ type: "toolcall_delta", contentIndex: 0, delta: '{"command":"echo from-bash"}', partial: output });
					call.arguments = { command: "echo from-bash" };
					stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: output });
					output.stopReason = "toolUse";
					stream.push({ type: "done", reason: "toolUse", message: output });
					stream.end();
					return;
				}
				const reply =
					last?.role === "toolResult"
						? `tool said: ${textOf(last).trim().split("\n").join(",")}`
						: `echo(${options.apiKey}): ${prompt} | roles=${context.messages.map((m: any) => m.role).join(",")} | keys=${Object.keys(context).join(",")}`;
				output.content.push({ type: "text", text: "" });
				stream.push({ type: "text_start", contentIndex: 0, partial: output });
				for (const piece of [reply.slice(0, 5), reply.slice(5)]) {
					output.content[0].text += piece;
					stream.push({ type: "text_delta", contentIndex: 0, delta: piece, partial: output });
				}
				stream.push({ type: "text_end", contentIndex: 0, content: output.content[0].text, partial: output });
				stream.push({ type: "done", reason: "stop", message: output });
				stream.end();
			})();
			return stream;
		},
	});
}
