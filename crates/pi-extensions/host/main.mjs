// pi's extension host (started through start.mjs): connects to pi, says hello with the protocol
// version, then serves pi's requests (initialize, load, dispatch, callTool, runCommand, ping,
// shutdown).
import path from "node:path";
import { callTool, dispatch, runCommand, runShortcut } from "./events.mjs";
import { createEventBus, createRegistry } from "./extensions.mjs";
import { createFacade } from "./facade.mjs";
import { runSetup } from "./replace.mjs";
import { oauthKey, oauthLogin, streamProvider } from "./providers.mjs";
import { onModelEvent } from "./model_stream.mjs";
import { resumeOptimizer } from "./optimizer.mjs";
import { buildVirtualModules } from "./modules.mjs";
import { createState } from "./state.mjs";
import { createScreen } from "./ui.mjs";
import { PROTOCOL_VERSION, connectWire, wireError } from "./wire.mjs";

// Extensions import ESM packages synchronously (require of ESM), which Node has without a flag
// from 20.19 and 22.12 on.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || major === 21 || (major === 20 && minor < 19) || (major === 22 && minor < 12)) {
	process.stderr.write(`pi extension host: Node.js ${process.version} is too old; extensions need Node.js 20.19, 22.12 or newer\n`);
	process.exit(3);
}

const socketPath = process.env.PI_EXTENSION_HOST_SOCKET;
if (!socketPath) {
	process.stderr.write("pi extension host: PI_EXTENSION_HOST_SOCKET is not set; this program is started by pi\n");
	process.exit(2);
}

const runtime = {
	wire: undefined,
	mirror: undefined,
	bound: false,
	createJiti: undefined,
	screen: undefined,
	reportError: (extensionPath, event, error) =>
		runtime.wire.notify("extensionError", {
			extensionPath,
			event,
			error: error instanceof Error ? error.message : String(error),
			stack: error instanceof Error ? error.stack : undefined,
		}),
};
let registry;
// Factories by real path, kept across runtimes of this host (see `reload`).
const factoryCache = new Map();
const toolCalls = new Map();
// Abort controllers of the provider streams running, by pi's stream id.
const providerStreams = new Map();
// Sign-ins of extension providers under way, by pi's login id.
const oauthLogins = new Map();

/** Apply a state update to the mirror and tell the screen (theme, branch) what changed. */
function applyState(update) {
	if (!update || !runtime.mirror) return;
	runtime.mirror.apply(update);
	runtime.screen?.stateChanged(update);
}

function requireInitialized() {
	if (!registry) throw wireError("not_initialized", "initialize must come first");
}

async function initialize(params) {
	if (params.protocolVersion !== PROTOCOL_VERSION) {
		throw wireError("protocol_mismatch", `host speaks protocol ${PROTOCOL_VERSION}, pi asked for ${params.protocolVersion}`);
	}
	runtime.mirror = createState(params);
	// Facts extensions need while loading (pi's tool definitions, say) come with initialize.
	if (params.state) runtime.mirror.apply(params.state);
	let tuiModule;
	let modules;
	const loadTui = () => {
		tuiModule ??= modules.require(modules.resolve("@earendil-works/pi-tui"));
		return tuiModule;
	};
	const facade = createFacade({
		loadTui,
		agentDir: params.agentDir,
		version: params.piVersion,
		createEventBus: () => createEventBus((channel, error) => runtime.reportError("<events>", `events:${channel}`, error)),
		toolInfo: (name) => runtime.mirror.state.allTools.find((tool) => tool?.name === name),
		runBuiltin: async (params, signal) => {
			if (signal?.aborted) throw new Error("Operation aborted");
			return runtime.wire.request("tool.builtin", params);
		},
	});
	modules = buildVirtualModules(params.modulesDir, facade);
	runtime.screen = createScreen(runtime, loadTui);
	let createJiti;
	runtime.createJiti = (file) => {
		// jiti itself loads on the first extension file, not at host start. Its CommonJS entry:
		// the ES one imports the same 190 kB CommonJS file, which Node then scans for its export
		// names (tens of milliseconds) only to wrap it.
		createJiti ??= modules.require(modules.resolve("jiti", { require: true })).createJiti;
		return createJiti(file, {
			moduleCache: false,
			tryNative: false,
			virtualModules: modules.table,
			fsCache: params.cacheDir ? path.join(params.cacheDir, "jiti") : true,
		});
	};
	registry = createRegistry(runtime, factoryCache);
	// The screen builds a replacement editor's completions from the extensions' commands.
	runtime.registry = registry;
	for (const [name, value] of Object.entries(params.flagValues ?? {})) registry.flagValues.set(name, value);
	return { protocolVersion: PROTOCOL_VERSION, node: process.version, pid: process.pid };
}

const requests = {
	initialize,
	ping: () => ({ pong: true }),
	load: async (params) => {
		requireInitialized();
		let result;
		try {
			result = await registry.load(params.extensions ?? []);
		} finally {
			// Start-up is over: code that runs from now on may be worth TurboFan.
			resumeOptimizer();
		}
		// Action methods work from here on: pi has what it needs to serve them. A pre-trust
		// pass (`bind: false`) stays unbound until `extend` completes the set.
		runtime.bound = params.bind !== false;
		return result;
	},
	// The final set after a pre-trust pass: more files into the same runtime, in the order
	// given; what was loaded before is kept (its factories do not run again).
	extend: async (params) => {
		requireInitialized();
		runtime.bound = false;
		const result = await registry.extend(params.extensions ?? []);
		runtime.bound = true;
		return result;
	},
	// A new runtime for the same host (pi's session replacement or /reload): the old extensions
	// go stale, their pi.events subscriptions end, and the files load again. With
	// `reuseModules` the factories run again on the modules already evaluated; without it the
	// modules are evaluated afresh.
	reload: async (params) => {
		requireInitialized();
		runtime.bound = false;
		const flags = new Map(registry.flagValues);
		registry.invalidate();
		runtime.screen?.reset();
		if (!params.reuseModules) factoryCache.clear();
		if (params.state) applyState(params.state);
		registry = createRegistry(runtime, factoryCache);
		runtime.registry = registry;
		for (const [name, value] of flags) registry.flagValues.set(name, value);
		const result = await registry.load(params.extensions ?? []);
		runtime.bound = true;
		return result;
	},
	registrations: () => {
		requireInitialized();
		return { extensions: registry.describeAll(), mcpServers: registry.listMcpServers() };
	},
	dispatch: (params) => {
		requireInitialized();
		if (params.state) applyState(params.state);
		return dispatch(runtime, registry, params.event, params.payload ?? {});
	},
	callTool: async (params) => {
		requireInitialized();
		const controller = new AbortController();
		toolCalls.set(params.callId, controller);
		try {
			return await callTool(runtime, registry, params, controller.signal);
		} finally {
			toolCalls.delete(params.callId);
		}
	},
	"provider.stream": async (params) => {
		requireInitialized();
		const controller = new AbortController();
		providerStreams.set(params.streamId, controller);
		try {
			return await streamProvider(runtime, registry, params, controller.signal);
		} finally {
			providerStreams.delete(params.streamId);
		}
	},
	"provider.oauthKey": (params) => {
		requireInitialized();
		return oauthKey(registry, params);
	},
	"provider.oauthLogin": async (params) => {
		requireInitialized();
		const controller = new AbortController();
		oauthLogins.set(params.loginId, controller);
		try {
			return await oauthLogin(runtime, registry, params, controller.signal);
		} finally {
			oauthLogins.delete(params.loginId);
		}
	},
	runCommand: (params) => {
		requireInitialized();
		return runCommand(runtime, registry, params);
	},
	"session.setup": (params) => {
		requireInitialized();
		return runSetup(runtime, params);
	},
	runShortcut: (params) => {
		requireInitialized();
		return runShortcut(runtime, registry, params);
	},
	"ui.render": (params) => {
		requireInitialized();
		return runtime.screen.render(params);
	},
	"ui.renderMessages": (params) => {
		requireInitialized();
		return runtime.screen.renderMessages(registry, params);
	},
	"ui.renderExport": (params) => {
		requireInitialized();
		return runtime.screen.renderExport(registry, params);
	},
	"ui.renderTools": (params) => {
		requireInitialized();
		return runtime.screen.renderTools(registry, params);
	},
	"ui.input": (params) => {
		requireInitialized();
		return runtime.screen.input(params);
	},
	"ui.mouse": (params) => {
		requireInitialized();
		return runtime.screen.mouse(params);
	},
	"ui.terminalInput": (params) => {
		requireInitialized();
		return runtime.screen.terminalInput(params);
	},
	"ui.argumentCompletions": (params) => {
		requireInitialized();
		return runtime.screen.argumentCompletions(registry, params);
	},
	"ui.autocomplete": (params) => {
		requireInitialized();
		return runtime.screen.autocomplete(params);
	},
	"ui.keybindings": (params) => {
		requireInitialized();
		return runtime.screen.setKeybindings(params);
	},
	setFlags: (params) => {
		requireInitialized();
		for (const [name, value] of Object.entries(params.values ?? {})) registry.flagValues.set(name, value);
		return null;
	},
	shutdown: () => {
		setImmediate(async () => {
			await runtime.wire.close();
			process.exit(0);
		});
		return null;
	},
};

const notifications = {
	state: (params) => applyState(params),
	cancel: (params) => toolCalls.get(params.callId)?.abort(),
	"provider.cancel": (params) => providerStreams.get(params.streamId)?.abort(),
	"provider.oauthCancel": (params) => oauthLogins.get(params.loginId)?.abort(),
	"models.event": onModelEvent,
};

runtime.wire = connectWire(
	socketPath,
	(method, params) => {
		const handler = requests[method];
		if (!handler) throw wireError("unknown_method", `unknown method: ${method}`);
		return handler(params);
	},
	(method, params) => notifications[method]?.(params),
);

// An extension's stray async failure must not take the host down; report it instead.
process.on("uncaughtException", (error) => runtime.reportError("<host>", "uncaught", error));
process.on("unhandledRejection", (error) => runtime.reportError("<host>", "unhandledRejection", error));

await runtime.wire.whenConnected;
runtime.wire.notify("hello", { protocolVersion: PROTOCOL_VERSION, node: process.version, pid: process.pid });
