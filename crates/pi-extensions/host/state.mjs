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

	const branch = (fromId) => {
		const path = [];
		let id = fromId ?? state.leafId;
		const seen = new Set();
		while (id && !seen.has(id)) {
			seen.add(id);
			const entry = state.byId.get(id);
			if (!entry) break;
			path.push(entry);
			id = entry.parentId;
		}
		return path.reverse();
	};

	// Read-only session manager view over the mirrored entries.
	const sessionManager = {
		getCwd: () => state.cwd,
		getSessionFile: () => state.sessionFile,
		getSessionId: () => state.sessionId,
		getSessionName: () => state.sessionName,
		getLeafId: () => state.leafId,
		getLeafEntry: () => (state.leafId ? state.byId.get(state.leafId) : undefined),
		getEntry: (id) => state.byId.get(id),
		getEntries: () => state.entries.slice(),
		getBranch: (fromId) => branch(fromId),
		getLabel: (id) => {
			let label;
			for (const entry of state.entries) {
				if (entry.type === "label" && entry.targetId === id) label = entry.label;
			}
			return label;
		},
	};

	return { state, apply, sessionManager };
}
