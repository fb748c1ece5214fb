// `ctx.ui.addAutocompleteProvider`: extension providers stacked on pi's own completions, as
// pi chains them (each factory wraps the provider before it; their trigger characters join).
// pi's editor asks the chain with `ui.autocomplete`: a request carries the editor's lines,
// the cursor (columns in UTF-16 units, as JS strings count) and pi's own suggestions for
// that spot, which the bottom of the chain (`current` of the first factory) answers. A
// replacement editor gets the same chain, its bottom answering from pi-tui's provider.

/** Suggestions as plain data: `{items: [{value, label, description}], prefix}` or null. */
function plainSuggestions(suggestions) {
	if (!suggestions || !Array.isArray(suggestions.items) || suggestions.items.length === 0) return null;
	const items = suggestions.items
		.filter((item) => item && item.value !== undefined && item.value !== null)
		.map((item) => ({
			value: String(item.value),
			label: String(item.label ?? item.value),
			description: item.description === undefined || item.description === null ? undefined : String(item.description),
		}));
	return items.length > 0 ? { items, prefix: String(suggestions.prefix ?? "") } : null;
}

/** An applied completion as plain data, or null when it is not one. */
function plainApplied(result) {
	if (!result || !Array.isArray(result.lines)) return null;
	const cursorLine = Number(result.cursorLine);
	const cursorCol = Number(result.cursorCol);
	if (!Number.isInteger(cursorLine) || !Number.isInteger(cursorCol)) return null;
	return { lines: result.lines.map(String), cursorLine, cursorCol };
}

const sameSpot = (a, lines, line, col) =>
	a.line === line && a.col === col && a.lines.length === lines.length && a.lines.every((l, i) => l === lines[i]);

/**
 * The chain of one host. `piProvider()` builds pi-tui's provider with pi's commands (for a
 * replacement editor and for applying completions as pi-tui does); `onChange(triggers)`
 * tells pi the chain's trigger characters (null: no chain); `report(path, event, error)`.
 */
export function createCompletions(piProvider, onChange, report) {
	const wrappers = [];
	let chain;
	let owner;
	// Requests of pi's editor being answered: their spot and pi's own suggestions there.
	const asked = new Set();
	let lastAbort;
	// The newest request's number. pi's editor numbers its requests in the order the keys
	// were typed, but requests sent close together may arrive in another order: one older
	// than the newest is answered as stale at once, and never aborts the newer one.
	let newest = -1;

	const bottom = {
		async getSuggestions(lines, line, col, options) {
			for (const request of asked) {
				if (sameSpot(request, lines, line, col)) return request.base ? structuredClone(request.base) : null;
			}
			return (await piProvider()?.getSuggestions(lines, line, col, options)) ?? null;
		},
		applyCompletion(lines, line, col, item, prefix) {
			const provider = piProvider();
			if (provider) return provider.applyCompletion(lines, line, col, item, prefix);
			return { lines, cursorLine: line, cursorCol: col };
		},
		shouldTriggerFileCompletion(lines, line, col) {
			return piProvider()?.shouldTriggerFileCompletion?.(lines, line, col) ?? true;
		},
	};

	/** Every factory again over a fresh bottom, as pi does each time one is added. */
	const rebuild = () => {
		let provider = bottom;
		const triggers = [];
		for (const { factory, extensionPath } of wrappers) {
			let next;
			try {
				next = factory(provider);
			} catch (error) {
				report(extensionPath, "addAutocompleteProvider", error);
				continue;
			}
			if (!next || typeof next.getSuggestions !== "function" || typeof next.applyCompletion !== "function") continue;
			provider = next;
			owner = extensionPath;
			for (const c of Array.isArray(next.triggerCharacters) ? next.triggerCharacters : []) triggers.push(String(c));
		}
		chain = provider === bottom ? undefined : provider;
		if (chain) chain.triggerCharacters = [...new Set(triggers)];
		onChange(chain ? chain.triggerCharacters : null);
	};

	return {
		add(factory, extensionPath) {
			if (typeof factory !== "function") return;
			wrappers.push({ factory, extensionPath });
			rebuild();
		},
		/** The chain for a replacement editor, or undefined without one. */
		chain: () => chain,
		reset() {
			wrappers.length = 0;
			chain = undefined;
			asked.clear();
		},

		/**
		 * `ui.autocomplete {op: "suggest", seq, lines, line, col, force, base}` →
		 * `{suggestions: {items, prefix} | null}`; `{op: "apply", lines, line, col, item,
		 * prefix}` → `{applied: {lines, cursorLine, cursorCol} | null}` (null: pi applies
		 * its own way).
		 */
		async answer(params) {
			const lines = Array.isArray(params?.lines) ? params.lines.map(String) : [""];
			const line = Number(params?.line) || 0;
			const col = Number(params?.col) || 0;
			if (!chain) return params?.op === "apply" ? { applied: null } : { suggestions: null };
			if (params?.op === "apply") {
				const item = params.item ?? {};
				try {
					return { applied: plainApplied(chain.applyCompletion(lines, line, col, item, String(params.prefix ?? ""))) };
				} catch (error) {
					report(owner, "applyCompletion", error);
					return { applied: null };
				}
			}
			// A newer request makes the older ones stale, as pi's editor aborts them.
			const seq = Number(params?.seq);
			if (Number.isSafeInteger(seq)) {
				if (seq < newest) return { suggestions: null, stale: true };
				newest = seq;
			}
			lastAbort?.abort();
			const controller = new AbortController();
			lastAbort = controller;
			const force = Boolean(params?.force);
			const request = { lines, line, col, base: plainSuggestions(params?.base) };
			asked.add(request);
			try {
				if (force && typeof chain.shouldTriggerFileCompletion === "function" && !chain.shouldTriggerFileCompletion(lines, line, col)) {
					return { suggestions: null };
				}
				const suggestions = await chain.getSuggestions(lines, line, col, { signal: controller.signal, force });
				return controller.signal.aborted ? { suggestions: null, stale: true } : { suggestions: plainSuggestions(suggestions) };
			} catch (error) {
				if (!controller.signal.aborted) report(owner, "getSuggestions", error);
				return { suggestions: null };
			} finally {
				asked.delete(request);
			}
		},
	};
}
