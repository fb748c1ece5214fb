// Providers that extensions register (`pi.registerProvider`): the checks pi 1.6 makes, what pi
// is told about each (plain JSON: the models and how to authenticate), and running a
// provider's own `streamSimple` for pi, one `provider.event` notification per stream event.

/** The messages pi 1.6 throws for a provider config it cannot use. */
export function validateProvider(name, config) {
	if (typeof name !== "string" || name === "") throw new Error("Provider name is required");
	if (!config || typeof config !== "object") throw new Error("Provider config is required when registering by name");
	const models = Array.isArray(config.models) ? config.models : undefined;
	if (typeof config.streamSimple === "function" && !config.api) {
		throw new Error(`Provider ${name}: "api" is required when registering streamSimple.`);
	}
	if (models && models.length > 0) {
		if (!config.baseUrl) throw new Error(`Provider ${name}: "baseUrl" is required when defining custom models.`);
		if (!config.apiKey && !config.oauth) throw new Error(`Provider ${name}: no authentication method configured.`);
		for (const model of models) {
			if (!model.api && !config.api) {
				throw new Error(`Provider ${name}, model ${model.id}: no "api" specified. Set it at model level or provider level.`);
			}
			if (model.contextWindow !== undefined && !(Number(model.contextWindow) > 0)) {
				throw new Error(`Provider ${name}, model ${model.id}: invalid contextWindow`);
			}
			if (model.maxTokens !== undefined && !(Number(model.maxTokens) > 0)) {
				throw new Error(`Provider ${name}, model ${model.id}: invalid maxTokens`);
			}
		}
	}
}

/** The provider as pi's model registry reads it: models.json's shape plus what runs here. */
export function describeProvider(name, config) {
	const plain = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
	return {
		name,
		config: plain({
			name: config.name,
			baseUrl: config.baseUrl,
			apiKey: config.apiKey,
			api: config.api,
			headers: config.headers,
			authHeader: config.authHeader,
			models: config.models,
		}),
		streamSimple: typeof config.streamSimple === "function",
		oauth: config.oauth ? { name: config.oauth.name ?? name } : null,
	};
}

/**
 * pi 1.6 hands a provider the transcript form of a context: the system prompt and the tools
 * travel as a leading system message, and the context has nothing but `messages`.
 */
function transcript(context) {
	const messages = Array.isArray(context?.messages) ? context.messages : [];
	const tools = Array.isArray(context?.tools) ? context.tools : [];
	const prompt = typeof context?.systemPrompt === "string" ? context.systemPrompt : "";
	if (prompt.length === 0 && tools.length === 0) return { messages };
	const system = { role: "system", content: prompt, timestamp: 0 };
	if (tools.length > 0) system.toolsAdded = tools;
	return { messages: [system, ...messages] };
}

/**
 * One provider event without the partial message JS events carry: pi rebuilds the message
 * from the deltas, so a long reply costs its size on the wire, not its square.
 */
function wireEvent(event) {
	const index = event.contentIndex;
	const block = () => event.partial?.content?.[index];
	switch (event.type) {
		case "start":
			return { type: "start", partial: event.partial };
		case "text_start":
		case "thinking_start":
			return { type: event.type, contentIndex: index };
		case "text_delta":
		case "thinking_delta":
		case "toolcall_delta":
			return { type: event.type, contentIndex: index, delta: String(event.delta ?? "") };
		case "text_end":
			return { type: "text_end", contentIndex: index, block: block() ?? { type: "text", text: String(event.content ?? "") } };
		case "thinking_end":
			return {
				type: "thinking_end",
				contentIndex: index,
				block: block() ?? { type: "thinking", thinking: String(event.content ?? "") },
			};
		case "toolcall_start": {
			const call = block() ?? {};
			return { type: "toolcall_start", contentIndex: index, id: String(call.id ?? ""), name: String(call.name ?? "") };
		}
		case "toolcall_end":
			return { type: "toolcall_end", contentIndex: index, toolCall: event.toolCall };
		case "done":
			return { type: "done", reason: event.reason, message: event.message };
		case "error":
			return { type: "error", reason: event.reason, error: event.error };
		default:
			return undefined;
	}
}

/** The provider of `api` with a `streamSimple`, in load order (the first registration wins). */
function findStreamProvider(registry, api) {
	for (const ext of registry.extensions) {
		for (const config of ext.providers.values()) {
			if (config.api === api && typeof config.streamSimple === "function") return config;
		}
	}
	return undefined;
}

/**
 * `provider.stream`: run the provider's `streamSimple` on pi's model and context. Events go out
 * as `provider.event {streamId, event}`; the request is answered when the stream has ended, with
 * `{events}` (how many were sent). `signal` is the abort pi asked for with `provider.cancel`.
 */
export async function streamProvider(runtime, registry, params, signal) {
	const model = params.model ?? {};
	const provider = findStreamProvider(registry, model.api);
	if (!provider) throw new Error(`No API provider registered for api: ${model.api}`);
	const options = { ...(params.options ?? {}), signal };
	let sent = 0;
	const send = (event) => {
		const wire = wireEvent(event);
		if (!wire) return;
		runtime.wire.notify("provider.event", { streamId: params.streamId, event: wire });
		sent += 1;
	};
	const stream = await provider.streamSimple(model, transcript(params.context), options);
	for await (const event of stream) {
		send(event);
		if (event.type === "done" || event.type === "error") break;
	}
	return { events: sent };
}

// pi 1.6 refreshes a login that expires within five minutes, and gives a refresh 15 seconds.
const OAUTH_MIN_VALIDITY_MS = 5 * 60 * 1000;
const OAUTH_REFRESH_TIMEOUT_MS = 15_000;

/**
 * `provider.oauthKey {provider, credential}`: the key of a stored login of a provider
 * registered with `oauth` (the last registration of the name wins), refreshed first with its
 * `refreshToken` when it expires soon. `{apiKey, credential}`: `credential` is the refreshed
 * login for pi to store, or null.
 */
export async function oauthKey(registry, { provider, credential }) {
	const oauth = registeredOAuth(registry, provider);
	if (!oauth || typeof oauth.getApiKey !== "function") throw new Error(`Provider ${provider} has no OAuth login`);
	let current = credential;
	let refreshed = null;
	if (Date.now() + OAUTH_MIN_VALIDITY_MS >= Number(current?.expires ?? 0)) {
		if (typeof oauth.refreshToken !== "function") throw new Error(`Provider ${provider} cannot refresh its login`);
		refreshed = await oauth.refreshToken(current, AbortSignal.timeout(OAUTH_REFRESH_TIMEOUT_MS));
		current = refreshed;
	}
	const apiKey = await oauth.getApiKey(current);
	return { apiKey, credential: refreshed === null ? null : JSON.parse(JSON.stringify(refreshed)) };
}

/** The `oauth` block of `provider`'s last registration. */
function registeredOAuth(registry, provider) {
	let config;
	for (const ext of registry?.extensions ?? []) {
		const registered = ext.providers.get(provider);
		if (registered) config = registered;
	}
	return config?.oauth;
}

/**
 * `provider.oauthLogin {provider, loginId}`: run the provider's `oauth.login` with pi 1.6's
 * callbacks. What it shows goes to pi as `oauth.notify {loginId, event}` (`auth_url`,
 * `device_code`, `progress`); what it asks is an `oauth.prompt {loginId, prompt}` request
 * (`text`, `manual_code`, `select`), answered with the text or null when the user gave up.
 * `signal` ends it when pi cancels. Answers `{credential}`, the login to store.
 */
export async function oauthLogin(runtime, registry, { provider, loginId }, signal) {
	const oauth = registeredOAuth(registry, provider);
	if (!oauth || typeof oauth.login !== "function") throw new Error(`Provider ${provider} has no OAuth login`);
	const show = (event) => runtime.wire.notify("oauth.notify", { loginId, event });
	const ask = async (prompt) => {
		const answer = await runtime.wire.request("oauth.prompt", { loginId, prompt });
		if (typeof answer !== "string") throw new Error("Login cancelled");
		return answer;
	};
	const credential = await oauth.login({
		onAuth: (info) => show({ type: "auth_url", url: info?.url, instructions: info?.instructions }),
		onDeviceCode: (info) => show({ type: "device_code", ...info }),
		onProgress: (message) => show({ type: "progress", message: String(message) }),
		onPrompt: (prompt) => ask({ type: "text", message: prompt?.message, placeholder: prompt?.placeholder }),
		onManualCodeInput: () => ask({ type: "manual_code", message: "Paste the authorization code" }),
		onSelect: (prompt) => ask({ type: "select", message: prompt?.message, options: prompt?.options }),
		signal,
	});
	if (!credential || typeof credential !== "object") throw new Error(`Provider ${provider}: login returned no credentials`);
	return { credential: JSON.parse(JSON.stringify({ ...credential, type: "oauth" })) };
}
