// ctx.modelRegistry beyond the listing: auth for a model and a provider, refresh, find.
import fs from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("session_start", async (_event, ctx) => {
		const registry = ctx.modelRegistry;
		const model = ctx.model;
		const auth = await registry.getApiKeyAndHeaders(model);
		const key = await registry.getApiKeyForProvider("mock-openai");
		const refreshed = await registry.refresh();
		const lines = [
			`model ${model?.provider}/${model?.id}`,
			`auth ok=${auth.ok} key=${auth.ok ? auth.apiKey : auth.error}`,
			`provider key ${key}`,
			`refresh ${typeof refreshed}`,
			`find ${registry.find("mock-openai", "mock-model")?.name}`,
			`missing ${registry.find("mock-openai", "nope")}`,
			`configured ${registry.hasConfiguredAuth(model)}`,
			`available ${registry.getAvailable().some((m) => m.id === model?.id)}`,
		];
		fs.writeFileSync(process.env.REGISTRY_LOG ?? "registry.log", lines.join("\n") + "\n");
	});
}
