// A command's ctx: pi 1.6's ExtensionCommandContext. Its session replacements
// (`newSession`, `fork`, `switchSession`, `reload`) are requests pi answers with
// `{cancelled}` once the new session is running; `newSession`'s `setup(sm)` runs when pi asks
// for it (`session.setup`, between the new session's build and its `session_start`) against a
// SessionManager whose writes are handed back to pi; `withSession(ctx)` runs after the answer
// with a ctx of the new runtime. A ctx whose runtime was replaced throws pi's stale message.
import { createContext } from "./events.mjs";

const STALE =
	"This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For newSession, fork, and switchSession, move post-replacement work into withSession and use the ctx passed to withSession. For reload, do not use the old ctx after await ctx.reload().";

// The SessionManager writes a setup may make; pi applies them in order.
const SETUP_WRITES = [
	"appendMessage",
	"appendCustomEntry",
	"appendCustomMessageEntry",
	"appendSessionInfo",
	"appendLabelChange",
	"appendModelChange",
	"appendThinkingLevelChange",
];

const setups = new Map();
let nextSetupId = 1;

/** `session.setup {setupId}`: run the callback against the new session; `{calls}` for pi. */
export async function runSetup(runtime, { setupId }) {
	const pending = setups.get(setupId);
	if (!pending) return { calls: [] };
	const calls = [];
	const sm = Object.assign({}, runtime.mirror.sessionManager);
	for (const method of SETUP_WRITES) {
		sm[method] = (...args) => {
			calls.push({ method, args });
			return undefined;
		};
	}
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
