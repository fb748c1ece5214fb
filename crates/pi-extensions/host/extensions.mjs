// Loading extension files with jiti and the `pi` object each factory receives: registrations
// (tools, commands, flags, shortcuts, handlers, renderers) and the action methods, which only
// work once pi has bound the runtime after loading.
import { spawn } from "node:child_process";
import fs from "node:fs";
import { describeProvider, validateProvider } from "./providers.mjs";
import { createContext } from "./events.mjs";

const NOT_INITIALIZED = "Extension runtime not initialized. Action methods cannot be called during extension loading.";
const STALE =
	"This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload().";

export function createEventBus(reportError) {
	const listeners = new Map();
	return {
		emit(channel, data) {
			for (const handler of [...(listeners.get(channel) ?? [])]) {
				try {
					const result = handler(data);
					if (result && typeof result.catch === "function") result.catch((error) => reportError(channel, error));
				} catch (error) {
					reportError(channel, error);
				}
			}
		},
		on(channel, handler) {
			const list = listeners.get(channel) ?? [];
			list.push(handler);
			listeners.set(channel, list);
			return () => {
				const current = listeners.get(channel) ?? [];
				const index = current.indexOf(handler);
				if (index >= 0) current.splice(index, 1);
			};
		},
	};
}

function newExtension(path, resolvedPath) {
	return {
		path,
		resolvedPath,
		handlers: new Map(),
		tools: new Map(),
		commands: new Map(),
		flags: new Map(),
		shortcuts: new Map(),
		messageRenderers: new Map(),
		entryRenderers: new Map(),
		toolRenderers: [],
		providers: new Map(),
		mcpServers: new Map(),
		virtualModels: new Map(),
		failed: false,
		stale: false,
		busSubscriptions: [],
	};
}

/**
 * `registerProvider(name, config)`, or 1.6's native form `registerProvider(provider)` (a pi-ai
 * provider object with `id`, its models and `streamSimple`), as a name and a config.
 */
function providerConfig(nameOrProvider, config) {
	if (typeof nameOrProvider === "string") {
		if (config === undefined) throw new Error("Provider config is required when registering by name");
		return [nameOrProvider, config];
	}
	const provider = nameOrProvider ?? {};
	const name = provider.id ?? provider.name;
	const models = typeof provider.getModels === "function" ? provider.getModels() : provider.models;
	return [
		name,
		{
			name: provider.name,
			baseUrl: provider.baseUrl ?? models?.[0]?.baseUrl,
			api: provider.api ?? models?.[0]?.api,
			apiKey: provider.apiKey,
			headers: provider.headers,
			models,
			oauth: provider.oauth,
			streamSimple: typeof provider.streamSimple === "function" ? provider.streamSimple.bind(provider) : undefined,
		},
	];
}

/** `pi.exec`: run a program without a shell; never rejects. */
function exec(cwd, command, args = [], options = {}) {
	return new Promise((resolve) => {
		let stdout = "";
		let stderr = "";
		let killed = false;
		let truncated = false;
		const maxBuffer = options.maxBuffer ?? 256 * 1024 * 1024;
		let child;
		try {
			child = spawn(command, args, { cwd: options.cwd ?? cwd, shell: false });
		} catch (error) {
			resolve({ stdout: "", stderr: String(error?.message ?? error), code: 1, killed: false, truncated: false });
			return;
		}
		const kill = () => {
			killed = true;
			child.kill("SIGTERM");
			setTimeout(() => child.kill("SIGKILL"), 5000).unref();
		};
		const timer = options.timeout ? setTimeout(kill, options.timeout) : undefined;
		options.signal?.addEventListener("abort", kill, { once: true });
		const collect = (which) => (chunk) => {
			if (stdout.length + stderr.length + chunk.length > maxBuffer) {
				truncated = true;
				kill();
				return;
			}
			if (which === "out") stdout += chunk;
			else stderr += chunk;
		};
		child.stdout.setEncoding("utf8").on("data", collect("out"));
		child.stderr.setEncoding("utf8").on("data", collect("err"));
		child.on("error", (error) => {
			if (timer) clearTimeout(timer);
			resolve({ stdout, stderr: stderr + String(error.message), code: 1, killed, truncated });
		});
		child.on("close", (code, signal) => {
			if (timer) clearTimeout(timer);
			const signals = { SIGTERM: 15, SIGKILL: 9, SIGINT: 2, SIGHUP: 1 };
			resolve({ stdout, stderr, code: code ?? (signal ? 128 + (signals[signal] ?? 0) : 1), killed, truncated });
		});
	});
}

/**
 * The registry of loaded extensions for one runtime. `runtime` gives the wire (for actions),
 * the state mirror, the context factory and flag values.
 */
export function createRegistry(runtime, factoryCache) {
	const extensions = [];
	const flagValues = new Map();
	const bus = createEventBus((channel, error) => runtime.reportError("<events>", `events:${channel}`, error));

	// The MCP servers the extensions of this runtime registered, in registration order.
	const mcpServers = new Map();
	const listMcpServers = () => [...mcpServers.values()].map((server) => ({ ...server, config: structuredClone(server.config) }));
	// pi 1.6 emits `mcp_servers_change` without awaiting it; pi connects or reports the servers.
	const mcpChanged = () => {
		const servers = listMcpServers();
		runtime.wire.notify("mcp.serversChanged", { servers });
		for (const ext of extensions) {
			for (const handler of ext.handlers.get("mcp_servers_change") ?? []) {
				Promise.resolve()
					.then(() => handler({ type: "mcp_servers_change", servers: listMcpServers() }, createContext(runtime)))
					.catch((error) => runtime.reportError(ext.path, "mcp_servers_change", error));
			}
		}
	};

	const createApi = (ext, staged) => {
		const assertActive = () => {
			if (ext.failed) throw new Error(`Extension "${ext.path}" failed to load and its API is no longer active.`);
			if (ext.stale) throw new Error(STALE);
		};
		const register = (fn) => (...args) => {
			assertActive();
			return fn(...args);
		};
		const action = (fn) => (...args) => {
			assertActive();
			if (!runtime.bound) throw new Error(NOT_INITIALIZED);
			return fn(...args);
		};
		// Fire-and-forget actions travel as ordered notifications; pi applies them in order.
		const tell = (method) => action((params) => runtime.wire.notify(method, { extensionPath: ext.path, ...params }));
		const state = runtime.mirror.state;
		return {
			on: register((event, handler) => {
				const list = ext.handlers.get(event) ?? [];
				list.push(handler);
				ext.handlers.set(event, list);
				return () => {
					const current = ext.handlers.get(event) ?? [];
					const index = current.indexOf(handler);
					if (index >= 0) current.splice(index, 1);
				};
			}),
			registerTool: register((tool) => {
				const parameters = tool?.parameters;
				if (!parameters || typeof parameters !== "object" || (parameters.type !== undefined && parameters.type !== "object")) {
					throw new Error(`Tool "${tool?.name}" registered by extension "${ext.path}" must define an object parameter schema.`);
				}
				ext.tools.set(tool.name, tool);
				if (runtime.bound) runtime.wire.notify("registrations.changed", { extensionPath: ext.path });
			}),
			registerCommand: register((name, options) => {
				if (typeof name !== "string" || name.trim() === "") {
					throw new Error(`Command registered by extension "${ext.path}" must have a non-empty string name.`);
				}
				if (typeof options?.handler !== "function") {
					throw new Error(`Command "/${name}" registered by extension "${ext.path}" must define handler().`);
				}
				ext.commands.set(name, { name, ...options });
			}),
			registerShortcut: register((key, options) => {
				ext.shortcuts.set(key, { key, ...options });
			}),
			registerFlag: register((name, options) => {
				const type = options?.type ?? "boolean";
				if (options?.default !== undefined && typeof options.default !== type) {
					throw new Error(`Invalid default for flag "${name}": expected ${type}, got ${typeof options.default}`);
				}
				ext.flags.set(name, { name, type, description: options?.description, default: options?.default });
				if (options?.default !== undefined) staged.flagDefaults.set(name, options.default);
			}),
			getFlag: register((name) => {
				if (!ext.flags.has(name)) return undefined;
				if (flagValues.has(name)) return flagValues.get(name);
				if (staged.flagDefaults.has(name)) return staged.flagDefaults.get(name);
				return ext.flags.get(name).default;
			}),
			registerMessageRenderer: register((customType, renderer) => ext.messageRenderers.set(customType, renderer)),
			registerEntryRenderer: register((customType, renderer) => ext.entryRenderers.set(customType, renderer)),
			registerToolRenderer: register((resolver) => {
				if (typeof resolver === "function") ext.toolRenderers.push(resolver);
			}),
			registerMarkdownTransformer: register(() => {}),
			// Staged while the factory runs and committed when it resolves, as in pi 1.6; a
			// later call takes effect at once and pi is told to read the registrations again.
			registerProvider: register((nameOrProvider, config) => {
				const [name, resolved] = providerConfig(nameOrProvider, config);
				validateProvider(name, resolved);
				if (runtime.bound) {
					ext.providers.set(name, resolved);
					runtime.wire.notify("registrations.changed", { extensionPath: ext.path });
				} else staged.providers.push([name, resolved]);
			}),
			unregisterProvider: register((name) => {
				if (runtime.bound) {
					ext.providers.delete(name);
					runtime.wire.notify("registrations.changed", { extensionPath: ext.path });
				} else staged.providers.push([name, undefined]);
			}),
			// MCP servers: staged during the factory and committed when it resolves (pi 1.6's
			// transactional load); after binding, each change goes to pi and to the
			// `mcp_servers_change` handlers at once. pi validates the configs.
			registerMcpServer: register((name, config) => {
				if (typeof name !== "string" || !config || typeof config !== "object" || Array.isArray(config)) {
					throw new Error(`Invalid MCP server registered by extension "${ext.path}": server "${name}" must be an object`);
				}
				const owner = mcpServers.get(name)?.extensionPath;
				if (owner !== undefined && owner !== ext.path) {
					throw new Error(`MCP server "${name}" is already registered by extension "${owner}"`);
				}
				// Names that differ only in `-` and `_` would share a namespace.
				const namespace = (server) => server.replace(/-/g, "_");
				const clash = [...mcpServers.values()].find((server) => server.name !== name && namespace(server.name) === namespace(name));
				if (clash) throw new Error(`MCP server "${name}" conflicts with registered server "${clash.name}"`);
				const server = { name, config: structuredClone(config), extensionPath: ext.path };
				const apply = () => {
					mcpServers.set(name, server);
					ext.mcpServers.set(name, server.config);
				};
				if (runtime.bound) {
					apply();
					mcpChanged();
				} else staged.mcp.push(apply);
			}),
			unregisterMcpServer: register((name) => {
				const apply = () => {
					if (mcpServers.get(name)?.extensionPath !== ext.path) return false;
					mcpServers.delete(name);
					ext.mcpServers.delete(name);
					return true;
				};
				if (!runtime.bound) staged.mcp.push(apply);
				else if (apply()) mcpChanged();
			}),
			getMcpServers: register(() => listMcpServers()),
			registerVirtualModel: register((definition) => {
				ext.virtualModels.set(`${definition?.provider}/${definition?.id}`, definition);
			}),
			unregisterVirtualModel: register((provider, id) => {
				ext.virtualModels.delete(`${provider}/${id}`);
			}),
			exec: register((command, args, options) => exec(state.cwd, command, args, options)),
			events: {
				emit: (channel, data) => {
					assertActive();
					bus.emit(channel, data);
				},
				on: (channel, handler) => {
					assertActive();
					// A failing handler is reported against its own extension, as pi 1.6 does.
					const report = (error) => runtime.reportError(ext.path, `events:${channel}`, error);
					const unsubscribe = bus.on(channel, (data) => {
						if (ext.stale) return undefined;
						try {
							const result = handler(data);
							if (result && typeof result.catch === "function") result.catch(report);
						} catch (error) {
							report(error);
						}
						return undefined;
					});
					staged.busSubscriptions.push(unsubscribe);
					return unsubscribe;
				},
			},
			sendMessage: action((message, options) => runtime.wire.notify("pi.sendMessage", { extensionPath: ext.path, message, options: options ?? {} })),
			sendUserMessage: action((content, options) =>
				runtime.wire.notify("pi.sendUserMessage", { extensionPath: ext.path, content, options: options ?? {} }),
			),
			appendEntry: action((customType, data) => runtime.wire.notify("pi.appendEntry", { extensionPath: ext.path, customType, data })),
			setSessionName: action((name) => {
				state.sessionName = name;
				runtime.wire.notify("pi.setSessionName", { extensionPath: ext.path, name });
			}),
			getSessionName: action(() => state.sessionName),
			setLabel: action((entryId, label) => runtime.wire.notify("pi.setLabel", { extensionPath: ext.path, entryId, label })),
			getActiveTools: action(() => state.activeTools.slice()),
			getAllTools: action(() => state.allTools.slice()),
			getSettings: action(() => structuredClone(state.settings)),
			getCommands: action(() => state.commands.slice()),
			setActiveTools: action((names) => {
				runtime.wire.notify("pi.setActiveTools", { extensionPath: ext.path, names: [...names] });
			}),
			getThinkingLevel: action(() => state.thinkingLevel),
			setThinkingLevel: action((level) => runtime.wire.notify("pi.setThinkingLevel", { extensionPath: ext.path, level })),
			setModel: async (model) => {
				assertActive();
				if (!runtime.bound) throw new Error("Extension runtime not initialized");
				return Boolean(await runtime.wire.request("pi.setModel", { extensionPath: ext.path, model }));
			},
		};
	};

	const importFactory = async (resolvedPath) => {
		const jiti = runtime.createJiti(resolvedPath);
		const module = await jiti.import(resolvedPath);
		const factory = module?.default ?? module;
		return typeof factory === "function" ? factory : undefined;
	};

	/** Load one file; returns an error string as 1.6 words it, or the extension. */
	const loadOne = async ({ path, resolvedPath }) => {
		const target = resolvedPath ?? path;
		if (!fs.existsSync(target)) return { error: `Extension path does not exist: ${target}` };
		const ext = newExtension(path, target);
		const staged = { flagDefaults: new Map(), busSubscriptions: [], providers: [], mcp: [] };
		try {
			const real = fs.realpathSync(target);
			// A module evaluated for an earlier runtime of this host is reused: its top-level
			// state survives, as it does across pi's /new, /resume and /fork.
			let factory = factoryCache.get(real);
			if (!factory) {
				factory = await importFactory(real);
				if (factory) factoryCache.set(real, factory);
			}
			if (!factory) return { error: `Extension does not export a valid factory function: ${path}` };
			await factory(createApi(ext, staged));
		} catch (error) {
			ext.failed = true;
			for (const unsubscribe of staged.busSubscriptions) unsubscribe();
			const message = error instanceof Error ? error.message : String(error);
			return { error: `Failed to load extension: ${message}` };
		}
		for (const [name, value] of staged.flagDefaults) if (!flagValues.has(name)) flagValues.set(name, value);
		for (const apply of staged.mcp) apply();
		ext.busSubscriptions = staged.busSubscriptions;
		for (const [name, config] of staged.providers) {
			if (config) ext.providers.set(name, config);
			else ext.providers.delete(name);
		}
		return { ext };
	};

	// Load failures of this runtime, kept so that `extend` reports them with its own.
	const loadErrors = [];

	/** Tools and flags registered twice: the first owner keeps them, the later file is reported. */
	const conflicts = () => {
		const errors = [];
		const toolOwners = new Map();
		const flagOwners = new Map();
		for (const ext of extensions) {
			for (const name of ext.tools.keys()) {
				const owner = toolOwners.get(name);
				if (owner && owner !== ext.path) errors.push({ path: ext.path, error: `Tool "${name}" conflicts with ${owner}` });
				else toolOwners.set(name, ext.path);
			}
			for (const name of ext.flags.keys()) {
				const owner = flagOwners.get(name);
				if (owner && owner !== ext.path) errors.push({ path: ext.path, error: `Flag "--${name}" conflicts with ${owner}` });
				else flagOwners.set(name, ext.path);
			}
		}
		return errors;
	};

	const loadSources = async (sources) => {
		const loaded = [];
		for (const source of sources) {
			const { ext, error } = await loadOne(source);
			if (error) loadErrors.push({ path: source.path, error });
			else {
				extensions.push(ext);
				loaded.push(ext);
			}
		}
		return loaded;
	};

	const load = async (sources) => {
		const before = loadErrors.length;
		const loaded = await loadSources(sources);
		return {
			extensions: loaded.map(describe),
			errors: [...loadErrors.slice(before), ...conflicts()],
			mcpServers: listMcpServers(),
		};
	};

	const realKey = (source) => {
		const target = source.resolvedPath ?? source.path;
		try {
			return fs.realpathSync(target);
		} catch {
			return target;
		}
	};

	/**
	 * The final set after a pre-trust pass (pi 1.6's `loadFinalExtensionSet`): files already
	 * loaded keep their extension (their factories do not run again), files that failed are
	 * not tried again, the rest load now, and the set takes the order of `sources`.
	 */
	const extend = async (sources) => {
		const loadedKeys = new Set(extensions.map((ext) => realKey(ext)));
		const failedPaths = new Set(loadErrors.map((error) => error.path));
		const remaining = sources.filter((source) => !loadedKeys.has(realKey(source)) && !failedPaths.has(source.path));
		await loadSources(remaining);
		const byKey = new Map(extensions.map((ext) => [realKey(ext), ext]));
		const ordered = [];
		for (const source of sources) {
			const ext = byKey.get(realKey(source));
			if (ext && !ordered.includes(ext)) ordered.push(ext);
		}
		// Anything loaded that the final list does not name stays, after the rest.
		for (const ext of extensions) if (!ordered.includes(ext)) ordered.push(ext);
		extensions.splice(0, extensions.length, ...ordered);
		return { extensions: extensions.map(describe), errors: [...loadErrors, ...conflicts()], mcpServers: listMcpServers() };
	};

	const findTool = (name) => {
		for (const ext of extensions) {
			const tool = ext.tools.get(name);
			if (tool) return { ext, tool };
		}
		return undefined;
	};

	/**
	 * The command run by `name`, as pi 1.6 names them: a name several extensions register is
	 * `name:1`, `name:2`, ... in load order (skipping numbers another command holds); only
	 * a name registered once is run by itself.
	 */
	const findCommand = (name) => {
		const all = [];
		for (const ext of extensions) for (const [commandName, command] of ext.commands) all.push({ ext, command, commandName });
		const counts = new Map();
		for (const { commandName } of all) counts.set(commandName, (counts.get(commandName) ?? 0) + 1);
		const seen = new Map();
		const taken = new Set();
		for (const entry of all) {
			const occurrence = (seen.get(entry.commandName) ?? 0) + 1;
			seen.set(entry.commandName, occurrence);
			let invocation = counts.get(entry.commandName) > 1 ? `${entry.commandName}:${occurrence}` : entry.commandName;
			for (let suffix = occurrence; taken.has(invocation); ) invocation = `${entry.commandName}:${++suffix}`;
			taken.add(invocation);
			if (invocation === name) return { ext: entry.ext, command: entry.command };
		}
		return undefined;
	};

	/** Retire this runtime: every captured `pi` throws the stale message from now on. */
	const invalidate = () => {
		for (const ext of extensions) {
			ext.stale = true;
			for (const unsubscribe of ext.busSubscriptions) unsubscribe();
			ext.busSubscriptions = [];
		}
	};

	return {
		extensions,
		flagValues,
		invalidate,
		load,
		extend,
		findTool,
		findCommand,
		describeAll: () => extensions.map(describe),
		listMcpServers,
	};
}

/** What pi needs to know about one loaded extension, as plain JSON. */
function describe(ext) {
	return {
		path: ext.path,
		resolvedPath: ext.resolvedPath,
		tools: [...ext.tools.values()].map((tool) => ({
			name: tool.name,
			label: tool.label,
			description: tool.description,
			parameters: JSON.parse(JSON.stringify(tool.parameters ?? {})),
			promptSnippet: tool.promptSnippet,
			promptGuidelines: tool.promptGuidelines,
			exposure: tool.exposure,
			executionMode: tool.executionMode,
			defaultActive: tool.defaultActive,
			hasRenderCall: typeof tool.renderCall === "function",
			hasRenderResult: typeof tool.renderResult === "function",
		})),
		commands: [...ext.commands.values()].map((command) => ({
			name: command.name,
			description: command.description,
			hasCompletions: typeof command.getArgumentCompletions === "function",
		})),
		flags: [...ext.flags.values()].map((flag) => ({
			name: flag.name,
			type: flag.type,
			description: flag.description,
			default: flag.default,
		})),
		shortcuts: [...ext.shortcuts.values()].map((shortcut) => ({ key: shortcut.key, description: shortcut.description })),
		events: [...ext.handlers.entries()].filter(([, list]) => list.length > 0).map(([event]) => event),
		messageRenderers: [...ext.messageRenderers.keys()],
		entryRenderers: [...ext.entryRenderers.keys()],
		toolRenderers: ext.toolRenderers.length > 0,
		providers: [...ext.providers.entries()].map(([name, config]) => describeProvider(name, config)),
		mcpServers: [...ext.mcpServers.keys()],
		virtualModels: [...ext.virtualModels.keys()],
	};
}
