// The screen parts extensions make in the terminal UI: components from extension factories
// (widgets, header, footer, `ctx.ui.custom()` screens and overlays, renderer results) live here,
// by id. pi asks for their lines (`ui.render`, answered only for components whose lines changed
// or whose width changed) and forwards keys (`ui.input`); `tui.requestRender()` tells pi to ask
// again. Also the Theme object, built from the colours pi sends in the state mirror.

import { createCompletions } from "./autocomplete.mjs";
import { EDITOR_APP_ACTIONS } from "./editor.mjs";

const RESET_FG = "\x1b[39m";
const RESET_BG = "\x1b[49m";

const FAKE_CURSOR_START = "\x1b_pi:fc\x07";
const FAKE_CURSOR_END = "\x1b_pi:/fc\x07";

/**
 * A line as the terminal gets it: pi-tui marks the cell an editor draws as its cursor with
 * zero-width markers that its TUI turns into inverse video (pi shows no hardware cursor).
 */
const screenLine = (line) => {
	const text = String(line);
	return text.includes(FAKE_CURSOR_START) ? text.replaceAll(FAKE_CURSOR_START, "\x1b[7m").replaceAll(FAKE_CURSOR_END, "\x1b[27m") : text;
};

const errorText = (error) => (error instanceof Error ? error.message : String(error));

/** Each token's colour object, frozen as pi's Theme hands them out. */
const frozenColors = (colors) =>
	Object.freeze(Object.fromEntries(Object.entries(colors ?? {}).map(([token, color]) => [token, Object.freeze({ ...color })])));

/**
 * A pi Theme over the escape sequences pi sends (`state.theme`: `{name, appearance, colorMode,
 * colors: {token: {kind, ...}}, fg: {token: sgr}, bg: {token: sgr}, dim: [token], textStyles?}`). One object for the life of the host,
 * updated in place on a theme change, as pi's global theme is (components keep the object
 * they were given). Unknown tokens throw, as in pi; before pi sent any theme nothing is
 * coloured.
 */
export function createTheme(initial) {
	let fgAnsi = new Map();
	let bgAnsi = new Map();
	let dim = new Set();
	let spec;
	const lookup = (map, token) => {
		const value = map.get(token);
		if (value !== undefined) return value;
		if (spec === undefined) return "";
		throw new Error(`Unknown theme color: ${token}`);
	};
	// `textStyles: false` (pi without a terminal on stdout): styles leave the text plain.
	const wrap = (open, close) => (text) =>
		spec?.textStyles === false ? String(text) : `\x1b[${open}m${text}\x1b[${close}m`;
	const theme = {
		name: "dark",
		sourcePath: undefined,
		appearance: "dark",
		// The colour depth of the escape sequences ("truecolor" or "256color").
		mode: "truecolor",
		colors: Object.freeze({}),
		fg(color, text) {
			const ansi = lookup(fgAnsi, color);
			if (ansi === "") return String(text);
			return dim.has(color) ? `${ansi}\x1b[2m${text}\x1b[22;39m` : `${ansi}${text}${RESET_FG}`;
		},
		bg(color, text) {
			const ansi = lookup(bgAnsi, color);
			return ansi === "" ? String(text) : `${ansi}${text}${RESET_BG}`;
		},
		bold: wrap(1, 22),
		italic: wrap(3, 23),
		underline: wrap(4, 24),
		inverse: wrap(7, 27),
		strikethrough: wrap(9, 29),
		getFgAnsi(color) {
			const ansi = lookup(fgAnsi, color);
			return dim.has(color) ? `${ansi}\x1b[2m` : ansi;
		},
		getBgAnsi: (color) => lookup(bgAnsi, color),
		getColorMode: () => theme.mode,
		getThinkingBorderColor(level) {
			const token = { minimal: "thinkingMinimal", low: "thinkingLow", medium: "thinkingMedium", high: "thinkingHigh", xhigh: "thinkingXhigh", max: "thinkingMax" }[level] ?? "thinkingOff";
			return (text) => theme.fg(fgAnsi.has(token) || spec === undefined ? token : "thinkingXhigh", text);
		},
		getBashModeBorderColor: () => (text) => theme.fg("bashMode", text),
		// pi's one-pass styling: the colours open first (foreground, then background), then the
		// attributes, each closed in reverse order; a faint token adds faint. Unlike `bold()`
		// and the like, the attributes are written whether or not stdout is a terminal.
		style(text, options = {}) {
			const { fg, bg } = options;
			const faint = options.dim || (typeof fg === "string" && dim.has(fg));
			let prefix = "";
			let suffix = "";
			const fgOpen = fg === undefined ? "" : lookup(fgAnsi, fg);
			if (fgOpen) {
				prefix += fgOpen;
				suffix = RESET_FG;
			}
			const bgOpen = bg === undefined ? "" : lookup(bgAnsi, bg);
			if (bgOpen) {
				prefix += bgOpen;
				suffix = `${RESET_BG}${suffix}`;
			}
			if (options.bold) prefix += "\x1b[1m";
			if (faint) prefix += "\x1b[2m";
			if (options.bold || faint) suffix = `\x1b[22m${suffix}`;
			for (const [key, open, close] of [
				["italic", 3, 23],
				["underline", 4, 24],
				["inverse", 7, 27],
				["strikethrough", 9, 29],
			]) {
				if (!options[key]) continue;
				prefix += `\x1b[${open}m`;
				suffix = `\x1b[${close}m${suffix}`;
			}
			return `${prefix}${text}${suffix}`;
		},
	};
	// The spec it was made from, so `setTheme(theme)` can name it to pi.
	Object.defineProperty(theme, "spec", { enumerable: false, get: () => spec });
	Object.defineProperty(theme, "update", {
		enumerable: false,
		value(next) {
			if (!next) return;
			spec = next;
			fgAnsi = new Map(Object.entries(next.fg ?? {}));
			bgAnsi = new Map(Object.entries(next.bg ?? {}));
			dim = new Set(next.dim ?? []);
			theme.name = next.name ?? "dark";
			theme.sourcePath = next.sourcePath ?? undefined;
			theme.appearance = next.appearance ?? "dark";
			theme.mode = next.colorMode ?? "truecolor";
			theme.colors = frozenColors(next.colors);
		},
	});
	theme.update(initial);
	return theme;
}

/** Options of an overlay as plain data (functions such as `visible` cannot cross). */
function plainOverlayOptions(options) {
	if (!options || typeof options !== "object") return {};
	const out = {};
	for (const key of ["anchor", "width", "minWidth", "maxHeight", "offsetX", "offsetY", "row", "col", "margin", "nonCapturing"]) {
		if (options[key] !== undefined && typeof options[key] !== "function") out[key] = options[key];
	}
	return out;
}

/**
 * The overlay options of a `custom()` overlay: given ones (a function is asked once), else the
 * component's own `width`, as pi falls back to it.
 */
function overlayOptionsFor(options, component, report) {
	let given = options?.overlayOptions;
	if (typeof given === "function") {
		try {
			given = given();
		} catch (error) {
			report(error);
			given = undefined;
		}
	}
	if (given) return plainOverlayOptions(given);
	const width = component?.width;
	return typeof width === "number" && width > 0 ? { width } : {};
}

/**
 * The screen of one host: components by id, the render/input requests pi makes, and the
 * `ctx.ui` methods that hand components to pi.
 */
export function createScreen(runtime, loadTui) {
	const components = new Map();
	let nextId = 1;
	let renderQueued = false;
	const theme = createTheme(undefined);
	let themeSpec;
	const statuses = new Map();
	const branchListeners = new Set();
	let lastBranch;
	let toolsExpanded = false;
	const state = () => runtime.mirror.state;

	const currentTheme = () => {
		const spec = state().theme;
		if (spec !== themeSpec) {
			themeSpec = spec;
			theme.update(spec);
		}
		return theme;
	};

	const requestRender = () => {
		if (renderQueued) return;
		renderQueued = true;
		setImmediate(() => {
			renderQueued = false;
			runtime.wire.notify("ui.requestRender", {});
		});
	};

	// pi-tui's TUI surface as extension components use it.
	const tui = {
		requestRender: () => requestRender(),
		get terminal() {
			const size = state().terminal ?? {};
			return { columns: size.columns ?? 80, rows: size.rows ?? 24, write() {} };
		},
		setFocus() {},
		invalidate: () => {
			for (const entry of components.values()) entry.component?.invalidate?.();
			requestRender();
		},
		// A component's own overlays (a passive panel beside a dialog): shown by pi as a
		// `custom()` overlay is, without a promise; the newest capturing one takes the keys.
		showOverlay(component, options) {
			if (!component || typeof component.render !== "function") throw new TypeError("showOverlay needs a component");
			const id = mount(component, undefined, "custom");
			const plain = plainOverlayOptions(options);
			if (plain.width === undefined && typeof component.width === "number" && component.width > 0) plain.width = component.width;
			runtime.wire.notify("ui.custom", { id, overlay: true, overlayOptions: plain });
			if (!plain.nonCapturing) takeFocus(component);
			let hidden = false;
			let closed = false;
			const handle = {
				hide() {
					if (closed) return;
					closed = true;
					ownOverlays.delete(handle);
					if (focusedComponent === component) takeFocus(undefined);
					unmount(id);
					runtime.wire.notify("ui.customClose", { id });
				},
				setHidden(value) {
					if (closed) return;
					hidden = Boolean(value);
					runtime.wire.notify("ui.customHidden", { id, hidden });
				},
				isHidden: () => hidden,
				focus() {
					if (closed) return;
					takeFocus(component);
					runtime.wire.notify("ui.customFocus", { id });
				},
				unfocus() {
					if (focusedComponent === component) takeFocus(undefined);
				},
				isFocused: () => !closed && focusedComponent === component,
			};
			ownOverlays.add(handle);
			return handle;
		},
		/** Hide the newest overlay shown with `showOverlay`. */
		hideOverlay() {
			const last = [...ownOverlays].pop();
			last?.hide();
		},
		hasOverlay: () => [...ownOverlays].some((h) => !h.isHidden()),
	};
	const ownOverlays = new Set();

	// pi-tui tells a component it has the keys through its `focused` field: the newest
	// `custom()` component or capturing overlay has them.
	let focusedComponent;
	const takeFocus = (component) => {
		if (focusedComponent && focusedComponent !== component && "focused" in focusedComponent) focusedComponent.focused = false;
		focusedComponent = component;
		if (component && typeof component === "object" && "focused" in component) component.focused = true;
	};

	// The app's keybindings (pi's and the user's), once pi sent them; pi-tui's defaults before.
	let appKeybindings;
	const keybindings = () => {
		if (appKeybindings) return appKeybindings;
		try {
			return loadTui().getKeybindings();
		} catch {
			return { matches: () => false, getKeys: () => [] };
		}
	};

	/** pi's editor theme over the current Theme: muted border, accent selection. */
	const editorTheme = () => {
		const fg = (token) => (text) => currentTheme().fg(token, text);
		return {
			borderColor: fg("borderMuted"),
			selectList: {
				selectedPrefix: fg("accent"),
				selectedText: fg("accent"),
				description: fg("muted"),
				scrollInfo: fg("muted"),
				noMatch: fg("muted"),
			},
		};
	};

	// The replacement editor (`setEditorComponent`): its factory and the component on screen.
	const editor = { factory: undefined, id: undefined };
	// `onTerminalInput` listeners, in the order they were added.
	const terminalListeners = new Set();

	const report = (entry, event, error) => runtime.reportError(entry?.extensionPath ?? "<ui>", event, error);

	/** Keep `component` under a fresh id; `owner` names the extension for error reports. */
	const mount = (component, extensionPath, kind) => {
		const id = nextId++;
		components.set(id, { component, extensionPath, kind, width: undefined, text: undefined });
		return id;
	};

	const unmount = (id) => {
		const entry = components.get(id);
		if (!entry) return;
		components.delete(id);
		try {
			entry.component?.dispose?.();
		} catch (error) {
			report(entry, "dispose", error);
		}
	};

	/** The lines of one component at `width`, or null when they are what pi already has. */
	const renderOne = (id, width) => {
		const entry = components.get(id);
		if (!entry) return [];
		let lines;
		try {
			const rendered = entry.component?.render?.(width) ?? [];
			lines = Array.from(rendered, screenLine);
		} catch (error) {
			if (!entry.failed) report(entry, "render", error);
			entry.failed = true;
			lines = [];
		}
		const text = lines.join("\n");
		if (entry.width === width && entry.text === text) return null;
		entry.width = width;
		entry.text = text;
		return lines;
	};

	/** What a key or mouse report changed: the component's new lines (and an editor's text). */
	const afterEvent = (id, entry) => {
		const width = entry.width ?? tui.terminal.columns;
		const answer = { lines: components.has(id) ? renderOne(id, width) : null, width };
		if (entry.kind === "editor") {
			try {
				answer.text = String(entry.component.getText?.() ?? "");
			} catch {}
		}
		return answer;
	};

	const footerData = () => ({
		getGitBranch: () => state().gitBranch ?? null,
		getExtensionStatuses: () => new Map(statuses),
		onBranchChange(listener) {
			branchListeners.add(listener);
			return () => branchListeners.delete(listener);
		},
		getAvailableProviderCount: () => new Set((state().models ?? []).map((m) => m.provider)).size,
	});

	/** Build a component from `factory(...args)`; report a throw against the extension. */
	const build = (factory, args, extensionPath, event) => {
		try {
			return factory(...args);
		} catch (error) {
			runtime.reportError(extensionPath ?? "<ui>", event, error);
			return undefined;
		}
	};

	const slots = { header: undefined, footer: undefined };
	const widgets = new Map();

	const setSlot = (slot, factory, extensionPath) => {
		if (slots[slot] !== undefined) unmount(slots[slot]);
		slots[slot] = undefined;
		if (typeof factory === "function") {
			const args = slot === "footer" ? [tui, currentTheme(), footerData()] : [tui, currentTheme()];
			const component = build(factory, args, extensionPath, `ui.set${slot === "footer" ? "Footer" : "Header"}`);
			if (component) slots[slot] = mount(component, extensionPath, slot);
		}
		runtime.wire.notify(slot === "footer" ? "ui.setFooter" : "ui.setHeader", { id: slots[slot] ?? null });
	};

	/** Hand an editor's submit and the app's actions back to pi, as pi's own editor does. */
	const wireEditor = (component) => {
		component.onSubmit = (text) => runtime.wire.notify("ui.editorSubmit", { text: String(text ?? "") });
		const userChange = component.onChange;
		component.onChange = (text) => {
			state().editorText = String(text ?? "");
			userChange?.call(component, text);
		};
		if (!("actionHandlers" in component) || !(component.actionHandlers instanceof Map)) return;
		const action = (name) => () => runtime.wire.notify("ui.editorAction", { action: name });
		component.onEscape ??= action("app.interrupt");
		component.onCtrlD ??= action("app.exit");
		component.onPasteImage ??= action("app.clipboard.pasteImage");
		// pi checks extension shortcuts before a key reaches the editor.
		component.onExtensionShortcut ??= () => false;
		for (const name of EDITOR_APP_ACTIONS) component.actionHandlers.set(name, action(name));
	};

	/** The border colour of pi's editor (the thinking level's, or bash mode's). */
	const borderColor = () => {
		const token = state().editorBorder;
		return (text) => (token ? currentTheme().fg(token, text) : currentTheme().fg("borderMuted", text));
	};

	/**
	 * pi's completions for a replacement editor: its slash commands (those pi lists and the
	 * extensions' own, with their argument completions) and file paths, from pi-tui's
	 * provider as pi's editor has them.
	 */
	const autocompleteProvider = () => {
		const tuiModule = loadTui();
		if (typeof tuiModule.CombinedAutocompleteProvider !== "function") return undefined;
		const commands = [];
		const seen = new Set();
		for (const ext of runtime.registry?.extensions ?? []) {
			for (const command of ext.commands.values()) {
				if (seen.has(command.name)) continue;
				seen.add(command.name);
				commands.push({
					name: command.name,
					description: command.description,
					getArgumentCompletions: command.getArgumentCompletions?.bind(command),
				});
			}
		}
		for (const command of state().editorCommands ?? []) {
			if (!command || seen.has(command.name)) continue;
			seen.add(command.name);
			commands.push({ name: String(command.name), description: command.description ?? undefined });
		}
		const provider = new tuiModule.CombinedAutocompleteProvider(commands, state().cwd ?? process.cwd());
		// `@` references come from pi's own file index (the host runs no file finder).
		const ownSuggestions = provider.getSuggestions.bind(provider);
		provider.getSuggestions = async (lines, line, col, options) => {
			const before = String(lines[line] ?? "").slice(0, col);
			const at = typeof provider.extractAtPrefix === "function" ? provider.extractAtPrefix(before) : null;
			if (!at) return ownSuggestions(lines, line, col, options);
			try {
				const answer = await runtime.wire.request("ui.fileSuggestions", { prefix: at });
				const items = Array.isArray(answer?.items) ? answer.items : [];
				return items.length > 0 ? { items, prefix: at } : null;
			} catch {
				return null;
			}
		};
		return provider;
	};

	// `ctx.ui.addAutocompleteProvider` chains, stacked on pi's completions.
	const completions = createCompletions(
		() => autocompleteProvider(),
		(triggerCharacters) => {
			runtime.wire.notify("ui.setAutocomplete", { triggerCharacters });
			const shown = editor.id !== undefined ? components.get(editor.id)?.component : undefined;
			if (shown) {
				try {
					dressEditor(shown);
				} catch (error) {
					report(components.get(editor.id), "setEditorComponent", error);
				}
			}
		},
		(extensionPath, event, error) => runtime.reportError(extensionPath ?? "<ui>", event, error),
	);

	/** Give a replacement editor pi's border colour and completions, as pi's editor has. */
	const dressEditor = (component) => {
		if (component.borderColor !== undefined) component.borderColor = borderColor();
		if (typeof component.setAutocompleteProvider === "function") {
			const provider = completions.chain() ?? autocompleteProvider();
			if (provider) component.setAutocompleteProvider(provider);
		}
	};

	const setEditor = (factory, extensionPath) => {
		if (editor.id !== undefined) unmount(editor.id);
		editor.id = undefined;
		editor.factory = typeof factory === "function" ? factory : undefined;
		if (editor.factory) {
			const component = build(editor.factory, [tui, editorTheme(), keybindings()], extensionPath, "ui.setEditorComponent");
			if (component) {
				try {
					wireEditor(component);
					dressEditor(component);
					component.setText?.(state().editorText ?? "");
					component.focused = true;
					editor.id = mount(component, extensionPath, "editor");
				} catch (error) {
					runtime.reportError(extensionPath ?? "<ui>", "ui.setEditorComponent", error);
				}
			}
		}
		runtime.wire.notify("ui.setEditor", { id: editor.id ?? null });
	};

	const addTerminalListener = (handler, extensionPath) => {
		if (typeof handler !== "function") return () => {};
		const listener = { handler, extensionPath };
		terminalListeners.add(listener);
		if (terminalListeners.size === 1) runtime.wire.notify("ui.terminalInput", { active: true });
		return () => {
			if (!terminalListeners.delete(listener)) return;
			if (terminalListeners.size === 0) runtime.wire.notify("ui.terminalInput", { active: false });
		};
	};

	/**
	 * A custom entry's lines from its entry renderer (null: no renderer, or it returned
	 * nothing); a renderer that throws shows pi's error line in its place.
	 */
	const renderEntry = (registry, entry, options, width) => {
		const found = registry.extensions
			.map((ext) => ({ ext, renderer: ext.entryRenderers.get(entry.customType) }))
			.find((f) => typeof f.renderer === "function");
		if (!found) return null;
		let component;
		try {
			component = found.renderer(entry, { expanded: options.expanded, keyText: options.keyText, keyHint: options.keyHint }, currentTheme());
		} catch (error) {
			return [` ${currentTheme().fg("error", `[${entry.customType}] renderer failed: ${errorText(error)}`)}`];
		}
		if (!component) return null;
		try {
			const out = Array.from(component.render(width) ?? [], screenLine);
			component.dispose?.();
			return out;
		} catch (error) {
			runtime.reportError(found.ext.path, "entryRenderer", error);
			return null;
		}
	};

	/**
	 * The renderers of calls to `toolName`, as pi resolves them: `registerToolRenderer`
	 * resolvers in load order (each may defer to `next()`), then the registered tool's own.
	 * Answers the renderers and the extension to report their errors against.
	 */
	const resolveToolRenderers = (registry, owner, toolName) => {
		const base = () => owner?.tools.get(toolName);
		const resolvers = registry.extensions.flatMap((e) => e.toolRenderers.map((resolver) => ({ e, resolver })));
		let by = owner;
		const resolve = (index) => {
			if (index >= resolvers.length) {
				by = owner;
				return base();
			}
			const { e, resolver } = resolvers[index];
			let found;
			try {
				found = resolver(toolName, () => resolve(index + 1));
			} catch (error) {
				runtime.reportError(e.path, "toolRenderer", error);
				return resolve(index + 1);
			}
			if (found && found !== base()) by = e;
			return found;
		};
		const tool = resolvers.length > 0 ? resolve(0) : base();
		return { ext: by ?? owner ?? registry.extensions[0], tool };
	};

	/** pi's themes as the mirror lists them: `[{name, path, spec}]`. */
	const themeList = () => (Array.isArray(state().themes) ? state().themes : []);

	/**
	 * `ctx.ui.setTheme(nameOrTheme)`: the switch is told to pi (which draws with it and saves
	 * a name in settings); the Theme object changes at once, so the caller reads the new
	 * colours. An unknown name fails and, as in pi, leaves the system theme in place.
	 */
	const setTheme = (wanted) => {
		let name;
		let persist = true;
		if (wanted && typeof wanted === "object") {
			if (wanted === theme) return { success: true };
			name = wanted.spec?.name ?? wanted.name;
			persist = false;
		} else {
			name = String(wanted);
		}
		const found = themeList().find((t) => t?.name === name);
		if (!found) {
			const fallback = themeList().find((t) => t?.name === "system");
			if (fallback?.spec) theme.update(fallback.spec);
			runtime.wire.notify("ui.setTheme", { name: "system", persist: false });
			return { success: false, error: `Theme not found: ${name}` };
		}
		if (found.spec) theme.update(found.spec);
		themeSpec = state().theme;
		runtime.wire.notify("ui.setTheme", { name, persist });
		return { success: true };
	};

	const api = {
		tui,
		theme: currentTheme,
		toolsExpanded: () => toolsExpanded,
		/** `ctx.ui.getAllThemes()`: `[{name, path}]`, the system theme first. */
		allThemes: () => themeList().map((t) => ({ name: String(t.name), path: t.path ?? undefined })),
		/** `ctx.ui.getTheme(name)`: a Theme of its own for that theme, or undefined. */
		getTheme(name) {
			const found = themeList().find((t) => t?.name === name);
			return found?.spec ? createTheme(found.spec) : undefined;
		},
		setTheme,

		/** `ctx.ui` members that hand components to pi, for one extension. */
		uiFor(extensionPath) {
			const hasScreen = () => state().hasUI && state().mode === "tui";
			return {
				setStatus(key, text) {
					if (text === undefined || text === null) statuses.delete(key);
					else statuses.set(key, String(text));
					if (state().hasUI) runtime.wire.notify("ui.setStatus", { args: [key, text ?? undefined] });
				},
				setWidget(key, content, options) {
					const old = widgets.get(key);
					if (old !== undefined) unmount(old);
					widgets.delete(key);
					if (typeof content === "function") {
						if (!hasScreen()) return;
						const component = build(content, [tui, currentTheme()], extensionPath, "ui.setWidget");
						if (!component) return;
						const id = mount(component, extensionPath, "widget");
						widgets.set(key, id);
						runtime.wire.notify("ui.setWidgetComponent", { key, id, placement: options?.placement ?? "aboveEditor" });
						return;
					}
					if (state().hasUI) {
						const lines = Array.isArray(content) ? content.map(String) : undefined;
						runtime.wire.notify("ui.setWidget", { args: [key, lines, options?.placement ? { placement: options.placement } : undefined] });
					}
				},
				setHeader(factory) {
					if (hasScreen()) setSlot("header", factory, extensionPath);
				},
				setFooter(factory) {
					if (hasScreen()) setSlot("footer", factory, extensionPath);
				},
				custom(factory, options) {
					if (!hasScreen() || typeof factory !== "function") return Promise.resolve(undefined);
					return new Promise((resolve) => {
						let id;
						let finished = false;
						const done = (result) => {
							if (finished) return;
							finished = true;
							if (id !== undefined) {
								unmount(id);
								runtime.wire.notify("ui.customClose", { id });
							}
							resolve(result);
						};
						Promise.resolve()
							.then(() => factory(tui, currentTheme(), keybindings(), done))
							.then(
								(component) => {
									if (finished || !component) {
										component?.dispose?.();
										if (!finished) done(undefined);
										return;
									}
									id = mount(component, extensionPath, "custom");
									takeFocus(component);
									const blocked = options?.blocked;
									runtime.wire.notify("ui.custom", {
										id,
										overlay: Boolean(options?.overlay),
										overlayOptions: overlayOptionsFor(options, component, (error) => runtime.reportError(extensionPath, "ui.custom", error)),
										// What the program status reports while it is open.
										blocked:
											typeof blocked?.kind === "string" && typeof blocked?.message === "string"
												? { kind: blocked.kind, message: blocked.message }
												: undefined,
									});
									const handle = {
										hide: () => done(undefined),
										setHidden: (hidden) => runtime.wire.notify("ui.customHidden", { id, hidden: Boolean(hidden) }),
										isHidden: () => false,
										focus() {
											if (finished) return;
											takeFocus(component);
											runtime.wire.notify("ui.customFocus", { id });
										},
										unfocus() {
											if (focusedComponent === component) takeFocus(undefined);
										},
										isFocused: () => !finished && focusedComponent === component,
									};
									try {
										options?.onHandle?.(handle);
									} catch (error) {
										runtime.reportError(extensionPath, "ui.custom", error);
									}
								},
								(error) => {
									runtime.reportError(extensionPath, "ui.custom", error);
									done(undefined);
								},
							);
					});
				},
				setEditorComponent(factory) {
					if (hasScreen()) setEditor(factory, extensionPath);
				},
				getEditorComponent: () => editor.factory,
				addAutocompleteProvider(factory) {
					if (hasScreen()) completions.add(factory, extensionPath);
				},
				onTerminalInput(handler) {
					return hasScreen() ? addTerminalListener(handler, extensionPath) : () => {};
				},
				getToolsExpanded: () => toolsExpanded,
				setToolsExpanded(expanded) {
					if (!hasScreen()) return;
					toolsExpanded = Boolean(expanded);
					runtime.wire.notify("ui.setToolsExpanded", { expanded: toolsExpanded });
				},
				get theme() {
					return currentTheme();
				},
			};
		},

		/** A component pi shows in place of its own rendering (tool and message renderers). */
		mountRendered(component, extensionPath) {
			return mount(component, extensionPath, "rendered");
		},
		unmount,

		/** `ui.render {items: [{id, width}]}` → `{lines: {id: string[] | null}}`. */
		render(params) {
			const lines = {};
			for (const item of params?.items ?? []) {
				const width = Math.max(1, Number(item.width) || 1);
				lines[item.id] = renderOne(Number(item.id), width);
			}
			return { lines };
		},

		/**
		 * `ui.renderMessages {items: [message], expanded, width}` → `{lines: [string[] | null]}`:
		 * each custom message drawn by the first message renderer registered for its
		 * `customType` (null: none, or it returned nothing or threw, and pi's default shows).
		 */
		renderMessages(registry, params) {
			const width = Math.max(1, Number(params?.width) || 1);
			const options = { expanded: Boolean(params?.expanded), outputPad: 1, keyText: (id) => id, keyHint: (id, text) => `${id} ${text}` };
			const lines = (params?.items ?? []).map((message) => {
				// A custom entry (`pi.appendEntry`) is drawn by the first entry renderer of its type.
				if (message?.type === "custom") return renderEntry(registry, message, options, width);
				const found = registry.extensions
					.map((ext) => ({ ext, renderer: ext.messageRenderers.get(message?.customType) }))
					.find((f) => typeof f.renderer === "function");
				if (!found) return null;
				try {
					const component = found.renderer(message, options, currentTheme());
					if (!component) return null;
					const out = Array.from(component.render(width) ?? [], screenLine);
					component.dispose?.();
					return out;
				} catch (error) {
					runtime.reportError(found.ext.path, "messageRenderer", error);
					return null;
				}
			});
			return { lines };
		},

		/**
		 * `ui.renderTools {items: [{toolName, toolCallId, args, result?, isPartial, isError,
		 * expanded, cwd}], width}` → `{items: [{call, result}]}`: the lines of the tool's
		 * `renderCall` and `renderResult` (null where it has none, returned nothing or threw:
		 * pi's default shows there).
		 */
		renderTools(registry, params) {
			const width = Math.max(1, Number(params?.width) || 1);
			const draw = (ext, make) => {
				try {
					const component = make();
					if (!component) return null;
					const out = Array.from(component.render(width) ?? [], screenLine);
					component.dispose?.();
					return out;
				} catch (error) {
					runtime.reportError(ext.path, "toolRenderer", error);
					return null;
				}
			};
			const items = (params?.items ?? []).map((item) => {
				const owner = registry.extensions.find((e) => e.tools.has(item?.toolName));
				const { ext, tool } = resolveToolRenderers(registry, owner, String(item?.toolName ?? ""));
				if (!tool) return { call: null, result: null };
				const state = {};
				const context = {
					args: item.args ?? {},
					toolCallId: item.toolCallId,
					invalidate: () => requestRender(),
					lastComponent: undefined,
					state,
					cwd: item.cwd ?? state.cwd,
					executionStarted: item.executionStarted !== false,
					argsComplete: true,
					isPartial: Boolean(item.isPartial),
					expanded: Boolean(item.expanded),
					showImages: false,
					isError: Boolean(item.isError),
					outputPad: 1,
					keyText: (id) => id,
					keyHint: (id, text) => `${id} ${text}`,
				};
				const call = typeof tool.renderCall === "function" ? draw(ext, () => tool.renderCall(item.args ?? {}, currentTheme(), context)) : null;
				const result =
					item.result && typeof tool.renderResult === "function"
						? draw(ext, () =>
								tool.renderResult(item.result, { expanded: Boolean(item.expanded), isPartial: Boolean(item.isPartial) }, currentTheme(), context),
							)
						: null;
				return { call, result };
			});
			return { items };
		},

		/**
		 * `ui.renderExport {items: [{toolCallId, toolName, args, result?}], width, theme?}` →
		 * `{items: [{call, resultCollapsed, resultExpanded}]}`: the HTML export's lines of each
		 * call from its renderers (null where there is none, or it threw), the result drawn
		 * collapsed and expanded with blank lines around it trimmed, as pi's export does.
		 */
		renderExport(registry, params) {
			const width = Math.max(1, Number(params?.width) || 100);
			// The colours pi names for the page (outside the terminal UI there is no other).
			const exportTheme = params?.theme ? createTheme(params.theme) : currentTheme();
			const blank = (line) => String(line).replace(/\x1b\[[0-9;]*m/g, "").trim().length === 0;
			const trim = (lines) => {
				let start = 0;
				let end = lines.length;
				while (start < end && blank(lines[start])) start++;
				while (end > start && blank(lines[end - 1])) end--;
				return lines.slice(start, end);
			};
			const items = (params?.items ?? []).map((item) => {
				const toolName = String(item?.toolName ?? "");
				const owner = registry.extensions.find((e) => e.tools.has(toolName));
				const { tool } = resolveToolRenderers(registry, owner, toolName);
				const out = { call: null, resultCollapsed: null, resultExpanded: null };
				if (!tool) return out;
				const state = {};
				const context = (expanded, isPartial, isError) => ({
					args: item.args ?? {},
					toolCallId: item.toolCallId,
					invalidate() {},
					lastComponent: undefined,
					state,
					cwd: runtime.mirror?.state?.cwd,
					executionStarted: true,
					argsComplete: true,
					isPartial,
					expanded,
					showImages: false,
					isError,
					durationMs: undefined,
					outputPad: 1,
					keyText: (id) => id,
					keyHint: (id, text) => `${id} ${text}`,
				});
				// A renderer that throws leaves pi's own layout there, as in pi's export.
				const lines = (make) => {
					try {
						const component = make();
						return component ? Array.from(component.render(width) ?? [], String) : null;
					} catch {
						return null;
					}
				};
				if (typeof tool.renderCall === "function") {
					out.call = lines(() => tool.renderCall(item.args ?? {}, exportTheme, context(false, true, false)));
				}
				if (item.result && typeof tool.renderResult === "function") {
					const result = { content: item.result.content ?? [], details: item.result.details, isError: Boolean(item.result.isError) };
					const isError = result.isError;
					const collapsed = lines(() => tool.renderResult(result, { expanded: false, isPartial: false }, exportTheme, context(false, false, isError)));
					const expanded = lines(() => tool.renderResult(result, { expanded: true, isPartial: false }, exportTheme, context(true, false, isError)));
					if (collapsed && expanded) {
						out.resultExpanded = trim(expanded);
						const c = trim(collapsed);
						if (c.join("\n") !== out.resultExpanded.join("\n")) out.resultCollapsed = c;
					}
				}
				return out;
			});
			return { items };
		},

		/** `ui.input {id, data}`: the key goes to the component; answers its new lines. */
		input(params) {
			const id = Number(params?.id);
			const entry = components.get(id);
			if (!entry) return { lines: null };
			try {
				entry.component?.handleInput?.(String(params?.data ?? ""));
			} catch (error) {
				report(entry, "handleInput", error);
			}
			return afterEvent(id, entry);
		},

		/**
		 * `ui.mouse {id, event}`: a mouse report in the component's own rows and columns goes to
		 * its `handleMouse` (pi-tui's editor places its cursor on a click; a component that
		 * takes a press gets the drags and release after it); answers as `input`.
		 */
		mouse(params) {
			const id = Number(params?.id);
			const entry = components.get(id);
			if (!entry) return { lines: null };
			const event = params?.event ?? {};
			// As pi-tui: the drags and the release after a press go to the component only when
			// it took the press (handled, captured or focused); the release ends the gesture.
			const gesture = event.type === "drag" || event.type === "release";
			if (!gesture || entry.pressTaken) {
				try {
					const result = entry.component?.handleMouse?.({ ...event });
					if (event.type === "press") {
						entry.pressTaken = Boolean(
							result && ("target" in result || result.handled || result.capture || result.focus),
						);
					}
				} catch (error) {
					report(entry, "handleMouse", error);
				}
			}
			if (event.type === "release") entry.pressTaken = false;
			return afterEvent(id, entry);
		},

		/**
		 * `ui.terminalInput {data}`: the keys as the terminal sent them, through every
		 * `onTerminalInput` listener in turn → `{consume: true}` or `{data}` (maybe rewritten).
		 */
		terminalInput(params) {
			let current = String(params?.data ?? "");
			for (const listener of [...terminalListeners]) {
				let result;
				try {
					result = listener.handler(current);
				} catch (error) {
					runtime.reportError(listener.extensionPath ?? "<ui>", "onTerminalInput", error);
					continue;
				}
				if (result?.consume) return { consume: true };
				if (typeof result?.data === "string") current = result.data;
			}
			return current.length === 0 ? { consume: true } : { data: current };
		},

		/**
		 * `ui.argumentCompletions {name, prefix}` → `{items: [{value, label, description}] | null}`:
		 * the completions of the extension command `name` for the argument typed so far.
		 */
		async argumentCompletions(registry, params) {
			const name = String(params?.name ?? "");
			// By the name the command is run by (`name:2` for a shared name).
			const command = registry.findCommand?.(name)?.command;
			if (typeof command?.getArgumentCompletions !== "function") return { items: null };
			try {
				const items = await command.getArgumentCompletions(String(params?.prefix ?? ""));
				if (!Array.isArray(items) || items.length === 0) return { items: null };
				return {
					items: items
						.filter((item) => item && item.value !== undefined)
						.map((item) => ({
							value: String(item.value),
							label: String(item.label ?? item.value),
							description: item.description === undefined ? undefined : String(item.description),
						})),
				};
			} catch (error) {
				runtime.reportError(ext.path, "getArgumentCompletions", error);
				return { items: null };
			}
		},

		/** `ui.autocomplete`: the extensions' completion chain answers pi's editor. */
		autocomplete: (params) => completions.answer(params),

		/** `ui.keybindings {bindings: {id: [key]}}`: the app's resolved keybindings. */
		setKeybindings(params) {
			const tuiModule = loadTui();
			const definitions = {};
			for (const [id, keys] of Object.entries(params?.bindings ?? {})) {
				definitions[id] = { defaultKeys: Array.isArray(keys) ? keys.map(String) : [] };
			}
			appKeybindings = new tuiModule.KeybindingsManager(definitions, {});
			tuiModule.setKeybindings?.(appKeybindings);
			for (const entry of components.values()) {
				if (entry.kind === "editor" && entry.component && "keybindings" in entry.component) entry.component.keybindings = appKeybindings;
			}
			return null;
		},

		/** After a state update: a new theme invalidates every component; a branch change is told. */
		stateChanged(update) {
			if (Object.hasOwn(update, "theme")) {
				currentTheme();
				for (const entry of components.values()) {
					try {
						entry.component?.invalidate?.();
					} catch {}
					entry.width = undefined;
					entry.failed = false;
				}
				if (components.size > 0) requestRender();
			}
			if (Object.hasOwn(update, "toolsExpanded")) toolsExpanded = Boolean(update.toolsExpanded);
			// Text the app put in the editor (a restored queue, a clear) goes into a replacement.
			const shown = editor.id !== undefined ? components.get(editor.id)?.component : undefined;
			if (shown && (Object.hasOwn(update, "editorBorder") || Object.hasOwn(update, "editorCommands"))) {
				try {
					dressEditor(shown);
				} catch (error) {
					report(components.get(editor.id), "setEditorComponent", error);
				}
				const entry = components.get(editor.id);
				if (entry) entry.width = undefined;
				requestRender();
			}
			if (shown && Object.hasOwn(update, "editorText")) {
				try {
					if (shown.getText?.() !== update.editorText) {
						shown.setText?.(String(update.editorText ?? ""));
						requestRender();
					}
				} catch (error) {
					report(components.get(editor.id), "setText", error);
				}
			}
			if (Object.hasOwn(update, "gitBranch") && update.gitBranch !== lastBranch) {
				lastBranch = update.gitBranch;
				for (const listener of [...branchListeners]) {
					try {
						listener(lastBranch);
					} catch {}
				}
			}
		},

		/** A new runtime (session replacement, /reload): every extension component goes. */
		reset() {
			for (const id of [...components.keys()]) unmount(id);
			widgets.clear();
			statuses.clear();
			branchListeners.clear();
			slots.header = undefined;
			slots.footer = undefined;
			editor.id = undefined;
			editor.factory = undefined;
			terminalListeners.clear();
			completions.reset();
			runtime.wire.notify("ui.reset", {});
		},
	};
	return api;
}

export { errorText };
