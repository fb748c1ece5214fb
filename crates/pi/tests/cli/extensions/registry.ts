// ctx.modelRegistry beyond the listing: auth for a model and a provider, refresh, find,
// complete (one request, and one with an aborted signal).
import fs from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("session_start", async (_event, ctx) => {
		const registry = ctx.modelRegistry;
		const model = ctx.model;
		const auth = await registry.getApiKeyAndHeaders(model);
		const key = await registry.getApiKeyForProvider("mock-openai");
		const refreshed = await registry.refresh();
		const context = {
			systemPrompt: "Answer briefly.",
			messages: [{ role: "user", content: [{ type: "text", text: "ping" }], timestamp: Date.now() }],
		};
		const reply = await registry.complete(model, context, { maxTokens: 64 });
		const stop = new AbortController();
		stop.abort();
		const aborted = await registry.complete(model, context, { signal: stop.signal });
		const text = (m: any) => m.content.filter((c: any) => c.type === "text").map((c: any) => c.text).join("");
		const lines = [
			`model ${model?.provider}/${model?.id}`,
			`auth ok=${auth.ok} key=${auth.ok ? auth.apiKey : auth.error}`,
			`provider key ${key}`,
			`refresh ${typeof refreshed}`,
			`find ${registry.find("mock-openai", "mock-model")?.name}`,
			`missing ${registry.find("mock-openai", "nope")}`,
			`configured ${registry.hasConfiguredAuth(model)}`,
			`available ${registry.getAvailable().some((m) => m.id === model?.id)}`,
			`complete ${reply.stopReason} ${text(reply)} ${reply.role} ${reply.provider}/${reply.model}`,
			`aborted ${aborted.stopReason}`,
		];
		fs.writeFileSync(process.env.REGISTRY_LOG ?? "registry.log", lines.join("\n") + "\n");
	});
}
