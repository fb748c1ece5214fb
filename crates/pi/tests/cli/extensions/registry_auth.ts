// `ctx.modelRegistry` after a key is stored: `/key` lists whether `mock-locked` (no key yet)
// is available, writes its key into auth.json, lists again, asks the registry to read its
// files again (`refresh()`) and lists a third time; `/look` lists once more (a later command).
// One line per listing goes to AUTH_LOG.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export default function (pi: any) {
	const listing = (ctx: any, label: string) => {
		const registry = ctx.modelRegistry;
		const available = registry.getAvailable().some((m: any) => m.provider === "mock-locked");
		const status = registry.getProviderAuthStatus?.("mock-locked");
		appendFileSync(process.env.AUTH_LOG!, `${label} available=${available} auth=${JSON.stringify(status)}\n`);
	};
	pi.registerCommand("key", {
		handler: async (_args: string, ctx: any) => {
			listing(ctx, "before");
			const path = join(process.env.PI_CODING_AGENT_DIR!, "auth.json");
			let stored: any = {};
			try {
				stored = JSON.parse(readFileSync(path, "utf8"));
			} catch {}
			stored["mock-locked"] = { type: "api_key", key: "stored-key" };
			writeFileSync(path, JSON.stringify(stored, null, 2));
			listing(ctx, "written");
			if (process.env.AUTH_NO_REFRESH) return;
			await ctx.modelRegistry.refresh();
			listing(ctx, "refreshed");
		},
	});
	pi.registerCommand("look", {
		handler: async (_args: string, ctx: any) => listing(ctx, "later"),
	});
}
