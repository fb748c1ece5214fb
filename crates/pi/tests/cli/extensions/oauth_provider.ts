// A provider registered with an `oauth` block (pi 1.6's login / refreshToken / getApiKey): a
// stored login whose access token expired is refreshed before the request, and the request
// carries the key `getApiKey` derives; `/keys` asks ctx.modelRegistry for the provider's auth.
// The calls go, one line each, to OAUTH_LOG.
import { appendFileSync } from "node:fs";

export default function (pi: any) {
	const log = (line: string) => appendFileSync(process.env.OAUTH_LOG ?? "oauth.log", `${line}\n`);
	pi.registerProvider("oauth-prov", {
		baseUrl: process.env.OAUTH_BASE_URL ?? "http://127.0.0.1:9/v1",
		api: "openai-completions",
		models: [
			{ id: "om", name: "OAuth Model", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 1000 },
		],
		oauth: {
			name: "OAuth Test",
			login: async () => ({ refresh: "r-login", access: "a-login", expires: Date.now() + 3_600_000 }),
			refreshToken: async (credentials: any) => {
				log(`refresh ${credentials.refresh} ${credentials.access}`);
				return { ...credentials, refresh: "r2", access: "a-fresh", expires: Date.now() + 3_600_000 };
			},
			getApiKey: (credentials: any) => {
				log(`getApiKey ${credentials.access}`);
				return `key-${credentials.access}`;
			},
		},
	});
	pi.registerCommand("keys", {
		handler: async (_args: string, ctx: any) => {
			const r = ctx.modelRegistry;
			const model = r.find("oauth-prov", "om");
			log(`request auth ${JSON.stringify(await r.getApiKeyAndHeaders(model))}`);
			log(`provider key ${await r.getApiKeyForProvider("oauth-prov")}`);
			log(`provider auth ${JSON.stringify(await r.getProviderAuth("oauth-prov"))}`);
			log(`oauth ${r.isUsingOAuth(model)} status ${JSON.stringify(r.getProviderAuthStatus("oauth-prov"))}`);
		},
	});
}
