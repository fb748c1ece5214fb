// ctx.modelRegistry as pi 1.6 has it, from the `/registry` command: the providers registered
// (pi's own `llama.cpp` after the extensions'), every model known against those usable now,
// OAuth, a provider's auth, `stream` (events and result), and `complete` / `stream` aborted
// before and during the request. One line each to the file in REGISTRY_LOG; the aborted
// request in the middle writes `cut` and then keeps pi alive a moment (CUT_HOLD_MS) so the
// test can see whether pi stopped its request.
import fs from "node:fs";

export default function (pi: any) {
	pi.registerProvider("probe-prov", {
		baseUrl: "http://127.0.0.1:9/v1",
		api: "openai-completions",
		apiKey: "sk-probe",
		models: [{ id: "pm", name: "PM", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }],
	});
	const log = (line: string) => fs.appendFileSync(process.env.REGISTRY_LOG ?? "registry.log", `${line}\n`);
	const user = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }] });
	// Consecutive repeats folded: the number of deltas is the provider's chunking.
	const fold = (types: string[]) => types.filter((t, i) => t !== types[i - 1]).join(",");
	const text = (m: any) => m.content.filter((c: any) => c.type === "text").map((c: any) => c.text).join("");

	pi.registerCommand("registry", {
		handler: async (_args: string, ctx: any) => {
			const r = ctx.modelRegistry;
			log(`ids ${JSON.stringify(r.getRegisteredProviderIds())}`);
			const all = r.getAll();
			const available = r.getAvailable();
			const listed = (list: any[], provider: string) => list.some((m) => m.provider === provider);
			log(`all>available ${all.length > available.length} builtins listed=${listed(all, "anthropic")}`);
			log(`available providers ${[...new Set(available.map((m: any) => m.provider))].join(",")}`);
			log(`locked listed=${listed(all, "mock-locked")} available=${listed(available, "mock-locked")} find=${r.find("mock-locked", "mock-model")?.name}`);
			log(`oauth ${r.isUsingOAuth(ctx.model)}`);
			const status = ["mock-openai", "mock-locked", "probe-prov", "no-such-provider"].map((p) => r.getProviderAuthStatus(p));
			log(`status ${JSON.stringify(status)} configured=${r.hasConfiguredAuth({ provider: "mock-locked" })}`);
			log(`auth ${JSON.stringify(await r.getProviderAuth("mock-openai"))}`);
			log(`auth extension ${JSON.stringify(await r.getProviderAuth("probe-prov"))}`);
			log(`auth unknown ${JSON.stringify(await r.getProviderAuth("no-such-provider"))}`);

			const stream = r.stream(ctx.model, user("ping"), { maxTokens: 64 });
			const types: string[] = [];
			let partial = "";
			for await (const event of stream) {
				types.push(event.type);
				if (event.type === "text_delta") partial = text(event.partial);
			}
			const result = await stream.result();
			log(`stream ${fold(types)} partial=${partial} result=${result.stopReason} ${text(result)}`);

			const before = new AbortController();
			before.abort();
			const early = await r.complete(ctx.model, user("slow"), { signal: before.signal });
			log(`aborted before ${early.stopReason} ${early.errorMessage} content=${early.content.length}`);

			const during = new AbortController();
			const slow = r.stream(ctx.model, user("slow"), { signal: during.signal });
			const seen: string[] = [];
			for await (const event of slow) {
				seen.push(event.type);
				if (seen.length === 5) during.abort();
			}
			const cutStream = await slow.result();
			log(`stream aborted ${fold(seen.slice(-1))} ${cutStream.stopReason} text=${text(cutStream).length > 0}`);

			const middle = new AbortController();
			setTimeout(() => middle.abort(), 300);
			const cut = await r.complete(ctx.model, user("slow"), { signal: middle.signal });
			log(`cut ${cut.stopReason} ${cut.errorMessage} text=${text(cut).length > 0} keys=${Object.keys(cut).sort().join(",")}`);
			await new Promise((resolve) => setTimeout(resolve, Number(process.env.CUT_HOLD_MS ?? 0)));
			log("done");
		},
	});
}
