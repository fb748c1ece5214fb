// Event dispatch in pi 1.6's order (extensions in load order, then registration order, over a
// snapshot of the handler lists) with its combination rules for chained events, so pi gets one
// result per event. Also the contexts handlers receive, tool execution and commands.
import { requestModel } from "./model_stream.mjs";
import { commandContext } from "./replace.mjs";

const errorText = (error) => (error instanceof Error ? error.message : String(error));
const errorStack = (error) => (error instanceof Error ? error.stack : undefined);

/** A theme that styles nothing, for a pi that sent no theme. */
const plainTheme = new Proxy(
	{ name: "plain", appearance: "dark", getColorMode: () => "truecolor" },
	{
		get(target, key) {
			if (key in target) return target[key];
			return (...args) => (typeof args[args.length - 1] === "string" ? args[args.length - 1] : "");
		},
	},
);

/** Numbers dialogs an extension may abort with a signal. */
let dialogCount = 0;

function createUi(runtime) {
	const { state } = runtime.mirror;
	const ask = (method, fallback) => async (...args) => {
		if (!state.hasUI) return fallback;
		// A dialog's `signal` (its options are the third argument) cannot cross to pi: the
		// dialog gets an id instead, and pi is told to close it when the signal aborts.
		const signal = args[2]?.signal;
		if (signal?.aborted) return fallback;
		let onAbort;
		try {
			if (signal && typeof signal.addEventListener === "function") {
				const dialogId = `${process.pid}-${++dialogCount}`;
				args = [...args];
				args[2] = { ...args[2], signal: undefined, dialogId };
				const aborted = new Promise((resolve) => {
					onAbort = () => {
						runtime.wire.notify("ui.cancelDialog", { dialogId });
						resolve(fallback);
					};
					signal.addEventListener("abort", onAbort, { once: true });
				});
				const answer = await Promise.race([runtime.wire.request(`ui.${method}`, { args }), aborted]);
				return answer ?? fallback;
			}
			const answer = await runtime.wire.request(`ui.${method}`, { args });
			return answer ?? fallback;
		} catch {
			return fallback;
		} finally {
			if (onAbort) signal.removeEventListener("abort", onAbort);
		}
	};
	const tell = (method) => (...args) => {
		if (state.hasUI) runtime.wire.notify(`ui.${method}`, { args: args.filter((a) => typeof a !== "function") });
	};
	// Components (widgets, header, footer, custom screens) live in the host's screen; without
	// one (print, json) the calls do nothing, as in pi.
	const screen = runtime.screen?.uiFor(undefined);
	const inTui = () => state.hasUI && state.mode === "tui";
	return {
		select: ask("select", undefined),
		confirm: ask("confirm", false),
		input: ask("input", undefined),
		editor: ask("editor", undefined),
		notify: tell("notify"),
		setStatus: screen ? screen.setStatus : tell("setStatus"),
		setTitle: tell("setTitle"),
		setWidget: screen
			? screen.setWidget
			: (key, content, options) => {
					if (content === undefined || Array.isArray(content)) tell("setWidget")(key, content, options);
				},
		setEditorText: (text) => {
			state.editorText = String(text ?? "");
			tell("setEditorText")(text);
		},
		pasteToEditor: (text) => {
			if (state.hasUI) runtime.wire.notify("ui.pasteToEditor", { args: [text] });
		},
		getEditorText: () => state.editorText ?? "",
		setWorkingMessage: (message) => {
			if (inTui()) runtime.wire.notify("ui.setWorkingMessage", { message: message ?? null });
		},
		setWorkingVisible: (visible) => {
			if (inTui()) runtime.wire.notify("ui.setWorkingVisible", { visible: Boolean(visible) });
		},
		setWorkingIndicator: (options) => {
			if (!inTui()) return;
			const frames = Array.isArray(options?.frames) ? options.frames.map(String) : undefined;
			const plain = options ? { frames, intervalMs: typeof options.intervalMs === "number" ? options.intervalMs : undefined } : null;
			runtime.wire.notify("ui.setWorkingIndicator", { options: plain });
		},
		setHiddenThinkingLabel: (label) => {
			if (inTui()) runtime.wire.notify("ui.setHiddenThinkingLabel", { label: label === undefined || label === null ? null : String(label) });
		},
		setFooter: screen ? screen.setFooter : () => {},
		setHeader: screen ? screen.setHeader : () => {},
		setEditorComponent: screen ? screen.setEditorComponent : () => {},
		getEditorComponent: screen ? screen.getEditorComponent : () => undefined,
		addAutocompleteProvider: screen ? screen.addAutocompleteProvider : () => {},
		onTerminalInput: screen ? screen.onTerminalInput : () => () => {},
		custom: screen ? screen.custom : async () => undefined,
		get theme() {
			// pi sends its theme in every mode; print, json and rpc colour with it too.
			return runtime.screen && (state.mode === "tui" || state.theme) ? runtime.screen.theme() : plainTheme;
		},
		getAllThemes: () => (runtime.screen && inTui() ? runtime.screen.allThemes() : []),
		getTheme: (name) => (runtime.screen && inTui() ? runtime.screen.getTheme(name) : undefined),
		setTheme: (theme) => {
			if (runtime.screen && inTui()) return runtime.screen.setTheme(theme);
			return { success: false, error: state.mode === "rpc" ? "Theme switching not supported in RPC mode" : "UI not available" };
		},
		getToolsExpanded: () => (screen ? screen.getToolsExpanded() : false),
		setToolsExpanded: (expanded) => screen?.setToolsExpanded(expanded),
	};
}

/**
 * `ctx.modelRegistry`: the synchronous reads answer from the mirror (`models`: the models
 * whose provider has auth; `allModelsJson`: every model known); auth, `refresh`, `stream` and
 * `complete` ask pi.
 */
function createModelRegistry(runtime) {
	const { state } = runtime.mirror;
	const ref = (model) => ({ provider: model?.provider, id: model?.id });
	// Every known model: pi sends the list as JSON text, parsed here on first use (once per text).
	let parsed = { json: undefined, list: undefined };
	const all = () => {
		if (typeof state.allModelsJson !== "string") return state.models;
		if (parsed.json !== state.allModelsJson) {
			try {
				parsed = { json: state.allModelsJson, list: JSON.parse(state.allModelsJson) };
			} catch {
				parsed = { json: state.allModelsJson, list: state.models };
			}
		}
		return parsed.list;
	};
	const ofProvider = (models, provider) => models.filter((m) => provider === undefined || m.provider === provider);
	const findIn = (models, provider, id) => models.find((m) => m.provider === provider && m.id === id);
	const authStatus = (provider) =>
		state.providerAuth?.[provider] ?? { configured: state.models.some((m) => m.provider === provider) };
	return {
		getAll: () => all().slice(),
		getAvailable: () => state.models.slice(),
		find: (provider, id) => findIn(all(), provider, id),
		getModelsOfType: (type, provider) => (type === "chat" ? ofProvider(all(), provider) : []),
		getModelOfType: (type, provider, id) => (type === "chat" ? findIn(all(), provider, id) : undefined),
		findOfType: (type, provider, id) => (type === "chat" ? findIn(all(), provider, id) : undefined),
		getAvailableOfType: async (type, provider) => (type === "chat" ? ofProvider(state.models, provider) : []),
		hasConfiguredAuth: (model) => authStatus(model?.provider).configured === true,
		getProviderAuthStatus: (provider) => ({ ...authStatus(provider) }),
		isUsingOAuth: (model) => state.oauthProviders.includes(model?.provider),
		getError: () => undefined,
		getProviderDisplayName: (provider) => provider,
		refresh: async () => {
			await runtime.wire.request("models.refresh", {});
			return {};
		},
		getApiKeyAndHeaders: async (model) => {
			try {
				return await runtime.wire.request("models.requestAuth", { model: ref(model) });
			} catch (error) {
				return { ok: false, error: error instanceof Error ? error.message : String(error) };
			}
		},
		getApiKeyForProvider: async (provider) =>
			(await runtime.wire.request("models.apiKeyForProvider", { provider })) ?? undefined,
		// `{auth: {apiKey}, source}` as pi resolves the provider's auth now, or undefined.
		getProviderAuth: async (provider) => (await runtime.wire.request("models.providerAuth", { provider })) ?? undefined,
		// The providers registered with `pi.registerProvider`, each once, then pi's own that 1.6
		// registers the same way (`llama.cpp`).
		getRegisteredProviderIds: () => {
			const ids = new Set();
			for (const ext of runtime.registry?.extensions ?? []) for (const name of ext.providers.keys()) ids.add(name);
			for (const name of state.builtinProviders ?? []) ids.add(name);
			return [...ids];
		},
		// One request through pi with request-time auth, as pi-ai's event stream.
		stream: (model, context, options) => requestModel(runtime, model, context, options, true),
		streamSimple: (model, context, options) => requestModel(runtime, model, context, options, true),
		// The same request's final assistant message; an aborted `signal` stops pi's request.
		complete: (model, context, options) => requestModel(runtime, model, context, options, false).result(),
		completeSimple: (model, context, options) => requestModel(runtime, model, context, options, false).result(),
	};
}

/** The `ctx` of an event handler, reading the state mirror. */
export function createContext(runtime, extra = {}) {
	const { state, sessionManager } = runtime.mirror;
	const ui = createUi(runtime);
	const tell = (method) => (params) => runtime.wire.notify(method, params ?? {});
	return {
		ui,
		get mode() {
			return state.mode;
		},
		get hasUI() {
			return state.hasUI;
		},
		get cwd() {
			return state.cwd;
		},
		get model() {
			return state.model;
		},
		get scopedModels() {
			return state.scopedModels;
		},
		get thinkingLevel() {
			return state.thinkingLevel;
		},
		sessionManager,
		modelRegistry: createModelRegistry(runtime),
		signal: extra.signal,
		isIdle: () => state.idle,
		isProjectTrusted: () => state.projectTrusted,
		hasPendingMessages: () => state.pendingMessages,
		getContextUsage: () => state.contextUsage,
		getSystemPrompt: () => (extra.systemPrompt ? extra.systemPrompt() : state.systemPrompt),
		abort: () => tell("ctx.abort")(),
		shutdown: () => tell("ctx.shutdown")(),
		compact: (options) => tell("ctx.compact")({ customInstructions: options?.customInstructions }),
	};
}

const SECTION_NAME = /^[a-z][a-z0-9_-]*$/;

/**
 * `before_agent_start`'s `event.systemPrompt` (and `ctx.getSystemPrompt()`), a getter as in pi
 * 1.6: the forced prompt if a handler set one, else pi's prompt with the sections the handlers
 * added to `systemPromptOptions.sections` so far. (pi renders the final prompt from the options
 * after the handlers; edits to the tool fields show there, not in this getter.)
 */
function promptRenderer(data, override) {
	const base = String(data.systemPrompt ?? "");
	const render = () => {
		const options = data.systemPromptOptions;
		if (typeof options?.forceSystemPrompt === "string") return options.forceSystemPrompt;
		const forced = override();
		if (typeof forced === "string") return forced;
		const parts = [base];
		for (const [name, body] of Object.entries(options?.sections ?? {})) {
			if (typeof body !== "string" || body === "" || name === "preamble" || !SECTION_NAME.test(name)) continue;
			if (!base.includes(`<${name}>\n`)) parts.push(`<${name}>\n${body}\n</${name}>`);
		}
		return parts.join("\n\n");
	};
	Object.defineProperty(data, "systemPrompt", { get: render, enumerable: true, configurable: true });
	return render;
}

/** `systemPromptOptions` with every key of pi 1.6's, in its order (JSON has no `undefined`). */
function normalizeOptions(options) {
	if (!options || typeof options !== "object") return options;
	const keys = ["customPrompt", "forceSystemPrompt", "selectedTools", "hiddenTools", "toolSnippets", "toolGuidelines", "promptGuidelines", "appendSystemPrompt", "sections", "cwd", "contextFiles", "skills"];
	const normalized = {};
	for (const key of keys) normalized[key] = options[key];
	for (const [key, value] of Object.entries(options)) if (!(key in normalized)) normalized[key] = value;
	return normalized;
}

function handlerList(registry, event) {
	const list = [];
	for (const ext of registry.extensions) {
		for (const handler of ext.handlers.get(event) ?? []) list.push({ ext, handler });
	}
	return list;
}

const SESSION_BEFORE = new Set(["session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"]);
const BOUNDARY = new Set(["turn_end", "agent_before_settle"]);
// pi's wording: clients match on it.
const LEADING_SYSTEM_REMOVED =
	"Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage().";

/**
 * A boundary event (`turn_end`, `agent_before_settle`): each handler sees the proposal so far
 * and `context`, pi's preview of the model context with the proposed entries applied, asked
 * of pi again after every handler. Entries pi rejects are reported and drop the proposal.
 */
async function boundary(runtime, handlers, data, ctx, errors, fail) {
	let entries = Array.isArray(data.entries) ? data.entries : [];
	let proceed = data.continue === true;
	let context = data.context;
	let valid = true;
	for (const { ext, handler } of handlers) {
		const event = { ...data, entries, continue: proceed, context };
		try {
			const returned = await handler(event, ctx);
			if (returned?.entries !== undefined) entries = returned.entries;
			if (returned?.continue !== undefined) proceed = returned.continue;
		} catch (error) {
			fail(ext, error);
		}
		const preview = await runtime.wire.request("session.boundaryContext", { event: data.type, entries });
		if (preview?.ok) {
			context = preview.context;
			valid = true;
		} else {
			valid = false;
			fail(ext, new Error(`Invalid boundary entries: ${preview?.error ?? "not a list of entries"}`));
		}
	}
	if (!valid) return { result: { entries: [], continue: false }, errors };
	return { result: { entries, continue: proceed }, errors };
}

/**
 * Run every handler of `event` and combine what they return. Returns `{result, errors}`:
 * `result` is the combined outcome (null when the event's results are ignored), `errors` the
 * handlers that threw, as `{extensionPath, event, error, stack}`.
 */
export async function dispatch(runtime, registry, event, payload) {
	const handlers = handlerList(registry, event);
	const errors = [];
	const data = { type: event, ...payload };
	if (event === "before_agent_start") data.systemPromptOptions = normalizeOptions(data.systemPromptOptions);
	let systemPromptOverride;
	const renderPrompt = event === "before_agent_start" ? promptRenderer(data, () => systemPromptOverride) : undefined;
	const ctx = createContext(runtime, { systemPrompt: renderPrompt });
	const fail = (ext, error) =>
		errors.push({ extensionPath: ext.path, event, error: errorText(error), stack: errorStack(error) });

	if (event === "tool_call") {
		// No try/catch around the chain: a throw blocks this call with its message.
		for (const { handler } of handlers) {
			let returned;
			try {
				returned = await handler(data, ctx);
			} catch (error) {
				return { result: { block: true, reason: errorText(error), input: data.input }, errors };
			}
			if (returned?.block) {
				return {
					result: { block: true, reason: returned.reason, terminate: returned.terminate === true, input: data.input },
					errors,
				};
			}
		}
		return { result: { block: false, input: data.input }, errors };
	}

	if (event === "project_trust") return projectTrust(runtime, handlers, data, errors, fail);
	if (BOUNDARY.has(event)) return boundary(runtime, handlers, data, ctx, errors, fail);

	if (event === "user_bash") {
		for (const { ext, handler } of handlers) {
			let returned;
			try {
				returned = await handler(data, ctx);
			} catch (error) {
				fail(ext, error);
				return { result: { abort: true, error: errorText(error) }, errors };
			}
			if (returned === undefined || returned === null) continue;
			const hasResult = returned.result !== undefined;
			const hasOps = returned.operations !== undefined;
			if (hasResult === hasOps) {
				const message = "Invalid user_bash handler result: return either operations or result";
				fail(ext, new Error(message));
				return { result: { abort: true, error: message }, errors };
			}
			if (hasOps) return { result: { operations: true, extensionPath: ext.path }, errors };
			return { result: { result: returned.result }, errors };
		}
		return { result: null, errors };
	}

	const messages = [];
	let combined = null;
	let transformed = false;
	let changedMessages = false;
	for (const { ext, handler } of handlers) {
		let returned;
		try {
			returned = await handler(data, ctx);
		} catch (error) {
			fail(ext, error);
			continue;
		}
		if (returned === undefined || returned === null) continue;
		if (event === "input") {
			if (returned.action === "handled") return { result: { action: "handled" }, errors };
			if (returned.action === "transform") {
				data.text = returned.text;
				if (returned.images !== undefined) data.images = returned.images;
				transformed = true;
			}
		} else if (event === "before_agent_start") {
			if (returned.message) messages.push(returned.message);
			if (typeof returned.systemPrompt === "string") {
				systemPromptOverride = returned.systemPrompt;
				// pi 1.6 records it as the options' forced prompt, which later handlers see.
				if (data.systemPromptOptions && typeof data.systemPromptOptions === "object") {
					data.systemPromptOptions.forceSystemPrompt = returned.systemPrompt;
				}
			}
		} else if (event === "context" || event === "context_with_system") {
			if (Array.isArray(returned.messages)) {
				const hadLeadingSystem = data.messages[0]?.role === "system";
				data.messages = returned.messages;
				changedMessages = true;
				if (event === "context_with_system" && hadLeadingSystem && data.messages[0]?.role !== "system") {
					// Reported, but the handler's list is still what is used.
					fail(ext, new Error(LEADING_SYSTEM_REMOVED));
				}
			}
		} else if (event === "tool_result") {
			for (const key of ["content", "details", "isError", "usage"]) {
				if (returned[key] !== undefined) data[key] = returned[key];
			}
			if (returned.structuredContent !== undefined) data.structuredContent = returned.structuredContent;
			else if (returned.content !== undefined) delete data.structuredContent;
			transformed = true;
		} else if (event === "message_end") {
			if (returned.message) {
				if (returned.message.role !== data.message?.role) {
					fail(ext, new Error("message_end handlers must return a message with the same role"));
					continue;
				}
				data.message = { ...returned.message, content: returned.message.content ?? [] };
				transformed = true;
			}
		} else if (event === "before_provider_request") {
			data.payload = returned;
			transformed = true;
		} else if (SESSION_BEFORE.has(event)) {
			combined = returned;
			if (returned.cancel) return { result: returned, errors };
		} else if (event === "resources_discover") {
			combined ??= { skillPaths: [], promptPaths: [], themePaths: [] };
			for (const key of ["skillPaths", "promptPaths", "themePaths"]) {
				if (Array.isArray(returned[key])) combined[key].push(...returned[key]);
			}
		} else if (event === "cache_warming_decision") {
			if (returned.action) combined = { action: returned.action };
		}
	}

	switch (event) {
		case "input":
			return {
				result: transformed ? { action: "transform", text: data.text, images: data.images } : { action: "continue" },
				errors,
			};
		case "before_agent_start":
			return {
				result: { messages, systemPrompt: systemPromptOverride, systemPromptOptions: data.systemPromptOptions },
				errors,
			};
		case "context":
		case "context_with_system":
			// A handler may also edit `event.messages` in place; pi sends what the list became.
			return { result: { messages: data.messages, replaced: changedMessages }, errors };
		case "tool_result":
			return {
				result: transformed
					? {
							content: data.content,
							details: data.details,
							isError: data.isError,
							structuredContent: data.structuredContent,
							usage: data.usage,
						}
					: null,
				errors,
			};
		case "message_end":
			return { result: transformed ? { message: data.message } : null, errors };
		case "before_provider_request":
			return { result: transformed ? { payload: data.payload } : null, errors };
		case "before_provider_headers":
			return { result: { headers: data.headers }, errors };
		default:
			return { result: combined, errors };
	}
}

/**
 * pi 1.6's `ProjectTrustContext`: not a full ctx (no session yet). Dialogs answer their
 * defaults unless pi can ask (`hasUI`); `notify` lines are handed back to pi
 * with the result, which prints them on stderr outside the terminal UI, in order.
 */
function projectTrustContext(runtime, cwd, hasUI, notices) {
	const { state } = runtime.mirror;
	const ask = (method, fallback) => async (...args) => {
		if (!hasUI) return fallback;
		try {
			return (await runtime.wire.request(`ui.${method}`, { args })) ?? fallback;
		} catch {
			return fallback;
		}
	};
	return {
		cwd,
		mode: state.mode,
		hasUI,
		ui: {
			select: ask("select", undefined),
			confirm: ask("confirm", false),
			input: ask("input", undefined),
			notify: (message, type = "info") => notices.push({ message: String(message), type }),
		},
	};
}

/**
 * `project_trust`: handlers in load order; the first `yes`/`no` wins, `undecided` goes on, and
 * a throw (or a handler that returns nothing) is reported and the next one runs.
 */
async function projectTrust(runtime, handlers, data, errors, fail) {
	const notices = [];
	// `hasUI` is pi's to say (the terminal UI at startup only); handlers see `{type, cwd}`.
	const hasUI = data.hasUI === true;
	delete data.hasUI;
	const ctx = projectTrustContext(runtime, data.cwd, hasUI, notices);
	for (const { ext, handler } of handlers) {
		try {
			const returned = await handler(data, ctx);
			if (returned.trusted === "undecided") continue;
			return { result: { trusted: returned.trusted, remember: returned.remember === true, notices }, errors };
		} catch (error) {
			fail(ext, error);
		}
	}
	return { result: { trusted: "undecided", remember: false, notices }, errors };
}

function normalizeToolResult(result) {
	const out = {
		content: Array.isArray(result?.content) ? result.content : [],
		details: result?.details ?? {},
	};
	for (const key of ["isError", "terminate", "structuredContent", "usage"]) {
		if (result?.[key] !== undefined) out[key] = result[key];
	}
	return out;
}

/** Run a registered tool. Updates stream as `tool.update` notifications; `signal` aborts it. */
export async function callTool(runtime, registry, { callId, name, params }, signal) {
	const found = registry.findTool(name);
	if (!found) return { content: [{ type: "text", text: `Tool ${name} not found` }], details: {}, isError: true };
	const ctx = createContext(runtime, { signal });
	ctx.tools = runtime.mirror.state.activeTools.slice();
	ctx.executeTool = async (tool, args, options) => {
		const outcome = await runtime.wire.request("tool.execute", { callerId: callId, name: tool, args });
		options?.onUpdate?.(outcome?.result);
		return outcome;
	};
	const onUpdate = (partial) => {
		if (signal.aborted) return;
		runtime.wire.notify("tool.update", { callId, partialResult: normalizeToolResult(partial) });
	};
	try {
		const result = await found.tool.execute(callId, params ?? {}, signal, onUpdate, ctx);
		return normalizeToolResult(result);
	} catch (error) {
		return { content: [{ type: "text", text: errorText(error) }], details: {}, isError: true };
	}
}

/** `runShortcut {key}`: the handler of the last extension that registered `key` (as pi). */
export async function runShortcut(runtime, registry, { key }) {
	const wanted = String(key ?? "").toLowerCase();
	let found;
	for (const ext of registry.extensions) {
		for (const [k, shortcut] of ext.shortcuts) {
			if (k.toLowerCase() === wanted) found = { ext, shortcut };
		}
	}
	if (!found || typeof found.shortcut.handler !== "function") return { found: false };
	const ctx = createContext(runtime);
	try {
		await found.shortcut.handler(ctx);
		return { found: true };
	} catch (error) {
		return {
			found: true,
			error: { extensionPath: found.ext.path, event: "shortcut", error: errorText(error), stack: errorStack(error) },
		};
	}
}

export async function runCommand(runtime, registry, { name, args }) {
	const found = registry.findCommand(name);
	if (!found) return { found: false };
	const ctx = commandContext(runtime);
	try {
		await found.command.handler(args ?? "", ctx);
		return { found: true };
	} catch (error) {
		return {
			found: true,
			error: { extensionPath: `command:${name}`, event: "command", error: errorText(error), stack: errorStack(error) },
		};
	}
}
