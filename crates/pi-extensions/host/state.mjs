// The mirror of pi's session state that the synchronous extension getters read (`ctx.cwd`,
// `ctx.model`, `ctx.isIdle()`, `pi.getActiveTools()`, `ctx.sessionManager.getEntries()`, ...).
// pi pushes changes before the events that need them; entries arrive as append-only deltas.

export function createState(initial) {
	const state = {
		cwd: initial.cwd,
		mode: initial.mode ?? "print",
		hasUI: initial.hasUI ?? false,
		projectTrusted: initial.projectTrusted ?? false,
		model: undefined,
		scopedModels: [],
		models: [],
		allModelsJson: undefined,
		providerAuth: undefined,
		oauthProviders: [],
		builtinProviders: [],
		thinkingLevel: "off",
		idle: true,
		pendingMessages: false,
		activeTools: [],
		allTools: [],
		commands: [],
		settings: {},
		systemPrompt: "",
		editorText: "",
		contextUsage: undefined,
		sessionFile: undefined,
		sessionId: undefined,
		sessionName: undefined,
		leafId: null,
		theme: undefined,
		themes: [],
		terminal: undefined,
		gitBranch: undefined,
		toolsExpanded: false,
		editorBorder: undefined,
		editorCommands: [],
		entries: [],
		byId: new Map(),
	};

	const SIMPLE_KEYS = [
		"cwd",
		"mode",
		"hasUI",
		"projectTrusted",
		"model",
		"scopedModels",
		"models",
		"allModelsJson",
		"providerAuth",
		"oauthProviders",
		"builtinProviders",
		"thinkingLevel",
		"idle",
		"pendingMessages",
		"activeTools",
		"allTools",
		"commands",
		"settings",
		"systemPrompt",
		"editorText",
		"contextUsage",
		"sessionFile",
		"sessionId",
		"sessionName",
		"leafId",
		"theme",
		"themes",
		"terminal",
		"gitBranch",
		"toolsExpanded",
		"editorBorder",
		"editorCommands",
	];

	const apply = (update) => {
		for (const key of SIMPLE_KEYS) {
			if (Object.hasOwn(update, key)) state[key] = update[key] === null && key !== "leafId" ? undefined : update[key];
		}
		const delta = update.entries;
		if (delta) {
			if (delta.reset) {
				state.entries = [];
				state.byId = new Map();
			}
			for (const entry of delta.append ?? []) {
				state.entries.push(entry);
				if (entry && typeof entry.id === "string") state.byId.set(entry.id, entry);
			}
			if (delta.append?.length && !Object.hasOwn(update, "leafId")) {
				const last = delta.append[delta.append.length - 1];
				if (last && typeof last.id === "string") state.leafId = last.id;
			}
		}
	};

	const sessionManager = sessionReader(state);

	return { state, apply, sessionManager };
}

/**
 * A read-only SessionManager over `view` (`entries`, `byId`, `leafId`, `cwd`, `sessionFile`,
 * `sessionId`, `sessionName`): the mirror itself, or a setup's copy of it.
 */
export function sessionReader(view) {
	const branch = (fromId) => {
		const path = [];
		let id = fromId ?? view.leafId;
		const seen = new Set();
		while (id && !seen.has(id)) {
			seen.add(id);
			const entry = view.byId.get(id);
			if (!entry) break;
			path.push(entry);
			id = entry.parentId;
		}
		return path.reverse();
	};
	return {
		getCwd: () => view.cwd,
		getSessionFile: () => view.sessionFile,
		getSessionId: () => view.sessionId,
		getSessionName: () => view.sessionName,
		getLeafId: () => view.leafId,
		getLeafEntry: () => (view.leafId ? view.byId.get(view.leafId) : undefined),
		getEntry: (id) => view.byId.get(id),
		getEntries: () => view.entries.slice(),
		getBranch: (fromId) => branch(fromId),
		getChildren: (parentId) => view.entries.filter((entry) => entry.parentId === parentId),
		getLabel: (id) => {
			let label;
			for (const entry of view.entries) {
				if (entry.type === "label" && entry.targetId === id) label = entry.label;
			}
			return label;
		},
	};
}
