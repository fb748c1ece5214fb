// `ctx.modelRegistry` after models.json changes: `/edit` lists the mock providers' models,
// renames one and widens its context window in models.json, asks the registry to read it
// again (`refresh()`) and lists them; then adds a model, refreshes and lists again. One JSON line per listing goes to
// REFRESH_LOG.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export default function (pi: any) {
	const listing = (ctx: any, label: string) => {
		const mine = (m: any) => m.provider.startsWith("mock");
		const line = (m: any) => `${m.provider}/${m.id} ${m.name} ${m.contextWindow}`;
		const registry = ctx.modelRegistry;
		const entry = {
			label,
			all: registry.getAll().filter(mine).map(line).sort(),
			available: registry.getAvailable().filter(mine).map(line).sort(),
			found: registry.find("mock-openai", "added-model")?.name ?? null,
		};
		appendFileSync(process.env.REFRESH_LOG!, `${JSON.stringify(entry)}\n`);
	};
	pi.registerCommand("edit", {
		handler: async (_args: string, ctx: any) => {
			listing(ctx, "before");
			const path = join(process.env.PI_CODING_AGENT_DIR!, "models.json");
			const config = JSON.parse(readFileSync(path, "utf8"));
			const provider = config.providers["mock-openai"];
			const first = provider.models[0];
			// Same ids, other fields: the listing must still change.
			first.name = "Renamed Model";
			first.contextWindow = 777777;
			writeFileSync(path, JSON.stringify(config, null, 2));
			await ctx.modelRegistry.refresh();
			listing(ctx, "renamed");
			provider.models.push({ ...first, id: "added-model", name: "Added Model" });
			writeFileSync(path, JSON.stringify(config, null, 2));
			await ctx.modelRegistry.refresh();
			listing(ctx, "added");
		},
	});
}
