// A command's ctx: pi 1.6's ExtensionCommandContext. Its session replacements
// (`newSession`, `fork`, `switchSession`, `reload`) are requests pi answers with
// `{cancelled}` once the new session is running; `newSession`'s `setup(sm)` runs when pi asks
// for it (`session.setup`, between the new session's build and its `session_start`) against a
// SessionManager whose writes are handed back to pi; `withSession(ctx)` runs after the answer
// with a ctx of the new runtime. A ctx whose runtime was replaced throws pi's stale message.
import { randomUUID } from "node:crypto";
import { createContext } from "./events.mjs";
import { sessionReader } from "./state.mjs";

const STALE =
	"This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For newSession, fork, and switchSession, move post-replacement work into withSession and use the ctx passed to withSession. For reload, do not use the old ctx after await ctx.reload().";

// The SessionManager writes a setup may make, each building pi 1.6's entry from the call's
// arguments (`id`, `parentId` and `timestamp` are added around it).
const SETUP_WRITES = {
	appendMessage: (message) => ({ type: "message", message }),
	appendCustomEntry: (customType, data) => ({ type: "custom", customType, data }),
	appendCustomMessageEntry: (customType, content, display, details) => ({
		type: "custom_message",
		customType,
		content,
		display,
		details,
	}),
	appendSessionInfo: (name) => ({ type: "session_info", name: String(name).replace(/[\r\n]+/g, " ").trim() }),
	appendLabelChange: (targetId, label) => ({ type: "label", targetId, label }),
	appendModelChange: (provider, modelId) => ({ type: "model_change", provider, modelId }),
	appendThinkingLevelChange: (thinkingLevel) => ({ type: "thinking_level_change", thinkingLevel }),
};

const setups = new Map();
let nextSetupId = 1;

/** A new entry id as pi makes them: 8 hex digits not in use, else a whole UUID. */
function newEntryId(byId) {
	for (let i = 0; i < 100; i++) {
		const id = randomUUID().slice(0, 8);
		if (!byId.has(id)) return id;
	}
	return randomUUID();
}

/**
 * The SessionManager a setup gets: the new session as mirrored, whose writes append to a copy
 * of it at once (so they return their entry ids and later reads see them, as in pi 1.6) and
 * are recorded for pi, which writes them with the same ids.
 */
function setupSessionManager(state, calls) {
	const view = {
		cwd: state.cwd,
		sessionFile: state.sessionFile,
		sessionId: state.sessionId,
		sessionName: state.sessionName,
		entries: state.entries.slice(),
		byId: new Map(state.byId),
		leafId: state.leafId ?? null,
	};
	const sm = sessionReader(view);
	for (const [method, build] of Object.entries(SETUP_WRITES)) {
		sm[method] = (...args) => {
			if (method === "appendLabelChange" && !view.byId.has(args[0])) throw new Error(`Entry ${args[0]} not found`);
			const fields = build(...args);
			const id = newEntryId(view.byId);
			const { type, ...rest } = fields;
			const entry = { type, id, parentId: view.leafId, timestamp: new Date().toISOString(), ...rest };
			view.entries.push(entry);
			view.byId.set(id, entry);
			view.leafId = id;
			if (type === "session_info") view.sessionName = entry.name || undefined;
			calls.push({ method, args, id });
			return id;
		};
	}
	return sm;
}

/** `session.setup {setupId}`: run the callback against the new session; `{calls}` for pi. */
export async function runSetup(runtime, { setupId }) {
	const pending = setups.get(setupId);
	if (!pending) return { calls: [] };
	const calls = [];
	const sm = setupSessionManager(runtime.mirror.state, calls);
	try {
		await pending.setup(sm);
	} catch (error) {
		// Thrown to the command once pi answers, as pi 1.6's newSession rejects.
		pending.error = error;
	}
	return { calls };
}

/** Throws the stale message on any use once the runtime the ctx was made in is replaced. */
function guarded(ctx, runtime) {
	const registry = runtime.registry;
	return new Proxy(ctx, {
		get(target, key, receiver) {
			if (runtime.registry !== registry) throw new Error(STALE);
			return Reflect.get(target, key, receiver);
		},
	});
}

/** The ctx of a command handler (`extra`: more members, for a replaced session's ctx). */
export function commandContext(runtime, extra = {}) {
	const ctx = createContext(runtime);
	const ask = (method, params) => runtime.wire.request(`ctx.${method}`, params);
	const afterReplacement = async (result, options) => {
		if (result && !result.cancelled && typeof options?.withSession === "function") {
			await options.withSession(replacedContext(runtime));
		}
		return result;
	};
	Object.assign(ctx, {
		waitForIdle: () => ask("waitForIdle", { args: [] }),
		navigateTree: (targetId, options) => ask("navigateTree", { args: [targetId, options] }),
		newSession: async (options) => {
			let setupId;
			if (typeof options?.setup === "function") {
				setupId = nextSetupId++;
				setups.set(setupId, { setup: options.setup });
			}
			try {
				const result = await ask("newSession", { parentSession: options?.parentSession, setupId });
				const failed = setupId === undefined ? undefined : setups.get(setupId)?.error;
				if (failed) throw failed;
				return await afterReplacement(result, options);
			} finally {
				if (setupId !== undefined) setups.delete(setupId);
			}
		},
		fork: async (entryId, options) => {
			const result = await ask("fork", { entryId, position: options?.position ?? "before" });
			return afterReplacement(result, options);
		},
		switchSession: async (sessionPath, options) => {
			const result = await ask("switchSession", { sessionPath });
			return afterReplacement(result, options);
		},
		reload: async () => {
			await ask("reload", {});
		},
		...extra,
	});
	return guarded(ctx, runtime);
}

/** pi 1.6's ReplacedSessionContext: a command ctx whose sends wait for the run they start. */
function replacedContext(runtime) {
	return commandContext(runtime, {
		sendMessage: async (message, options) => {
			await runtime.wire.request("ctx.sendMessage", { message, options });
		},
		sendUserMessage: async (content, options) => {
			await runtime.wire.request("ctx.sendUserMessage", { content, options });
		},
	});
}
